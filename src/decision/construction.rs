//! Size and power by construction: the test run on data sets drawn from a synthetic model
//! whose calibration is known ([`crate::sim::Synthetic`]), and the share of them on
//! which each statistic rejects at α. On a calibrated model that share is the test's
//! size (α for an exact test), on a miscalibrated one its power. docs/decisions.md
//! tabulates both; tests/decision.rs checks the size at a reduced scale.
//!
//! [`power_curve`] measures the rates along a family of models from calibrated to
//! miscalibrated, each with its exact TCE: the detection rate against TCE of the paper's
//! Figure 5, which `tce paper` draws (docs/paper.md).

use core::fmt;

use rayon::prelude::*;

use super::{calibration_test_with, Statistic, StatisticChoice, TestError, TestSettings};
use crate::sim::flexible::{CalibrationCurve, FlexibleModel};
use crate::sim::point_mass::{PointMass, PointMasses};
use crate::sim::{DatasetTooLarge, MonotoneCurve, Synthetic, TceError};

/// How often each statistic rejected on the data sets of one (model, n).
#[derive(Clone, Debug, PartialEq)]
pub struct Rates {
    /// The size of each data set.
    pub n: usize,
    /// The data sets.
    pub datasets: usize,
    /// The statistics, in [`TestSettings::with_needed`] order.
    pub statistics: Vec<Statistic>,
    /// The data sets on which each rejected (p ≤ α).
    pub rejections: Vec<usize>,
    /// The data sets on which each was undefined (counted as not rejecting).
    pub undefined: Vec<usize>,
    /// Data set by data set, whether each statistic rejected (`None`: undefined), in
    /// `statistics` order: what [`Rates::difference`] pairs.
    pub by_dataset: Vec<Vec<Option<bool>>>,
    /// With `auto`: the data sets on which the deciding statistic rejected, and how
    /// often each statistic decided (in `statistics` order).
    pub auto: Option<AutoRates>,
}

/// The rejections of the deciding statistic of `auto`.
#[derive(Clone, Debug, PartialEq)]
pub struct AutoRates {
    /// The data sets on which the deciding statistic rejected.
    pub rejections: usize,
    /// How often each statistic decided, in [`Rates::statistics`] order.
    pub chosen: Vec<usize>,
}

/// A share of m data sets and its Monte-Carlo standard error √(r(1 − r)/m).
pub fn share(count: usize, datasets: usize) -> (f64, f64) {
    let m = datasets as f64;
    let rate = count as f64 / m;
    (rate, (rate * (1.0 - rate) / m).sqrt())
}

impl Rates {
    /// Statistic i's rejection rate and its Monte-Carlo standard error.
    pub fn rate(&self, i: usize) -> (f64, f64) {
        share(self.rejections[i], self.datasets)
    }

    /// The difference of statistic i's rejection rate and statistic j's, on the same data
    /// sets, and its Monte-Carlo standard error: the mean and the standard error sd/√m of
    /// the paired differences, which are ±1 on the data sets where exactly one of the two
    /// rejects and 0 elsewhere. Pairing makes it much smaller than the two rates' errors
    /// combined when the two tests mostly agree.
    pub fn difference(&self, i: usize, j: usize) -> (f64, f64) {
        let (mut only_i, mut only_j) = (0usize, 0usize);
        for row in &self.by_dataset {
            match (row[i] == Some(true), row[j] == Some(true)) {
                (true, false) => only_i += 1,
                (false, true) => only_j += 1,
                _ => {}
            }
        }
        let m = self.datasets as f64;
        let mean = (only_i as f64 - only_j as f64) / m;
        let second_moment = (only_i + only_j) as f64 / m;
        (mean, ((second_moment - mean * mean).max(0.0) / m).sqrt())
    }

    /// The deciding statistic's rejection rate with `auto`.
    pub fn auto_rate(&self) -> Option<(f64, f64)> {
        self.auto
            .as_ref()
            .map(|a| share(a.rejections, self.datasets))
    }
}

/// Why rates could not be measured.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstructionError {
    /// No data sets.
    NoDatasets,
    /// A data set could not be drawn.
    Dataset(DatasetTooLarge),
    /// A test failed (the first in data-set order).
    Test {
        /// The data set.
        dataset: usize,
        /// Why.
        cause: TestError,
    },
    /// A model of a family has no TCE.
    Tce {
        /// The model's parameter in the family.
        parameter: f64,
        /// Why.
        cause: TceError,
    },
}

