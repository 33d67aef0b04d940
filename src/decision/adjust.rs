//! Adjusted p-values for testing many groups at once (which slice of the data is
//! miscalibrated?): Holm's step-down adjustment, which controls the family-wise error rate
//! under any dependence between the tests, and Benjamini–Hochberg's step-up adjustment,
//! which controls the false discovery rate for independent (or positively dependent)
//! tests. Both as R's `p.adjust` computes them: a hypothesis is rejected at level α when
//! its adjusted p-value is at most α. A NaN p-value (a group whose test is undefined) is
//! left out of the family, as R leaves out `NA`, and stays NaN.

use core::fmt;
use core::str::FromStr;

/// The adjustment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Adjustment {
    /// Holm (1979): family-wise error rate, any dependence.
    Holm,
    /// Benjamini and Hochberg (1995): false discovery rate.
    BenjaminiHochberg,
}

impl FromStr for Adjustment {
    type Err = AdjustError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "holm" => Ok(Adjustment::Holm),
            "bh" | "fdr_bh" | "BH" => Ok(Adjustment::BenjaminiHochberg),
            other => Err(AdjustError::UnknownMethod(other.to_owned())),
        }
    }
}

/// Why p-values cannot be adjusted.
#[derive(Clone, Debug, PartialEq)]
pub enum AdjustError {
    /// A p-value outside [0, 1] (NaN is allowed: left out).
    OutOfRange {
        /// Its index.
        index: usize,
        /// Its value.
        value: f64,
    },
    /// A method other than `holm` and `bh`.
    UnknownMethod(String),
}

impl fmt::Display for AdjustError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::OutOfRange { index, value } => {
                write!(f, "p-value at index {index} is {value}, outside [0, 1]")
            }
            Self::UnknownMethod(m) => {
                write!(f, "unknown p-value adjustment `{m}` (known: holm, bh)")
            }
        }
    }
}

impl std::error::Error for AdjustError {}

/// The adjusted p-values of `p`, in the same order. NaN entries are not counted in the
/// family and stay NaN.
pub fn adjust(p: &[f64], method: Adjustment) -> Result<Vec<f64>, AdjustError> {
    if let Some((index, &value)) = p
        .iter()
        .enumerate()
        .find(|(_, v)| !v.is_nan() && !(0.0..=1.0).contains(*v))
    {
        return Err(AdjustError::OutOfRange { index, value });
    }
    let mut order: Vec<usize> = (0..p.len()).filter(|&i| !p[i].is_nan()).collect();
    // Ascending p; equal p-values keep their index order (a stable sort), which does not
    // change the adjusted values (equal p-values get equal adjusted values either way).
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let m = order.len() as f64;
    let mut out = vec![f64::NAN; p.len()];
    match method {
        Adjustment::Holm => {
            // p_(i) · (m − i + 1), made monotone from the smallest up (cumulative maximum).
            let mut running = 0.0_f64;
            for (i, &k) in order.iter().enumerate() {
                running = running.max((p[k] * (m - i as f64)).min(1.0));
                out[k] = running;
            }
        }
        Adjustment::BenjaminiHochberg => {
            // p_(i) · m / i, made monotone from the largest down (cumulative minimum).
            let mut running = 1.0_f64;
            for (i, &k) in order.iter().enumerate().rev() {
                running = running.min(p[k] * m / (i as f64 + 1.0));
                out[k] = running;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(got: &[f64], expected: &[f64]) {
        assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(expected) {
            assert!(
                (g.is_nan() && e.is_nan()) || (g - e).abs() < 1e-12,
                "{got:?} against {expected:?}"
            );
        }
    }

    // By hand: p = 0.01, 0.04, 0.03, 0.005 (m = 4). Sorted: 0.005, 0.01, 0.03, 0.04.
    // Holm: 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, 1·0.04 = 0.04 → max-so-far 0.06.
    // BH: 0.005·4/1 = 0.02, 0.01·4/2 = 0.02, 0.03·4/3 = 0.04, 0.04·4/4 = 0.04.
    // (R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") is 0.03 0.06 0.06 0.02;
    // "BH" is 0.02 0.04 0.04 0.02.)
    #[test]
    fn worked_values() {
        let p = [0.01, 0.04, 0.03, 0.005];
        close(
            &adjust(&p, Adjustment::Holm).unwrap(),
            &[0.03, 0.06, 0.06, 0.02],
        );
        close(
            &adjust(&p, Adjustment::BenjaminiHochberg).unwrap(),
            &[0.02, 0.04, 0.04, 0.02],
        );
    }

    #[test]
    fn nan_is_left_out_and_values_are_capped() {
        let p = [0.5, f64::NAN, 0.9];
        close(
            &adjust(&p, Adjustment::Holm).unwrap(),
            &[1.0, f64::NAN, 1.0],
        );
        close(
            &adjust(&p, Adjustment::BenjaminiHochberg).unwrap(),
            &[0.9, f64::NAN, 0.9],
        );
        assert!(adjust(&[], Adjustment::Holm).unwrap().is_empty());
    }

    #[test]
    fn refuses_out_of_range_and_unknown_methods() {
        assert_eq!(
            adjust(&[0.1, 1.5], Adjustment::Holm),
            Err(AdjustError::OutOfRange {
                index: 1,
                value: 1.5
            })
        );
        assert!("bonferroni".parse::<Adjustment>().is_err());
        assert_eq!(
            "bh".parse::<Adjustment>(),
            Ok(Adjustment::BenjaminiHochberg)
        );
    }
}
