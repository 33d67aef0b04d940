//! The paper's Table 1 experiment on real splits of a file of classifier outputs: split
//! the rows at random into a calibration part and a test part, fit every recalibration
//! method on the calibration part, let each estimator rank the methods on the
//! recalibrated test part, and ask which method truly is best.
//!
//! Real outputs have no known truth, so two stand-ins are computed, and reported apart:
//!
//! - [`Truth::TestFit`]: the TCE_2 of the flexible model
//!   ([`crate::fit::flexible::fit_flexible`], the report's model) fitted to the
//!   recalibrated test part's (score, label) pairs. It sees only the test part, as the
//!   estimators do, and is a plug-in estimate with an error of its own;
//! - [`Truth::FileModel`]: the recalibration map integrated against the flexible model
//!   fitted to the whole file ([`super::exact::recalibrated_tce`]): what the map's TCE
//!   would be if the whole file's fit were the classifier's true distribution. The test
//!   part is half or less of the file, so this truth leans on more rows than any
//!   estimator sees; it shares the rows of the calibration part, on which the map was
//!   fitted.
//!
//! Each split is a pure function of (seed, split index): [`crate::sim::repetition_rng`]
//! draws the rows without replacement, the first `calibration` of them the calibration
//! part, the next `test` the test part.
//!
//! Everything else is [`super::table1`]'s: the estimators, the methods, and the summary
//! ([`super::table1::summarize_outcomes`]), so both tables are read alike.

use core::fmt;

use rand::seq::index;
use rayon::prelude::*;

use super::exact::recalibrated_tce;
use super::table1::{
    check_repetitions, estimates_in, summarize_outcomes, Estimates, Repetition, Summary,
    Table1Error,
};
use super::Method;
use crate::fit::flexible::{fit_flexible, FlexibleFit, FlexibleFitError};
use crate::fit::EndpointRule;
use crate::sim::repetition_rng;

/// How a file's rows are split.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Split {
    /// Random halves: ⌊n/2⌋ rows to calibrate on, the other ⌈n/2⌉ to test on.
    Halves,
    /// A calibration part and a test part of these sizes, the other rows unused.
    Sizes {
        /// Rows to calibrate on.
        calibration: usize,
        /// Rows to test on.
        test: usize,
    },
}

impl Split {
    /// (calibration, test) rows for a file of `rows` rows: each part needs at least one
    /// row, and together they need at most `rows`.
    pub fn sizes(self, rows: usize) -> Result<(usize, usize), Table1RealError> {
        let (calibration, test) = match self {
            Split::Halves => (rows / 2, rows - rows / 2),
            Split::Sizes { calibration, test } => (calibration, test),
        };
        let fits = calibration
            .checked_add(test)
            .is_some_and(|total| total <= rows);
        if calibration == 0 || test == 0 || !fits {
            return Err(Table1RealError::TooFewRows {
                rows,
                calibration,
                test,
            });
        }
        Ok((calibration, test))
    }
}

impl fmt::Display for Split {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Split::Halves => f.write_str("random halves"),
            Split::Sizes { calibration, test } => write!(f, "{calibration}/{test}"),
        }
    }
}

/// Which stand-in for the true TCE after recalibration (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Truth {
    /// (a) The TCE of the flexible model fitted to the recalibrated test part.
    TestFit,
    /// (b) The map integrated against the flexible model of the whole file.
    FileModel,
}

impl Truth {
    /// Both, in table order.
    pub const ALL: [Truth; 2] = [Truth::TestFit, Truth::FileModel];

    /// What it is, for tables.
    pub fn describe(self) -> &'static str {
        match self {
            Truth::TestFit => "TCE of the flexible model fitted to the recalibrated test part",
            Truth::FileModel => {
                "TCE of the recalibration map under the flexible model of the whole file"
            }
        }
    }
}

