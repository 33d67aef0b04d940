//! What tied scores mean for the binned estimators: the notes `tce estimate` and `tce
//! report` (and the Python report) give when the data has few distinct confidences, or a
//! group of equal confidences larger than an equal-mass bin (docs/estimators.md, tied
//! and discrete scores).

use crate::binning::Ties;
use crate::buffer::SortedSamples;

/// Few distinct confidences: at most this many per bin of ECE_bin (so at most 30 for
/// the default 15 bins: confidences stated in words, or rounded to one decimal).
pub const FEW_DISTINCT_PER_BIN: usize = 2;

/// The tie structure of a data set's scores.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TieSummary {
    /// Samples.
    pub n: usize,
    /// Distinct scores d.
    pub distinct: usize,
    /// The largest group of equal scores: its score and its number of samples.
    pub largest: (f64, usize),
}

impl TieSummary {
    /// The summary of sorted samples: O(d log n).
    pub fn of(sorted: &SortedSamples<'_>) -> TieSummary {
        let (mut distinct, mut largest) = (0usize, (0.0, 0usize));
        for (score, len) in sorted.tie_groups() {
            distinct += 1;
            if len > largest.1 {
                largest = (score, len);
            }
        }
        TieSummary {
            n: sorted.len(),
            distinct,
            largest,
        }
    }

    /// Whether the scores take few distinct values for `bins` bins
    /// ([`FEW_DISTINCT_PER_BIN`]).
    pub fn few_distinct(&self, bins: usize) -> bool {
        self.distinct <= FEW_DISTINCT_PER_BIN.saturating_mul(bins)
    }

    /// Whether equal-mass bins (`bins` of them, ties handled by `ties`) cut through a
    /// group of equal scores: with ties split, when the largest group holds more samples
    /// than a bin.
    pub fn splits_ties(&self, bins: usize, ties: Ties) -> bool {
        ties == Ties::Split && self.largest.1 > self.n.div_ceil(bins.max(1))
    }

    /// The notes for estimates with `bins` bins and equal-mass bins handled by `ties`,
    /// each one sentence: none when the ties change nothing.
    pub fn notes(&self, bins: usize, ties: Ties) -> Vec<String> {
        let mut notes = Vec::new();
        if self.few_distinct(bins) {
            let d = self.distinct;
            notes.push(format!(
                "only {d} distinct confidence{} among {} samples: equal-width bins, and \
                 equal-mass bins with ties kept, can tell at most {d} groups of samples \
                 apart, so the binned estimates measure the calibration of those {d} \
                 values, and more bins than it takes to give each value a bin of its own \
                 change nothing",
                if d == 1 { "" } else { "s" },
                self.n
            ));
        }
        if self.splits_ties(bins, ties) {
            let (score, len) = self.largest;
            notes.push(format!(
                "{:.1}% of the samples have the confidence {score:?}, more than an \
                 equal-mass bin holds: with ties split, equal-mass bins divide equal \
                 confidences by row order, so the equal-mass estimates depend on the \
                 order of the rows and add label noise within one confidence (ties kept \
                 together avoid both: `--ties keep`, or `ties=\"keep\"` in Python)",
                100.0 * len as f64 / self.n as f64
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::{Slot, SortedBuffer};

    fn summary(scores: &[f64]) -> TieSummary {
        let mut storage = vec![Slot::EMPTY; scores.len()];
        let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
        for &s in scores {
            buffer.push(s, 1).unwrap();
        }
        TieSummary::of(&buffer.sorted())
    }

    #[test]
    fn notes_say_what_the_ties_do() {
        // Six confidences stated in words, 60 samples: few for 15 bins; the largest
        // group (0.9, 16 samples) holds more than a bin of 4.
        let words = [0.5, 0.6, 0.7, 0.8, 0.9, 0.9, 0.95];
        let scores: Vec<f64> = (0..60).map(|i| words[i % 7]).collect();
        let s = summary(&scores);
        assert_eq!((s.n, s.distinct), (60, 6));
        assert_eq!(s.largest.0, 0.9);
        assert!(s.few_distinct(15) && s.few_distinct(3) && !s.few_distinct(2));
        assert!(s.splits_ties(15, Ties::Split) && !s.splits_ties(15, Ties::Keep));
        let notes = s.notes(15, Ties::Split);
        assert_eq!(notes.len(), 2);
        assert!(notes[0].starts_with("only 6 distinct confidences among 60 samples"));
        assert!(notes[1].starts_with("26.7% of the samples have the confidence 0.9,"));
        assert_eq!(s.notes(15, Ties::Keep).len(), 1);
        // Distinct scores: no note.
        let distinct: Vec<f64> = (0..100).map(|i| f64::from(i) / 100.0).collect();
        assert!(summary(&distinct).notes(15, Ties::Split).is_empty());
        // One score.
        let one = summary(&[0.8; 10]);
        assert_eq!((one.distinct, one.largest), (1, (0.8, 10)));
        assert!(one.notes(15, Ties::Keep)[0].starts_with("only 1 distinct confidence among"));
    }
}
