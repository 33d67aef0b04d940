#![cfg(feature = "std")]
//! Issue 36: the report's flexible model of the data (point masses, a Beta or log-odds
//! mixture density, the best of the 12 GLMs, monotone splines and the identity) against
//! the bundled classifiers. The fit check is the report's: the real equal-width ECE_bin
//! and equal-mass ECE_sweep inside the central 99 % of data sets simulated from the fit.
//!
//! In the suite: every file at full size with 100 simulated data sets, and a few random
//! subsamples. The full tables (200 data sets, 40 subsamples of 1000 and 3000 per file)
//! are in docs/fitting.md, made by the ignored tests:
//!
//!     cargo test --release --all-features --test flexible_model -- --ignored --nocapture

mod common;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use tce::report::{report, ReportSettings};

const FILES: [&str; 6] = [
    "resnet110_c10_test.csv",
    "resnet110_c100_test.csv",
    "densenet40_c10_test.csv",
    "densenet40_c100_test.csv",
    "resnet50_birds_test.csv",
    "torchvision_densenet161_imgnet_test.csv",
];

use common::read_bundled as read;

/// The report's fit check of the flexible model on (scores, labels), with `simulations`
/// data sets: (whether it reproduces, the model's TCE_2, the recommended estimator's BCa
/// interval widened by its bias, when resamples were asked for).
fn check(
    scores: &[f64],
    labels: &[u8],
    simulations: usize,
    resamples: usize,
    seed: u64,
) -> (bool, f64, Option<(f64, f64)>, String) {
    let settings = ReportSettings {
        resamples,
        simulations: Some(simulations),
        seed,
        test: None,
        ..Default::default()
    };
    let r = report(scores, labels, &settings, &|_| {}).unwrap();
    let p = r.parametric.as_ref().unwrap();
    let chosen = &r.estimators[r.recommendation.estimator];
    let widened = chosen.interval().and_then(|(interval, _)| {
        let bias = r.recommendation.bias_row.map(|i| p.bias[i].summary.bias)?;
        // The estimator reads TCE + bias on average: TCE lies within the interval
        // shifted back by the bias, widened on the side the shift moves away from.
        Some((
            interval.lower - bias.max(0.0),
            interval.upper - bias.min(0.0),
        ))
    });
    let line = format!(
        "n {} | {} | TCE {:.3} % | checks {}",
        r.n,
        tce::report::text::fit_words(p),
        100.0 * p.tce,
        p.checks
            .iter()
            .map(|c| format!(
                "{} real {:.3} in {:.3}–{:.3}: {}",
                c.target.spec,
                100.0 * c.real,
                100.0 * c.interval.lower,
                100.0 * c.interval.upper,
                c.reproduces
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    (p.reproduces, p.tce, widened, line)
}

/// Subsamples of `size` rows (without replacement, seeded).
fn subsample(scores: &[f64], labels: &[u8], size: usize, seed: u64) -> (Vec<f64>, Vec<u8>) {
    let mut rows: Vec<usize> = (0..scores.len()).collect();
    rows.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed));
    rows.truncate(size);
    rows.iter().map(|&i| (scores[i], labels[i])).unzip()
}

#[test]
fn the_fit_reproduces_every_bundled_file_at_full_size() {
    for file in FILES {
        let (scores, labels) = read(file);
        let (reproduces, _, _, line) = check(&scores, &labels, 100, 0, 0);
        println!("{file}: {line}");
        assert!(reproduces, "{file}: {line}");
    }
}

#[test]
fn the_fit_reproduces_subsamples() {
    // Two subsamples of 1000 rows of each file (the full rate is in docs/fitting.md).
    let mut failures = Vec::new();
    for file in FILES {
        let (scores, labels) = read(file);
        for seed in 0..2 {
            let (s, l) = subsample(&scores, &labels, 1000, seed);
            let (reproduces, _, _, line) = check(&s, &l, 100, 0, seed);
            if !reproduces {
                failures.push(format!("{file} seed {seed}: {line}"));
            }
        }
    }
    // At the 99 % level each check fails on about 2 % of data sets the model does
    // reproduce: allow one of the twelve.
    assert!(failures.len() <= 1, "{failures:#?}");
}

/// The full tables of docs/fitting.md: 200 data sets at full size, with the recommended
/// estimator's interval (1000 resamples) widened by its bias; 40 subsamples of 1000 and
/// 3000 rows per file.
#[test]
#[ignore]
fn full_tables() {
    println!("| file | n | reproduced | model TCE_2 % | recommended estimator's BCa 95 % widened by its bias % | contains the TCE |");
    println!("|---|---:|---|---:|---|---|");
    for file in FILES {
        let (scores, labels) = read(file);
        let (reproduces, tce, widened, line) = check(&scores, &labels, 200, 1000, 0);
        eprintln!("{file}: {line}");
        let (lo, hi) = widened.unwrap_or((f64::NAN, f64::NAN));
        println!(
            "| {file} | {} | {reproduces} | {:.3} | {:.3}–{:.3} | {} |",
            scores.len(),
            100.0 * tce,
            100.0 * lo,
            100.0 * hi,
            (lo..=hi).contains(&tce)
        );
    }
    println!();
    println!("| file | subsamples of 1000 reproduced | subsamples of 3000 reproduced |");
    println!("|---|---:|---:|");
    for file in FILES {
        let (scores, labels) = read(file);
        let mut rates = Vec::new();
        for size in [1000, 3000] {
            if size > scores.len() {
                rates.push("–".to_string());
                continue;
            }
            let subsamples = 40;
            let reproduced = (0..subsamples)
                .filter(|&seed| {
                    let (s, l) = subsample(&scores, &labels, size, seed);
                    check(&s, &l, 200, 0, seed).0
                })
                .count();
            rates.push(format!("{reproduced} / {subsamples}"));
        }
        println!("| {file} | {} | {} |", rates[0], rates[1]);
    }
}

/// The plug-in estimator: fit the flexible model to a data set and read its TCE_2. On
/// data sets drawn from a model of known TCE, its bias and RMSE next to the equal-mass
/// ECE_sweep and ECE_debias on the same data sets (fractions).
struct PlugIn {
    tce: f64,
    /// (mean, bias, RMSE) of the plug-in, EM ECE_sweep and EM ECE_debias.
    rows: [(f64, f64, f64); 3],
    /// The standard error of the plug-in's mean and of ECE_debias's.
    se: [f64; 2],
}

fn plug_in<M: tce::sim::Synthetic>(model: &M, n: usize, reps: u64) -> PlugIn {
    use tce::fit::flexible::fit_flexible;
    use tce::fit::EndpointRule;
    use tce::{Binning, Norm, Slot, SortedBuffer, SweepOptions};
    let tce = model.tce(2.0).unwrap();
    let mut values: [Vec<f64>; 3] = Default::default();
    let mut storage = vec![Slot::EMPTY; 2 * n];
    for rep in 0..reps {
        let (scores, labels) = model.try_dataset(0, rep, n).unwrap();
        let fit = fit_flexible(&scores, &labels, &EndpointRule::default()).unwrap();
        let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
        buffer.push_batch(&scores, &labels).unwrap();
        let sorted = buffer.sorted();
        let sweep = sorted
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
            .unwrap()
            .value;
        let debias = sorted
            .ece_debias(Binning::EQUAL_MASS, 15, Norm::L2)
            .unwrap()
            .value;
        values[0].push(fit.tce_l2);
        values[1].push(sweep);
        values[2].push(debias);
    }
    let summary = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let rmse = (v.iter().map(|x| (x - tce).powi(2)).sum::<f64>() / v.len() as f64).sqrt();
        (mean, mean - tce, rmse)
    };
    let se = |v: &[f64]| {
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
        (var / v.len() as f64).sqrt()
    };
    PlugIn {
        tce,
        rows: [
            summary(&values[0]),
            summary(&values[1]),
            summary(&values[2]),
        ],
        se: [se(&values[0]), se(&values[2])],
    }
}

