//! The fitted model's TCE as an estimator of the data's TCE (a plug-in), and its error at
//! the data's n by construction (docs/report.md, "The fitted model's TCE").
//!
//! The report fits a model and simulates from it; the model's own TCE_p is then one more
//! estimate of the data's TCE_p, with no binning at all. Its error is measured as the
//! estimators' is: the first m of the report's simulated data sets (simulation j is
//! `model.try_dataset(seed, j, n)`, the very data set the bias table evaluated) are
//! fitted again, by the same fit (model kind and endpoint rule, with its own selection of
//! density and curve), and each refit's TCE_p is compared with the fitted model's. A fit
//! costs far more than an estimator, so m is small ([`default_refits`]: 10 up to
//! n = 50 000, none above unless asked), and the Monte-Carlo standard error of the bias
//! is stated beside it.
//!
//! The plug-in has no bootstrap interval (that would take a fit per resample), so the
//! report never recommends it; where it is clearly the least biased
//! ([`PlugIn::least_biased`]), the report says so.

use rayon::prelude::*;

use super::{estimates_tce, BiasRow, ModelKind, ParametricFit, ReportSettings};
use crate::sim::flexible::FlexibleModel;
use crate::sim::runner::Summary;
use crate::sim::Synthetic;

/// The largest n at which a report refits by default.
pub const DEFAULT_REFIT_LIMIT: usize = 50_000;

/// The refits of a report at n ≤ [`DEFAULT_REFIT_LIMIT`].
pub const DEFAULT_REFITS: usize = 10;

/// The default number of refits at n: [`DEFAULT_REFITS`] up to [`DEFAULT_REFIT_LIMIT`],
/// else 0 (a fit at n = 10^6 takes about a second; `--refits` asks for them anyway).
pub fn default_refits(n: usize) -> usize {
    if n <= DEFAULT_REFIT_LIMIT {
        DEFAULT_REFITS
    } else {
        0
    }
}

/// The plug-in's error at n on the fitted model.
#[derive(Clone, Debug, PartialEq)]
pub struct PlugIn {
    /// The fitted model's TCE_p on the data (fraction): the plug-in estimate.
    pub estimate: f64,
    /// Simulated data sets refitted (the first `refits` of the report's simulations).
    pub refits: usize,
    /// Refits that failed (their data sets are left out of the summary).
    pub failed: usize,
    /// Each successful refit's TCE_p (fractions, in simulation order).
    pub values: Vec<f64>,
    /// Mean, bias, sd, RMSE and Monte-Carlo se of the bias against the fitted model's
    /// TCE_p (`None` if no refit succeeded).
    pub summary: Option<Summary>,
}

impl PlugIn {
    /// Whether the plug-in is clearly the least biased: its |bias| is below every TCE
    /// estimator's by more than twice the Monte-Carlo standard error of the difference
    /// (√(se² + se_row²)), so that the comparison is not noise.
    pub fn least_biased(&self, rows: &[BiasRow]) -> bool {
        let Some(own) = self.summary else {
            return false;
        };
        rows.iter().filter(|r| estimates_tce(&r.target)).all(|r| {
            let margin = 2.0 * (own.se * own.se + r.summary.se * r.summary.se).sqrt();
            own.bias.abs() + margin < r.summary.bias.abs()
        })
    }
}

/// Refits `refits` of the simulated data sets of `model` at n (in parallel) and
/// summarises their TCE_p against `truth`, the fitted model's TCE_p.
pub(crate) fn plug_in(
    model: &FlexibleModel,
    kind: ModelKind,
    settings: &ReportSettings,
    n: usize,
    truth: f64,
    refits: usize,
) -> PlugIn {
    let p = settings.norm.p();
    let outcomes: Vec<Option<f64>> = (0..refits)
        .into_par_iter()
        .map(|j| {
            let (scores, labels) = model.try_dataset(settings.seed, j as u64, n).ok()?;
            let fit = ParametricFit::of(&scores, &labels, kind, &settings.endpoint).ok()?;
            refit_tce(&fit, p)
        })
        .collect();
    let values: Vec<f64> = outcomes.iter().flatten().copied().collect();
    PlugIn {
        estimate: truth,
        refits,
        failed: refits - values.len(),
        summary: (!values.is_empty()).then(|| Summary::of(&values, truth)),
        values,
    }
}

