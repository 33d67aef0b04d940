//! The paper's Table 1 experiment, by construction: for a model with known density and
//! curve, draw a calibration set and a test set, fit every recalibration method on the
//! calibration set, and ask each estimator, computed on the recalibrated test set, which
//! method is best. The exact TCE after recalibration ([`super::exact`]) says which one
//! truly is; the table reports how often each estimator agrees.
//!
//! Every estimate comes from the core (Histogram, SortedBuffer) or [`crate::kde`].

use core::fmt;

use rayon::prelude::*;

use super::exact::recalibrated_tce;
use super::{Method, RecalibrateError};
use crate::kde::kde_calibration_error;
use crate::sim::{Model, TceError};
use crate::{BinStats, Binning, Histogram, Norm, Slot, SortedBuffer, SweepOptions};

/// The methods of the paper's Table 1 (no Platt scaling).
pub const PAPER_METHODS: [Method; 3] = [Method::Histogram, Method::Isotonic, Method::Temperature];

/// The number of estimators compared.
pub const ESTIMATORS: usize = 6;

/// Bins of the binned estimators, as in the paper.
pub const BINS: usize = 15;

/// The estimators compared (all with p = 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Estimator {
    /// Equal-width ECE_bin, 15 bins.
    EqualWidthBin,
    /// Equal-mass ECE_bin, 15 bins.
    EqualMassBin,
    /// Equal-mass ECE_sweep (ties split in arrival order, the paper's binning).
    EqualMassSweep,
    /// Equal-mass ECE_sweep with equal scores kept in one bin ([`crate::Ties::Keep`]):
    /// recalibrated scores from piecewise-constant maps are heavily tied.
    EqualMassSweepTiesKept,
    /// Equal-mass ECE_debias, 15 bins.
    EqualMassDebias,
    /// The KDE estimator of Zhang et al.
    Kde,
}

impl Estimator {
    /// All of them, in table order.
    pub const ALL: [Estimator; ESTIMATORS] = [
        Estimator::EqualWidthBin,
        Estimator::EqualMassBin,
        Estimator::EqualMassSweep,
        Estimator::EqualMassSweepTiesKept,
        Estimator::EqualMassDebias,
        Estimator::Kde,
    ];

    /// A short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Estimator::EqualWidthBin => "EW ECE_bin",
            Estimator::EqualMassBin => "EM ECE_bin",
            Estimator::EqualMassSweep => "EM ECE_sweep",
            Estimator::EqualMassSweepTiesKept => "EM ECE_sweep (ties kept)",
            Estimator::EqualMassDebias => "EM ECE_debias",
            Estimator::Kde => "KDE",
        }
    }
}

/// Every estimator on one data set; `None` where one is undefined (e.g. KDE with zero
/// bandwidth).
pub fn estimates(scores: &[f64], labels: &[u8]) -> [Option<f64>; ESTIMATORS] {
    let norm = Norm::L2;
    let mut bins = [BinStats::EMPTY; BINS];
    let mut histogram = Histogram::with_storage(&mut bins, crate::Closure::Left).expect("BINS > 0");
    let ew = histogram
        .push_batch(scores, labels)
        .ok()
        .and_then(|()| histogram.ece_bin(norm).ok())
        .map(|e| e.value);
    let mut storage = vec![Slot::EMPTY; scores.len().max(1)];
    let mut buffer = SortedBuffer::with_storage(&mut storage).expect("capacity >= 1");
    let em = if buffer.push_batch(scores, labels).is_ok() {
        let sorted = buffer.sorted();
        let binning = Binning::EQUAL_MASS;
        [
            sorted.ece_bin(binning, BINS, norm).ok().map(|e| e.value),
            sorted
                .ece_sweep(binning, norm, SweepOptions::default())
                .ok()
                .map(|e| e.value),
            sorted
                .ece_sweep(
                    Binning::EqualMass(crate::Ties::Keep),
                    norm,
                    SweepOptions::default(),
                )
                .ok()
                .map(|e| e.value),
            sorted.ece_debias(binning, BINS, norm).ok().map(|e| e.value),
        ]
    } else {
        [None; 4]
    };
    let kde = kde_calibration_error(scores, labels, norm)
        .ok()
        .map(|e| e.value);
    [ew, em[0], em[1], em[2], em[3], kde]
}

