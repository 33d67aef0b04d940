//! The Hosmer–Lemeshow test (Hosmer & Lemeshow 1980; Hosmer, Lemeshow & Sturdivant,
//! *Applied Logistic Regression*, 3rd ed. 2013, §5.2.2), with equal-mass groups.
//!
//! The rows are sorted by score and cut into G groups of ⌊n/G⌋ or ⌈n/G⌉ rows, exactly as
//! the library's equal-mass bins cut them (SPEC §3.2: sorted position j in group
//! ⌊jG/n⌋, equal scores in arrival order). Group g has n_g rows, O_g hits and
//! E_g = Σ f_i expected hits, mean score f̄_g = E_g / n_g, and
//!
//! ```text
//! C = Σ_g (O_g − E_g)² / (n_g f̄_g (1 − f̄_g))
//! ```
//!
//! **Degrees of freedom: G, not G − 2.** The textbook's χ²(G − 2) is for the data a
//! logistic model was fitted on, whose two coefficients use up two; a classifier's
//! scores are tested on data they were not fitted to, and then C is referred to χ²(G)
//! (Hosmer, Lemeshow & Sturdivant §5.2.2 on validation samples). With G − 2 the test
//! rejects calibrated models more often than α: up to 0.15 at α = 0.05 with G = 10 on the
//! bundled files' densities (docs/decisions.md, the size table). Even with G, χ² is only
//! an approximation to C's distribution: on scores crowded near 1 the test is
//! conservative, on few rows of spread-out scores it rejects up to twice as often as α.
//!
//! **Degenerate groups.** A group whose scores are all 0 or all 1 has f̄(1 − f̄) = 0: under
//! H0 its labels are certain, so it adds nothing and takes no degree of freedom when
//! O_g = E_g; when a label contradicts its score (O_g ≠ E_g), H0 is impossible and C is
//! infinite (p = 0). Empty groups (n < G) take none either. So the degrees of freedom are
//! the groups with 0 < f̄ < 1, and with none of those C is undefined.

use core::fmt;

use crate::binning::{Binning, Ties};
use crate::buffer::SortedSamples;
use crate::stats::BinStats;

/// The groups of a test unless told otherwise: 10, the textbook's.
pub const DEFAULT_GROUPS: usize = 10;

/// Hosmer–Lemeshow's C, its degrees of freedom and its p-value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HosmerLemeshow {
    /// C (+∞ when a certain group's labels contradict its scores).
    pub statistic: f64,
    /// The groups with 0 < f̄ < 1: the χ² distribution's degrees of freedom.
    pub degrees_of_freedom: usize,
    /// P(χ²_df ≥ C).
    pub p_value: f64,
}

/// Why C is undefined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HosmerLemeshowError {
    /// No samples.
    NoSamples,
    /// No group has a mean score strictly between 0 and 1 (and no label contradicts its
    /// score).
    NoUncertainGroup,
}

impl fmt::Display for HosmerLemeshowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoSamples => f.write_str("no samples"),
            Self::NoUncertainGroup => f.write_str(
                "Hosmer-Lemeshow is undefined: no group has a mean score strictly between 0 and 1",
            ),
        }
    }
}

impl std::error::Error for HosmerLemeshowError {}

/// The test over sorted samples with `groups` equal-mass groups (at least 1).
pub(crate) fn hosmer_lemeshow_sorted(
    sorted: &SortedSamples<'_>,
    groups: usize,
) -> Result<HosmerLemeshow, HosmerLemeshowError> {
    if sorted.is_empty() {
        return Err(HosmerLemeshowError::NoSamples);
    }
    of_groups(
        sorted
            .bins(Binning::EqualMass(Ties::Split), groups)
            .filter_map(|g| Some((g.count() as f64, g.hits() as f64, g.mean_score()?))),
    )
}

/// C over the bins of an equal-width histogram (a merged fleet state, say), which hold
/// each group's count, hits and mean score: the test a histogram allows. Empty bins take
/// no degree of freedom. The χ² reference assumes what it assumes with equal-mass groups
/// (docs/decisions.md measures its size); n f̄(1 − f̄) is at least the variance of a
/// bin's hits under H0 (a Poisson-binomial's is at most the binomial's of its mean), so
/// spread scores within a bin make C smaller, not larger.
pub fn hosmer_lemeshow_bins(bins: &[BinStats]) -> Result<HosmerLemeshow, HosmerLemeshowError> {
    if bins.iter().all(|b| b.count() == 0) {
        return Err(HosmerLemeshowError::NoSamples);
    }
    of_groups(
        bins.iter()
            .filter_map(|b| Some((b.count() as f64, b.hits() as f64, b.mean_score()?))),
    )
}

/// C, its degrees of freedom and p-value from each non-empty group's (count, hits,
/// mean score).
fn of_groups(
    groups: impl Iterator<Item = (f64, f64, f64)>,
) -> Result<HosmerLemeshow, HosmerLemeshowError> {
    let (mut statistic, mut degrees_of_freedom) = (0.0, 0usize);
    for (count, observed, mean) in groups {
        let expected = count * mean;
        let variance = count * mean * (1.0 - mean);
        if variance > 0.0 {
            statistic += (observed - expected).powi(2) / variance;
            degrees_of_freedom += 1;
        } else if observed != expected {
            statistic = f64::INFINITY;
        }
    }
    if degrees_of_freedom == 0 && statistic == 0.0 {
        return Err(HosmerLemeshowError::NoUncertainGroup);
    }
    let p_value = if statistic == f64::INFINITY {
        0.0
    } else {
        super::chi_square::survival(statistic, degrees_of_freedom as f64)
    };
    Ok(HosmerLemeshow {
        statistic,
        degrees_of_freedom,
        p_value,
    })
}

