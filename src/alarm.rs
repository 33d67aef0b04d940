//! A sequential alarm for miscalibration with a stated false-alarm rate: per equal-width
//! bin, two risk-adjusted Bernoulli CUSUMs (Steiner, Cook, Farewell and Treasure 2000),
//! one for accuracy above the confidence and one for accuracy below it.
//!
//! # The test
//!
//! H0 is calibration, E[Y | c] = c. Each CUSUM compares it with one alternative whose
//! odds are those of the score times e^(±θ) (`shift` θ, in log-odds): for a sample of
//! score c and label y the log-likelihood ratio is
//!
//! * l₊ = θy − ln(1 + c(e^θ − 1)) (accuracy above the confidence: under-confidence),
//! * l₋ = −θy − ln(1 + c(e^−θ − 1)) (accuracy below it: over-confidence),
//!
//! and each of a bin's two CUSUMs is W ← max(0, W + l) over the samples that fall into
//! that bin. The statistic is the largest of the 2B CUSUMs; the alarm goes off when it
//! reaches the `threshold` h, and stays raised until [`CalibrationAlarm::reset`]. A bin of
//! its own for each score range sees miscalibration that cancels across bins
//! (over-confident at high scores, under-confident at low ones), which one CUSUM of all
//! the residuals would average away.
//!
//! # The stated false-alarm rate
//!
//! ARL0 is the mean number of samples from a reset to a (false) alarm on a calibrated
//! stream.
//!
//! * **Guaranteed: ARL0 ≥ e^h / 2** ([`guaranteed_arl0`]), whatever the scores, their
//!   distribution, their order and the number of bins. Each l has E0[e^l | c] = 1, so
//!   for every CUSUM the Shiryaev–Roberts sum R ← (1 + R)·e^l (R ≥ e^W) grows by 1 in
//!   expectation at each of its samples. A sample enters two CUSUMs (its bin's), so the
//!   sum of the 2B sums minus 2n is a martingale; at the alarm one of them is at least
//!   e^h, and optional stopping gives 2·E(N) ≥ e^h (Lorden 1971's argument, summed over
//!   the bins). [`threshold_for_guaranteed_arl0`] inverts it.
//! * **Approximate: ARL0 ≈ (e^h − h − 1) / (2Ī)** ([`approximate_arl0`]), where Ī is the
//!   mean over the stream's scores of the Kullback–Leibler information per sample,
//!   (KL₊(c) + KL₋(c))/2 ([`information`]; the alarm measures it on the scores it sees,
//!   [`CalibrationAlarm::mean_information`]). Each CUSUM drifts down by its information
//!   and its increments' variance is about twice that, so in "information time" it is a
//!   Brownian motion with drift −1 and variance 2, whose reflected path reaches h after
//!   e^h − h − 1 units on average; the 2B CUSUMs share the stream's information, hence
//!   the 2. Scores near 0 or 1 carry little information, so the guaranteed bound, which
//!   ignores it, is conservative by about a factor 1/Ī (hundreds on confident
//!   classifiers). [`threshold_for_arl0`] inverts the approximation. Measured on the
//!   paper's models and a fitted real score density (docs/monitoring.md, "Calibration
//!   alarm"), it is conservative: there the measured ARL0 was 1.3 to 2.5 times the stated
//!   one (the discrete walk's overshoot, which the Brownian motion lacks, lengthens the
//!   runs).
//!
//! # Order and late labels
//!
//! Both statements need only that each pushed label, given its score and everything
//! pushed before it, is Bernoulli(score) under H0. Pairs may arrive in any order that
//! does not depend on the labels (labels that come late, batches from several servers
//! interleaved); an order that does (misses reported later than hits) breaks it.
//!
//! # Memory and merging
//!
//! 24 bytes per bin and a 64-byte header, no allocation. Two alarms do not merge: a
//! CUSUM is the largest sum over the samples since some change point, which depends on
//! the order of the samples; two streams' CUSUMs do not determine the CUSUM of their
//! interleaving. A fleet pushes its pairs into one alarm, or keeps one alarm per device:
//! by the martingale argument above, K alarms at threshold h raise a false alarm at most
//! once per e^h/2 samples of the fleet's total stream.

