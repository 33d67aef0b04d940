//! The paper's Table 1 experiment, by construction: for a model with known density and
//! curve, draw a calibration set and a test set, fit every recalibration method on the
//! calibration set, and ask each estimator, computed on the recalibrated test set, which
//! method is best. The exact TCE after recalibration ([`super::exact`]) says which one
//! truly is; the table reports how often each estimator agrees, and how far each
//! estimate falls from that exact TCE (an estimator that under-reports one method's
//! error more than another's is biased towards picking it).
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

/// The most repetitions a setting takes (`tce table1 --reps`, `tce paper --table1-reps`):
/// the simulator's bound ([`crate::sim::runner::MAX_REPETITIONS`], 10^5). Every
/// repetition's outcome (a [`Repetition`], about 800 bytes) is kept until the setting is
/// summarised, about 80 MB at the bound. A hundred times the default 1000.
pub const MAX_REPETITIONS: usize = crate::sim::runner::MAX_REPETITIONS;

/// The largest calibration set, and the largest test set, a setting takes
/// (`tce table1 --calibration`, `--test`): the test set is sorted in a sorted buffer, so
/// its bound ([`crate::buffer::MAX_CAPACITY`], 2^31 − 1) holds for both. What such sets
/// cost is checked before any work by [`check`] ([`memory_estimate`]).
pub const MAX_SET_SIZE: usize = crate::buffer::MAX_CAPACITY;

/// Bytes one repetition holds at its peak per calibration row, rounded up: its share of
/// the drawn data set (9), and the largest of the methods' fits (isotonic regression's
/// sorted pairs and blocks, about 56; the logistic fits' grouped rows and their order,
/// about 65, with room for the fit's work).
const BYTES_PER_CALIBRATION_ROW: usize = 128;

/// Bytes one repetition holds at its peak per test row, rounded up: its share of the
/// drawn data set (9), the recalibrated scores (8) and the sorted buffer's storage with
/// room for its radix sort (32).
const BYTES_PER_TEST_ROW: usize = 64;

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

/// Every estimator on one data set, with the number of bins each EM sweep chose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Estimates {
    /// Per estimator ([`Estimator::ALL`]); `None` where one is undefined (e.g. KDE with
    /// zero bandwidth).
    pub values: [Option<f64>; ESTIMATORS],
    /// b* of each defined EM sweep, `None` for the other estimators: a sweep that stops
    /// early on tied scores shows here.
    pub sweep_bins: [Option<usize>; ESTIMATORS],
}

impl Estimates {
    /// No estimator defined.
    pub const UNDEFINED: Estimates = Estimates {
        values: [None; ESTIMATORS],
        sweep_bins: [None; ESTIMATORS],
    };
}

/// Every estimator on one data set.
///
/// Panics if the allocator cannot hold the data set's sort storage; the experiment
/// ([`repetition`]) allocates it fallibly instead.
pub fn estimates(scores: &[f64], labels: &[u8]) -> Estimates {
    let mut storage = crate::storage::sorting_slots(scores.len()).expect("memory for the samples");
    estimates_in(scores, labels, &mut storage)
}

