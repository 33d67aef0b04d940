//! Top-label reduction (SPEC §1): rows of class probabilities or logits and the true
//! classes become (confidence, correct) samples.

use super::boundary::ffi_boundary;
use super::raw::{array, array_mut, Out};
use super::status::tce_status;
use crate::toplabel::{self, TopLabel};

/// What the values of a row are (values of a `uint32_t kind`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tce_row_kind {
    /// Class probabilities: each in [0, 1], summing to 1 within 1e-3.
    Probabilities = 0,
    /// Logits: the confidence is the largest softmax probability, computed in double
    /// with the maximum subtracted (no overflow).
    Logits = 1,
}

fn is_logits(kind: u32) -> Result<bool, tce_status> {
    match kind {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(tce_status::InvalidEnum),
    }
}

/// Reduces one row `row[0..classes]` of kind `kind` (a `tce_row_kind`) with true class
/// `true_class`: `*score` is the confidence (largest probability), `*label` 1 if the
/// predicted class (the arg-max, ties to the lowest index) is the true class, else 0,
/// and `*predicted` the predicted class. `predicted` may be NULL if not wanted.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_ENUM`, `EMPTY_ROW` (classes = 0),
/// `CLASS_OUT_OF_RANGE`, `NON_FINITE_VALUE`, `PROBABILITY_OUT_OF_RANGE`,
/// `NOT_NORMALIZED`, `CAPACITY_TOO_LARGE`.
///
/// # Safety
/// `row` NULL or readable for `classes` values; `score`, `label`, `predicted` NULL or
/// valid for writes.
#[no_mangle]
pub unsafe extern "C" fn tce_top_label_reduce_row(
    row: *const f64,
    classes: usize,
    true_class: usize,
    kind: u32,
    score: *mut f64,
    label: *mut u8,
    predicted: *mut usize,
) -> tce_status {
    ffi_boundary!({
        // SAFETY: the caller's contract.
        let (score, label) = unsafe { (Out::new(score)?, Out::new(label)?) };
        let predicted = if predicted.is_null() {
            None
        } else {
            // SAFETY: the caller's contract.
            Some(unsafe { Out::new(predicted)? })
        };
        let logits = is_logits(kind)?;
        // SAFETY: the caller's contract.
        let row = unsafe { array(row, classes)? };
        let top: TopLabel = if logits {
            toplabel::from_logits(row, true_class)?
        } else {
            toplabel::from_probabilities(row, true_class)?
        };
        score.write(top.score);
        label.write(top.label);
        if let Some(predicted) = predicted {
            predicted.write(top.predicted);
        }
        Ok(())
    })
}

/// Reduces a row-major table `table[0..table_len]` of `classes` columns, one row per
/// entry of `true_classes[0..rows]` (so `table_len` must be rows × classes), into
/// `scores[0..rows]` and `labels[0..rows]`. All rows are checked before anything is
/// written: on error the outputs are untouched.
///
/// Errors: `NULL_POINTER`, `MISALIGNED`, `INVALID_ENUM`, `EMPTY_ROW` (classes = 0),
/// `SHAPE_MISMATCH`, `BUFFER_TOO_SMALL` (`scores_len` or `labels_len` below rows),
/// `CLASS_OUT_OF_RANGE`, `NON_FINITE_VALUE`, `PROBABILITY_OUT_OF_RANGE`,
/// `NOT_NORMALIZED`, `CAPACITY_TOO_LARGE`.
///
/// # Safety
/// Each pointer NULL or valid for its length (reads for `table`, `true_classes`; writes
/// for `scores`, `labels`); the outputs overlap nothing else.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tce_top_label_reduce_table(
    table: *const f64,
    table_len: usize,
    classes: usize,
    true_classes: *const usize,
    rows: usize,
    kind: u32,
    scores: *mut f64,
    scores_len: usize,
    labels: *mut u8,
    labels_len: usize,
) -> tce_status {
    ffi_boundary!({
        let logits = is_logits(kind)?;
        // SAFETY: the caller's contract.
        let (table, true_classes) =
            unsafe { (array(table, table_len)?, array(true_classes, rows)?) };
        // SAFETY: the caller's contract.
        let (scores, labels) = unsafe {
            (
                array_mut(scores, scores_len)?,
                array_mut(labels, labels_len)?,
            )
        };
        if classes == 0 {
            return Err(tce_status::EmptyRow);
        }
        // Checked here: the core multiplies rows by classes.
        if rows.checked_mul(classes) != Some(table.len()) {
            return Err(tce_status::ShapeMismatch);
        }
        if scores.len() < rows || labels.len() < rows {
            return Err(tce_status::BufferTooSmall);
        }
        toplabel::reduce_table(table, classes, true_classes, logits, scores, labels)?;
        Ok(())
    })
}