use crate::binning::{equal_width_edges, Closure};
use crate::error::{ConfigError, PushError};
use crate::limits::{add_counts, batch_count};
use crate::sample;

/// The largest shift θ accepted, in log-odds (odds times e^10 ≈ 22 000): beyond it an
/// alternative is no longer a miscalibration but a different classifier.
pub const MAX_SHIFT: f64 = 10.0;

/// The largest threshold h accepted: e^h must be finite for the stated rates.
pub const MAX_THRESHOLD: f64 = 700.0;

/// One equal-width bin of a [`CalibrationAlarm`]: its two CUSUMs and its samples.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C)]
pub struct AlarmBin {
    pub(crate) up: f64,
    pub(crate) down: f64,
    pub(crate) samples: u64,
}

impl AlarmBin {
    /// An empty bin.
    pub const EMPTY: AlarmBin = AlarmBin {
        up: 0.0,
        down: 0.0,
        samples: 0,
    };

    /// The CUSUM for accuracy above the confidence (log-odds + θ).
    pub fn under_confidence(&self) -> f64 {
        self.up
    }

    /// The CUSUM for accuracy below the confidence (log-odds − θ).
    pub fn over_confidence(&self) -> f64 {
        self.down
    }

    /// Samples pushed into this bin since the last reset.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

/// Checks a shift θ: finite, in (0, [`MAX_SHIFT`]], else [`ConfigError::InvalidShift`].
pub fn check_shift(shift: f64) -> Result<(), ConfigError> {
    if shift > 0.0 && shift <= MAX_SHIFT {
        Ok(())
    } else {
        Err(ConfigError::InvalidShift)
    }
}

/// Checks a threshold h: finite, in (0, [`MAX_THRESHOLD`]], else
/// [`ConfigError::InvalidThreshold`].
pub fn check_threshold(threshold: f64) -> Result<(), ConfigError> {
    if threshold > 0.0 && threshold <= MAX_THRESHOLD {
        Ok(())
    } else {
        Err(ConfigError::InvalidThreshold)
    }
}

/// The two log-likelihood ratios (l₊, l₋) of a sample, from e^θ − 1 and e^−θ − 1. The
/// log1p keeps them accurate for small θ and for scores near 0, where c(e^θ − 1) is tiny;
/// at c = 1 the second is ln(e^−θ) exactly, so a hit at score 1 adds 0 to both.
fn log_ratios(up_factor: f64, down_factor: f64, shift: f64, score: f64, label: u8) -> (f64, f64) {
    let y = f64::from(label);
    (
        shift * y - libm::log1p(score * up_factor),
        -shift * y - libm::log1p(score * down_factor),
    )
}

/// The Kullback–Leibler information per sample of score `score` between calibration and
/// the two alternatives of shift θ, averaged: (KL₊ + KL₋)/2 with KL± = E0[−l±] =
/// ln(1 + c(e^±θ − 1)) ∓ θc. 0 at scores 0 and 1 (a calibrated label there is certain),
/// largest at c near 1/2 (θ²/8 for small θ). Shift and score are not checked: NaN for a
/// NaN argument.
pub fn information(shift: f64, score: f64) -> f64 {
    information_with(shift, libm::expm1(shift), libm::expm1(-shift), score)
}

/// [`information`] given e^θ − 1 and e^−θ − 1, which an alarm keeps: a push then makes
/// two libm calls fewer, with the same result bit for bit.
fn information_with(shift: f64, up_factor: f64, down_factor: f64, score: f64) -> f64 {
    let up = libm::log1p(score * up_factor) - shift * score;
    let down = libm::log1p(score * down_factor) + shift * score;
    // Each is ≥ 0 (Jensen) up to rounding.
    0.5 * (up.max(0.0) + down.max(0.0))
}

/// The guaranteed lower bound on the ARL0 of threshold h: e^h / 2 samples, for any
/// scores in any order and any number of bins (see the module docs).
pub fn guaranteed_arl0(threshold: f64) -> f64 {
    0.5 * libm::exp(threshold)
}

/// The threshold whose guaranteed ARL0 is `arl0` samples: ln(2·arl0). The target must
/// be finite and at least 1 (else [`ConfigError::InvalidThreshold`]), and the result at
/// most [`MAX_THRESHOLD`].
pub fn threshold_for_guaranteed_arl0(arl0: f64) -> Result<f64, ConfigError> {
    if !(arl0 >= 1.0 && arl0.is_finite()) {
        return Err(ConfigError::InvalidThreshold);
    }
    let threshold = libm::log(2.0 * arl0);
    check_threshold(threshold)?;
    Ok(threshold)
}

/// The approximate ARL0 in samples of threshold h on a stream whose mean information
/// per sample is `mean_information` ([`information`] averaged over its scores):
/// (e^h − h − 1) / (2Ī). Infinite for Ī = 0 (scores all 0 or 1 carry no evidence),
/// NaN for a negative or NaN Ī.
pub fn approximate_arl0(threshold: f64, mean_information: f64) -> f64 {
    information_to_alarm(threshold) / (2.0 * mean_information)
}

/// e^h − h − 1, the information a reflected Brownian motion of drift −1 and variance 2
/// takes to reach h; expm1 keeps it accurate for small h.
fn information_to_alarm(threshold: f64) -> f64 {
    libm::expm1(threshold) - threshold
}

/// The threshold h whose [`approximate_arl0`] is `arl0` samples on a stream of mean
/// information `mean_information` per sample: the root of e^h − h − 1 = 2Ī·arl0, by
/// bisection to full precision (the left side increases for h > 0).
///
/// Errors: [`ConfigError::InvalidThreshold`] unless `arl0` and `mean_information` are
/// finite and positive and the root lies in (0, [`MAX_THRESHOLD`]].
pub fn threshold_for_arl0(arl0: f64, mean_information: f64) -> Result<f64, ConfigError> {
    let target = 2.0 * mean_information * arl0;
    if !(arl0 > 0.0 && mean_information > 0.0 && target.is_finite() && target > 0.0) {
        return Err(ConfigError::InvalidThreshold);
    }
    if information_to_alarm(MAX_THRESHOLD) < target {
        return Err(ConfigError::InvalidThreshold);
    }
    let (mut low, mut high) = (0.0f64, MAX_THRESHOLD);
    // 2^-1100 < the spacing of any f64 near a positive root: 1100 halvings reach
    // adjacent floats; the loop stops as soon as the midpoint is one of the ends.
    for _ in 0..1100 {
        let middle = 0.5 * (low + high);
        if middle <= low || middle >= high {
            break;
        }
        if information_to_alarm(middle) < target {
            low = middle;
        } else {
            high = middle;
        }
    }
    check_threshold(high)?;
    Ok(high)
}

/// A calibration alarm of equal-width bins over storage `S` (see the module docs).
#[derive(Clone, Debug, PartialEq)]
#[repr(C)]
pub struct CalibrationAlarm<S: ?Sized = [AlarmBin]> {
    pub(crate) closure: Closure,
    /// θ, in (0, MAX_SHIFT].
    pub(crate) shift: f64,
    /// h, in (0, MAX_THRESHOLD].
    pub(crate) threshold: f64,
    /// e^θ − 1 and e^−θ − 1, computed once from θ.
    pub(crate) up_factor: f64,
    pub(crate) down_factor: f64,
    /// Samples since the last reset: the sum of the bins' samples, at most
    /// [`crate::MAX_COUNT`].
    pub(crate) samples: u64,
    /// The sample (1 = the first after the reset) at which the statistic first reached
    /// the threshold; 0 while it has not.
    pub(crate) alarm_at: u64,
    /// Σ [`information`] of the scores since the last reset.
    pub(crate) information: f64,
    pub(crate) bins: S,
}

/// An alarm of `B` bins stored inline.
pub type InlineAlarm<const B: usize> = CalibrationAlarm<[AlarmBin; B]>;

/// An alarm whose bins are on the heap (bin count chosen at run time).
#[cfg(feature = "std")]
pub type BoxedAlarm = CalibrationAlarm<Box<[AlarmBin]>>;

/// The checks of every constructor, in order: bins, shift, threshold.
fn check_settings(bins: usize, shift: f64, threshold: f64) -> Result<(), ConfigError> {
    crate::binning::check_bin_count(bins)?;
    check_shift(shift)?;
    check_threshold(threshold)
}

impl<S> CalibrationAlarm<S> {
    fn over(bins: S, closure: Closure, shift: f64, threshold: f64) -> Self {
        CalibrationAlarm {
            closure,
            shift,
            threshold,
            up_factor: libm::expm1(shift),
            down_factor: libm::expm1(-shift),
            samples: 0,
            alarm_at: 0,
            information: 0.0,
            bins,
        }
    }
}

impl<const B: usize> CalibrationAlarm<[AlarmBin; B]> {
    /// An alarm of `B` bins testing for a log-odds shift of `shift` θ, raised when a
    /// CUSUM reaches `threshold` h.
    ///
    /// Errors: [`ConfigError::ZeroBins`], [`ConfigError::TooManyBins`],
    /// [`ConfigError::InvalidShift`] (θ outside (0, [`MAX_SHIFT`]]),
    /// [`ConfigError::InvalidThreshold`] (h outside (0, [`MAX_THRESHOLD`]]).
    pub fn new(closure: Closure, shift: f64, threshold: f64) -> Result<Self, ConfigError> {
        check_settings(B, shift, threshold)?;
        Ok(Self::over([AlarmBin::EMPTY; B], closure, shift, threshold))
    }
}

#[cfg(feature = "std")]
impl CalibrationAlarm<Box<[AlarmBin]>> {
    /// An alarm over bins it owns; errors as [`CalibrationAlarm::new`].
    pub fn with_boxed_storage(
        mut storage: Box<[AlarmBin]>,
        closure: Closure,
        shift: f64,
        threshold: f64,
    ) -> Result<Self, ConfigError> {
        check_settings(storage.len(), shift, threshold)?;
        storage.fill(AlarmBin::EMPTY);
        Ok(Self::over(storage, closure, shift, threshold))
    }
}

impl<'a> CalibrationAlarm<&'a mut [AlarmBin]> {
    /// An alarm over caller-owned bins (cleared here, once every argument has been
    /// checked: on error the storage is untouched). Errors as [`CalibrationAlarm::new`].
    pub fn with_storage(
        storage: &'a mut [AlarmBin],
        closure: Closure,
        shift: f64,
        threshold: f64,
    ) -> Result<Self, ConfigError> {
        check_settings(storage.len(), shift, threshold)?;
        storage.fill(AlarmBin::EMPTY);
        Ok(Self::over(storage, closure, shift, threshold))
    }
}

impl<S: AsRef<[AlarmBin]> + AsMut<[AlarmBin]> + ?Sized> CalibrationAlarm<S> {
    /// Records one (score, label) pair; a bad one is refused, and so is one that would
    /// take the samples since the reset past [`crate::MAX_COUNT`]
    /// ([`PushError::CountOverflow`]): nothing changes.
    pub fn push(&mut self, score: f64, label: u8) -> Result<(), PushError> {
        sample::check(score, label, 0)?;
        self.samples = add_counts(self.samples, 1)?;
        self.record(score, label);
        Ok(())
    }

