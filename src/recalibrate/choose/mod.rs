//! **Which recalibration?** Several methods fitted on one part of a model's outputs and
//! compared on the rest (`tce recalibrate --methods`, docs/decisions.md "Which
//! recalibration?").
//!
//! [`choose`] splits the rows at random ([`split`]: a fraction
//! [`ChooseSettings::holdout`] held out, the rest for fitting), fits every method on the
//! fitting rows, applies it to the held-out rows, and compares each method's held-out
//! top-label confidences by the paired comparison of [`crate::decision::compare`]
//! (rows resampled jointly, BCa interval of Δ, p-value):
//!
//! - against the **uncalibrated** held-out outputs: Δ = CE_method − CE_uncalibrated;
//! - against the **best other method** (the lowest CE among the others): Δ = CE_method −
//!   CE_other. For the best method that other is the runner-up.
//!
//! Each comparison is a test at α on its own; nothing corrects for the several methods
//! compared, so with many methods one of them can be "significantly better" than the
//! uncalibrated outputs by chance more often than α.
//!
//! Each side keeps its own correctness: a one-vs-rest method can change the arg-max, and
//! its held-out top labels are then right on other rows than the uncalibrated outputs'.
//! The comparison pairs the two sides' own (confidence, correct) rows, resampled jointly.
//!
//! [`text`] and [`json`] (feature `render`) render a [`Choice`].

#[cfg(feature = "render")]
pub mod json;
pub mod text;

use core::fmt;

use rand::Rng;

use super::{Outputs, RecalibrateError, Recalibration, TopLabels};
use crate::decision::compare::{
    compare, CompareError, CompareSettings, Comparison, Estimate, Outputs as Side, Paired, Verdict,
};
use crate::decision::resampling::stream_seed;
use crate::sim::repetition_rng;

/// The default fraction of rows held out.
pub const DEFAULT_HOLDOUT: f64 = 0.5;

/// The stream of the split: the rows are shuffled by
/// [`repetition_rng`]`(stream_seed(seed, SPLIT_STREAM), 0)` (the comparisons' own streams
/// are 2 and 3 of the same seed).
pub const SPLIT_STREAM: u64 = 4;

/// What [`choose`] does.
#[derive(Clone, Debug, PartialEq)]
pub struct ChooseSettings {
    /// The methods, in the order they are reported (each at most once).
    pub methods: Vec<Recalibration>,
    /// The fraction of rows held out, in (0, 1).
    pub holdout: f64,
    /// The comparisons' settings; their seed also seeds the split.
    pub compare: CompareSettings,
}

impl ChooseSettings {
    /// Checks what does not depend on the data.
    pub fn check(&self) -> Result<(), ChooseError> {
        if self.methods.is_empty() {
            return Err(ChooseError::NoMethods);
        }
        for (i, m) in self.methods.iter().enumerate() {
            if self.methods[..i].contains(m) {
                return Err(ChooseError::DuplicateMethod(*m));
            }
        }
        if !(self.holdout > 0.0 && self.holdout < 1.0) {
            return Err(ChooseError::InvalidHoldout(self.holdout));
        }
        self.compare.check().map_err(ChooseError::Settings)
    }
}

/// What a method is compared against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Against {
    /// The uncalibrated held-out outputs.
    Uncalibrated,
    /// Another method's held-out outputs.
    Method(Recalibration),
}

impl fmt::Display for Against {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Against::Uncalibrated => f.write_str("the uncalibrated outputs"),
            Against::Method(m) => write!(f, "{m}"),
        }
    }
}

/// Why no choice was made. Nothing is reported in part.
#[derive(Clone, Debug, PartialEq)]
pub enum ChooseError {
    /// No method given.
    NoMethods,
    /// A method given twice.
    DuplicateMethod(Recalibration),
    /// The held-out fraction is not in (0, 1).
    InvalidHoldout(f64),
    /// The split leaves a part empty.
    SplitTooSmall {
        /// Rows in all.
        rows: usize,
        /// The held-out fraction.
        holdout: f64,
    },
    /// The comparisons' settings are refused.
    Settings(CompareError),
    /// A method could not be fitted on the fitting rows, or applied to the held-out ones.
    Recalibrate {
        /// The method.
        method: Recalibration,
        /// Why.
        error: RecalibrateError,
    },
    /// A comparison failed (an estimator undefined on the held-out rows, say).
    Compare {
        /// The method compared.
        method: Recalibration,
        /// Against what.
        against: Against,
        /// Why.
        error: CompareError,
    },
}

