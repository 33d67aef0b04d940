//! The paper's check of its fits (Fig. 3c): equal-width ECE_bin (15 bins, p = 2) of data
//! simulated from a fitted model, at the real data's n, against ECE_bin of the real data.
//! Every estimate comes from the core's [`Histogram`](crate::Histogram).

use crate::sim::Model;
use crate::{Closure, EstimateError, InlineHistogram, Norm, PushError};

/// Bins of the check, as in the paper.
pub const CHECK_BINS: usize = 15;

/// The fewest simulated data sets a check takes: one has no standard deviation, so its
/// z would be meaningless.
pub const MIN_REPETITIONS: usize = 2;

/// The most simulated data sets a check takes (`tce fit-check --reps`): the simulator's
/// bound ([`crate::sim::runner::MAX_REPETITIONS`], 10^5). Each draws and bins n rows, so
/// the time grows with repetitions × n; the values kept are 8 bytes a repetition.
pub const MAX_REPETITIONS: usize = crate::sim::runner::MAX_REPETITIONS;

/// Checks a number of repetitions: [`MIN_REPETITIONS`] to [`MAX_REPETITIONS`].
/// [`compare_ece`] starts with it; a caller may run it before reading any data.
pub fn check_repetitions(repetitions: usize) -> Result<(), CheckError> {
    if !(MIN_REPETITIONS..=MAX_REPETITIONS).contains(&repetitions) {
        return Err(CheckError::RepetitionsOutOfRange(repetitions));
    }
    Ok(())
}

/// Why the check could not run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CheckError {
    /// Fewer repetitions than [`MIN_REPETITIONS`] or more than [`MAX_REPETITIONS`]
    /// (refused before any work).
    RepetitionsOutOfRange(usize),
    /// The real or a simulated data set was refused by the histogram.
    Push(PushError),
    /// An estimate failed (no samples, or no repetitions).
    Estimate(EstimateError),
}

impl core::fmt::Display for CheckError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::RepetitionsOutOfRange(r) => write!(
                f,
                "{r} repetitions: a fit check takes at least {MIN_REPETITIONS} (one has no \
                 standard deviation) and at most {MAX_REPETITIONS} \
                 (tce::fit::check::MAX_REPETITIONS)"
            ),
            Self::Push(e) => write!(f, "{e:?}"),
            Self::Estimate(e) => write!(f, "{e:?}"),
        }
    }
}

impl std::error::Error for CheckError {}

/// ECE_bin of the real data next to the simulated ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EceComparison {
    /// Rows of the real data (and of each simulated data set).
    pub n: usize,
    /// EW ECE_bin (15 bins, p = 2) of the real data.
    pub real: f64,
    /// Mean of EW ECE_bin over the simulated data sets.
    pub simulated_mean: f64,
    /// Their standard deviation.
    pub simulated_sd: f64,
    /// The number of simulated data sets.
    pub repetitions: usize,
}

impl EceComparison {
    /// |real − simulated mean| in units of the simulated standard deviation.
    pub fn z(&self) -> f64 {
        (self.real - self.simulated_mean).abs() / self.simulated_sd
    }
}

/// EW ECE_bin with 15 bins and p = 2, the paper's ECE.
pub fn equal_width_ece(scores: &[f64], labels: &[u8]) -> Result<f64, CheckError> {
    let mut histogram = InlineHistogram::<CHECK_BINS>::new(Closure::Left);
    histogram
        .push_batch(scores, labels)
        .map_err(CheckError::Push)?;
    Ok(histogram
        .ece_bin(Norm::L2)
        .map_err(CheckError::Estimate)?
        .value)
}

/// Compares ECE_bin of (scores, labels) with its mean over `repetitions` data sets of the
/// same size drawn from `model` (data set r is `model.dataset(seed, r, n)`), after
/// [`check_repetitions`].
pub fn compare_ece(
    model: &Model,
    scores: &[f64],
    labels: &[u8],
    repetitions: usize,
    seed: u64,
) -> Result<EceComparison, CheckError> {
    check_repetitions(repetitions)?;
    let real = equal_width_ece(scores, labels)?;
    let n = scores.len();
    let simulated = (0..repetitions as u64)
        .map(|rep| {
            let (s, l) = model.dataset(seed, rep, n);
            equal_width_ece(&s, &l)
        })
        .collect::<Result<Vec<f64>, _>>()?;
    if simulated.is_empty() {
        return Err(CheckError::Estimate(EstimateError::NoSamples));
    }
    let count = simulated.len() as f64;
    let mean = simulated.iter().sum::<f64>() / count;
    let variance = simulated
        .iter()
        .map(|v| (v - mean) * (v - mean))
        .sum::<f64>()
        / (count - 1.0).max(1.0);
    Ok(EceComparison {
        n,
        real,
        simulated_mean: mean,
        simulated_sd: variance.sqrt(),
        repetitions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{Beta, Curve};

    #[test]
    fn repetitions_are_bounded_before_any_work() {
        let model = Model::new(
            Beta::new(2.0, 0.5).unwrap(),
            Curve::polynomial(2.0).unwrap(),
        );
        let (scores, labels) = model.dataset(0, 0, 200);
        for r in [0, 1, MAX_REPETITIONS + 1, usize::MAX] {
            assert_eq!(
                check_repetitions(r),
                Err(CheckError::RepetitionsOutOfRange(r))
            );
            assert_eq!(
                compare_ece(&model, &scores, &labels, r, 0),
                Err(CheckError::RepetitionsOutOfRange(r))
            );
        }
        assert_eq!(check_repetitions(MIN_REPETITIONS), Ok(()));
        assert_eq!(check_repetitions(MAX_REPETITIONS), Ok(()));
        let check = compare_ece(&model, &scores, &labels, 3, 0).unwrap();
        assert_eq!(check.repetitions, 3);
        assert_eq!(
            CheckError::RepetitionsOutOfRange(usize::MAX).to_string(),
            "18446744073709551615 repetitions: a fit check takes at least 2 (one has no \
             standard deviation) and at most 100000 (tce::fit::check::MAX_REPETITIONS)"
        );
    }
}