    /// Records a batch in order: all of it, or (when any element is bad, or the batch
    /// would pass [`crate::MAX_COUNT`]) none of it.
    pub fn push_batch(&mut self, scores: &[f64], labels: &[u8]) -> Result<(), PushError> {
        sample::check_batch(scores, labels)?;
        let total = add_counts(self.samples, batch_count(scores.len())?)?;
        // Each record below numbers its sample from `samples`, so it goes up one at a
        // time; the total was checked above, so no step can pass MAX_COUNT.
        for (&score, &label) in scores.iter().zip(labels) {
            self.samples = self.samples.wrapping_add(1);
            self.record(score, label);
        }
        debug_assert_eq!(self.samples, total);
        Ok(())
    }

    /// Records a checked sample whose count the caller has added to `samples` (which
    /// bounds the bin's count: it cannot wrap).
    fn record(&mut self, score: f64, label: u8) {
        let (up_factor, down_factor, shift) = (self.up_factor, self.down_factor, self.shift);
        let bins = self.bins.as_mut();
        let (up, down) = log_ratios(up_factor, down_factor, shift, score, label);
        let mut raised = false;
        // A checked score (in [0, 1]) has a bin: `bin_index` maps it below `bins.len()`.
        if let Some(bin) = bins.get_mut(self.closure.bin_index(score, bins.len())) {
            bin.samples = bin.samples.wrapping_add(1);
            bin.up = (bin.up + up).max(0.0);
            bin.down = (bin.down + down).max(0.0);
            raised = bin.up >= self.threshold || bin.down >= self.threshold;
        }
        self.information += information_with(shift, up_factor, down_factor, score);
        if raised && self.alarm_at == 0 {
            self.alarm_at = self.samples;
        }
    }

