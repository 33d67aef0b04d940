//! Estimators by name, for the simulator and the command line.
//!
//! An [`EstimatorSpec`] names one estimator of the core with its binning, e.g.
//! `ece_bin:equal_width`, `ece_sweep:equal_mass`, `ece_debias:equal_mass:keep`, `kde` or
//! `smece` (grammar: `estimator[:binning[:option]]`, where the option is the equal-width
//! closure `left`/`right` or the equal-mass tie policy `split`/`keep`). It only
//! dispatches: every value comes from [`SortedSamples`], [`kde_calibration_error`] or
//! [`smooth_ece`], never from a second implementation here.

use core::fmt;
use core::str::FromStr;

use crate::binning::{Binning, Closure, Ties};
use crate::buffer::SortedSamples;
use crate::error::EstimateError;
use crate::kde::{kde_calibration_error, KdeError};
use crate::norm::Norm;
use crate::smece::{smooth_ece, SmoothEceError, SCRATCH_LEN};
use crate::sweep::SweepOptions;

/// The estimator families of the core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EstimatorKind {
    /// ECE_bin with a fixed number of bins (SPEC §3).
    EceBin,
    /// ECE_sweep: ECE_bin with the largest monotone bin count b* (SPEC §4).
    EceSweep,
    /// ECE_debias: ECE_bin with the per-bin sampling variance removed (SPEC §5).
    EceDebias,
    /// The maximum calibration error over the bins.
    Mce,
    /// The KDE estimator of Zhang et al. 2020 (SPEC §6).
    Kde,
    /// Smooth ECE (Błasiok & Nakkiran 2023) with relplot's bandwidth, [`crate::smece`].
    /// An L1 quantity: it is compared with TCE_1, so a run with it needs p = 1.
    SmoothEce,
}

impl EstimatorKind {
    const ALL: [EstimatorKind; 6] = [
        EstimatorKind::EceBin,
        EstimatorKind::EceSweep,
        EstimatorKind::EceDebias,
        EstimatorKind::Mce,
        EstimatorKind::Kde,
        EstimatorKind::SmoothEce,
    ];

    /// The name used on command lines and in output.
    pub fn name(self) -> &'static str {
        match self {
            EstimatorKind::EceBin => "ece_bin",
            EstimatorKind::EceSweep => "ece_sweep",
            EstimatorKind::EceDebias => "ece_debias",
            EstimatorKind::Mce => "mce",
            EstimatorKind::Kde => "kde",
            EstimatorKind::SmoothEce => "smece",
        }
    }

    /// Whether the estimator takes a number of bins (the sweep chooses its own, KDE and
    /// smooth ECE have none).
    pub fn uses_bins(self) -> bool {
        matches!(
            self,
            EstimatorKind::EceBin | EstimatorKind::EceDebias | EstimatorKind::Mce
        )
    }

    /// Whether the estimator needs a binning scheme (all but KDE and smooth ECE).
    pub fn uses_binning(self) -> bool {
        !matches!(self, EstimatorKind::Kde | EstimatorKind::SmoothEce)
    }

    /// Whether the estimator is defined only for p = 1 (smooth ECE, an L1 distance).
    pub fn needs_l1(self) -> bool {
        self == EstimatorKind::SmoothEce
    }
}

/// The name of a binning scheme, without its closure or tie policy.
pub fn binning_name(binning: Binning) -> &'static str {
    match binning {
        Binning::EqualWidth(_) => "equal_width",
        Binning::EqualMass(_) => "equal_mass",
    }
}

/// One estimator with its binning: what a simulation cell evaluates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EstimatorSpec {
    kind: EstimatorKind,
    /// `None` exactly for KDE and smooth ECE.
    binning: Option<Binning>,
}

/// Why an estimator name was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseEstimatorError {
    /// The first part is not an estimator of the core.
    UnknownEstimator(String),
    /// A binned estimator was named without `:equal_width` or `:equal_mass`.
    MissingBinning(EstimatorKind),
    /// The second part is not a binning scheme.
    UnknownBinning(String),
    /// KDE or smooth ECE was given a binning.
    BinningForKde,
    /// The third part is not an option of the binning (`left`/`right` for equal width,
    /// `split`/`keep` for equal mass).
    UnknownOption {
        /// The binning scheme's name.
        binning: &'static str,
        /// The refused option.
        option: String,
    },
    /// More than three `:`-separated parts.
    TooManyParts(String),
}

