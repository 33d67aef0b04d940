//! Every recalibration method on model outputs, by its command-line name: fitted on
//! one set of outputs, applied to another.

use core::fmt;
use core::str::FromStr;

use super::multiclass::{Applied, ClassTable, MulticlassMap, MulticlassMethod};
use super::{Method, RecalibrateError, RecalibrationMap};

/// A recalibration method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Recalibration {
    /// A map of the top-label confidence (any input).
    TopLabel(Method),
    /// A map of whole rows of class outputs (class probabilities or logits only).
    Multiclass(MulticlassMethod),
}

impl Recalibration {
    /// Every method, top-label ones first.
    pub const ALL: [Recalibration; 7] = [
        Recalibration::TopLabel(Method::Histogram),
        Recalibration::TopLabel(Method::Isotonic),
        Recalibration::TopLabel(Method::Platt),
        Recalibration::TopLabel(Method::Temperature),
        Recalibration::Multiclass(MulticlassMethod::Temperature),
        Recalibration::Multiclass(MulticlassMethod::HistogramOneVsRest),
        Recalibration::Multiclass(MulticlassMethod::IsotonicOneVsRest),
    ];

    /// Its name on the command line: `histogram`, `isotonic`, `platt`,
    /// `top-label-temperature`, `temperature` (multiclass), `histogram-ovr`,
    /// `isotonic-ovr`.
    pub fn name(self) -> &'static str {
        match self {
            Recalibration::TopLabel(Method::Histogram) => "histogram",
            Recalibration::TopLabel(Method::Isotonic) => "isotonic",
            Recalibration::TopLabel(Method::Platt) => "platt",
            Recalibration::TopLabel(Method::Temperature) => "top-label-temperature",
            Recalibration::Multiclass(MulticlassMethod::Temperature) => "temperature",
            Recalibration::Multiclass(MulticlassMethod::HistogramOneVsRest) => "histogram-ovr",
            Recalibration::Multiclass(MulticlassMethod::IsotonicOneVsRest) => "isotonic-ovr",
        }
    }

    /// Every method `outputs` allow: all of them for class outputs, the top-label ones
    /// for (confidence, correct) samples.
    pub fn allowed(outputs: &Outputs) -> Vec<Recalibration> {
        let classes = matches!(outputs, Outputs::Classes(_));
        Recalibration::ALL
            .into_iter()
            .filter(|m| classes || !m.needs_classes())
            .collect()
    }

    /// Whether it needs class outputs.
    pub fn needs_classes(self) -> bool {
        matches!(self, Recalibration::Multiclass(_))
    }

    /// The top-label method closest to a multiclass one (named in
    /// [`RecalibrateError::NeedsClasses`]); itself for a top-label method.
    pub fn top_label_counterpart(self) -> Recalibration {
        Recalibration::TopLabel(match self {
            Recalibration::TopLabel(m) => m,
            Recalibration::Multiclass(MulticlassMethod::Temperature) => Method::Temperature,
            Recalibration::Multiclass(MulticlassMethod::HistogramOneVsRest) => Method::Histogram,
            Recalibration::Multiclass(MulticlassMethod::IsotonicOneVsRest) => Method::Isotonic,
        })
    }

    /// Fits the method on `outputs`: a top-label method on their top-label samples, a
    /// multiclass method on their rows.
    pub fn fit(self, outputs: &Outputs) -> Result<Fitted, RecalibrateError> {
        match (self, outputs) {
            (Recalibration::TopLabel(method), _) => {
                let top = outputs.top_label();
                Ok(Fitted::TopLabel(
                    method,
                    method.fit(&top.scores, &top.labels)?,
                ))
            }
            (Recalibration::Multiclass(method), Outputs::Classes(table)) => {
                Ok(Fitted::Multiclass(method, method.fit(table)?))
            }
            (Recalibration::Multiclass(_), Outputs::TopLabel(_)) => {
                Err(RecalibrateError::NeedsClasses(self))
            }
        }
    }
}

impl fmt::Display for Recalibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not a method's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseRecalibrationError(pub String);

impl fmt::Display for ParseRecalibrationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = Recalibration::ALL.iter().map(|m| m.name()).collect();
        write!(
            f,
            "unknown recalibration method {:?}: one of {}",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for ParseRecalibrationError {}

impl FromStr for Recalibration {
    type Err = ParseRecalibrationError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Recalibration::ALL
            .into_iter()
            .find(|m| m.name() == text)
            .ok_or_else(|| ParseRecalibrationError(text.to_owned()))
    }
}