/// A fit's TCE_p: the stored TCE_1 and TCE_2, else by quadrature (`None` if that
/// fails).
fn refit_tce(fit: &ParametricFit, p: f64) -> Option<f64> {
    let (l1, l2) = fit.tce_l1_l2();
    if p == 1.0 {
        Some(l1)
    } else if p == 2.0 {
        Some(l2)
    } else {
        fit.model().tce(p).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{report, ReportSettings};
    use crate::sim::{Beta, Curve, Model};

    #[test]
    fn default_refits_follow_the_limit() {
        assert_eq!(default_refits(1), DEFAULT_REFITS);
        assert_eq!(default_refits(DEFAULT_REFIT_LIMIT), DEFAULT_REFITS);
        assert_eq!(default_refits(DEFAULT_REFIT_LIMIT + 1), 0);
    }

    /// The refits are the fits of the report's own simulated data sets: refitting data
    /// set j by hand gives value j.
    #[test]
    fn refits_are_the_fits_of_the_simulated_data_sets() {
        let model = Model::new(
            Beta::new(2.0, 1.0).unwrap(),
            Curve::polynomial(1.5).unwrap(),
        );
        let (scores, labels) = model.dataset(4, 0, 1500);
        let settings = ReportSettings {
            resamples: 0,
            simulations: Some(20),
            refits: Some(4),
            seed: 9,
            test: None,
            ..ReportSettings::default()
        };
        let r = report(&scores, &labels, &settings, &|_| {}).unwrap();
        let p = r.parametric.unwrap();
        let plug = p.plug_in.unwrap();
        assert_eq!((plug.refits, plug.failed, plug.values.len()), (4, 0, 4));
        assert_eq!(plug.estimate, p.tce);
        for (j, value) in plug.values.iter().enumerate() {
            let (s, l) = p.model.try_dataset(9, j as u64, 1500).unwrap();
            let fit = ParametricFit::of(&s, &l, ModelKind::Flexible, &settings.endpoint).unwrap();
            assert_eq!(*value, fit.tce_l1_l2().1);
        }
        let summary = plug.summary.unwrap();
        let mean = plug.values.iter().sum::<f64>() / 4.0;
        assert!((summary.bias - (mean - p.tce)).abs() < 1e-15);
    }

    #[test]
    fn least_biased_needs_a_margin_of_two_standard_errors() {
        use crate::report::Target;
        use crate::sim::{EstimatorKind, EstimatorSpec};
        let summary = |bias: f64, se: f64| Summary {
            mean: 0.0,
            bias,
            sd: se,
            rmse: bias.abs(),
            se,
        };
        let row = |bias, se| BiasRow {
            target: Target {
                spec: EstimatorSpec::binned(EstimatorKind::EceSweep, crate::Binning::EQUAL_MASS)
                    .unwrap(),
                bins: None,
            },
            summary: summary(bias, se),
        };
        let plug = |bias, se| PlugIn {
            estimate: 0.1,
            refits: 10,
            failed: 0,
            values: vec![],
            summary: Some(summary(bias, se)),
        };
        // Margin 2·√(0.001² + 0.001²) ≈ 0.0028.
        assert!(plug(0.001, 0.001).least_biased(&[row(-0.004, 0.001)]));
        assert!(!plug(0.001, 0.001).least_biased(&[row(-0.0035, 0.001)]));
        assert!(!plug(0.001, 0.001).least_biased(&[row(-0.01, 0.001), row(0.002, 0.0)]));
        let none = PlugIn {
            summary: None,
            ..plug(0.0, 0.0)
        };
        assert!(!none.least_biased(&[row(0.5, 0.0)]));
    }
}