    /// Clears every CUSUM, the alarm, the samples and the information: the stated ARL0
    /// counts from here. Bins, closure, shift and threshold stay.
    pub fn reset(&mut self) {
        self.bins.as_mut().fill(AlarmBin::EMPTY);
        self.samples = 0;
        self.alarm_at = 0;
        self.information = 0.0;
    }
}

#[cfg(feature = "ffi")]
impl CalibrationAlarm<[AlarmBin]> {
    /// Empties the alarm and sets its settings, checked by the caller with
    /// [`check_shift`] and [`check_threshold`] before touching any memory. For the C ABI
    /// (`src/ffi/alarm.rs`), which lays this view over caller memory it has zeroed.
    pub(crate) fn reinitialise(&mut self, closure: Closure, shift: f64, threshold: f64) {
        debug_assert!(check_shift(shift).is_ok() && check_threshold(threshold).is_ok());
        self.closure = closure;
        self.shift = shift;
        self.threshold = threshold;
        self.up_factor = libm::expm1(shift);
        self.down_factor = libm::expm1(-shift);
        self.reset();
    }
}

impl<S: AsRef<[AlarmBin]> + ?Sized> CalibrationAlarm<S> {
    /// Which side of each bin is closed.
    pub fn closure(&self) -> Closure {
        self.closure
    }

