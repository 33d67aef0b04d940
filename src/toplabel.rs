//! Top-label reduction (SPEC §1): a row of class probabilities or logits and the true
//! class become one (confidence, correct) sample.

use crate::error::ReduceError;

/// How far the probabilities of a row may sum from 1 (float32 softmax outputs of 1000
/// classes stay well inside it; logits passed by mistake do not).
pub const PROBABILITY_SUM_TOLERANCE: f64 = 1e-3;

/// The top-label sample of one row.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TopLabel {
    /// The confidence: the largest class probability.
    pub score: f64,
    /// 1 if the predicted class is the true class, else 0.
    pub label: u8,
    /// The predicted class: the arg-max, ties to the lowest index.
    pub predicted: usize,
}

/// The index and value of the first largest value (ties to the lowest index), or
/// [`ReduceError::EmptyRow`] for an empty row (which `check_class` has refused already).
fn argmax(row: &[f64]) -> Result<(usize, f64), ReduceError> {
    let (&first, rest) = row.split_first().ok_or(ReduceError::EmptyRow)?;
    let mut best = (0, first);
    // `zip` with a range instead of `enumerate`: the index stays below the row's length
    // by construction, so it needs no overflow check.
    for (i, &v) in (1..row.len()).zip(rest) {
        if v > best.1 {
            best = (i, v);
        }
    }
    Ok(best)
}

fn check_class(row: &[f64], class: usize) -> Result<(), ReduceError> {
    if row.is_empty() {
        return Err(ReduceError::EmptyRow);
    }
    if class >= row.len() {
        return Err(ReduceError::ClassOutOfRange {
            class,
            classes: row.len(),
        });
    }
    match row.iter().position(|v| !v.is_finite()) {
        Some(index) => Err(ReduceError::NonFinite { index }),
        None => Ok(()),
    }
}

/// Reduces a row of class probabilities (each in [0, 1], summing to 1 within
/// [`PROBABILITY_SUM_TOLERANCE`]) with true class `class`.
pub fn from_probabilities(row: &[f64], class: usize) -> Result<TopLabel, ReduceError> {
    check_class(row, class)?;
    if let Some(index) = row.iter().position(|p| !(0.0..=1.0).contains(p)) {
        return Err(ReduceError::ProbabilityOutOfRange { index });
    }
    if (row.iter().sum::<f64>() - 1.0).abs() > PROBABILITY_SUM_TOLERANCE {
        return Err(ReduceError::NotNormalized);
    }
    let (predicted, score) = argmax(row)?;
    Ok(TopLabel {
        score,
        label: u8::from(predicted == class),
        predicted,
    })
}

/// Reduces a row of logits with true class `class`: the confidence is the largest softmax
/// probability, 1 / Σ_j exp(z_j − z_max), computed in `f64` with the maximum subtracted
/// so that no exponential overflows.
pub fn from_logits(row: &[f64], class: usize) -> Result<TopLabel, ReduceError> {
    check_class(row, class)?;
    let (predicted, max) = argmax(row)?;
    let partition: f64 = row.iter().map(|&z| libm::exp(z - max)).sum();
    Ok(TopLabel {
        score: 1.0 / partition,
        label: u8::from(predicted == class),
        predicted,
    })
}

/// The one-vs-rest scores of one row (classwise calibration, docs/estimators.md): writes
/// p_k of every class k into `out` (as long as the row) and returns the row's top label,
/// after the same checks as [`from_probabilities`] or [`from_logits`]. Logits become the
/// softmax in `f64` with the maximum subtracted, exactly as [`from_logits`] computes the
/// top-label confidence, so the predicted class's score equals it bit for bit. Nothing is
/// written when the row is refused.
pub fn one_vs_rest(
    row: &[f64],
    class: usize,
    logits: bool,
    out: &mut [f64],
) -> Result<TopLabel, ReduceError> {
    if out.len() != row.len() {
        return Err(ReduceError::ShapeMismatch);
    }
    let top = if logits {
        from_logits(row, class)?
    } else {
        from_probabilities(row, class)?
    };
    if logits {
        let max = row[top.predicted];
        let partition: f64 = row.iter().map(|&z| libm::exp(z - max)).sum();
        for (o, &z) in out.iter_mut().zip(row) {
            *o = libm::exp(z - max) / partition;
        }
    } else {
        out.copy_from_slice(row);
    }
    Ok(top)
}