impl fmt::Display for ConstructionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoDatasets => f.write_str("no data sets"),
            Self::Dataset(e) => write!(f, "{e}"),
            Self::Test { dataset, cause } => write!(f, "data set {dataset}: {cause}"),
            Self::Tce { parameter, cause } => {
                write!(f, "the model of parameter {parameter}: {cause}")
            }
        }
    }
}

impl std::error::Error for ConstructionError {}

/// What one data set's test found: whether each statistic rejected (`None`: undefined),
/// and with `auto` the deciding statistic's index and whether it rejected.
struct DatasetOutcome {
    rejected: Vec<Option<bool>>,
    auto: Option<(usize, bool)>,
}

/// Runs the test of `settings` with `statistics` ([`super::calibration_test_with`]) on
/// `datasets` data sets of size n drawn from `model` (data set j is
/// `model.try_dataset(seed, j, n)`, and its test is seeded with `settings.seed + j`) and
/// counts each statistic's rejections at `settings.alpha`. Data sets run in parallel;
/// the counts do not depend on the thread count.
pub fn rejection_rates<M: Synthetic + ?Sized>(
    model: &M,
    n: usize,
    datasets: usize,
    seed: u64,
    settings: &TestSettings,
    statistics: &[Statistic],
) -> Result<Rates, ConstructionError> {
    if datasets == 0 {
        return Err(ConstructionError::NoDatasets);
    }
    settings
        .check()
        .map_err(|cause| ConstructionError::Test { dataset: 0, cause })?;
    let all = settings.with_needed(statistics);
    let outcomes: Vec<DatasetOutcome> = (0..datasets)
        .into_par_iter()
        .map(|j| {
            let (scores, labels) = model
                .try_dataset(seed, j as u64, n)
                .map_err(ConstructionError::Dataset)?;
            let test = calibration_test_with(
                &scores,
                &labels,
                &TestSettings {
                    seed: settings.seed.wrapping_add(j as u64),
                    ..*settings
                },
                statistics,
            )
            .map_err(|cause| ConstructionError::Test { dataset: j, cause })?;
            let rejected: Vec<Option<bool>> = test
                .results
                .iter()
                .map(|r| r.outcome.as_ref().ok().map(|o| o.p_value <= settings.alpha))
                .collect();
            let auto = (settings.statistic == StatisticChoice::Auto).then(|| {
                (
                    test.choice.statistic,
                    test.decision().is_some_and(|d| d.reject),
                )
            });
            Ok(DatasetOutcome { rejected, auto })
        })
        .collect::<Result<_, ConstructionError>>()?;
    let count = |f: &dyn Fn(&Option<bool>) -> bool, i: usize| {
        outcomes.iter().filter(|o| f(&o.rejected[i])).count()
    };
    let k = all.len();
    let auto = (settings.statistic == StatisticChoice::Auto).then(|| AutoRates {
        rejections: outcomes
            .iter()
            .filter(|o| o.auto.is_some_and(|(_, reject)| reject))
            .count(),
        chosen: (0..k)
            .map(|i| {
                outcomes
                    .iter()
                    .filter(|o| o.auto.is_some_and(|(chosen, _)| chosen == i))
                    .count()
            })
            .collect(),
    });
    Ok(Rates {
        n,
        datasets,
        rejections: (0..k).map(|i| count(&|r| *r == Some(true), i)).collect(),
        undefined: (0..k).map(|i| count(&|r| r.is_none(), i)).collect(),
        by_dataset: outcomes.into_iter().map(|o| o.rejected).collect(),
        statistics: all,
        auto,
    })
}

/// The rejection rates of one model of a family at one n.
#[derive(Clone, Debug, PartialEq)]
pub struct PowerPoint {
    /// The model's parameter in the family (the exponent d of T(c) = c^d, say).
    pub parameter: f64,
    /// The model's TCE_p as a fraction, computed by the model, not estimated.
    pub tce: f64,
    /// Each statistic's rejections on the data sets of size [`Rates::n`].
    pub rates: Rates,
}