    /// The bins, bin 0 first.
    pub fn bins(&self) -> &[AlarmBin] {
        self.bins.as_ref()
    }

    /// The number of bins B.
    pub fn bin_count(&self) -> usize {
        self.bins.as_ref().len()
    }

    /// Lower and upper edge of bin `k`.
    pub fn edges(&self, k: usize) -> (f64, f64) {
        equal_width_edges(k, self.bin_count())
    }

    /// The shift θ in log-odds the CUSUMs test for.
    pub fn shift(&self) -> f64 {
        self.shift
    }

    /// The threshold h.
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    /// Samples since creation or the last reset, at most [`crate::MAX_COUNT`].
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// The statistic: the largest of the 2B CUSUMs (0 before any sample).
    pub fn statistic(&self) -> f64 {
        self.bins()
            .iter()
            .fold(0.0, |most, bin| most.max(bin.up).max(bin.down))
    }

    /// Whether the statistic has reached the threshold since the last reset (the alarm
    /// stays raised until [`CalibrationAlarm::reset`], even if the statistic falls back).
    pub fn alarm(&self) -> bool {
        self.alarm_at != 0
    }

    /// The sample since the last reset (1 for the first) at which the alarm went off, if
    /// it has: the detection time.
    pub fn alarm_at(&self) -> Option<u64> {
        (self.alarm_at != 0).then_some(self.alarm_at)
    }

