//! Recalibration of whole rows of class probabilities or logits.
//!
//! - [`MulticlassMethod::Temperature`]: temperature scaling (Guo et al. 2017), one T for
//!   all logits, softmax(z / T), fitted by the NLL of the true classes
//!   ([`temperature`]). From probabilities the logits are the log-probabilities,
//!   ln max(p, [`MIN_PROBABILITY`]): a probability of exactly 0 (a float32 softmax that
//!   underflowed) would make the loss infinite for every T.
//! - [`MulticlassMethod::HistogramOneVsRest`], [`MulticlassMethod::IsotonicOneVsRest`]:
//!   one map g_k per class, fitted on (p_k, 1[y = k]) over the rows (histogram binning
//!   with 15 bins, isotonic regression), then each row renormalised: q_k = g_k(p_k) /
//!   Σ_j g_j(p_j). **A row whose maps all give 0 keeps its original probabilities**
//!   (every class judged impossible says nothing about which one is; [`Applied::kept`]
//!   counts them). Each class must be the true class of at least [`MIN_CLASS_ROWS`]
//!   fitting rows: a class never seen gets a map that is 0 on every seen probability,
//!   which says only that the fitting rows lacked it.
//!
//! The top label of a recalibrated row is taken by the core's rule ([`crate::toplabel`]);
//! temperature scaling keeps every row's order, so its predictions and correctness are
//! the original ones; one-vs-rest maps can change the arg-max, and correctness is then
//! recomputed against the true class.

pub mod temperature;

use core::fmt;

use super::histogram::{fit_histogram_binning, DEFAULT_BINS};
use super::isotonic::fit_isotonic;
use super::{PiecewiseConstant, RecalibrateError};
use crate::toplabel;

pub use temperature::{fit_multiclass_temperature, MulticlassTemperature};

/// The probability a 0 is raised to before its logarithm is taken (the smallest normal
/// f64, whose logarithm is about −708.4).
pub const MIN_PROBABILITY: f64 = f64::MIN_POSITIVE;

/// The fewest fitting rows of each true class a one-vs-rest method needs.
pub const MIN_CLASS_ROWS: usize = 1;

/// softmax(row) into `out` (as long as the row), in f64 with the maximum subtracted, as
/// [`toplabel::from_logits`] computes it.
pub(crate) fn softmax_into(row: &[f64], out: &mut [f64]) {
    let max = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut total = 0.0;
    for (o, &z) in out.iter_mut().zip(row) {
        *o = libm::exp(z - max);
        total += *o;
    }
    for o in out.iter_mut() {
        *o /= total;
    }
}

/// A validated table of class outputs: `rows × classes` probabilities or logits, row
/// major, and each row's true class.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassTable {
    values: Vec<f64>,
    classes: usize,
    truth: Vec<usize>,
    logits: bool,
}

impl ClassTable {
    /// Checks every row by the core's rule ([`toplabel::from_probabilities`] or
    /// [`toplabel::from_logits`]: finite values, probabilities in [0, 1] summing to 1
    /// within [`toplabel::PROBABILITY_SUM_TOLERANCE`], the class an index of the row),
    /// and at least 2 classes. The first refused row is the error.
    pub fn new(
        values: Vec<f64>,
        classes: usize,
        truth: Vec<usize>,
        logits: bool,
    ) -> Result<ClassTable, RecalibrateError> {
        if classes < 2 {
            return Err(RecalibrateError::TooFewClasses(classes));
        }
        if truth.len().checked_mul(classes) != Some(values.len()) {
            return Err(RecalibrateError::ShapeMismatch {
                values: values.len(),
                rows: truth.len(),
                classes,
            });
        }
        if truth.is_empty() {
            return Err(RecalibrateError::Empty);
        }
        let reduce = if logits {
            toplabel::from_logits
        } else {
            toplabel::from_probabilities
        };
        for (row, (values, &class)) in values.chunks_exact(classes).zip(&truth).enumerate() {
            reduce(values, class).map_err(|error| RecalibrateError::Row { row, error })?;
        }
        Ok(ClassTable {
            values,
            classes,
            truth,
            logits,
        })
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.truth.len()
    }

    /// The number of classes K.
    pub fn classes(&self) -> usize {
        self.classes
    }

    /// The true class of every row.
    pub fn true_classes(&self) -> &[usize] {
        &self.truth
    }

    /// Whether the values are logits (else probabilities).
    pub fn is_logits(&self) -> bool {
        self.logits
    }