/// Top-label samples: confidences and whether each prediction was right.
#[derive(Clone, Debug, PartialEq)]
pub struct TopLabels {
    /// Confidences in [0, 1].
    pub scores: Vec<f64>,
    /// 1 if right, else 0.
    pub labels: Vec<u8>,
}

impl TopLabels {
    /// The rows `rows`, in that order.
    pub fn select(&self, rows: &[usize]) -> TopLabels {
        TopLabels {
            scores: rows.iter().map(|&i| self.scores[i]).collect(),
            labels: rows.iter().map(|&i| self.labels[i]).collect(),
        }
    }
}

/// A model's outputs.
#[derive(Clone, Debug, PartialEq)]
pub enum Outputs {
    /// (confidence, correct) samples.
    TopLabel(TopLabels),
    /// Rows of class probabilities or logits.
    Classes(ClassTable),
}

impl Outputs {
    /// The number of rows.
    pub fn rows(&self) -> usize {
        match self {
            Outputs::TopLabel(top) => top.scores.len(),
            Outputs::Classes(table) => table.rows(),
        }
    }

    /// The top-label samples (SPEC §1 reduction of class outputs).
    pub fn top_label(&self) -> TopLabels {
        match self {
            Outputs::TopLabel(top) => top.clone(),
            Outputs::Classes(table) => {
                let (scores, labels) = table.top_label();
                TopLabels { scores, labels }
            }
        }
    }

    /// The rows `rows`, in that order.
    pub fn select(&self, rows: &[usize]) -> Outputs {
        match self {
            Outputs::TopLabel(top) => Outputs::TopLabel(top.select(rows)),
            Outputs::Classes(table) => Outputs::Classes(table.select(rows)),
        }
    }
}

/// A fitted method.
#[derive(Clone, Debug, PartialEq)]
pub enum Fitted {
    /// A map of the top-label confidence.
    TopLabel(Method, RecalibrationMap),
    /// A map of whole rows.
    Multiclass(MulticlassMethod, MulticlassMap),
}

/// Outputs after recalibration.
#[derive(Clone, Debug, PartialEq)]
pub enum Recalibrated {
    /// Recalibrated top-label confidences (correctness unchanged).
    TopLabel(TopLabels),
    /// Recalibrated rows of probabilities.
    Classes(Applied),
}

impl Recalibrated {
    /// The top-label samples: for rows, their top labels after recalibration, with
    /// correctness recomputed against the true class.
    pub fn top_label(&self) -> TopLabels {
        match self {
            Recalibrated::TopLabel(top) => top.clone(),
            Recalibrated::Classes(applied) => {
                let (scores, labels) = applied.table.top_label();
                TopLabels { scores, labels }
            }
        }
    }
}

impl Fitted {
    /// The method fitted.
    pub fn method(&self) -> Recalibration {
        match self {
            Fitted::TopLabel(m, _) => Recalibration::TopLabel(*m),
            Fitted::Multiclass(m, _) => Recalibration::Multiclass(*m),
        }
    }

    /// Applies the fitted method to `outputs` (of the same kind it was fitted on).
    pub fn apply(&self, outputs: &Outputs) -> Result<Recalibrated, RecalibrateError> {
        match (self, outputs) {
            (Fitted::TopLabel(_, map), _) => {
                let top = outputs.top_label();
                Ok(Recalibrated::TopLabel(TopLabels {
                    scores: map.apply_all(&top.scores),
                    labels: top.labels,
                }))
            }
            (Fitted::Multiclass(_, map), Outputs::Classes(table)) => {
                Ok(Recalibrated::Classes(map.apply(table)?))
            }
            (Fitted::Multiclass(method, _), Outputs::TopLabel(_)) => Err(
                RecalibrateError::NeedsClasses(Recalibration::Multiclass(*method)),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for m in Recalibration::ALL {
            assert_eq!(m.name().parse::<Recalibration>(), Ok(m));
        }
        assert!("temp".parse::<Recalibration>().is_err());
        let top = Outputs::TopLabel(TopLabels {
            scores: vec![0.9],
            labels: vec![1],
        });
        assert_eq!(
            Recalibration::allowed(&top),
            Recalibration::ALL[..4].to_vec()
        );
        let classes = Outputs::Classes(ClassTable::new(vec![0.5, 0.5], 2, vec![0], false).unwrap());
        assert_eq!(
            Recalibration::allowed(&classes),
            Recalibration::ALL.to_vec()
        );
        let temperature = Recalibration::Multiclass(MulticlassMethod::Temperature);
        assert_eq!(
            temperature.fit(&top),
            Err(RecalibrateError::NeedsClasses(temperature))
        );
        assert!(RecalibrateError::NeedsClasses(temperature)
            .to_string()
            .contains("top-label-temperature"));
    }
}