    /// The mean [`information`] per sample of the scores since the last reset (NaN
    /// before any): the Ī of [`approximate_arl0`].
    pub fn mean_information(&self) -> f64 {
        self.information / self.samples as f64
    }

    /// [`guaranteed_arl0`] of this alarm's threshold.
    pub fn guaranteed_arl0(&self) -> f64 {
        guaranteed_arl0(self.threshold)
    }

    /// [`approximate_arl0`] of this alarm's threshold on the scores seen since the last
    /// reset (NaN before any sample; infinite if they were all 0 or 1).
    pub fn approximate_arl0(&self) -> f64 {
        approximate_arl0(self.threshold, self.mean_information())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_log_ratio_has_expectation_one_under_calibration() {
        // E0[e^l] = c·e^l(1) + (1 − c)·e^l(0) = 1 for both alternatives: the property
        // the guaranteed bound rests on.
        for shift in [1e-3, 0.1, core::f64::consts::LN_2, 3.0, MAX_SHIFT] {
            let (up_factor, down_factor) = (libm::expm1(shift), libm::expm1(-shift));
            for c in [0.0, 1e-9, 0.3, 0.5, 0.97, 1.0 - 1e-12, 1.0] {
                let (u1, d1) = log_ratios(up_factor, down_factor, shift, c, 1);
                let (u0, d0) = log_ratios(up_factor, down_factor, shift, c, 0);
                let up = c * u1.exp() + (1.0 - c) * u0.exp();
                let down = c * d1.exp() + (1.0 - c) * d0.exp();
                // 1 − c is rounded (relative error up to 1e-4 at c = 1 − 1e-12), and the
                // miss's ratio there is up to e^10: 1e-9 is that rounding, not the formula.
                assert!((up - 1.0).abs() < 1e-9, "{shift} {c} {up}");
                assert!((down - 1.0).abs() < 1e-9, "{shift} {c} {down}");
                // The information is the mean of −l under calibration.
                let kl = -0.5 * (c * (u1 + d1) + (1.0 - c) * (u0 + d0));
                assert!((kl - information(shift, c)).abs() < 1e-12, "{kl}");
            }
        }
        // Small θ: θ²c(1 − c)/2 for each alternative.
        let small = information(1e-3, 0.5);
        assert!((small / (1e-6 * 0.125) - 1.0).abs() < 1e-3, "{small}");
    }

    #[test]
    fn the_state_is_a_64_byte_header_and_24_bytes_a_bin() {
        assert_eq!(core::mem::size_of::<InlineAlarm<0>>(), 64);
        assert_eq!(core::mem::size_of::<InlineAlarm<10>>(), 64 + 240);
    }

    #[test]
    fn the_inverses_invert() {
        // From h = ln 2 on: a guaranteed ARL0 below 1 sample is refused.
        for h in [0.7, 3.0, 9.2, 20.0, 300.0] {
            let back = threshold_for_guaranteed_arl0(guaranteed_arl0(h)).unwrap();
            assert!((back - h).abs() < 1e-12 * h.max(1.0), "{h} {back}");
            let arl0 = approximate_arl0(h, 0.002);
            let back = threshold_for_arl0(arl0, 0.002).unwrap();
            assert!((back - h).abs() < 1e-10 * h.max(1.0), "{h} {back}");
        }
        assert_eq!(guaranteed_arl0(10.0), 0.5 * 10f64.exp());
        // e^700 ≈ 1.0e304 < 2·10^305: the root would be above MAX_THRESHOLD.
        assert_eq!(
            threshold_for_arl0(1e305, 1.0),
            Err(ConfigError::InvalidThreshold)
        );
        assert_eq!(
            threshold_for_arl0(1e4, 0.0),
            Err(ConfigError::InvalidThreshold)
        );
        assert_eq!(
            threshold_for_guaranteed_arl0(0.5),
            Err(ConfigError::InvalidThreshold)
        );
    }
}