    /// Row `i`'s values.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.classes..(i + 1) * self.classes]
    }

    /// The rows `rows` (indices of this table), in that order.
    pub fn select(&self, rows: &[usize]) -> ClassTable {
        ClassTable {
            values: rows.iter().flat_map(|&i| self.row(i)).copied().collect(),
            classes: self.classes,
            truth: rows.iter().map(|&i| self.truth[i]).collect(),
            logits: self.logits,
        }
    }

    /// The class probabilities, row major: the values, or the softmax of logits.
    pub fn probabilities(&self) -> Vec<f64> {
        if !self.logits {
            return self.values.clone();
        }
        let mut out = vec![0.0; self.values.len()];
        for (row, o) in self
            .values
            .chunks_exact(self.classes)
            .zip(out.chunks_exact_mut(self.classes))
        {
            softmax_into(row, o);
        }
        out
    }

    /// The logits temperature scaling divides, row major: the values, or
    /// ln max(p, [`MIN_PROBABILITY`]) of probabilities.
    pub fn logits(&self) -> Vec<f64> {
        if self.logits {
            self.values.clone()
        } else {
            self.values
                .iter()
                .map(|&p| p.max(MIN_PROBABILITY).ln())
                .collect()
        }
    }

    /// The top-label confidence and correctness of every row (SPEC §1).
    pub fn top_label(&self) -> (Vec<f64>, Vec<u8>) {
        let reduce = if self.logits {
            toplabel::from_logits
        } else {
            toplabel::from_probabilities
        };
        self.values
            .chunks_exact(self.classes)
            .zip(&self.truth)
            .map(|(row, &class)| {
                let top = reduce(row, class).expect("rows validated by ClassTable::new");
                (top.score, top.label)
            })
            .unzip()
    }
}

/// A recalibration method of whole rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MulticlassMethod {
    /// One temperature for all logits.
    Temperature,
    /// Histogram binning of each class one-vs-rest, rows renormalised.
    HistogramOneVsRest,
    /// Isotonic regression of each class one-vs-rest, rows renormalised.
    IsotonicOneVsRest,
}

impl MulticlassMethod {
    /// Fits the method on a table.
    pub fn fit(self, table: &ClassTable) -> Result<MulticlassMap, RecalibrateError> {
        if self == MulticlassMethod::Temperature {
            return fit_multiclass_temperature(table).map(MulticlassMap::Temperature);
        }
        let k = table.classes();
        let mut counts = vec![0usize; k];
        for &class in table.true_classes() {
            counts[class] += 1;
        }
        if let Some(class) = counts.iter().position(|&c| c < MIN_CLASS_ROWS) {
            return Err(RecalibrateError::TooFewClassRows {
                class,
                rows: counts[class],
                needed: MIN_CLASS_ROWS,
            });
        }
        let probabilities = table.probabilities();
        let mut maps = Vec::with_capacity(k);
        for class in 0..k {
            let scores: Vec<f64> = probabilities
                .iter()
                .skip(class)
                .step_by(k)
                .copied()
                .collect();
            let labels: Vec<u8> = table
                .true_classes()
                .iter()
                .map(|&y| u8::from(y == class))
                .collect();
            maps.push(match self {
                MulticlassMethod::HistogramOneVsRest => {
                    fit_histogram_binning(&scores, &labels, DEFAULT_BINS)?
                }
                _ => fit_isotonic(&scores, &labels)?,
            });
        }
        Ok(MulticlassMap::OneVsRest(maps))
    }
}

impl fmt::Display for MulticlassMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MulticlassMethod::Temperature => "temperature",
            MulticlassMethod::HistogramOneVsRest => "histogram-ovr",
            MulticlassMethod::IsotonicOneVsRest => "isotonic-ovr",
        })
    }
}

/// A fitted map of whole rows.
#[derive(Clone, Debug, PartialEq)]
pub enum MulticlassMap {
    /// softmax(z / T).
    Temperature(MulticlassTemperature),
    /// g_k for every class k, applied to p_k, the row renormalised.
    OneVsRest(Vec<PiecewiseConstant>),
}

/// A table after recalibration.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The recalibrated probabilities (each row sums to 1 up to rounding), with the
    /// original true classes.
    pub table: ClassTable,
    /// Rows whose one-vs-rest maps all gave 0 and which kept their original
    /// probabilities (0 for temperature scaling).
    pub kept: usize,
}

impl MulticlassMap {
    /// The number of classes the map was fitted on (`None` for a temperature, which
    /// applies to any number).
    pub fn classes(&self) -> Option<usize> {
        match self {
            MulticlassMap::Temperature(_) => None,
            MulticlassMap::OneVsRest(maps) => Some(maps.len()),
        }
    }

