//! A paired simulator with known calibration error for both models, and the
//! comparison's size and power measured on it.
//!
//! A row has a latent true probability u ~ Beta(α, β). Model A scores it g_A(u), model B
//! g_B(u), where g_A and g_B are strictly increasing maps of [0, 1] (any of the
//! simulator's curve families, [`Curve`], with parameters that make it increasing).
//! Each model's label (whether its top label is correct) is its own draw
//! Y_A ~ Bernoulli(u), Y_B ~ Bernoulli(u), with correlation ρ between them given u
//! ([`PairedModel::with_label_correlation`]): Y_A = 1{U_A < u}, Y_B = 1{U_B < u}, where
//! U_B = U_A with probability ρ and an independent uniform otherwise. So
//! P(Y_A ≠ Y_B | u) = 2(1 − ρ) u(1 − u): ρ = 1 (the default) gives both models the same
//! labels (one model before and after recalibration), ρ < 1 two classifiers that are
//! right and wrong on different rows, the rows still shared, which is what makes the
//! pairing matter (a row hard for one model is hard for the other through u, and
//! through the shared uniform).
//!
//! Because g is one-to-one, E[Y | g(u)] = u whatever ρ: a model's reliability at its
//! score g(u) is u, and
//!
//! ```text
//! TCE_p(g) = (E |g(u) − u|^p)^{1/p},  u ~ Beta(α, β),
//! ```
//!
//! which is the simulator's TCE of the model (density Beta(α, β), curve g)
//! ([`crate::sim::tce::true_calibration_error`], closed form or quadrature): the same
//! integrand with the roles of score and accuracy exchanged. So both TCEs are known
//! exactly, and so is TCE_A − TCE_B; ρ changes neither, only the dependence between the
//! two models' errors. Two ways to make them equal: A = B (the same map), or a map and
//! its mirror g'(u) = 1 − g(1 − u) (`polynomial(d)` and `flip_polynomial(d)`;
//! `logistic_log_odds(a, b)` and `logistic_log_odds(−a, b)`) under a symmetric latent
//! Beta(α, α).

use core::fmt;

use rand::Rng;
use rayon::prelude::*;

use super::{compare, CompareError, CompareSettings, Model, Paired, Verdict};
use crate::sim::curve::CurveKind;
use crate::sim::{repetition_rng, Beta, Curve, TceError};

/// Why a paired model was refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PairedModelError {
    /// A model's score map is not strictly increasing, so its TCE is not E|g(u) − u|.
    NotIncreasing {
        /// Whose.
        model: Model,
        /// The map.
        map: Curve,
    },
    /// The correlation of the two models' labels is not in [0, 1].
    CorrelationOutOfRange(f64),
}

impl fmt::Display for PairedModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotIncreasing { model, map } => write!(
                f,
                "model {model}'s score map {map} is not strictly increasing"
            ),
            Self::CorrelationOutOfRange(rho) => write!(
                f,
                "the correlation of the two models' labels must be in [0, 1], got {rho}"
            ),
        }
    }
}

impl std::error::Error for PairedModelError {}

/// Whether a curve is strictly increasing on (0, 1), from its parameters.
fn strictly_increasing(curve: &Curve) -> bool {
    let params = curve.params();
    let (a, b) = (params.a.unwrap_or(0.0), params.b.unwrap_or(0.0));
    match curve.kind() {
        CurveKind::Polynomial | CurveKind::FlipPolynomial => params.d.is_some_and(|d| d > 0.0),
        CurveKind::TwoParamPolynomial
        | CurveKind::TwoParamFlipPolynomial
        | CurveKind::LogisticLogOdds => b > 0.0,
        // σ(a + b·ln(1 − c)): ln(1 − c) falls with c.
        CurveKind::LogisticFlipPolynomial => b < 0.0,
        CurveKind::Logistic => a > 0.0,
    }
}

/// A latent probability, two score maps of it and the correlation of the two models'
/// labels (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedModel {
    latent: Beta,
    a: Curve,
    b: Curve,
    label_correlation: f64,
}

impl PairedModel {
    /// The model with latent u ~ `latent`, A = `a`(u), B = `b`(u); both maps strictly
    /// increasing. Both models have the same labels (correlation 1).
    pub fn new(latent: Beta, a: Curve, b: Curve) -> Result<PairedModel, PairedModelError> {
        for (model, map) in [(Model::A, a), (Model::B, b)] {
            if !strictly_increasing(&map) {
                return Err(PairedModelError::NotIncreasing { model, map });
            }
        }
        Ok(PairedModel {
            latent,
            a,
            b,
            label_correlation: 1.0,
        })
    }