/// Reduces a row-major table of `classes` columns, one row per entry of `true_classes`,
/// into `scores` and `labels` (each at least as long as the number of rows). All rows are
/// checked before any output is written.
pub fn reduce_table(
    table: &[f64],
    classes: usize,
    true_classes: &[usize],
    logits: bool,
    scores: &mut [f64],
    labels: &mut [u8],
) -> Result<usize, ReduceError> {
    let rows = true_classes.len();
    if classes == 0 {
        return Err(ReduceError::EmptyRow);
    }
    if rows.checked_mul(classes) != Some(table.len()) || scores.len() < rows || labels.len() < rows
    {
        return Err(ReduceError::ShapeMismatch);
    }
    let reduce = if logits {
        from_logits
    } else {
        from_probabilities
    };
    for pass in [false, true] {
        // Zipped with the outputs, which the shape check made at least `rows` long.
        let outputs = scores.iter_mut().zip(labels.iter_mut());
        for ((row, &class), (score, label)) in
            table.chunks_exact(classes).zip(true_classes).zip(outputs)
        {
            let top = reduce(row, class)?;
            if pass {
                *score = top.score;
                *label = top.label;
            }
        }
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_vs_rest_matches_the_top_label() {
        let mut out = [0.0; 3];
        let top = one_vs_rest(&[1.0, 3.0, -2.0], 0, true, &mut out).unwrap();
        assert_eq!(out[1], from_logits(&[1.0, 3.0, -2.0], 0).unwrap().score);
        assert_eq!(top.predicted, 1);
        assert!((out.iter().sum::<f64>() - 1.0).abs() < 1e-15);
        let top = one_vs_rest(&[0.2, 0.5, 0.3], 2, false, &mut out).unwrap();
        assert_eq!((out, top.label), ([0.2, 0.5, 0.3], 0));
        let mut short = [0.0; 2];
        assert_eq!(
            one_vs_rest(&[0.2, 0.5, 0.3], 2, false, &mut short),
            Err(ReduceError::ShapeMismatch)
        );
        let mut untouched = [9.0; 2];
        assert!(one_vs_rest(&[0.7, 0.7], 0, false, &mut untouched).is_err());
        assert_eq!(untouched, [9.0; 2]);
    }

    #[test]
    fn probabilities() {
        let t = from_probabilities(&[0.2, 0.5, 0.3], 1).unwrap();
        assert_eq!(
            t,
            TopLabel {
                score: 0.5,
                label: 1,
                predicted: 1
            }
        );
        let t = from_probabilities(&[0.4, 0.4, 0.2], 1).unwrap();
        assert_eq!(
            (t.predicted, t.label),
            (0, 0),
            "ties go to the lowest index"
        );
        assert_eq!(from_probabilities(&[], 0), Err(ReduceError::EmptyRow));
        assert_eq!(
            from_probabilities(&[0.5, 0.5], 2),
            Err(ReduceError::ClassOutOfRange {
                class: 2,
                classes: 2
            })
        );
        assert_eq!(
            from_probabilities(&[0.5, f64::NAN], 0),
            Err(ReduceError::NonFinite { index: 1 })
        );
        assert_eq!(
            from_probabilities(&[1.5, -0.5], 0),
            Err(ReduceError::ProbabilityOutOfRange { index: 0 })
        );
        assert_eq!(
            from_probabilities(&[0.5, 0.6], 0),
            Err(ReduceError::NotNormalized)
        );
    }

    #[test]
    fn logits_use_a_stable_softmax() {
        let t = from_logits(&[1.0, 3.0, 2.0], 1).unwrap();
        let expected = 1.0 / (libm::exp(-2.0) + 1.0 + libm::exp(-1.0));
        assert_eq!(t.predicted, 1);
        assert!((t.score - expected).abs() < 1e-16);
        // Would overflow without subtracting the maximum.
        let t = from_logits(&[1000.0, 999.0], 0).unwrap();
        assert!((t.score - 1.0 / (1.0 + libm::exp(-1.0))).abs() < 1e-15);
        assert_eq!(from_logits(&[2.0, 2.0], 1).unwrap().label, 0);
        assert_eq!(
            from_logits(&[f64::INFINITY], 0),
            Err(ReduceError::NonFinite { index: 0 })
        );
    }

    #[test]
    fn table_is_all_or_nothing() {
        let table = [0.1, 0.9, 0.7, 0.3, 0.5, 0.6];
        let (mut scores, mut labels) = ([-1.0; 3], [9u8; 3]);
        assert_eq!(
            reduce_table(&table, 2, &[1, 0, 0], false, &mut scores, &mut labels),
            Err(ReduceError::NotNormalized)
        );
        assert_eq!((scores, labels), ([-1.0; 3], [9; 3]));
        assert_eq!(
            reduce_table(&table[..4], 2, &[1, 1], false, &mut scores, &mut labels),
            Ok(2)
        );
        assert_eq!((&scores[..2], &labels[..2]), (&[0.9, 0.7][..], &[1, 0][..]));
        assert_eq!(
            reduce_table(&table, 4, &[1], false, &mut scores, &mut labels),
            Err(ReduceError::ShapeMismatch)
        );
    }
}