impl fmt::Display for ChooseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NoMethods => f.write_str("no recalibration method to compare"),
            Self::DuplicateMethod(m) => write!(f, "method {m} is given twice"),
            Self::InvalidHoldout(h) => {
                write!(f, "the held-out fraction must be in (0, 1), got {h}")
            }
            Self::SplitTooSmall { rows, holdout } => write!(
                f,
                "{rows} rows cannot be split with {holdout} held out: both the fitting and \
                 the held-out part need at least one row"
            ),
            Self::Settings(e) => write!(f, "{e}"),
            Self::Recalibrate { method, error } => write!(f, "{method}: {error}"),
            Self::Compare {
                method,
                against,
                error,
            } => write!(f, "{method} against {against}: {error}"),
        }
    }
}

impl std::error::Error for ChooseError {}

/// The held-out rows and the fitting rows of a split seeded `seed` (each in increasing
/// order): the rows shuffled by [`repetition_rng`]`(stream_seed(seed, SPLIT_STREAM), 0)`
/// (Fisher–Yates), the first round(holdout · n) held out.
pub fn split(
    rows: usize,
    holdout: f64,
    seed: u64,
) -> Result<(Vec<usize>, Vec<usize>), ChooseError> {
    let held = (holdout * rows as f64).round() as usize;
    if held == 0 || held >= rows {
        return Err(ChooseError::SplitTooSmall { rows, holdout });
    }
    let mut order: Vec<usize> = (0..rows).collect();
    let mut rng = repetition_rng(stream_seed(seed, SPLIT_STREAM), 0);
    for i in (1..rows).rev() {
        order.swap(i, rng.gen_range(0..=i));
    }
    let (mut held_out, mut fitting) = (order[..held].to_vec(), order[held..].to_vec());
    held_out.sort_unstable();
    fitting.sort_unstable();
    Ok((held_out, fitting))
}

/// The paired comparison of two top-label outputs of the same held-out rows, Δ = CE_a −
/// CE_b, each side with its own correctness: the one call of [`compare`] in [`choose`].
fn paired(
    a: &TopLabels,
    b: &TopLabels,
    settings: &CompareSettings,
) -> Result<Comparison, CompareError> {
    let rows = Paired::by_order(
        Side::new(&a.scores, &a.labels),
        Side::new(&b.scores, &b.labels),
    )?;
    compare(&rows, settings)
}

/// One method's result: model A of both comparisons is the method.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The method.
    pub method: Recalibration,
    /// Its held-out top-label outputs.
    pub outputs: TopLabels,
    /// Against the uncalibrated outputs (B).
    pub uncalibrated: Comparison,
    /// Against the best other method (B), if there is one.
    pub best_other: Option<(Recalibration, Comparison)>,
}

impl Candidate {
    /// Its CE on the held-out rows.
    pub fn estimate(&self) -> Estimate {
        self.uncalibrated.a
    }

    /// The best other method and the comparison against it, if any.
    pub fn against_best_other(&self) -> Option<(Recalibration, &Comparison)> {
        self.best_other.as_ref().map(|(m, c)| (*m, c))
    }

    /// Whether it is significantly better calibrated than the uncalibrated outputs.
    pub fn better_than_uncalibrated(&self) -> bool {
        self.uncalibrated.verdict() == Verdict::ABetter
    }
}

/// Everything [`choose`] computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// The settings.
    pub settings: ChooseSettings,
    /// Rows in all.
    pub rows: usize,
    /// The fitting rows (indices of the input, increasing).
    pub fitting: Vec<usize>,
    /// The held-out rows (indices of the input, increasing).
    pub held_out: Vec<usize>,
    /// The uncalibrated held-out top-label outputs.
    pub uncalibrated: TopLabels,
    /// One per method, in the order of [`ChooseSettings::methods`].
    pub candidates: Vec<Candidate>,
    /// The candidates (indices of `candidates`) by increasing CE, ties in
    /// the given order.
    pub ranking: Vec<usize>,
}