/// [`estimates`] with the sorted buffer in `storage` (at least one slot; with fewer
/// slots than samples the EM estimators are undefined).
pub(super) fn estimates_in(scores: &[f64], labels: &[u8], storage: &mut [Slot]) -> Estimates {
    let norm = Norm::L2;
    let mut bins = [BinStats::EMPTY; BINS];
    let mut histogram = Histogram::with_storage(&mut bins, crate::Closure::Left).expect("BINS > 0");
    let ew = histogram
        .push_batch(scores, labels)
        .ok()
        .and_then(|()| histogram.ece_bin(norm).ok())
        .map(|e| e.value);
    let mut buffer = SortedBuffer::with_storage(storage).expect("capacity >= 1");
    let (em, sweep, sweep_ties_kept, debias) = if buffer.push_batch(scores, labels).is_ok() {
        let sorted = buffer.sorted();
        let binning = Binning::EQUAL_MASS;
        (
            sorted.ece_bin(binning, BINS, norm).ok(),
            sorted
                .ece_sweep(binning, norm, SweepOptions::default())
                .ok(),
            sorted
                .ece_sweep(
                    Binning::EqualMass(crate::Ties::Keep),
                    norm,
                    SweepOptions::default(),
                )
                .ok(),
            sorted.ece_debias(binning, BINS, norm).ok(),
        )
    } else {
        (None, None, None, None)
    };
    let kde = kde_calibration_error(scores, labels, norm)
        .ok()
        .map(|e| e.value);
    let value = |e: Option<crate::Estimate>| e.map(|e| e.value);
    // The sweep's `bins` is its b*.
    let b_star = |e: Option<crate::Estimate>| e.map(|e| e.bins);
    Estimates {
        values: [
            ew,
            value(em),
            value(sweep),
            value(sweep_ties_kept),
            value(debias),
            kde,
        ],
        sweep_bins: [
            None,
            None,
            b_star(sweep),
            b_star(sweep_ties_kept),
            None,
            None,
        ],
    }
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

/// One of a setting's two data sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Set {
    /// The calibration set, on which the methods are fitted.
    Calibration,
    /// The test set, on which the estimators rank the methods.
    Test,
}

impl fmt::Display for Set {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Set::Calibration => "calibration",
            Set::Test => "test",
        })
    }
}

/// Why the experiment failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Table1Error {
    /// Repetitions of 0 or more than [`MAX_REPETITIONS`] (refused before any work).
    RepetitionsOutOfRange(usize),
    /// A calibration or test set of 0 rows or more than [`MAX_SET_SIZE`] (refused before
    /// any work).
    SizeOutOfRange {
        /// Which set.
        set: Set,
        /// Its size.
        n: usize,
    },
    /// The allocator refused `bytes` bytes for the repetitions (at [`check`], before any
    /// work, for the [`memory_estimate`]; or for a repetition's data while it ran).
    OutOfMemory {
        /// The bytes asked for (`usize::MAX` when they pass the address space).
        bytes: usize,
    },
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
            Self::RepetitionsOutOfRange(r) => write!(
                f,
                "{r} repetitions: the Table 1 experiment takes 1 to {MAX_REPETITIONS} \
                 (tce::recalibrate::table1::MAX_REPETITIONS)"
            ),
            Self::SizeOutOfRange { set, n } => write!(
                f,
                "a {set} set of {n} rows: the Table 1 experiment takes 1 to {MAX_SET_SIZE} \
                 (tce::recalibrate::table1::MAX_SET_SIZE)"
            ),
            Self::OutOfMemory { bytes } => write!(
                f,
                "cannot allocate {bytes} bytes for the Table 1 experiment's repetitions \
                 (smaller sets or fewer repetitions need less)"
            ),
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
    /// Estimates per method, in [`Method::ALL`] order.
    pub estimates: [Estimates; 4],
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
        argmin((0..4).map(|m| self.estimates[m].values[estimator].filter(|_| among[m])))
    }
}

/// Checks a number of repetitions: 1 to [`MAX_REPETITIONS`].
pub fn check_repetitions(repetitions: usize) -> Result<(), Table1Error> {
    if repetitions == 0 || repetitions > MAX_REPETITIONS {
        return Err(Table1Error::RepetitionsOutOfRange(repetitions));
    }
    Ok(())
}

/// Checks the sizes of the calibration and test sets: 1 to [`MAX_SET_SIZE`] each.
pub fn check_sizes(calibration: usize, test: usize) -> Result<(), Table1Error> {
    for (set, n) in [(Set::Calibration, calibration), (Set::Test, test)] {
        if n == 0 || n > MAX_SET_SIZE {
            return Err(Table1Error::SizeOutOfRange { set, n });
        }
    }
    Ok(())
}