/// Why the real-data experiment failed.
#[derive(Clone, Debug, PartialEq)]
pub enum Table1RealError {
    /// The file has too few rows for the split: each part needs one row at least, and
    /// both together at most the file's rows.
    TooFewRows {
        /// The file's rows.
        rows: usize,
        /// The calibration part asked for.
        calibration: usize,
        /// The test part asked for.
        test: usize,
    },
    /// The whole file's flexible model could not be fitted.
    FileFit(FlexibleFitError),
    /// A split count out of range, a method that could not be fitted on some
    /// calibration part (its split index is the `rep`), or an exact TCE that failed.
    Table1(Table1Error),
}

impl fmt::Display for Table1RealError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooFewRows {
                rows,
                calibration,
                test,
            } => write!(
                f,
                "{rows} rows cannot be split into {calibration} calibration and {test} test \
                 rows (each part needs at least one row, both at most {rows})"
            ),
            Self::FileFit(e) => write!(f, "the flexible model of the whole file: {e}"),
            Self::Table1(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for Table1RealError {}

/// A file's rows and the flexible model fitted to all of them.
#[derive(Clone, Debug, PartialEq)]
pub struct RealFile {
    /// A label for the table.
    pub name: String,
    /// Confidences.
    pub scores: Vec<f64>,
    /// Labels (1 = the top label is correct).
    pub labels: Vec<u8>,
    /// The flexible model of every row ([`Truth::FileModel`]'s distribution).
    pub fit: FlexibleFit,
}

impl RealFile {
    /// Fits the whole file's flexible model (the endpoint rule's default, as the report
    /// fits it).
    pub fn new(name: String, scores: Vec<f64>, labels: Vec<u8>) -> Result<Self, Table1RealError> {
        let fit = fit_flexible(&scores, &labels, &EndpointRule::default())
            .map_err(Table1RealError::FileFit)?;
        Ok(RealFile {
            name,
            scores,
            labels,
            fit,
        })
    }
}

/// One split: per method, both truths and every estimate.
#[derive(Clone, Debug, PartialEq)]
pub struct RealRepetition {
    /// [`Truth::TestFit`] per method ([`Method::ALL`] order): `None` where the flexible
    /// fit of the recalibrated test part fails.
    pub test_fit_tce: [Option<f64>; 4],
    /// [`Truth::FileModel`] per method.
    pub file_model_tce: [f64; 4],
    /// Estimates per method on the recalibrated test part.
    pub estimates: [Estimates; 4],
}

impl RealRepetition {
    /// The split as a by-construction [`Repetition`] whose exact TCE is `truth`; `None`
    /// if that truth is undefined for some method.
    pub fn with_truth(&self, truth: Truth) -> Option<Repetition> {
        let tce = match truth {
            Truth::FileModel => self.file_model_tce,
            Truth::TestFit => {
                let [a, b, c, d] = self.test_fit_tce;
                [a?, b?, c?, d?]
            }
        };
        Some(Repetition {
            tce,
            estimates: self.estimates,
        })
    }
}

/// Runs split `rep` (sizes from [`Split::sizes`]).
pub fn repetition(
    file: &RealFile,
    split: Split,
    seed: u64,
    rep: u64,
) -> Result<RealRepetition, Table1RealError> {
    let (calibration, test) = split.sizes(file.scores.len())?;
    let mut rng = repetition_rng(seed, rep);
    let rows = index::sample(&mut rng, file.scores.len(), calibration + test);
    let (mut fit_scores, mut fit_labels) = (Vec::with_capacity(calibration), Vec::new());
    let (mut test_scores, mut test_labels) = (Vec::with_capacity(test), Vec::new());
    for (k, row) in rows.into_iter().enumerate() {
        let (scores, labels) = if k < calibration {
            (&mut fit_scores, &mut fit_labels)
        } else {
            (&mut test_scores, &mut test_labels)
        };
        scores.push(file.scores[row]);
        labels.push(file.labels[row]);
    }
    let mut storage = crate::storage::sorting_slots(test)
        .map_err(|e| Table1Error::OutOfMemory {
            bytes: e.len.saturating_mul(core::mem::size_of::<crate::Slot>()),
        })
        .map_err(Table1RealError::Table1)?;
    let mut outcome = RealRepetition {
        test_fit_tce: [None; 4],
        file_model_tce: [0.0; 4],
        estimates: [Estimates::UNDEFINED; 4],
    };
    for (m, method) in Method::ALL.into_iter().enumerate() {
        let map = method.fit(&fit_scores, &fit_labels).map_err(|error| {
            Table1RealError::Table1(Table1Error::Recalibrate { method, rep, error })
        })?;
        outcome.file_model_tce[m] = recalibrated_tce(&file.fit.model, &map, 2.0)
            .map_err(|e| Table1RealError::Table1(Table1Error::Tce(e)))?;
        let recalibrated = map.apply_all(&test_scores);
        outcome.estimates[m] = estimates_in(&recalibrated, &test_labels, &mut storage);
        // A fit that fails (e.g. every recalibrated score exactly 0 or 1) leaves this
        // truth undefined for the split; the other truth stands.
        outcome.test_fit_tce[m] =
            fit_flexible(&recalibrated, &test_labels, &EndpointRule::default())
                .ok()
                .map(|fit| fit.tce_l2);
    }
    Ok(outcome)
}

/// Runs `splits` splits of `file` (in parallel; each is a pure function of (seed, split
/// index)), after checking the count (1 to [`super::table1::MAX_REPETITIONS`]) and that
/// the file has the rows for the split.
pub fn run(
    file: &RealFile,
    split: Split,
    splits: usize,
    seed: u64,
) -> Result<Vec<RealRepetition>, Table1RealError> {
    check_repetitions(splits).map_err(Table1RealError::Table1)?;
    split.sizes(file.scores.len())?;
    (0..splits as u64)
        .into_par_iter()
        .map(|rep| repetition(file, split, seed, rep))
        .collect()
}

/// The summary of a file's splits under `truth` when only the `methods` compete, and the
/// number of splits left out because that truth is undefined for one of their methods.
/// "TCE before" is the whole file's model's TCE_2.
pub fn summarize(
    file: &RealFile,
    split: Split,
    outcomes: &[RealRepetition],
    truth: Truth,
    methods: &[Method],
) -> Result<(Summary, usize), Table1RealError> {
    let sizes = split.sizes(file.scores.len())?;
    let kept: Vec<Repetition> = outcomes
        .iter()
        .filter_map(|o| o.with_truth(truth))
        .collect();
    let left_out = outcomes.len() - kept.len();
    let summary = summarize_outcomes(file.name.clone(), sizes, file.fit.tce_l2, &kept, methods);
    Ok((summary, left_out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recalibrate::RecalibrationMap;
    use crate::sim::Curve;

    #[test]
    fn split_sizes_and_too_few_rows() {
        assert_eq!(Split::Halves.sizes(2897), Ok((1448, 1449)));
        assert_eq!(Split::Halves.sizes(2), Ok((1, 1)));
        let sized = Split::Sizes {
            calibration: 5000,
            test: 10_000,
        };
        assert_eq!(sized.sizes(15_000), Ok((5000, 10_000)));
        for (split, rows) in [(Split::Halves, 1), (Split::Halves, 0), (sized, 14_999)] {
            let (calibration, test) = match split {
                Split::Halves => (rows / 2, rows - rows / 2),
                Split::Sizes { calibration, test } => (calibration, test),
            };
            assert_eq!(
                split.sizes(rows),
                Err(Table1RealError::TooFewRows {
                    rows,
                    calibration,
                    test
                })
            );
        }
        let huge = Split::Sizes {
            calibration: usize::MAX,
            test: 1,
        };
        assert!(matches!(
            huge.sizes(10),
            Err(Table1RealError::TooFewRows { .. })
        ));
        assert_eq!(
            sized.sizes(10_000).unwrap_err().to_string(),
            "10000 rows cannot be split into 5000 calibration and 10000 test rows (each \
             part needs at least one row, both at most 10000)"
        );
    }

    /// The bundled Birds file (ResNet-50 on Caltech-UCSD Birds, 2897 rows), its first two
    /// columns.
    fn birds() -> RealFile {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/resnet50_birds_test.csv");
        let text = std::fs::read_to_string(path).unwrap();
        let (mut scores, mut labels) = (Vec::new(), Vec::new());
        for line in text.lines().skip(1) {
            let mut fields = line.split(',');
            scores.push(fields.next().unwrap().parse::<f64>().unwrap());
            labels.push(fields.next().unwrap().parse::<u8>().unwrap());
        }
        assert_eq!(scores.len(), 2897);
        RealFile::new("birds".into(), scores, labels).unwrap()
    }

    #[test]
    fn a_small_run_on_birds_counts_exactly() {
        let file = birds();
        // Truth (b) of the identity map is the whole file's model's own TCE.
        let identity = RecalibrationMap::Monotone(Curve::logistic_log_odds(0.0, 1.0).unwrap());
        let tce = recalibrated_tce(&file.fit.model, &identity, 2.0).unwrap();
        assert!(
            (tce - file.fit.tce_l2).abs() <= 1e-10 * file.fit.tce_l2,
            "{tce} vs {}",
            file.fit.tce_l2
        );
        let split = Split::Sizes {
            calibration: 300,
            test: 300,
        };
        let outcomes = run(&file, split, 6, 1).unwrap();
        // Each split is a pure function of (seed, index).
        assert_eq!(outcomes[2], repetition(&file, split, 1, 2).unwrap());
        assert_ne!(outcomes[2], repetition(&file, split, 2, 2).unwrap());
        let paper = &super::super::table1::PAPER_METHODS;
        // The counts `tce table1 --mode real --splits 6 --seed 1 --calibration 300
        // --test 300 data/resnet50_birds_test.csv` prints (as shares of 6).
        let (a, left_out) = summarize(&file, split, &outcomes, Truth::TestFit, paper).unwrap();
        assert_eq!((left_out, a.repetitions, a.sizes), (0, 6, (300, 300)));
        // Histogram, isotonic, Platt (not competing), temperature.
        assert_eq!(a.tce_best, [3, 1, 0, 2]);
        // The flexible fit of a recalibrated test part is often calibrated (TCE 0) for
        // more than one method.
        assert_eq!(a.tied, 3);
        // EW ECE_bin, EM ECE_bin, EM ECE_sweep, ties kept, EM ECE_debias, KDE.
        assert_eq!(a.agreements, [3, 5, 5, 5, 4, 3]);
        let (b, _) = summarize(&file, split, &outcomes, Truth::FileModel, paper).unwrap();
        assert_eq!(b.tce_best, [0, 0, 0, 6]);
        assert_eq!(b.tied, 0);
        assert_eq!(b.agreements, [2, 3, 4, 4, 2, 5]);
        assert_eq!(b.original_tce, file.fit.tce_l2);
    }

    #[test]
    fn the_split_count_and_the_rows_are_checked() {
        let file = birds();
        let split = Split::Sizes {
            calibration: 2000,
            test: 898,
        };
        assert_eq!(
            run(&file, split, 1, 0),
            Err(Table1RealError::TooFewRows {
                rows: 2897,
                calibration: 2000,
                test: 898
            })
        );
        assert_eq!(
            run(&file, Split::Halves, 0, 0),
            Err(Table1RealError::Table1(Table1Error::RepetitionsOutOfRange(
                0
            )))
        );
        let too_many = super::super::table1::MAX_REPETITIONS + 1;
        assert_eq!(
            run(&file, Split::Halves, too_many, 0),
            Err(Table1RealError::Table1(Table1Error::RepetitionsOutOfRange(
                too_many
            )))
        );
        // A file whose every score is 0 or 1 has no model to integrate maps against.
        assert!(matches!(
            RealFile::new("atoms".into(), vec![0.0, 1.0, 1.0], vec![0, 1, 1]),
            Err(Table1RealError::FileFit(
                FlexibleFitError::NoContinuousScores
            ))
        ));
    }
}