/// Power along a family of models, from calibrated to miscalibrated: for each n of
/// `sizes` (outer) and each (parameter, model) of `family` (inner), the model's TCE_p and
/// [`rejection_rates`] with `datasets`, `seed`, `settings` and `statistics`. Every
/// member and n sees the same seed, so the data sets of two members share their
/// uniforms (common random numbers: the scores are the same when the members share
/// their density, and a label changes only where the curves differ), and the differences
/// between members are measured more precisely than each rate.
pub fn power_curve<M: Synthetic>(
    family: &[(f64, M)],
    p: f64,
    sizes: &[usize],
    datasets: usize,
    seed: u64,
    settings: &TestSettings,
    statistics: &[Statistic],
) -> Result<Vec<PowerPoint>, ConstructionError> {
    let tces: Vec<f64> = family
        .iter()
        .map(|(parameter, model)| {
            model.tce(p).map_err(|cause| ConstructionError::Tce {
                parameter: *parameter,
                cause,
            })
        })
        .collect::<Result<_, _>>()?;
    let mut points = Vec::with_capacity(sizes.len() * family.len());
    for &n in sizes {
        for ((parameter, model), &tce) in family.iter().zip(&tces) {
            points.push(PowerPoint {
                parameter: *parameter,
                tce,
                rates: rejection_rates(model, n, datasets, seed, settings, statistics)?,
            });
        }
    }
    Ok(points)
}

/// The calibrated twin of a model: the same score density and atoms, the identity curve,
/// and each atom's accuracy its score (1 at 1, 0 at 0). What the size tables run on for
/// the bundled files' fitted densities.
pub fn calibrated(model: &FlexibleModel) -> FlexibleModel {
    let exact = |score: f64, atom: Option<PointMass>| {
        atom.map(|a| PointMass::new(a.mass(), score).expect("a mass and an accuracy in [0, 1]"))
    };
    let masses = &model.point_masses;
    FlexibleModel {
        density: model.density.clone(),
        curve: CalibrationCurve::Monotone(MonotoneCurve::identity()),
        point_masses: PointMasses::new(exact(0.0, masses.zero()), exact(1.0, masses.one()))
            .expect("the same masses"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Beta, Curve, Model};

    #[test]
    fn the_difference_pairs_the_data_sets() {
        // Five data sets: statistic 0 alone rejects on two, statistic 1 alone on one, both
        // on one; an undefined statistic does not reject.
        let by_dataset = vec![
            vec![Some(true), Some(false)],
            vec![Some(true), Some(false)],
            vec![Some(true), Some(true)],
            vec![Some(false), Some(true)],
            vec![None, Some(false)],
        ];
        let rates = Rates {
            n: 10,
            datasets: 5,
            statistics: vec![Statistic::Spiegelhalter, Statistic::HosmerLemeshow],
            rejections: vec![3, 2],
            undefined: vec![1, 0],
            by_dataset,
            auto: None,
        };
        // Paired differences 1, 1, 0, −1, 0: mean 0.2, E[x²] = 0.6, variance 0.56.
        let (difference, se) = rates.difference(0, 1);
        assert!((difference - 0.2).abs() < 1e-15, "{difference}");
        assert!((se - (0.56f64 / 5.0).sqrt()).abs() < 1e-15, "{se}");
        let (back, back_se) = rates.difference(1, 0);
        assert!(
            (back + 0.2).abs() < 1e-15 && back_se == se,
            "{back} {back_se}"
        );
        assert_eq!(rates.difference(0, 0), (0.0, 0.0));
    }

    #[test]
    fn the_calibrated_twin_has_no_calibration_error() {
        let model = FlexibleModel::from(Model::with_point_masses(
            Beta::new(2.8, 0.05).unwrap(),
            Curve::polynomial(2.0).unwrap(),
            PointMasses::new(
                Some(PointMass::new(0.05, 0.3).unwrap()),
                Some(PointMass::new(0.2, 0.9).unwrap()),
            )
            .unwrap(),
        ));
        assert!(model.tce(2.0).unwrap() > 0.01);
        let twin = calibrated(&model);
        assert_eq!(twin.tce(2.0).unwrap(), 0.0);
        assert_eq!(twin.density, model.density);
        assert_eq!(twin.point_masses.one().unwrap().mass(), 0.2);
        assert_eq!(twin.point_masses.one().unwrap().accuracy(), 1.0);
        assert_eq!(twin.point_masses.zero().unwrap().accuracy(), 0.0);
    }
}