/// The bytes a run of `repetitions` repetitions of sets of `calibration` and `test` rows
/// holds at its peak, an estimate rounded up: each of rayon's threads holds one
/// repetition (its drawn data set, a method's fit, the recalibrated test set and its
/// sort storage: about 128 bytes a calibration row and 64 a test row), and every
/// finished repetition's outcome is kept. `None` past the address space.
pub fn memory_estimate(calibration: usize, test: usize, repetitions: usize) -> Option<usize> {
    let repetition = calibration
        .checked_mul(BYTES_PER_CALIBRATION_ROW)?
        .checked_add(test.checked_mul(BYTES_PER_TEST_ROW)?)?;
    repetition
        .checked_mul(rayon::current_num_threads().max(1))?
        .checked_add(repetitions.checked_mul(core::mem::size_of::<Repetition>())?)
}

/// Checks a run before any work: the repetitions ([`check_repetitions`]), the sizes
/// ([`check_sizes`]), and that the allocator grants the [`memory_estimate`] (asked for
/// and given back at once: [`Table1Error::OutOfMemory`] here rather than an abort part
/// way through). [`run`] starts with it; a caller may run it before reading any data.
pub fn check(calibration: usize, test: usize, repetitions: usize) -> Result<(), Table1Error> {
    check_repetitions(repetitions)?;
    check_sizes(calibration, test)?;
    let bytes = memory_estimate(calibration, test, repetitions).unwrap_or(usize::MAX);
    let mut probe: Vec<u8> = Vec::new();
    probe
        .try_reserve_exact(bytes)
        .map_err(|_| Table1Error::OutOfMemory { bytes })
}

/// Runs repetition `rep`: the first `calibration` rows of `model.dataset(seed, rep, …)`
/// are the calibration set, the next `test` rows the test set. The data set, the
/// recalibrated test scores and their sort storage are allocated fallibly
/// ([`Table1Error::OutOfMemory`]); the sizes are not checked here ([`check`] does).
pub fn repetition(setting: &Setting, seed: u64, rep: u64) -> Result<Repetition, Table1Error> {
    let (calibration, test) = (setting.calibration, setting.test);
    let n = calibration
        .checked_add(test)
        .ok_or(Table1Error::SizeOutOfRange {
            set: Set::Test,
            n: test,
        })?;
    let out_of_memory = |rows: usize, bytes_per_row: usize| Table1Error::OutOfMemory {
        bytes: rows.saturating_mul(bytes_per_row),
    };
    let (scores, labels) = setting
        .model
        .try_dataset(seed, rep, n)
        .map_err(|_| out_of_memory(n, 9))?;
    let (fit_scores, test_scores) = scores.split_at(calibration);
    let (fit_labels, test_labels) = labels.split_at(calibration);
    let mut storage = crate::storage::sorting_slots(test)
        .map_err(|e| out_of_memory(e.len, core::mem::size_of::<Slot>()))?;
    let mut recalibrated: Vec<f64> = Vec::new();
    recalibrated
        .try_reserve_exact(test)
        .map_err(|_| out_of_memory(test, 8))?;
    let mut outcome = Repetition {
        tce: [0.0; 4],
        estimates: [Estimates::UNDEFINED; 4],
    };
    for (m, method) in Method::ALL.into_iter().enumerate() {
        let map = method
            .fit(fit_scores, fit_labels)
            .map_err(|error| Table1Error::Recalibrate { method, rep, error })?;
        outcome.tce[m] =
            recalibrated_tce(&setting.model.into(), &map, 2.0).map_err(Table1Error::Tce)?;
        recalibrated.clear();
        recalibrated.extend(test_scores.iter().map(|&s| map.apply(s)));
        outcome.estimates[m] = estimates_in(&recalibrated, test_labels, &mut storage);
    }
    Ok(outcome)
}

/// A mean being accumulated: its sum and count, so that means over several settings
/// pool their repetitions rather than average their averages.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Mean {
    /// The sum of the values added.
    pub sum: f64,
    /// How many values were added.
    pub count: usize,
}

impl Mean {
    /// Adds a value; `None` (an undefined estimate) is left out.
    pub fn add(&mut self, value: Option<f64>) {
        if let Some(value) = value {
            self.sum += value;
            self.count += 1;
        }
    }

