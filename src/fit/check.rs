//! The paper's check of its fits (Fig. 3c): equal-width ECE_bin (15 bins, p = 2) of data
//! simulated from a fitted model, at the real data's n, against ECE_bin of the real data.
//! Every estimate comes from the core's [`Histogram`](crate::Histogram).

use crate::sim::Model;
use crate::{Closure, EstimateError, InlineHistogram, Norm, PushError};

/// Bins of the check, as in the paper.
pub const CHECK_BINS: usize = 15;

/// Why the check could not run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CheckError {
    /// The real or a simulated data set was refused by the histogram.
    Push(PushError),
    /// An estimate failed (no samples, or no repetitions).
    Estimate(EstimateError),
}

impl core::fmt::Display for CheckError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
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
/// same size drawn from `model` (data set r is `model.dataset(seed, r, n)`).
pub fn compare_ece(
    model: &Model,
    scores: &[f64],
    labels: &[u8],
    repetitions: usize,
    seed: u64,
) -> Result<EceComparison, CheckError> {
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
