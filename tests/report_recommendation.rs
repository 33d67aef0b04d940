//! Must-show of `tce report`: the recommendation on the paper's settings, pinned to what
//! the simulations say (docs/report.md, "The recommendation"). Beta(1.1, 0.1) scores, as
//! in the paper's Fig. 2, n = 2000: d = 1 (perfectly calibrated) and d = 2
//! (miscalibrated, T(c) = c²). 200 simulations, no bootstrap (the choice does not use it).

use tce::report::{report, Basis, ReportSettings};
use tce::sim::{Beta, Curve, Model};

fn recommend(d: f64) -> (String, Basis, Vec<(String, f64, f64)>) {
    let model = Model::new(Beta::new(1.1, 0.1).unwrap(), Curve::polynomial(d).unwrap());
    let (scores, labels) = model.dataset(5, 0, 2000);
    let settings = ReportSettings {
        resamples: 0,
        simulations: Some(200),
        seed: 1,
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
    )
}

#[test]
fn recommendation_on_the_papers_settings() {
    // d = 1: TCE = 0, and every plug-in estimate is biased upwards; the debiased
    // equal-mass estimator has the lowest RMSE, and the usual 15-bin equal-width ECE_bin
    // is expected to read about 3 points too high.
    let (name, basis, rows) = recommend(1.0);
    assert_eq!(
        (name.as_str(), basis),
        ("ece_debias:equal_mass", Basis::LowestRmse)
    );
    let usual = rows.iter().find(|r| r.0 == "ece_bin:equal_width").unwrap();
    assert!(usual.1 > 0.025 && usual.1 < 0.035, "{usual:?}");
    // d = 2: the estimators are within a tenth of a point of each other in RMSE; the
    // simulations pick equal-mass ECE_bin, and the usual one is off by only 0.3 points.
    let (name, basis, rows) = recommend(2.0);
    assert_eq!(
        (name.as_str(), basis),
        ("ece_bin:equal_mass", Basis::LowestRmse)
    );
    let usual = rows.iter().find(|r| r.0 == "ece_bin:equal_width").unwrap();
    assert!(usual.1.abs() < 0.005, "{usual:?}");
}