fn paper_model(alpha: f64, beta: f64, d: f64) -> tce::sim::Model {
    tce::sim::Model::new(
        tce::sim::Beta::new(alpha, beta).unwrap(),
        tce::sim::Curve::polynomial(d).unwrap(),
    )
}

/// On a perfectly calibrated model the fitted model must not invent miscalibration: its
/// TCE's mean is no larger than the equal-mass ECE_debias's mean estimate (issue 36),
/// here on 20 data sets of 1000 from the paper's Beta(2.8, 0.05) with T(c) = c (within
/// two standard errors of the difference).
#[test]
fn on_a_calibrated_model_the_plug_in_invents_no_miscalibration() {
    let table = plug_in(&paper_model(2.8, 0.05, 1.0), 1000, 20);
    let ([plug, _, debias], [se_plug, se_debias]) = (table.rows, table.se);
    println!(
        "plug-in mean {} ± {se_plug}, EM ECE_debias mean {} ± {se_debias}",
        plug.0, debias.0
    );
    assert_eq!(table.tce, 0.0);
    assert!(
        plug.0 <= debias.0 + 2.0 * (se_plug.powi(2) + se_debias.powi(2)).sqrt(),
        "plug-in {} vs debias {}",
        plug.0,
        debias.0
    );
}

/// The full by-construction table of docs/fitting.md.
#[test]
#[ignore]
fn plug_in_table() {
    let mut models: Vec<(String, tce::sim::FlexibleModel)> = vec![
        (
            "Beta(2.8, 0.05), T(c) = c".into(),
            paper_model(2.8, 0.05, 1.0).into(),
        ),
        (
            "Beta(1.1, 0.1), T(c) = c".into(),
            paper_model(1.1, 0.1, 1.0).into(),
        ),
        (
            "Beta(1.1, 0.1), T(c) = c^2".into(),
            paper_model(1.1, 0.1, 2.0).into(),
        ),
        (
            "Beta(2.8, 0.05), T(c) = c^2".into(),
            paper_model(2.8, 0.05, 2.0).into(),
        ),
    ];
    for file in [
        "resnet110_c10_test.csv",
        "torchvision_densenet161_imgnet_test.csv",
    ] {
        let (scores, labels) = read(file);
        let fit = tce::fit::flexible::fit_flexible(&scores, &labels, &Default::default()).unwrap();
        models.push((format!("the flexible fit of {file}"), fit.model.clone()));
        let mut calibrated = fit.model.clone();
        calibrated.curve =
            tce::sim::CalibrationCurve::Monotone(tce::sim::MonotoneCurve::identity());
        models.push((format!("{file}'s fitted scores, T(c) = c"), calibrated));
    }
    println!("| model | n | TCE_2 % | plug-in mean / bias / RMSE % | EM ECE_sweep mean / bias / RMSE % | EM ECE_debias mean / bias / RMSE % |");
    println!("|---|---:|---:|---|---|---|");
    for (name, model) in &models {
        for (n, reps) in [(1000, 100), (10_000, 50), (100_000, 20)] {
            let t = plug_in(model, n, reps);
            let cell = |(mean, bias, rmse): (f64, f64, f64)| {
                format!(
                    "{:.2} / {:+.2} / {:.2}",
                    100.0 * mean,
                    100.0 * bias,
                    100.0 * rmse
                )
            };
            println!(
                "| {name} | {n} ({reps} data sets) | {:.2} | {} | {} | {} |",
                100.0 * t.tce,
                cell(t.rows[0]),
                cell(t.rows[1]),
                cell(t.rows[2])
            );
        }
    }
}