/// A model and the sizes of its calibration and test sets.
#[derive(Clone, Debug, PartialEq)]
pub struct Setting {
    /// A label for the table.
    pub name: String,
    /// The true model.
    pub model: Model,
    /// Calibration-set size.
    pub calibration: usize,
    /// Test-set size.
    pub test: usize,
}

/// Why the experiment failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Table1Error {
    /// A method could not be fitted on some calibration set.
    Recalibrate {
        /// The method.
        method: Method,
        /// The repetition.
        rep: u64,
        /// Why.
        error: RecalibrateError,
    },
    /// An exact TCE failed.
    Tce(TceError),
}

impl fmt::Display for Table1Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Recalibrate { method, rep, error } => {
                write!(f, "repetition {rep}: {method}: {error}")
            }
            Self::Tce(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Table1Error {}

/// One repetition: per method, the exact TCE and every estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct Repetition {
    /// Exact TCE_2 after each method, in [`Method::ALL`] order.
    pub tce: [f64; 4],
    /// Estimates per method (outer, [`Method::ALL`]) and estimator (inner,
    /// [`Estimator::ALL`]).
    pub estimates: [[Option<f64>; ESTIMATORS]; 4],
}

/// The index of the smallest value (first on ties); `None` if no value is present.
fn argmin<I: IntoIterator<Item = Option<f64>>>(values: I) -> Option<usize> {
    values
        .into_iter()
        .enumerate()
        .filter_map(|(i, v)| v.map(|v| (i, v)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

impl Repetition {
    /// Among the methods marked in `among` (by index in [`Method::ALL`]), the one with
    /// the lowest exact TCE.
    pub fn tce_best(&self, among: &[bool; 4]) -> Option<usize> {
        argmin((0..4).map(|m| among[m].then_some(self.tce[m])))
    }

    /// Among the marked methods, the one an estimator picks (lowest estimate), if it is
    /// defined for any.
    pub fn picked_by(&self, estimator: usize, among: &[bool; 4]) -> Option<usize> {
        argmin((0..4).map(|m| self.estimates[m][estimator].filter(|_| among[m])))
    }
}

/// Runs repetition `rep`: the first `calibration` rows of `model.dataset(seed, rep, …)`
/// are the calibration set, the next `test` rows the test set.
pub fn repetition(setting: &Setting, seed: u64, rep: u64) -> Result<Repetition, Table1Error> {
    let (scores, labels) = setting
        .model
        .dataset(seed, rep, setting.calibration + setting.test);
    let (fit_scores, test_scores) = scores.split_at(setting.calibration);
    let (fit_labels, test_labels) = labels.split_at(setting.calibration);
    let mut outcome = Repetition {
        tce: [0.0; 4],
        estimates: [[None; ESTIMATORS]; 4],
    };
    for (m, method) in Method::ALL.into_iter().enumerate() {
        let map = method
            .fit(fit_scores, fit_labels)
            .map_err(|error| Table1Error::Recalibrate { method, rep, error })?;
        outcome.tce[m] = recalibrated_tce(&setting.model, &map, 2.0).map_err(Table1Error::Tce)?;
        outcome.estimates[m] = estimates(&map.apply_all(test_scores), test_labels);
    }
    Ok(outcome)
}

/// The summary over repetitions of one setting.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The setting's name.
    pub name: String,
    /// Calibration and test sizes.
    pub sizes: (usize, usize),
    /// Repetitions run.
    pub repetitions: usize,
    /// TCE of the unrecalibrated model (fraction).
    pub original_tce: f64,
    /// Per estimator, the number of repetitions in which it picked the TCE-best method.
    pub agreements: [usize; ESTIMATORS],
    /// Per estimator, repetitions in which it was undefined for some method.
    pub undefined: [usize; ESTIMATORS],
    /// Per method, how often it had the lowest exact TCE.
    pub tce_best: [usize; 4],
    /// Per method, the mean exact TCE (fraction).
    pub mean_tce: [f64; 4],
}

impl Summary {
    /// The share (percent) of repetitions in which estimator `e` picked the TCE-best
    /// method.
    pub fn agreement_percent(&self, e: usize) -> f64 {
        100.0 * self.agreements[e] as f64 / self.repetitions as f64
    }
}

/// Runs `repetitions` repetitions (in parallel; each is a pure function of (seed, rep)).
pub fn run(
    setting: &Setting,
    repetitions: usize,
    seed: u64,
) -> Result<Vec<Repetition>, Table1Error> {
    (0..repetitions as u64)
        .into_par_iter()
        .map(|rep| repetition(setting, seed, rep))
        .collect()
}

/// The summary of a setting's repetitions when only the `methods` compete.
pub fn summarize(
    setting: &Setting,
    outcomes: &[Repetition],
    methods: &[Method],
) -> Result<Summary, Table1Error> {
    let among: [bool; 4] = Method::ALL.map(|m| methods.contains(&m));
    let repetitions = outcomes.len();
    let mut summary = Summary {
        name: setting.name.clone(),
        sizes: (setting.calibration, setting.test),
        repetitions,
        original_tce: setting.model.tce(2.0).map_err(Table1Error::Tce)?,
        agreements: [0; ESTIMATORS],
        undefined: [0; ESTIMATORS],
        tce_best: [0; 4],
        mean_tce: [0.0; 4],
    };
    for outcome in outcomes {
        let best = outcome.tce_best(&among);
        if let Some(best) = best {
            summary.tce_best[best] += 1;
        }
        for m in 0..4 {
            summary.mean_tce[m] += outcome.tce[m] / repetitions as f64;
        }
        for e in 0..ESTIMATORS {
            if best.is_some() && outcome.picked_by(e, &among) == best {
                summary.agreements[e] += 1;
            }
            if (0..4).any(|m| among[m] && outcome.estimates[m][e].is_none()) {
                summary.undefined[e] += 1;
            }
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Beta, Curve};

    #[test]
    fn a_small_run_is_deterministic_and_consistent() {
        let setting = Setting {
            name: "Beta(1.1, 0.1), c^2".into(),
            model: Model::new(
                Beta::new(1.1, 0.1).unwrap(),
                Curve::polynomial(2.0).unwrap(),
            ),
            calibration: 500,
            test: 500,
        };
        let outcomes = run(&setting, 6, 3).unwrap();
        assert_eq!(outcomes, run(&setting, 6, 3).unwrap());
        let a = summarize(&setting, &outcomes, &Method::ALL).unwrap();
        let paper = summarize(&setting, &outcomes, &PAPER_METHODS).unwrap();
        assert_eq!(paper.tce_best[2], 0, "Platt does not compete");
        assert_eq!(a.tce_best.iter().sum::<usize>(), 6);
        // Recalibration on 500 samples must improve on TCE = 8.46%.
        assert!(a.mean_tce.iter().all(|&t| t < a.original_tce), "{a:?}");
        assert!(a.agreements.iter().all(|&n| n <= 6));
    }

    #[test]
    fn estimates_match_the_spec_worked_example() {
        // SPEC §9: EW B = 15 p = 2 → 0.136057083608, EM sweep → 0.146112599274.
        let f = [
            0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997, 0.936, 0.965,
            0.986, 0.906, 0.734, 0.864, 0.976, 0.738, 0.851,
        ];
        let y = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0];
        let e = estimates(&f, &y);
        assert!((e[0].unwrap() - 0.136057083608).abs() < 1e-12);
        assert!((e[1].unwrap() - 0.209971188500).abs() < 1e-12);
        assert!((e[2].unwrap() - 0.146112599274).abs() < 1e-12);
        assert!((e[4].unwrap() - 0.108649206164).abs() < 1e-12);
        assert!(e[3].is_some() && e[5].is_some());
    }
}