    /// The same model with each model's label its own draw, correlation `rho` in [0, 1]
    /// between them given the latent (module docs).
    pub fn with_label_correlation(self, rho: f64) -> Result<PairedModel, PairedModelError> {
        if !(0.0..=1.0).contains(&rho) {
            return Err(PairedModelError::CorrelationOutOfRange(rho));
        }
        Ok(PairedModel {
            label_correlation: rho,
            ..self
        })
    }

    /// The latent density.
    pub fn latent(&self) -> Beta {
        self.latent
    }

    /// A model's score map.
    pub fn map(&self, model: Model) -> Curve {
        match model {
            Model::A => self.a,
            Model::B => self.b,
        }
    }

    /// The correlation ρ of the two models' labels given the latent.
    pub fn label_correlation(&self) -> f64 {
        self.label_correlation
    }

    /// A model's TCE_p (a fraction), exactly (closed form or quadrature).
    pub fn tce(&self, model: Model, p: f64) -> Result<f64, TceError> {
        crate::sim::tce::true_calibration_error(&self.latent, &self.map(model), p)
    }

    /// n rows drawn with `rng`: per row u, then the uniform U_A of A's label (Y_A = 1
    /// when U_A < u); at ρ = 1 B's label is A's and nothing more is drawn (so ρ = 1
    /// draws the rows it always drew), else a uniform C and a uniform V, and U_B = U_A
    /// when C < ρ, else V.
    pub fn sample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> Paired {
        let mut scores = [Vec::with_capacity(n), Vec::with_capacity(n)];
        let mut labels = [Vec::with_capacity(n), Vec::with_capacity(n)];
        let rho = self.label_correlation;
        for _ in 0..n {
            let u = self.latent.sample(rng);
            let uniform_a: f64 = rng.gen();
            let uniform_b = if rho == 1.0 {
                uniform_a
            } else {
                let (coin, own): (f64, f64) = (rng.gen(), rng.gen());
                if coin < rho {
                    uniform_a
                } else {
                    own
                }
            };
            scores[0].push(self.a.eval(u));
            scores[1].push(self.b.eval(u));
            labels[0].push(u8::from(uniform_a < u));
            labels[1].push(u8::from(uniform_b < u));
        }
        Paired { scores, labels }
    }

    /// Data set `rep` of size n from `seed`: [`PairedModel::sample`] with
    /// [`repetition_rng`]`(seed, rep)`.
    pub fn dataset(&self, seed: u64, rep: u64, n: usize) -> Paired {
        self.sample(n, &mut repetition_rng(seed, rep))
    }
}

/// How often the comparison rejected Δ = 0 on the data sets of one (model, n).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RejectionRates {
    /// Rows per data set.
    pub n: usize,
    /// Data sets.
    pub datasets: usize,
    /// Rejections of Δ = 0 at α (either direction).
    pub rejections: usize,
    /// Of those, the ones that found A better (Δ < 0).
    pub a_better: usize,
    /// The data sets on which the comparison used BCa (the rest: percentile).
    pub bca: usize,
    /// The mean Δ over the data sets.
    pub mean_delta: f64,
}

impl RejectionRates {
    /// The rejection rate and its Monte-Carlo standard error.
    pub fn rate(&self) -> (f64, f64) {
        super::super::construction::share(self.rejections, self.datasets)
    }
}

/// The comparison run on `datasets` data sets of n rows from `model` (data set r from
/// [`PairedModel::dataset`]`(seed, r, n)`, each compared with `settings`, their seed
/// included): its rejection rate, which is the size when TCE_A = TCE_B and the power
/// otherwise. Data sets run in parallel; the counts do not depend on the thread count.
pub fn rejection_rates(
    model: &PairedModel,
    n: usize,
    datasets: usize,
    seed: u64,
    settings: &CompareSettings,
) -> Result<RejectionRates, CompareError> {
    let outcomes: Vec<(Verdict, bool, f64)> = (0..datasets)
        .into_par_iter()
        .map(|r| {
            let data = model.dataset(seed, r as u64, n);
            let c = compare(&data, settings)?;
            Ok((c.verdict(), c.method == super::Method::Bca, c.delta))
        })
        .collect::<Result<_, CompareError>>()?;
    Ok(RejectionRates {
        n,
        datasets,
        rejections: outcomes
            .iter()
            .filter(|o| o.0 != Verdict::NoDifference)
            .count(),
        a_better: outcomes.iter().filter(|o| o.0 == Verdict::ABetter).count(),
        bca: outcomes.iter().filter(|o| o.1).count(),
        mean_delta: outcomes.iter().map(|o| o.2).sum::<f64>() / datasets.max(1) as f64,
    })
}
