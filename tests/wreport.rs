//! Must-show of the weighted report (`tce::report::weighted_report`): its bootstrap
//! intervals cover the weighted truth about as often as they claim, on importance weights
//! whose target TCE the simulator knows (docs/report.md, "Weighted rows").
//!
//! Scores are drawn from a proposal, uniform on [0, 1] (Beta(1, 1)), labels from the
//! calibration curve T(c) = c²; each row is weighted by the density ratio of the target
//! Beta(2, 1) to the proposal, w = 2f. The curve does not change (covariate shift of the
//! scores only), so the weighted rows estimate the target model's TCE, known exactly.

use tce::report::{weighted_report, ReportSettings};
use tce::sim::{Beta, Curve, Model};

/// The share of data sets whose percentile and BCa intervals contain the target's TCE_2,
/// per estimator (TCE estimators only), with `datasets` data sets of n rows.
fn coverage(n: usize, datasets: u64, resamples: usize) -> Vec<(String, f64, f64)> {
    let curve = Curve::polynomial(2.0).unwrap();
    let proposal = Model::new(Beta::new(1.0, 1.0).unwrap(), curve);
    let target = Model::new(Beta::new(2.0, 1.0).unwrap(), curve);
    let tce = target.tce(2.0).unwrap();
    // (∫ 2f·(f − f²)² df)^{1/2} = (1/30)^{1/2}.
    assert!((tce - (1.0f64 / 30.0).sqrt()).abs() < 1e-9, "{tce}");
    let settings = ReportSettings {
        resamples,
        test: None,
        ..ReportSettings::default()
    };
    let mut rows: Vec<(String, usize, usize)> = Vec::new();
    for d in 0..datasets {
        let (scores, labels) = proposal.dataset(23, d, n);
        let weights: Vec<f64> = scores.iter().map(|f| 2.0 * f).collect();
        let r = weighted_report(
            &scores,
            &labels,
            &weights,
            &ReportSettings {
                seed: d,
                ..settings
            },
            &|_| {},
        )
        .unwrap();
        for e in r
            .estimators
            .iter()
            .filter(|e| tce::report::estimates_tce(&e.target))
        {
            let name = e.target.spec.to_string();
            let b = e.bootstrap.as_ref().unwrap().as_ref().unwrap();
            let at = match rows.iter().position(|r| r.0 == name) {
                Some(at) => at,
                None => {
                    rows.push((name, 0, 0));
                    rows.len() - 1
                }
            };
            rows[at].1 += usize::from(b.percentile.contains(tce));
            rows[at].2 += usize::from(b.bca.is_some_and(|i| i.contains(tce)));
        }
    }
    rows.into_iter()
        .map(|(name, p, b)| (name, p as f64 / datasets as f64, b as f64 / datasets as f64))
        .collect()
}

/// 200 data sets of n = 500, 200 resamples each: the equal-weight sweep's 95% intervals
/// contain the target's TCE within 3 binomial sd of 0.95 (sd = √(0.95·0.05/200) =
/// 0.0154, tolerance [0.904, 0.996]), both kinds.
#[test]
fn weighted_sweep_intervals_cover_the_target_tce() {
    let tolerance = 3.0 * (0.95f64 * 0.05 / 200.0).sqrt();
    let rows = coverage(500, 200, 200);
    for row in &rows {
        println!("{row:?}");
    }
    let (_, percentile, bca) = rows.iter().find(|r| r.0 == "ece_sweep:equal_mass").unwrap();
    assert!(
        (percentile - 0.95).abs() <= tolerance,
        "percentile {percentile}"
    );
    assert!((bca - 0.95).abs() <= tolerance, "BCa {bca}");
}

/// The table of docs/report.md: `cargo test --release --all-features --test wreport --
/// --ignored --nocapture`.
#[test]
#[ignore]
fn coverage_table_for_the_docs() {
    for n in [500, 2000] {
        println!("n = {n}");
        for row in coverage(n, 400, 400) {
            println!("  {row:?}");
        }
    }
}