    /// Both means' values together.
    pub fn merge(self, other: Mean) -> Mean {
        Mean {
            sum: self.sum + other.sum,
            count: self.count + other.count,
        }
    }

    /// The mean; `None` if no value was added.
    pub fn value(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }
}

/// The standard normal quantile of 0.975: a 95 % two-sided interval.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval (95 %) of a binomial proportion, `successes` of `trials`,
/// as fractions; `None` without trials or with more successes than trials.
///
/// Used for every "picks best %" and "best in %" share: each repetition is an
/// independent Bernoulli trial (its data set is a pure function of (seed, rep)), so the
/// count is binomial. Wilson rather than the normal approximation because shares near 0
/// or 100 % are common here (e.g. temperature scaling best in 100 % of Birds
/// repetitions), where the normal interval collapses to a point or leaves [0, 1]. For a
/// count pooled over settings with different success probabilities the binomial
/// variance is an upper bound (a sum of independent Bernoullis with unequal p has a
/// variance at most n·p̄(1 − p̄)), so the pooled interval is conservative.
pub fn wilson_interval(successes: usize, trials: usize) -> Option<(f64, f64)> {
    if trials == 0 || successes > trials {
        return None;
    }
    let n = trials as f64;
    let share = successes as f64 / n;
    let z2 = Z_95 * Z_95;
    let denominator = 1.0 + z2 / n;
    let centre = (share + z2 / (2.0 * n)) / denominator;
    let half = Z_95 / denominator * (share * (1.0 - share) / n + z2 / (4.0 * n * n)).sqrt();
    // At 0 (n) successes the lower (upper) end is exactly 0 (1), which the rounded
    // centre ± half misses by an ulp; elsewhere both ends lie strictly inside (0, 1).
    let lo = if successes == 0 { 0.0 } else { centre - half };
    let hi = if successes == trials {
        1.0
    } else {
        centre + half
    };
    Some((lo, hi))
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
    /// Per estimator, the number of repetitions in which it picked a TCE-best method (one
    /// whose TCE equals the lowest: see `tied`).
    pub agreements: [usize; ESTIMATORS],
    /// Per estimator, repetitions in which it was undefined for some method.
    pub undefined: [usize; ESTIMATORS],
    /// Per method, how often it had the lowest exact TCE.
    pub tce_best: [usize; 4],
    /// Repetitions in which several competing methods share the lowest TCE exactly.
    /// Picking any of them counts as picking the best; `tce_best` credits the first in
    /// [`Method::ALL`] order. Exact ties do not occur by construction (continuous TCEs);
    /// on real data a fitted model's TCE is exactly 0 wherever its curve is the identity.
    pub tied: usize,
    /// Per method, the mean exact TCE (fraction).
    pub mean_tce: [f64; 4],
    /// Per method and estimator, the mean of estimate − exact TCE (fraction, like
    /// `mean_tce`) over the repetitions in which the estimate is defined: negative means
    /// the estimator under-reports that method's error, which makes it prefer the method.
    /// Independent of which methods compete.
    pub signed_error: [[Mean; ESTIMATORS]; 4],
    /// Per method and estimator, the mean b* of the EM sweeps (no values for the other
    /// estimators).
    pub sweep_bins: [[Mean; ESTIMATORS]; 4],
}

impl Summary {
    /// The share (percent) of repetitions in which estimator `e` picked the TCE-best
    /// method.
    pub fn agreement_percent(&self, e: usize) -> f64 {
        100.0 * self.agreements[e] as f64 / self.repetitions as f64
    }
}

/// Runs `repetitions` repetitions (in parallel; each is a pure function of (seed, rep)),
/// after [`check`]ing them and the setting's sizes.
pub fn run(
    setting: &Setting,
    repetitions: usize,
    seed: u64,
) -> Result<Vec<Repetition>, Table1Error> {
    check(setting.calibration, setting.test, repetitions)?;
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
    let original_tce = setting.model.tce(2.0).map_err(Table1Error::Tce)?;
    Ok(summarize_outcomes(
        setting.name.clone(),
        (setting.calibration, setting.test),
        original_tce,
        outcomes,
        methods,
    ))
}