    /// Recalibrates every row of `table` (module docs).
    pub fn apply(&self, table: &ClassTable) -> Result<Applied, RecalibrateError> {
        let k = table.classes();
        if let Some(fitted) = self.classes().filter(|&fitted| fitted != k) {
            return Err(RecalibrateError::ClassCountDiffers { fitted, given: k });
        }
        let mut out = vec![0.0; table.rows() * k];
        let mut kept = 0;
        match self {
            MulticlassMap::Temperature(t) => {
                let logits = table.logits();
                for (row, o) in logits.chunks_exact(k).zip(out.chunks_exact_mut(k)) {
                    t.apply_row(row, o);
                }
            }
            MulticlassMap::OneVsRest(maps) => {
                let probabilities = table.probabilities();
                for (row, o) in probabilities.chunks_exact(k).zip(out.chunks_exact_mut(k)) {
                    let mut total = 0.0;
                    for ((o, &p), map) in o.iter_mut().zip(row).zip(maps) {
                        *o = map.apply(p);
                        total += *o;
                    }
                    if total > 0.0 {
                        o.iter_mut().for_each(|q| *q /= total);
                    } else {
                        o.copy_from_slice(row);
                        kept += 1;
                    }
                }
            }
        }
        let table = ClassTable {
            values: out,
            classes: k,
            truth: table.truth.clone(),
            logits: false,
        };
        Ok(Applied { table, kept })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ReduceError;

    /// Three classes; the true class always has p ≥ 0.6 in the fitting rows.
    fn confident() -> ClassTable {
        let rows = [
            ([0.6, 0.3, 0.1], 0),
            ([0.7, 0.2, 0.1], 0),
            ([0.1, 0.8, 0.1], 1),
            ([0.2, 0.6, 0.2], 1),
            ([0.1, 0.2, 0.7], 2),
            ([0.05, 0.05, 0.9], 2),
            ([0.5, 0.3, 0.2], 1),
            ([0.3, 0.3, 0.4], 0),
        ];
        let values = rows.iter().flat_map(|r| r.0).collect();
        ClassTable::new(values, 3, rows.iter().map(|r| r.1).collect(), false).unwrap()
    }

    /// Class k's column (p_k, 1[y = k]) written out row by row.
    fn one_vs_rest_column(table: &ClassTable, class: usize) -> (Vec<f64>, Vec<u8>) {
        (0..table.rows())
            .map(|i| {
                (
                    table.row(i)[class],
                    u8::from(table.true_classes()[i] == class),
                )
            })
            .unzip()
    }

    #[test]
    fn one_vs_rest_rows_sum_to_1_and_isotonic_is_monotone_per_class() {
        let table = confident();
        for method in [
            MulticlassMethod::HistogramOneVsRest,
            MulticlassMethod::IsotonicOneVsRest,
        ] {
            let map = method.fit(&table).unwrap();
            let applied = map.apply(&table).unwrap();
            for i in 0..table.rows() {
                let sum: f64 = applied.table.row(i).iter().sum();
                assert!((sum - 1.0).abs() < 1e-12, "{method} row {i}: {sum}");
            }
            let MulticlassMap::OneVsRest(maps) = &map else {
                panic!("one map per class")
            };
            assert_eq!(maps.len(), 3);
            if method == MulticlassMethod::HistogramOneVsRest {
                for (class, g) in maps.iter().enumerate() {
                    let (scores, labels) = one_vs_rest_column(&table, class);
                    assert_eq!(*g, fit_histogram_binning(&scores, &labels, 15).unwrap());
                }
                // Class 1's bin [0.2, 4/15) holds rows 1 and 4 (0.2, both wrong) and
                // [4/15, 1/3) rows 0, 6, 7 (0.3; one right): 0 and 1/3.
                assert_eq!(maps[1].apply(0.2), 0.0);
                assert_eq!(maps[1].apply(0.3), 1.0 / 3.0);
            }
            if method == MulticlassMethod::IsotonicOneVsRest {
                let grid: Vec<f64> = (0..=100).map(|i| f64::from(i) / 100.0).collect();
                for (class, g) in maps.iter().enumerate() {
                    assert!(grid.windows(2).all(|w| g.apply(w[0]) <= g.apply(w[1])));
                    // The map is isotonic regression (tested against brute force in
                    // `isotonic`) of class k's column.
                    let (scores, labels) = one_vs_rest_column(&table, class);
                    assert_eq!(*g, fit_isotonic(&scores, &labels).unwrap());
                }
                // Each row is its maps' values over their sum.
                let row: Vec<f64> = (0..3).map(|k| maps[k].apply(table.row(0)[k])).collect();
                let total: f64 = row.iter().sum();
                for (k, q) in applied.table.row(0).iter().enumerate() {
                    assert!((q - row[k] / total).abs() < 1e-15);
                }
            }
        }
    }

    #[test]
    fn a_row_whose_maps_all_give_0_keeps_its_probabilities() {
        // Isotonic maps fitted where every true class had p ≥ 0.6 and no class with
        // p < 0.3 was right: a row with every p_k low gets 0 from every map.
        let rows = [
            ([0.6, 0.3, 0.1], 0),
            ([0.1, 0.7, 0.2], 1),
            ([0.1, 0.1, 0.8], 2),
            ([0.7, 0.1, 0.2], 0),
        ];
        let values = rows.iter().flat_map(|r| r.0).collect();
        let fit = ClassTable::new(values, 3, rows.iter().map(|r| r.1).collect(), false).unwrap();
        let map = MulticlassMethod::IsotonicOneVsRest.fit(&fit).unwrap();
        let low = ClassTable::new(
            vec![0.28, 0.29, 0.43, 0.9, 0.05, 0.05],
            3,
            vec![2, 0],
            false,
        )
        .unwrap();
        let applied = map.apply(&low).unwrap();
        assert_eq!(applied.kept, 1);
        assert_eq!(applied.table.row(0), &[0.28, 0.29, 0.43]);
        assert_eq!(applied.table.row(1), &[1.0, 0.0, 0.0]);
    }

    #[test]
    fn argmax_can_change_and_correctness_follows_the_true_class() {
        // (0.6, 0.3, 0.1) is right for class 0 once in 4 and class 1 is the truth 3
        // times: isotonic one-vs-rest gives g_0(0.6) = 1/4, g_1(0.3) = 3/4, g_2(0.1) = 0
        // (class 2 is true only at 0.8), so the row becomes (1/4, 3/4, 0) and its
        // prediction class 1.
        let mut rows = vec![([0.6, 0.3, 0.1], 1); 3];
        rows.push(([0.6, 0.3, 0.1], 0));
        rows.extend([([0.1, 0.1, 0.8], 2); 2]);
        rows.extend([([0.9, 0.05, 0.05], 0); 2]);
        let values = rows.iter().flat_map(|r| r.0).collect();
        let table = ClassTable::new(values, 3, rows.iter().map(|r| r.1).collect(), false).unwrap();
        let map = MulticlassMethod::IsotonicOneVsRest.fit(&table).unwrap();
        let applied = map.apply(&table).unwrap();
        assert_eq!(applied.table.row(0), &[0.25, 0.75, 0.0]);
        let (before_scores, before) = table.top_label();
        let (scores, after) = applied.table.top_label();
        assert_eq!((before_scores[0], before[0]), (0.6, 0));
        assert_eq!((scores[0], after[0]), (0.75, 1));
        // The row of class 0 was right and is now wrong.
        assert_eq!((before[3], after[3]), (1, 0));
        assert_eq!(applied.table.row(6), &[1.0, 0.0, 0.0]);
    }

    #[test]
    fn errors_are_named() {
        assert_eq!(
            ClassTable::new(vec![0.5, 0.5], 2, vec![2], false),
            Err(RecalibrateError::Row {
                row: 0,
                error: ReduceError::ClassOutOfRange {
                    class: 2,
                    classes: 2
                }
            })
        );
        assert_eq!(
            ClassTable::new(vec![0.5, 0.5, 0.5, f64::NAN], 2, vec![0, 1], true),
            Err(RecalibrateError::Row {
                row: 1,
                error: ReduceError::NonFinite { index: 1 }
            })
        );
        assert_eq!(
            ClassTable::new(vec![0.5, 0.6], 2, vec![0], false),
            Err(RecalibrateError::Row {
                row: 0,
                error: ReduceError::NotNormalized
            })
        );
        assert_eq!(
            ClassTable::new(vec![0.5, 0.5, 1.0], 3, vec![0, 1], false),
            Err(RecalibrateError::ShapeMismatch {
                values: 3,
                rows: 2,
                classes: 3
            })
        );
        assert_eq!(
            ClassTable::new(vec![1.0], 1, vec![0], false),
            Err(RecalibrateError::TooFewClasses(1))
        );
        let no_class_2 = ClassTable::new(vec![0.5, 0.3, 0.2], 3, vec![0], false).unwrap();
        assert_eq!(
            MulticlassMethod::HistogramOneVsRest.fit(&no_class_2),
            Err(RecalibrateError::TooFewClassRows {
                class: 1,
                rows: 0,
                needed: 1
            })
        );
        let two = ClassTable::new(vec![0.5, 0.5], 2, vec![0], false).unwrap();
        let map = MulticlassMethod::IsotonicOneVsRest
            .fit(&confident())
            .unwrap();
        assert_eq!(
            map.apply(&two),
            Err(RecalibrateError::ClassCountDiffers {
                fitted: 3,
                given: 2
            })
        );
    }
}
