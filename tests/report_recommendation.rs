//! Must-show of `tce report`: the recommendation on the paper's settings, pinned to what
//! the simulations say (docs/report.md, "The recommendation"). Beta(1.1, 0.1) scores, as
//! in the paper's Fig. 2, n = 2000: d = 1 (perfectly calibrated) and d = 2
//! (miscalibrated, T(c) = c²). 200 simulations, no bootstrap (the choice does not use it).
//! Beta(1.1, 0.1) puts 2.3% of its draws within 1e−16 of 1, which f64 rounds to exactly
//! 1.0: the report's fit has a point mass there (46 of the 2000 rows).

use tce::report::{report, Basis, ModelKind, ParametricFit, ReportSettings};
use tce::sim::{Beta, Curve, Model};

/// (estimator, bias, RMSE) of each bias row.
type Rows = Vec<(String, f64, f64)>;

fn recommend(d: f64) -> (String, Basis, Rows) {
    let (name, basis, rows, _) = recommend_with_atoms(d, ModelKind::Paper);
    (name, basis, rows)
}

/// The recommendation, its basis, the bias rows and the fit's atom counts (at 0, at 1).
fn recommend_with_atoms(d: f64, kind: ModelKind) -> (String, Basis, Rows, Option<[usize; 2]>) {
    let model = Model::new(Beta::new(1.1, 0.1).unwrap(), Curve::polynomial(d).unwrap());
    let (scores, labels) = model.dataset(5, 0, 2000);
    let settings = ReportSettings {
        resamples: 0,
        simulations: Some(200),
        seed: 1,
        model: kind,
        test: None,
        ..ReportSettings::default()
    };
    let r = report(&scores, &labels, &settings, &|_| {}).unwrap();
    let p = r.parametric.as_ref().unwrap();
    let rows = p
        .bias
        .iter()
        .map(|b| (b.target.spec.to_string(), b.summary.bias, b.summary.rmse))
        .collect();
    (
        r.estimators[r.recommendation.estimator]
            .target
            .spec
            .to_string(),
        r.recommendation.basis,
        rows,
        match &p.fit {
            ParametricFit::Paper(fit) => fit.saturation.as_ref().map(|s| s.counts),
            ParametricFit::Flexible(fit) => Some(fit.atom_counts),
        },
    )
}

/// The same settings under the report's default, flexible model: it finds the calibrated
/// model's data calibrated (the identity curve, TCE 0) and the atom at 1.0.
#[test]
fn recommendation_on_the_papers_settings_with_the_flexible_model() {
    let (name, basis, rows, atoms) = recommend_with_atoms(1.0, ModelKind::Flexible);
    println!("{name} {basis:?} {rows:?}");
    assert_eq!(atoms, Some([0, 46]), "the exact 1.0s are a point mass");
    assert_eq!(
        (name.as_str(), basis),
        ("ece_debias:equal_mass", Basis::LowestRmse)
    );
    let usual = rows.iter().find(|r| r.0 == "ece_bin:equal_width").unwrap();
    assert!(usual.1 > 0.02 && usual.1 < 0.035, "{usual:?}");
}

/// The paper's model, as the paper's figures use it.
#[test]
fn recommendation_on_the_papers_settings() {
    // d = 1: TCE = 0, and every plug-in estimate is biased upwards; the debiased
    // equal-mass estimator has the lowest RMSE, and the usual 15-bin equal-width ECE_bin
    // is expected to read about 3 points too high.
    let (name, basis, rows, atoms) = recommend_with_atoms(1.0, ModelKind::Paper);
    assert_eq!(atoms, Some([0, 46]), "the exact 1.0s are a point mass");
    assert_eq!(
        (name.as_str(), basis),
        ("ece_debias:equal_mass", Basis::LowestRmse)
    );
    let best = rows.iter().find(|r| r.0 == name).unwrap();
    assert!(best.2 > 0.007 && best.2 < 0.010, "{best:?}");
    let usual = rows.iter().find(|r| r.0 == "ece_bin:equal_width").unwrap();
    assert!(usual.1 > 0.025 && usual.1 < 0.035, "{usual:?}");
    // d = 2: the estimators are within a tenth of a point of each other in RMSE; the
    // simulations pick equal-mass ECE_bin, and the usual one is off by only 0.4 points.
    let (name, basis, rows) = recommend(2.0);
    assert_eq!(
        (name.as_str(), basis),
        ("ece_bin:equal_mass", Basis::LowestRmse)
    );
    let usual = rows.iter().find(|r| r.0 == "ece_bin:equal_width").unwrap();
    assert!(usual.1.abs() < 0.005, "{usual:?}");
}