/// The summary of repetitions when only the `methods` compete, for any source of them
/// (a setting's, [`summarize`]; a real file's splits, [`super::table1_real::summarize`]):
/// `name`, `sizes` and `original_tce` are reported as given.
pub fn summarize_outcomes(
    name: String,
    sizes: (usize, usize),
    original_tce: f64,
    outcomes: &[Repetition],
    methods: &[Method],
) -> Summary {
    let among: [bool; 4] = Method::ALL.map(|m| methods.contains(&m));
    let repetitions = outcomes.len();
    let mut summary = Summary {
        name,
        sizes,
        repetitions,
        original_tce,
        agreements: [0; ESTIMATORS],
        undefined: [0; ESTIMATORS],
        tce_best: [0; 4],
        tied: 0,
        mean_tce: [0.0; 4],
        signed_error: [[Mean::default(); ESTIMATORS]; 4],
        sweep_bins: [[Mean::default(); ESTIMATORS]; 4],
    };
    for outcome in outcomes {
        let best = outcome.tce_best(&among);
        if let Some(best) = best {
            summary.tce_best[best] += 1;
            let lowest = (0..4).filter(|&m| among[m] && outcome.tce[m] == outcome.tce[best]);
            if lowest.count() > 1 {
                summary.tied += 1;
            }
        }
        for m in 0..4 {
            summary.mean_tce[m] += outcome.tce[m] / repetitions as f64;
            let estimates = &outcome.estimates[m];
            for e in 0..ESTIMATORS {
                summary.signed_error[m][e].add(estimates.values[e].map(|v| v - outcome.tce[m]));
                summary.sweep_bins[m][e].add(estimates.sweep_bins[e].map(|b| b as f64));
            }
        }
        for e in 0..ESTIMATORS {
            let lowest = best.map(|b| outcome.tce[b]);
            if outcome
                .picked_by(e, &among)
                .is_some_and(|p| Some(outcome.tce[p]) == lowest)
            {
                summary.agreements[e] += 1;
            }
            if (0..4).any(|m| among[m] && outcome.estimates[m].values[e].is_none()) {
                summary.undefined[e] += 1;
            }
        }
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Beta, Curve};

    /// SPEC §9's worked example.
    const SPEC_SCORES: [f64; 20] = [
        0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997, 0.936, 0.965,
        0.986, 0.906, 0.734, 0.864, 0.976, 0.738, 0.851,
    ];
    const SPEC_LABELS: [u8; 20] = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0];

    /// The paper's Beta(1.1, 0.1) model with T = c², `n` samples for calibration and test.
    fn paper_setting(name: &str, n: usize) -> Setting {
        Setting {
            name: name.into(),
            model: Model::new(
                Beta::new(1.1, 0.1).unwrap(),
                Curve::polynomial(2.0).unwrap(),
            ),
            calibration: n,
            test: n,
        }
    }

    #[test]
    fn wilson_intervals_match_hand_computed_values() {
        // 5 of 10: centre 1/2, half-width z/(1 + z²/10)·sqrt(1/40 + z²/400) = 0.263 40.
        let (lo, hi) = wilson_interval(5, 10).unwrap();
        assert!(
            (lo - 0.236_593).abs() < 1e-6 && (hi - 0.763_407).abs() < 1e-6,
            "{lo} {hi}"
        );
        // 0 of 10: [0, z²/(n + z²)] = [0, 0.277 53].
        let (lo, hi) = wilson_interval(0, 10).unwrap();
        assert_eq!(lo, 0.0);
        assert!(
            (hi - Z_95 * Z_95 / (10.0 + Z_95 * Z_95)).abs() < 1e-12,
            "{hi}"
        );
        let (lo, hi) = wilson_interval(10, 10).unwrap();
        assert!((lo - 10.0 / (10.0 + Z_95 * Z_95)).abs() < 1e-12 && hi == 1.0);
        // 140 of 200 (70 %, the share the paper reports for the sweep): 0.6332 … 0.7593.
        let (lo, hi) = wilson_interval(140, 200).unwrap();
        assert!(
            (lo - 0.633_2).abs() < 1e-3 && (hi - 0.759_3).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert_eq!(wilson_interval(0, 0), None);
        assert_eq!(wilson_interval(3, 2), None);
    }

    #[test]
    fn a_small_run_is_deterministic_and_consistent() {
        let setting = paper_setting("Beta(1.1, 0.1), c^2", 500);
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
    fn repetitions_and_sizes_are_bounded_before_any_work() {
        let setting = |calibration, test| Setting {
            calibration,
            test,
            ..paper_setting("bounds", 10)
        };
        for r in [0, MAX_REPETITIONS + 1, 1 << 34, usize::MAX] {
            assert_eq!(
                run(&setting(10, 10), r, 0),
                Err(Table1Error::RepetitionsOutOfRange(r))
            );
        }
        for n in [0, MAX_SET_SIZE + 1, 1 << 34, usize::MAX] {
            // usize::MAX + 10 overflowed an addition (a panic) before the check.
            assert_eq!(
                run(&setting(n, 10), 1, 0),
                Err(Table1Error::SizeOutOfRange {
                    set: Set::Calibration,
                    n
                })
            );
            assert_eq!(
                run(&setting(10, n), 1, 0),
                Err(Table1Error::SizeOutOfRange { set: Set::Test, n })
            );
        }
        assert_eq!(check_repetitions(MAX_REPETITIONS), Ok(()));
        assert_eq!(check_sizes(MAX_SET_SIZE, MAX_SET_SIZE), Ok(()));
        // The largest sets pass their bound; what they cost is estimated, not assumed.
        let bytes = memory_estimate(MAX_SET_SIZE, MAX_SET_SIZE, MAX_REPETITIONS).unwrap();
        assert!(bytes > 192 * MAX_SET_SIZE, "{bytes}");
        assert_eq!(memory_estimate(usize::MAX, 1, 1), None);
        assert_eq!(
            Table1Error::SizeOutOfRange {
                set: Set::Calibration,
                n: usize::MAX
            }
            .to_string(),
            "a calibration set of 18446744073709551615 rows: the Table 1 experiment takes 1 \
             to 2147483647 (tce::recalibrate::table1::MAX_SET_SIZE)"
        );
        assert_eq!(
            Table1Error::RepetitionsOutOfRange(0).to_string(),
            "0 repetitions: the Table 1 experiment takes 1 to 100000 \
             (tce::recalibrate::table1::MAX_REPETITIONS)"
        );
    }

    #[test]
    fn a_repetition_estimates_as_on_fresh_storage() {
        // The repetition reuses one sort storage for the four methods' test sets; the
        // estimates are those of `estimates` on storage of their own.
        let setting = paper_setting("reuse", 300);
        let outcome = repetition(&setting, 5, 2).unwrap();
        let (scores, labels) = setting.model.dataset(5, 2, 600);
        for (m, method) in Method::ALL.into_iter().enumerate() {
            let map = method.fit(&scores[..300], &labels[..300]).unwrap();
            assert_eq!(
                outcome.estimates[m],
                estimates(&map.apply_all(&scores[300..]), &labels[300..])
            );
        }
    }

    #[test]
    fn estimates_match_the_spec_worked_example() {
        // SPEC §9: EW B = 15 p = 2 → 0.136057083608, EM sweep → 0.146112599274.
        let e = estimates(&SPEC_SCORES, &SPEC_LABELS).values;
        assert!((e[0].unwrap() - 0.136057083608).abs() < 1e-12);
        assert!((e[1].unwrap() - 0.209971188500).abs() < 1e-12);
        assert!((e[2].unwrap() - 0.146112599274).abs() < 1e-12);
        assert!((e[4].unwrap() - 0.108649206164).abs() < 1e-12);
        assert!(e[3].is_some() && e[5].is_some());
    }

    #[test]
    fn the_sweeps_report_their_b_star() {
        // SPEC §9's example: b* = 9. Its scores are all distinct, so keeping ties changes
        // nothing.
        let e = estimates(&SPEC_SCORES, &SPEC_LABELS);
        assert_eq!(e.sweep_bins, [None, None, Some(9), Some(9), None, None]);
        assert_eq!(e.values[3], e.values[2]);
    }

    #[test]
    fn signed_errors_and_b_star_average_over_defined_estimates() {
        let setting = paper_setting("hand-made", 10);
        // Only the histogram method (index 0) gets estimates, from the two EM sweeps;
        // binary fractions keep the arithmetic exact.
        let repetition = |tce: f64, sweep: (f64, usize), ties_kept: Option<(f64, usize)>| {
            let mut values = [None; ESTIMATORS];
            let mut sweep_bins = [None; ESTIMATORS];
            (values[2], sweep_bins[2]) = (Some(sweep.0), Some(sweep.1));
            (values[3], sweep_bins[3]) = (ties_kept.map(|t| t.0), ties_kept.map(|t| t.1));
            let none = Estimates::UNDEFINED;
            Repetition {
                tce: [tce, 0.5, 0.5, 0.5],
                estimates: [Estimates { values, sweep_bins }, none, none, none],
            }
        };
        let outcomes = [
            repetition(0.25, (0.125, 3), Some((0.375, 10))),
            repetition(0.5, (0.125, 5), None),
        ];
        let s = summarize(&setting, &outcomes, &PAPER_METHODS).unwrap();
        let histogram = 0;
        // Sweep: (0.125 − 0.25 + 0.125 − 0.5) / 2; ties kept: only the first repetition.
        assert_eq!(s.signed_error[histogram][2].value(), Some(-0.25));
        assert_eq!(s.signed_error[histogram][3].value(), Some(0.125));
        assert_eq!(s.signed_error[histogram][3].count, 1);
        assert_eq!(s.sweep_bins[histogram][2].value(), Some(4.0));
        assert_eq!(s.sweep_bins[histogram][3].value(), Some(10.0));
        assert_eq!(s.signed_error[histogram][0].value(), None);
        assert_eq!(s.sweep_bins[histogram][0].value(), None);
        assert_eq!(s.signed_error[1][2].value(), None);
        // Pooling with a second setting's single repetition (+0.25) weighs every
        // repetition once: −0.25 / 3, where the mean of the two means would be 0.
        let other = summarize(
            &setting,
            &[repetition(0.25, (0.5, 7), None)],
            &PAPER_METHODS,
        )
        .unwrap();
        let pooled = s.signed_error[histogram][2].merge(other.signed_error[histogram][2]);
        assert_eq!(pooled.count, 3);
        assert_eq!(pooled.value(), Some(-0.25 / 3.0));
    }

    #[test]
    fn a_pick_that_ties_the_lowest_tce_counts_as_best() {
        let setting = paper_setting("ties", 10);
        // Histogram binning and isotonic regression share the lowest TCE, 0.
        let estimates = |histogram: f64, isotonic: f64, temperature: f64| {
            [histogram, isotonic, 0.9, temperature].map(|v| {
                let mut values = [None; ESTIMATORS];
                values[0] = Some(v);
                Estimates {
                    values,
                    sweep_bins: [None; ESTIMATORS],
                }
            })
        };
        let tied = Repetition {
            tce: [0.0, 0.0, 0.3, 0.2],
            estimates: estimates(0.4, 0.1, 0.3),
        };
        let missed = Repetition {
            tce: [0.0, 0.0, 0.3, 0.2],
            estimates: estimates(0.4, 0.5, 0.3),
        };
        let s = summarize(&setting, &[tied, missed], &PAPER_METHODS).unwrap();
        // "Best in" credits the first tied method; picking the other is still right.
        assert_eq!(s.tce_best, [2, 0, 0, 0]);
        assert_eq!(s.tied, 2);
        assert_eq!(s.agreements[0], 1);
    }
}