impl Choice {
    /// The uncalibrated outputs' CE on the held-out rows: model B of every candidate's
    /// comparison against them (None without methods).
    pub fn uncalibrated_estimate(&self) -> Option<Estimate> {
        self.candidates.first().map(|c| c.uncalibrated.b)
    }

    /// The method with the lowest held-out CE.
    pub fn best(&self) -> Option<&Candidate> {
        self.ranking.first().map(|&i| &self.candidates[i])
    }

    /// The method with the second lowest.
    pub fn runner_up(&self) -> Option<&Candidate> {
        self.ranking.get(1).map(|&i| &self.candidates[i])
    }

    /// The methods significantly better calibrated than the uncalibrated outputs, by
    /// increasing CE.
    pub fn better_than_uncalibrated(&self) -> Vec<&Candidate> {
        self.ranking
            .iter()
            .map(|&i| &self.candidates[i])
            .filter(|c| c.better_than_uncalibrated())
            .collect()
    }

    /// Whether the best method is significantly better than the runner-up (None with
    /// fewer than two methods).
    pub fn best_beats_runner_up(&self) -> Option<bool> {
        let (_, c) = self.best()?.against_best_other()?;
        Some(c.verdict() == Verdict::ABetter)
    }
}

fn recalibrate_error(method: Recalibration) -> impl Fn(RecalibrateError) -> ChooseError {
    move |error| ChooseError::Recalibrate { method, error }
}

/// Fits every method on a random part of `outputs` and compares them on the rest (module
/// docs). Bad settings or input are refused whole with a named error.
pub fn choose(outputs: &Outputs, settings: &ChooseSettings) -> Result<Choice, ChooseError> {
    settings.check()?;
    let rows = outputs.rows();
    let (held_out, fitting) = split(rows, settings.holdout, settings.compare.seed)?;
    let (fit_part, held_part) = (outputs.select(&fitting), outputs.select(&held_out));
    let uncalibrated = held_part.top_label();
    // Fit and apply every method before any comparison: a method that cannot be fitted
    // stops the run before the costly part.
    let mut applied = Vec::with_capacity(settings.methods.len());
    for &method in &settings.methods {
        let fitted = method.fit(&fit_part).map_err(recalibrate_error(method))?;
        let top = fitted
            .apply(&held_part)
            .map_err(recalibrate_error(method))?
            .top_label();
        applied.push((method, top));
    }
    let compare_error = |method, against| {
        move |error| ChooseError::Compare {
            method,
            against,
            error,
        }
    };
    let mut candidates = Vec::with_capacity(applied.len());
    for (method, top) in applied {
        let uncalibrated = paired(&top, &uncalibrated, &settings.compare)
            .map_err(compare_error(method, Against::Uncalibrated))?;
        candidates.push(Candidate {
            method,
            outputs: top,
            uncalibrated,
            best_other: None,
        });
    }
    let mut ranking: Vec<usize> = (0..candidates.len()).collect();
    let value = |i: usize| candidates[i].estimate().value;
    ranking.sort_by(|&i, &j| value(i).total_cmp(&value(j)));
    let mut others = Vec::with_capacity(ranking.len());
    for &i in &ranking {
        // The best other: the first in the ranking that is not this one.
        let Some(&j) = ranking.iter().find(|&&j| j != i) else {
            break;
        };
        let (a, b) = (&candidates[i], &candidates[j]);
        let c = paired(&a.outputs, &b.outputs, &settings.compare)
            .map_err(compare_error(a.method, Against::Method(b.method)))?;
        others.push((i, b.method, c));
    }
    for (i, other, c) in others {
        candidates[i].best_other = Some((other, c));
    }
    Ok(Choice {
        settings: settings.clone(),
        rows,
        fitting,
        held_out,
        uncalibrated,
        candidates,
        ranking,
    })
}
