//! The statistics of the calibration test by name: any estimator of the report
//! (`ece_sweep:equal_mass`, `smece`, …), whose p-value comes from consistency
//! resampling, and the two analytic baselines, `spiegelhalter` and `hosmer_lemeshow`.

use core::fmt;
use core::str::FromStr;

use crate::binning::{Binning, Closure, Ties};
use crate::sim::estimator::{EstimatorKind, EstimatorSpec, ParseEstimatorError};

/// One test statistic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Statistic {
    /// A calibration-error estimator, recomputed on labels drawn from the scores
    /// (consistency resampling, [`super::resampling`]): its p-value is exact at every n.
    Resampled(EstimatorSpec),
    /// Spiegelhalter's Z, with the two-sided normal p-value ([`mod@super::spiegelhalter`]).
    Spiegelhalter,
    /// Hosmer–Lemeshow's C over equal-mass groups, with the χ² p-value
    /// ([`mod@super::hosmer_lemeshow`]).
    HosmerLemeshow,
}

/// Why a statistic's name was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseStatisticError(pub ParseEstimatorError);

impl fmt::Display for ParseStatisticError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (a test statistic is an estimator such as `ece_sweep:equal_mass` or `smece`, \
             `spiegelhalter`, `hosmer_lemeshow`, or `auto`)",
            self.0
        )
    }
}

impl std::error::Error for ParseStatisticError {}

fn binned(kind: EstimatorKind, binning: Binning) -> Statistic {
    Statistic::Resampled(EstimatorSpec::binned(kind, binning).expect("a binned estimator"))
}

const EQUAL_MASS: Binning = Binning::EqualMass(Ties::Split);
const EQUAL_WIDTH: Binning = Binning::EqualWidth(Closure::Left);

impl Statistic {
    /// The statistic a test falls back on when the power of the candidates cannot guide
    /// the choice (no fit, or a fitted model that is calibrated at the data's scores):
    /// equal-mass ECE_sweep, the paper's recommended estimator, within Monte-Carlo error
    /// of the most powerful candidate in every row of the by-construction power table of
    /// docs/decisions.md.
    pub fn fallback() -> Statistic {
        binned(EstimatorKind::EceSweep, EQUAL_MASS)
    }

    /// The resampled statistics a test with `auto` chooses from, by their power on the
    /// model fitted to the data: equal-mass ECE_sweep ([`Statistic::fallback`], first,
    /// so that it wins ties), equal-mass ECE_debias, equal-width and equal-mass ECE_bin,
    /// smooth ECE.
    pub fn candidates() -> [Statistic; 5] {
        [
            Statistic::fallback(),
            binned(EstimatorKind::EceDebias, EQUAL_MASS),
            binned(EstimatorKind::EceBin, EQUAL_WIDTH),
            binned(EstimatorKind::EceBin, EQUAL_MASS),
            Statistic::Resampled(EstimatorSpec::smooth_ece()),
        ]
    }

    /// Every statistic a test reports: the [`Statistic::candidates`], then
    /// Spiegelhalter's Z and Hosmer–Lemeshow.
    pub fn defaults() -> [Statistic; 7] {
        let [a, b, c, d, e] = Statistic::candidates();
        [
            a,
            b,
            c,
            d,
            e,
            Statistic::Spiegelhalter,
            Statistic::HosmerLemeshow,
        ]
    }

    /// Whether its p-value comes from consistency resampling.
    pub fn is_resampled(&self) -> bool {
        matches!(self, Statistic::Resampled(_))
    }

    /// The estimator, for a resampled statistic.
    pub fn estimator(&self) -> Option<EstimatorSpec> {
        match self {
            Statistic::Resampled(spec) => Some(*spec),
            _ => None,
        }
    }
}

impl fmt::Display for Statistic {
    /// The canonical name, which parses back: the estimator's (`ece_bin:equal_width`),
    /// `spiegelhalter` or `hosmer_lemeshow`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Statistic::Resampled(spec) => write!(f, "{spec}"),
            Statistic::Spiegelhalter => f.write_str("spiegelhalter"),
            Statistic::HosmerLemeshow => f.write_str("hosmer_lemeshow"),
        }
    }
}

impl FromStr for Statistic {
    type Err = ParseStatisticError;

    fn from_str(text: &str) -> Result<Statistic, ParseStatisticError> {
        match text.trim() {
            "spiegelhalter" => Ok(Statistic::Spiegelhalter),
            "hosmer_lemeshow" => Ok(Statistic::HosmerLemeshow),
            other => other
                .parse::<EstimatorSpec>()
                .map(Statistic::Resampled)
                .map_err(ParseStatisticError),
        }
    }
}

/// Which statistic decides: the most powerful on the fitted model, or a given one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatisticChoice {
    /// The candidate with the highest power at the data's n on the model fitted to the
    /// data ([`super::power`]).
    #[default]
    Auto,
    /// This one.
    Given(Statistic),
}

impl fmt::Display for StatisticChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StatisticChoice::Auto => f.write_str("auto"),
            StatisticChoice::Given(s) => write!(f, "{s}"),
        }
    }
}

impl FromStr for StatisticChoice {
    type Err = ParseStatisticError;

    fn from_str(text: &str) -> Result<StatisticChoice, ParseStatisticError> {
        match text.trim() {
            "auto" => Ok(StatisticChoice::Auto),
            other => other.parse().map(StatisticChoice::Given),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for s in Statistic::defaults() {
            assert_eq!(s.to_string().parse::<Statistic>().unwrap(), s);
        }
        let names: Vec<String> = Statistic::defaults()
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            names,
            [
                "ece_sweep:equal_mass",
                "ece_debias:equal_mass",
                "ece_bin:equal_width",
                "ece_bin:equal_mass",
                "smece",
                "spiegelhalter",
                "hosmer_lemeshow"
            ]
        );
        assert_eq!(
            "auto".parse::<StatisticChoice>().unwrap(),
            StatisticChoice::Auto
        );
        assert_eq!(
            "mce:equal_width:right".parse::<StatisticChoice>().unwrap(),
            StatisticChoice::Given(Statistic::Resampled(
                "mce:equal_width:right".parse().unwrap()
            ))
        );
        let bad = "ece".parse::<Statistic>().unwrap_err();
        assert_eq!(
            bad,
            ParseStatisticError(ParseEstimatorError::UnknownEstimator("ece".into()))
        );
        assert!(bad.to_string().contains("spiegelhalter"), "{bad}");
        assert!(Statistic::candidates().iter().all(Statistic::is_resampled));
        assert!(!Statistic::Spiegelhalter.is_resampled());
    }
}