impl fmt::Display for ParseEstimatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownEstimator(name) => {
                let known: Vec<&str> = EstimatorKind::ALL.iter().map(|k| k.name()).collect();
                write!(
                    f,
                    "unknown estimator `{name}` (known: {})",
                    known.join(", ")
                )
            }
            Self::MissingBinning(kind) => write!(
                f,
                "`{}` needs a binning: `{0}:equal_width` or `{0}:equal_mass`",
                kind.name()
            ),
            Self::UnknownBinning(name) => write!(
                f,
                "unknown binning `{name}` (known: equal_width, equal_mass)"
            ),
            Self::BinningForKde => f.write_str("`kde` and `smece` take no binning"),
            Self::UnknownOption { binning, option } => {
                let known = if *binning == "equal_width" {
                    "left, right"
                } else {
                    "split, keep"
                };
                write!(f, "unknown {binning} option `{option}` (known: {known})")
            }
            Self::TooManyParts(text) => write!(
                f,
                "`{text}` has too many parts (expected estimator[:binning[:option]])"
            ),
        }
    }
}

impl std::error::Error for ParseEstimatorError {}

fn parse_binning(name: &str, option: Option<&str>) -> Result<Binning, ParseEstimatorError> {
    let unknown_option = |binning: &'static str, option: &str| ParseEstimatorError::UnknownOption {
        binning,
        option: option.to_owned(),
    };
    match name {
        "equal_width" => Ok(Binning::EqualWidth(match option {
            None | Some("left") => Closure::Left,
            Some("right") => Closure::Right,
            Some(other) => return Err(unknown_option("equal_width", other)),
        })),
        "equal_mass" => Ok(Binning::EqualMass(match option {
            None | Some("split") => Ties::Split,
            Some("keep") => Ties::Keep,
            Some(other) => return Err(unknown_option("equal_mass", other)),
        })),
        other => Err(ParseEstimatorError::UnknownBinning(other.to_owned())),
    }
}

impl FromStr for EstimatorSpec {
    type Err = ParseEstimatorError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut parts = text.trim().split(':');
        let name = parts.next().unwrap_or("");
        let kind = EstimatorKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| ParseEstimatorError::UnknownEstimator(name.to_owned()))?;
        let (binning, option) = (parts.next(), parts.next());
        if parts.next().is_some() {
            return Err(ParseEstimatorError::TooManyParts(text.to_owned()));
        }
        match (kind.uses_binning(), binning) {
            (false, None) => Ok(EstimatorSpec {
                kind,
                binning: None,
            }),
            (false, Some(_)) => Err(ParseEstimatorError::BinningForKde),
            (true, None) => Err(ParseEstimatorError::MissingBinning(kind)),
            (true, Some(binning)) => EstimatorSpec::binned(kind, parse_binning(binning, option)?)
                .ok_or(ParseEstimatorError::BinningForKde),
        }
    }
}

impl fmt::Display for EstimatorSpec {
    /// The canonical name, which parses back to the same spec; the closure or tie policy
    /// appears only when it is not the paper's default.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        if let Some(binning) = self.binning {
            write!(f, ":{}", binning_name(binning))?;
            match binning {
                Binning::EqualWidth(Closure::Right) => f.write_str(":right")?,
                Binning::EqualMass(Ties::Keep) => f.write_str(":keep")?,
                _ => {}
            }
        }
        Ok(())
    }
}

/// What an estimator reads: one data set, sorted (for the binned estimators) and raw (for
/// KDE). Both views must hold the same samples.
#[derive(Clone, Copy, Debug)]
pub struct DataView<'a> {
    /// The samples in sorted order.
    pub sorted: SortedSamples<'a>,
    /// The scores in arrival order.
    pub scores: &'a [f64],
    /// The labels in arrival order.
    pub labels: &'a [u8],
}

/// Settings shared by every estimator of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EvaluationSettings {
    /// The exponent p.
    pub norm: Norm,
    /// The sweep's limit and cap.
    pub sweep: SweepOptions,
}

/// One estimate, as a fraction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Evaluation {
    /// The calibration error estimate, as a fraction.
    pub value: f64,
    /// b*, for the sweep only.
    pub sweep_bins: Option<usize>,
}

/// Why an estimator could not be evaluated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EvaluateError {
    /// A binned estimator was evaluated without a number of bins.
    BinsRequired,
    /// The core refused the estimate.
    Estimate(EstimateError),
    /// The KDE estimator refused the data.
    Kde(KdeError),
    /// Smooth ECE refused the data.
    SmoothEce(SmoothEceError),
    /// Smooth ECE was asked for with p ≠ 1: it estimates an L1 distance, and its bias
    /// against TCE_p for p ≠ 1 would mean nothing.
    SmoothEceNeedsL1,
}