/// The Hosmer–Lemeshow test of (scores, labels) with `groups` equal-mass groups
/// ([`DEFAULT_GROUPS`] is the textbook's); bad input is refused whole, nothing computed.
pub fn hosmer_lemeshow(
    scores: &[f64],
    labels: &[u8],
    groups: usize,
) -> Result<HosmerLemeshow, super::TestError> {
    super::check_groups(groups)?;
    let sorted = super::resampling::SortedData::new(scores, labels)?;
    hosmer_lemeshow_sorted(&sorted.observed(), groups)
        .map_err(|e| super::TestError::Undefined(super::Undefined::HosmerLemeshow(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{TestError, Undefined};

    #[test]
    fn by_hand() {
        // Eight rows in 2 groups of 4, given out of order:
        //   group 0: scores 0.1 0.2 0.3 0.4, labels 0 1 0 1: O = 2, E = 1.0, f̄ = 0.25,
        //            (2 − 1)² / (4·0.25·0.75) = 1/0.75 = 4/3;
        //   group 1: scores 0.6 0.7 0.8 0.9, labels 1 1 0 1: O = 3, E = 3.0: 0.
        // C = 4/3 on 2 degrees of freedom: p = e^(−C/2) = e^(−2/3).
        let scores = [0.7, 0.1, 0.9, 0.3, 0.6, 0.2, 0.8, 0.4];
        let labels = [1, 0, 1, 0, 1, 1, 0, 1];
        let hl = hosmer_lemeshow(&scores, &labels, 2).unwrap();
        assert!((hl.statistic - 4.0 / 3.0).abs() < 1e-14, "{hl:?}");
        assert_eq!(hl.degrees_of_freedom, 2);
        assert!((hl.p_value - (-2.0f64 / 3.0).exp()).abs() < 1e-14, "{hl:?}");
    }

    #[test]
    fn certain_groups_take_no_degree_of_freedom() {
        // Groups of 2: {0.0, 0.0} labels 0 0 (certain, agrees), {0.5, 0.5} labels 1 1:
        // O = 2, E = 1, (2 − 1)²/(2·0.25) = 2; {1.0, 1.0} labels 1 1 (certain, agrees).
        // C = 2 on 1 degree of freedom: p = erfc(1) (P(χ²_1 ≥ 2) = P(|Z| ≥ √2)).
        let scores = [0.0, 0.0, 0.5, 0.5, 1.0, 1.0];
        let hl = hosmer_lemeshow(&scores, &[0, 0, 1, 1, 1, 1], 3).unwrap();
        assert_eq!((hl.statistic, hl.degrees_of_freedom), (2.0, 1));
        assert!((hl.p_value - libm::erfc(1.0)).abs() < 1e-14, "{hl:?}");
        // A certain score contradicted: C = ∞, p = 0.
        let hl = hosmer_lemeshow(&scores, &[0, 0, 1, 1, 1, 0], 3).unwrap();
        assert_eq!((hl.statistic, hl.p_value), (f64::INFINITY, 0.0));
        // Nothing uncertain and nothing contradicted: undefined.
        assert_eq!(
            hosmer_lemeshow(&[0.0, 1.0], &[0, 1], 2).unwrap_err(),
            TestError::Undefined(Undefined::HosmerLemeshow(
                HosmerLemeshowError::NoUncertainGroup
            ))
        );
        // Fewer rows than groups: the empty groups take no degree of freedom.
        let hl = hosmer_lemeshow(&[0.25, 0.75], &[1, 1], 10).unwrap();
        assert_eq!(hl.degrees_of_freedom, 2);
        // (1 − 0.25)²/(0.25·0.75) + (1 − 0.75)²/(0.75·0.25) = 3 + 1/3.
        assert!((hl.statistic - 10.0 / 3.0).abs() < 1e-14, "{hl:?}");
        assert_eq!(
            hosmer_lemeshow(&[0.5], &[1], 0).unwrap_err(),
            TestError::GroupsOutOfRange(0)
        );
    }

    #[test]
    fn over_a_histograms_bins_it_is_the_same_sum() {
        // The by-hand example's two groups as histogram bins of [0, 0.5) and [0.5, 1].
        let mut h = crate::InlineHistogram::<2>::new(crate::Closure::Left);
        let scores = [0.7, 0.1, 0.9, 0.3, 0.6, 0.2, 0.8, 0.4];
        let labels = [1, 0, 1, 0, 1, 1, 0, 1];
        h.push_batch(&scores, &labels).unwrap();
        let hl = hosmer_lemeshow_bins(h.bins()).unwrap();
        assert_eq!(hl, hosmer_lemeshow(&scores, &labels, 2).unwrap());
        assert_eq!(
            hosmer_lemeshow_bins(&[BinStats::default(); 2]),
            Err(HosmerLemeshowError::NoSamples)
        );
    }
}