impl fmt::Display for EvaluateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BinsRequired => f.write_str("this estimator needs a number of bins"),
            Self::Estimate(e) => write!(f, "{e}"),
            Self::Kde(e) => write!(f, "{e}"),
            Self::SmoothEce(e) => write!(f, "{e}"),
            Self::SmoothEceNeedsL1 => f.write_str(
                "smece estimates an L1 calibration error (compare it with TCE_1): use --norm 1",
            ),
        }
    }
}

impl std::error::Error for EvaluateError {}

impl EstimatorSpec {
    /// A binned estimator with this binning; `None` for KDE and smooth ECE.
    pub fn binned(kind: EstimatorKind, binning: Binning) -> Option<EstimatorSpec> {
        kind.uses_binning().then_some(EstimatorSpec {
            kind,
            binning: Some(binning),
        })
    }

    /// The KDE estimator.
    pub fn kde() -> EstimatorSpec {
        EstimatorSpec {
            kind: EstimatorKind::Kde,
            binning: None,
        }
    }

    /// The estimator family.
    pub fn kind(&self) -> EstimatorKind {
        self.kind
    }

    /// Smooth ECE.
    pub fn smooth_ece() -> EstimatorSpec {
        EstimatorSpec {
            kind: EstimatorKind::SmoothEce,
            binning: None,
        }
    }

    /// The binning; `None` for KDE and smooth ECE.
    pub fn binning(&self) -> Option<Binning> {
        self.binning
    }

    /// The binning's name (`equal_width`, `equal_mass`); `None` for KDE and smooth ECE.
    pub fn binning_name(&self) -> Option<&'static str> {
        self.binning.map(binning_name)
    }

    /// Whether the estimator takes a number of bins.
    pub fn uses_bins(&self) -> bool {
        self.kind.uses_bins()
    }

    /// Evaluates the estimator on `data`. `bins` is required by the binned estimators
    /// and ignored by the sweep, KDE and smooth ECE.
    pub fn evaluate(
        &self,
        data: &DataView<'_>,
        bins: Option<usize>,
        settings: &EvaluationSettings,
    ) -> Result<Evaluation, EvaluateError> {
        let norm = settings.norm;
        let fixed = |value: f64| Evaluation {
            value,
            sweep_bins: None,
        };
        let (Some(binning), kind) = (self.binning, self.kind) else {
            if self.kind == EstimatorKind::SmoothEce {
                if norm != Norm::L1 {
                    return Err(EvaluateError::SmoothEceNeedsL1);
                }
                let mut scratch = vec![0.0; SCRATCH_LEN];
                return smooth_ece(data.scores, data.labels, &mut scratch)
                    .map(|e| fixed(e.value))
                    .map_err(EvaluateError::SmoothEce);
            }
            return kde_calibration_error(data.scores, data.labels, norm)
                .map(|e| fixed(e.value))
                .map_err(EvaluateError::Kde);
        };
        if kind == EstimatorKind::EceSweep {
            let estimate = data
                .sorted
                .ece_sweep(binning, norm, settings.sweep)
                .map_err(EvaluateError::Estimate)?;
            return Ok(Evaluation {
                value: estimate.value,
                sweep_bins: Some(estimate.bins),
            });
        }
        let bins = bins.ok_or(EvaluateError::BinsRequired)?;
        let estimate = match kind {
            EstimatorKind::EceBin => data.sorted.ece_bin(binning, bins, norm),
            EstimatorKind::EceDebias => data.sorted.ece_debias(binning, bins, norm),
            _ => data.sorted.mce(binning, bins),
        };
        estimate
            .map(|e| fixed(e.value))
            .map_err(EvaluateError::Estimate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::{Slot, SortedBuffer};

    const SCORES: [f64; 20] = [
        0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997, 0.936, 0.965,
        0.986, 0.906, 0.734, 0.864, 0.976, 0.738, 0.851,
    ];
    const LABELS: [u8; 20] = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0];

    fn evaluate(name: &str, bins: Option<usize>) -> Result<Evaluation, EvaluateError> {
        let mut storage = [Slot::EMPTY; 20];
        let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
        buffer.push_batch(&SCORES, &LABELS).unwrap();
        let data = DataView {
            sorted: buffer.sorted(),
            scores: &SCORES,
            labels: &LABELS,
        };
        let spec: EstimatorSpec = name.parse().unwrap();
        spec.evaluate(&data, bins, &EvaluationSettings::default())
    }

    #[test]
    fn names_parse_and_print_back() {
        for name in [
            "ece_bin:equal_width",
            "ece_bin:equal_mass",
            "ece_bin:equal_width:right",
            "ece_sweep:equal_mass",
            "ece_sweep:equal_width",
            "ece_debias:equal_mass:keep",
            "mce:equal_width",
            "kde",
            "smece",
        ] {
            let spec: EstimatorSpec = name.parse().unwrap();
            assert_eq!(spec.to_string(), name);
        }
        let explicit: EstimatorSpec = "ece_bin:equal_mass:split".parse().unwrap();
        assert_eq!(explicit.to_string(), "ece_bin:equal_mass");
        assert_eq!(explicit.binning(), Some(Binning::EQUAL_MASS));
        assert!(!"ece_sweep:equal_mass"
            .parse::<EstimatorSpec>()
            .unwrap()
            .uses_bins());
        assert!("mce:equal_mass"
            .parse::<EstimatorSpec>()
            .unwrap()
            .uses_bins());
    }

    #[test]
    fn bad_names_are_named_errors() {
        let parse = |s: &str| s.parse::<EstimatorSpec>().unwrap_err();
        assert_eq!(
            parse("ece"),
            ParseEstimatorError::UnknownEstimator("ece".into())
        );
        assert_eq!(
            parse("ece_bin"),
            ParseEstimatorError::MissingBinning(EstimatorKind::EceBin)
        );
        assert_eq!(
            parse("ece_bin:quantile"),
            ParseEstimatorError::UnknownBinning("quantile".into())
        );
        assert_eq!(parse("kde:equal_mass"), ParseEstimatorError::BinningForKde);
        assert_eq!(
            parse("smece:equal_mass"),
            ParseEstimatorError::BinningForKde
        );
        assert_eq!(
            parse("ece_bin:equal_width:keep"),
            ParseEstimatorError::UnknownOption {
                binning: "equal_width",
                option: "keep".into()
            }
        );
        assert!(matches!(
            parse("ece_bin:equal_mass:keep:x"),
            ParseEstimatorError::TooManyParts(_)
        ));
        assert!(parse("nope").to_string().contains("ece_sweep"));
    }

    #[test]
    fn evaluations_are_the_cores_spec_values() {
        // SPEC §9, p = 2.
        let close = |name: &str, bins, expected: f64| {
            let value = evaluate(name, bins).unwrap().value;
            assert!((value - expected).abs() < 1e-12, "{name}: {value}");
        };
        close("ece_bin:equal_width", Some(15), 0.136057083608);
        close("ece_bin:equal_mass", Some(5), 0.086229562796);
        close("ece_debias:equal_mass", Some(15), 0.108649206164);
        close("ece_sweep:equal_mass", None, 0.146112599274);
        close("ece_sweep:equal_width", Some(99), 0.076884984939);
        assert_eq!(
            evaluate("ece_sweep:equal_mass", None).unwrap().sweep_bins,
            Some(9)
        );
        let kde = evaluate("kde", None).unwrap().value;
        assert!((kde * kde - 0.00811667).abs() < 1e-6, "{kde}");
        assert_eq!(
            evaluate("ece_bin:equal_width", None),
            Err(EvaluateError::BinsRequired)
        );
        assert_eq!(
            evaluate("mce:equal_width", Some(0)),
            Err(EvaluateError::Estimate(EstimateError::ZeroBins))
        );
        // Smooth ECE is an L1 distance: refused at p = 2.
        assert_eq!(
            evaluate("smece", None),
            Err(EvaluateError::SmoothEceNeedsL1)
        );
    }

    #[test]
    fn smooth_ece_is_the_cores_at_p_1() {
        let mut storage = [Slot::EMPTY; 20];
        let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
        buffer.push_batch(&SCORES, &LABELS).unwrap();
        let data = DataView {
            sorted: buffer.sorted(),
            scores: &SCORES,
            labels: &LABELS,
        };
        let settings = EvaluationSettings {
            norm: Norm::L1,
            ..EvaluationSettings::default()
        };
        let spec: EstimatorSpec = "smece".parse().unwrap();
        assert_eq!(spec, EstimatorSpec::smooth_ece());
        assert!(!spec.uses_bins() && spec.binning().is_none());
        let value = spec.evaluate(&data, None, &settings).unwrap().value;
        // relplot 1.0.3's smECE on SPEC §9 (tests/fixtures/smece_relplot.csv).
        assert!((value - 0.05689408892454488).abs() < 1e-12, "{value}");
    }
}
