//! The twelve binomial GLM calibration-curve models of SPEC §8 and the Roelofs et al.
//! code, fitted by maximum likelihood and compared by AIC.
//!
//! A model is a (link, transform) pair and a linear predictor: the mean accuracy at
//! confidence c is μ(c) = g⁻¹(η) with η = b0 + b1·h(c), η = b1·h(c) or η = b0. The four
//! pairs are the ones whose curves the simulator has in closed form:
//!
//! | link g | transform h | μ(c) | simulator curve |
//! |---|---|---|---|
//! | log | log | e^b0 · c^b1 | `two_param_polynomial(a = b0, b = b1)` |
//! | logflip | logflip | 1 − e^b0 (1−c)^b1 | `two_param_flip_polynomial(b0, b1)` |
//! | logit | logit | σ(b0 + b1 logit c) | `logistic_log_odds(b0, b1)` |
//! | logit | logflip | σ(b0 + b1 ln(1−c)) | `logistic_flip_polynomial(b0, b1)` |
//!
//! with logflip(x) = ln(1 − x). A one-coefficient predictor fixes the other coefficient at
//! 0 (so `b1·h(c)` has a = 0 and `b0` has b = 0).
//!
//! **Fitting.** Fisher scoring (IRLS; Newton itself for the canonical logit link) on the
//! negative log-likelihood, each step halved until the NLL does not increase. For the log
//! and logflip links the NLL is +∞ wherever μ leaves (0, 1) on some row, so the line search
//! keeps every iterate inside; if the likelihood keeps rising towards that boundary, the
//! maximum does not exist inside the domain and the model is reported
//! [`Validity::MeanLeavesUnitInterval`], never kept silently. A valid fit whose
//! coefficients make the curve leave [0, 1] somewhere in (0, 1) off the data (e.g. a log
//! link with b1 < 0 exceeds 1 near c = 0) has no simulator curve: it is reported with
//! [`GlmFit::curve`] = `Err(…)` and is not eligible as the best model.
//!
//! Scores enter through their logarithms under an [`EndpointRule`], as in the Beta fit.
//! Rows with equal (score, label) are fitted once with their count as weight. Above
//! `coarse::MIN_DISTINCT_ROWS` (8192) distinct rows, the fit starts from a fit to the rows
//! merged into log-odds cells of width 1/64 and continues on every row (`super::coarse`):
//! the same maximum, found in a few passes over the rows instead of tens. A model that does
//! not settle on the cells (a mean pressing on μ = 1, or no convergence) keeps that verdict
//! without iterating on the rows: their scores reach further than their cells' means, so
//! they press harder on the same boundary.

use core::fmt;

use std::sync::OnceLock;

use super::coarse;
use super::endpoint::{EndpointRule, ScoreLogs};
use crate::sim::curve::{Curve, CurveError};
use crate::sim::unit_point::{sigmoid, softplus};

/// Iterations of Fisher scoring before giving up.
const MAX_ITERATIONS: usize = 200;
/// Step halvings tried before a line search gives up.
const MAX_HALVINGS: usize = 60;
/// Converged when the Newton decrement gᵀ I⁻¹ g is below this share of the NLL (or 1e-12
/// absolute): further steps could lower the NLL by less than rounding.
const DECREMENT_TOLERANCE: f64 = 1e-13;
/// A log/logflip fit that stalls with some row's η above −this has run into μ = 1.
const BOUNDARY_ETA: f64 = 1e-6;

/// The inverse link of a binomial GLM.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Link {
    /// μ = e^η (η < 0).
    Log,
    /// μ = 1 − e^η (η < 0).
    LogFlip,
    /// μ = σ(η).
    Logit,
}

/// The transform of the confidence in the linear predictor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Transform {
    /// h(c) = ln c.
    Log,
    /// h(c) = ln(1 − c).
    LogFlip,
    /// h(c) = ln(c / (1 − c)).
    Logit,
}

/// Which coefficients are free.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Predictor {
    /// η = b1·h(c) (b0 = 0).
    Slope,
    /// η = b0 (b1 = 0): a constant accuracy.
    Intercept,
    /// η = b0 + b1·h(c).
    Full,
}

impl Link {
    fn name(self) -> &'static str {
        match self {
            Link::Log => "log",
            Link::LogFlip => "logflip",
            Link::Logit => "logit",
        }
    }

    /// g(μ), for a starting point; ±∞ at μ = 0 or 1.
    fn of_mean(self, mu: f64) -> f64 {
        match self {
            Link::Log => mu.ln(),
            Link::LogFlip => (-mu).ln_1p(),
            Link::Logit => mu.ln() - (-mu).ln_1p(),
        }
    }

    /// μ = g⁻¹(η) (NaN where η is outside the link's domain).
    pub fn mean(self, eta: f64) -> f64 {
        match self {
            Link::Log if eta <= 0.0 => eta.exp(),
            Link::LogFlip if eta <= 0.0 => -eta.exp_m1(),
            Link::Logit => sigmoid(eta),
            _ => f64::NAN,
        }
    }

    /// At η: (ln μ, ln(1 − μ), dℓ/dη for y = 1, dℓ/dη for y = 0, Fisher weight
    /// (dμ/dη)²/(μ(1 − μ))), or `None` outside the domain (μ ∉ (0, 1)).
    fn evaluate(self, eta: f64) -> Option<LinkTerms> {
        match self {
            Link::Logit => {
                let mu = sigmoid(eta);
                Some(LinkTerms {
                    ln_mu: -softplus(-eta),
                    ln_one_minus_mu: -softplus(eta),
                    score_hit: 1.0 - mu,
                    score_miss: -mu,
                    weight: mu * (1.0 - mu),
                })
            }
            Link::Log | Link::LogFlip => {
                if eta.is_nan() || eta >= 0.0 {
                    return None;
                }
                // e = e^η is the mean (log) or its complement (logflip); q = 1 − e.
                let e = eta.exp();
                let q = -eta.exp_m1();
                let ln_q = if eta > -core::f64::consts::LN_2 {
                    q.ln()
                } else {
                    (-e).ln_1p()
                };
                Some(if self == Link::Log {
                    // μ = e: dℓ/dη = (y − μ)/(1 − μ), weight μ/(1 − μ).
                    LinkTerms {
                        ln_mu: eta,
                        ln_one_minus_mu: ln_q,
                        score_hit: 1.0,
                        score_miss: -e / q,
                        weight: e / q,
                    }
                } else {
                    // μ = q: dℓ/dη = −(y − μ)/μ, weight (1 − μ)/μ.
                    LinkTerms {
                        ln_mu: ln_q,
                        ln_one_minus_mu: eta,
                        score_hit: -e / q,
                        score_miss: 1.0,
                        weight: e / q,
                    }
                })
            }
        }
    }
}

struct LinkTerms {
    ln_mu: f64,
    ln_one_minus_mu: f64,
    score_hit: f64,
    score_miss: f64,
    weight: f64,
}

impl Transform {
    fn name(self) -> &'static str {
        match self {
            Transform::Log => "log",
            Transform::LogFlip => "logflip",
            Transform::Logit => "logit",
        }
    }

    /// h of a score given by its logarithms.
    pub fn apply(self, logs: &ScoreLogs) -> f64 {
        match self {
            Transform::Log => logs.ln_x,
            Transform::LogFlip => logs.ln_one_minus_x,
            Transform::Logit => logs.logit(),
        }
    }
}

impl Predictor {
    fn name(self) -> &'static str {
        match self {
            Predictor::Slope => "b1",
            Predictor::Intercept => "b0",
            Predictor::Full => "b0_b1",
        }
    }

    /// The number of free coefficients (the k of AIC = 2k + 2·NLL).
    pub fn free_coefficients(self) -> usize {
        match self {
            Predictor::Slope | Predictor::Intercept => 1,
            Predictor::Full => 2,
        }
    }
}

/// One of the twelve models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GlmSpec {
    /// The link.
    pub link: Link,
    /// The transform of the confidence.
    pub transform: Transform,
    /// The free coefficients.
    pub predictor: Predictor,
}

/// The four (link, transform) pairs of SPEC §8.
pub const PAIRS: [(Link, Transform); 4] = [
    (Link::Log, Transform::Log),
    (Link::LogFlip, Transform::LogFlip),
    (Link::Logit, Transform::Logit),
    (Link::Logit, Transform::LogFlip),
];

impl GlmSpec {
    /// All twelve models: each pair with b1·h, b0, b0 + b1·h.
    pub fn all() -> Vec<GlmSpec> {
        PAIRS
            .iter()
            .flat_map(|&(link, transform)| {
                [Predictor::Slope, Predictor::Intercept, Predictor::Full].map(|predictor| GlmSpec {
                    link,
                    transform,
                    predictor,
                })
            })
            .collect()
    }

    /// `link_transform_predictor`, e.g. `logit_logit_b0_b1`.
    pub fn name(&self) -> String {
        format!(
            "{}_{}_{}",
            self.link.name(),
            self.transform.name(),
            self.predictor.name()
        )
    }

    /// The simulator curve with coefficients (b0, b1), if they keep it in [0, 1] on all of
    /// (0, 1).
    pub fn curve(&self, b0: f64, b1: f64) -> Result<Curve, CurveError> {
        match (self.link, self.transform) {
            (Link::Log, Transform::Log) => Curve::two_param_polynomial(b0, b1),
            (Link::LogFlip, Transform::LogFlip) => Curve::two_param_flip_polynomial(b0, b1),
            (Link::Logit, Transform::Logit) => Curve::logistic_log_odds(b0, b1),
            (Link::Logit, Transform::LogFlip) => Curve::logistic_flip_polynomial(b0, b1),
            _ => unreachable!("only the four pairs of SPEC §8 are built"),
        }
    }

    /// μ at a score (under `rule`) with coefficients (b0, b1).
    pub fn mean(&self, b0: f64, b1: f64, logs: &ScoreLogs) -> f64 {
        self.link.mean(b0 + b1 * self.transform.apply(logs))
    }
}

impl fmt::Display for GlmSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// Why GLM data could not be built.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GlmError {
    /// No rows.
    Empty,
    /// Scores and labels differ in length.
    LengthMismatch {
        /// Number of scores.
        scores: usize,
        /// Number of labels.
        labels: usize,
    },
    /// A score is NaN or outside [0, 1] (its index).
    InvalidScore(usize),
    /// A label is not 0 or 1 (its index).
    InvalidLabel(usize),
    /// All labels are equal: every model's likelihood rises without bound.
    NoVariation,
}

impl fmt::Display for GlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => f.write_str("no rows to fit a calibration curve to"),
            Self::LengthMismatch { scores, labels } => {
                write!(f, "{scores} scores but {labels} labels")
            }
            Self::InvalidScore(i) => write!(f, "score {i} is not a number in [0, 1]"),
            Self::InvalidLabel(i) => write!(f, "label {i} is not 0 or 1"),
            Self::NoVariation => {
                f.write_str("all labels are equal: no calibration curve has a finite fit")
            }
        }
    }
}

impl std::error::Error for GlmError {}

/// Rows prepared for fitting: distinct (score, label) pairs with their logarithms and
/// weights.
#[derive(Clone, Debug)]
pub struct GlmData {
    logs: Vec<ScoreLogs>,
    labels: Vec<u8>,
    weights: Vec<f64>,
    /// For each input row, the index of its distinct pair (for bootstrap reweighting).
    row_to_distinct: Vec<usize>,
    /// The rows merged into log-odds cells, made on first use by a fit and shared by
    /// the twelve (`None` below `coarse::MIN_DISTINCT_ROWS` distinct rows).
    coarse: OnceLock<Option<Box<GlmData>>>,
}

impl GlmData {
    /// Validates the rows and groups equal (score, label) pairs.
    pub fn new(scores: &[f64], labels: &[u8], rule: &EndpointRule) -> Result<GlmData, GlmError> {
        if scores.len() != labels.len() {
            return Err(GlmError::LengthMismatch {
                scores: scores.len(),
                labels: labels.len(),
            });
        }
        if scores.is_empty() {
            return Err(GlmError::Empty);
        }
        if let Some(i) = scores.iter().position(|x| !(0.0..=1.0).contains(x)) {
            return Err(GlmError::InvalidScore(i));
        }
        if let Some(i) = labels.iter().position(|&y| y > 1) {
            return Err(GlmError::InvalidLabel(i));
        }
        let mut order: Vec<usize> = (0..scores.len()).collect();
        // `+ 0.0` maps −0 to +0 so that bit patterns order like values.
        let key = |i: usize| ((scores[i] + 0.0).to_bits(), labels[i]);
        order.sort_unstable_by_key(|&i| key(i));
        let mut data = GlmData {
            logs: Vec::new(),
            labels: Vec::new(),
            weights: Vec::new(),
            row_to_distinct: vec![0; scores.len()],
            coarse: OnceLock::new(),
        };
        let mut previous = None;
        for i in order {
            if previous != Some(key(i)) {
                data.logs.push(rule.logs(scores[i]));
                data.labels.push(labels[i]);
                data.weights.push(0.0);
                previous = Some(key(i));
            }
            let last = data.weights.len() - 1;
            data.weights[last] += 1.0;
            data.row_to_distinct[i] = last;
        }
        Ok(data)
    }

    /// The same distinct rows with weights from per-row counts (a bootstrap resample:
    /// `counts[i]` copies of input row i).
    pub fn reweighted(&self, counts: &[u32]) -> GlmData {
        let mut weights = vec![0.0; self.weights.len()];
        for (&row, &count) in self.row_to_distinct.iter().zip(counts) {
            weights[row] += f64::from(count);
        }
        GlmData {
            logs: self.logs.clone(),
            labels: self.labels.clone(),
            weights,
            row_to_distinct: self.row_to_distinct.clone(),
            coarse: OnceLock::new(),
        }
    }

    /// The rows merged into log-odds cells (module docs), if there are enough of them.
    fn coarse(&self) -> Option<&GlmData> {
        self.coarse
            .get_or_init(|| {
                (self.logs.len() >= coarse::MIN_DISTINCT_ROWS).then(|| {
                    let rows = self
                        .logs
                        .iter()
                        .zip(&self.labels)
                        .zip(&self.weights)
                        .map(|((l, &y), &w)| (l.logit(), y, w, [l.ln_x, l.ln_one_minus_x]));
                    let cells = coarse::cells(rows);
                    Box::new(GlmData {
                        logs: cells
                            .iter()
                            .map(|c| ScoreLogs {
                                ln_x: c.mean[0],
                                ln_one_minus_x: c.mean[1],
                            })
                            .collect(),
                        labels: cells.iter().map(|c| c.label).collect(),
                        weights: cells.iter().map(|c| c.weight).collect(),
                        row_to_distinct: Vec::new(),
                        coarse: OnceLock::from(None),
                    })
                })
            })
            .as_deref()
    }

    /// The number of input rows.
    pub fn rows(&self) -> usize {
        self.row_to_distinct.len()
    }

    /// The weighted mean label.
    pub fn accuracy(&self) -> f64 {
        let total: f64 = self.weights.iter().sum();
        let hits: f64 = self
            .weights
            .iter()
            .zip(&self.labels)
            .map(|(w, &y)| w * f64::from(y))
            .sum();
        hits / total
    }
}

/// Whether a fit can be used.
#[derive(Clone, Debug, PartialEq)]
pub enum Validity {
    /// The maximum likelihood is attained with μ in (0, 1) on every row.
    Valid,
    /// The likelihood increases towards μ = 1 (or 0) on some row: no maximum inside.
    MeanLeavesUnitInterval,
    /// Fisher scoring did not settle.
    NotConverged,
}

/// A fitted model.
#[derive(Clone, Debug, PartialEq)]
pub struct GlmFit {
    /// Which model.
    pub spec: GlmSpec,
    /// The intercept (0 for the slope-only model).
    pub b0: f64,
    /// The slope (0 for the intercept-only model).
    pub b1: f64,
    /// Asymptotic (Wald) standard errors of (b0, b1) from the Fisher information; 0 for a
    /// fixed coefficient.
    pub wald_se: [f64; 2],
    /// The negative log-likelihood.
    pub nll: f64,
    /// 2·(free coefficients) + 2·NLL.
    pub aic: f64,
    /// Whether the fit is a maximum inside the domain.
    pub validity: Validity,
    /// The simulator curve of the fit, or why it has none.
    pub curve: Result<Curve, CurveError>,
    /// Fisher-scoring iterations.
    pub iterations: usize,
}

impl GlmFit {
    /// Valid and representable as a simulator curve: eligible as the best model.
    pub fn usable(&self) -> bool {
        self.validity == Validity::Valid && self.curve.is_ok()
    }
}

/// Coefficients of the free parameters, expanded to (b0, b1).
fn expand(predictor: Predictor, theta: &[f64; 2]) -> (f64, f64) {
    match predictor {
        Predictor::Slope => (0.0, theta[0]),
        Predictor::Intercept => (theta[0], 0.0),
        Predictor::Full => (theta[0], theta[1]),
    }
}

/// The design row of a score: the covariates of the free parameters.
fn design(predictor: Predictor, h: f64) -> [f64; 2] {
    match predictor {
        Predictor::Slope => [h, 0.0],
        Predictor::Intercept => [1.0, 0.0],
        Predictor::Full => [1.0, h],
    }
}

/// NLL, gradient of the log-likelihood and Fisher information at θ; `None` if some row
/// with positive weight has μ outside (0, 1).
struct Evaluation {
    nll: f64,
    gradient: [f64; 2],
    information: [[f64; 2]; 2],
    max_eta: f64,
}

fn evaluate(spec: &GlmSpec, data: &GlmData, theta: &[f64; 2]) -> Option<Evaluation> {
    let (b0, b1) = expand(spec.predictor, theta);
    let mut e = Evaluation {
        nll: 0.0,
        gradient: [0.0; 2],
        information: [[0.0; 2]; 2],
        max_eta: f64::NEG_INFINITY,
    };
    for ((logs, &y), &w) in data.logs.iter().zip(&data.labels).zip(&data.weights) {
        if w == 0.0 {
            continue;
        }
        let h = spec.transform.apply(logs);
        let eta = b0 + b1 * h;
        let terms = spec.link.evaluate(eta)?;
        e.max_eta = e.max_eta.max(eta);
        let (ln_p, score) = if y == 1 {
            (terms.ln_mu, terms.score_hit)
        } else {
            (terms.ln_one_minus_mu, terms.score_miss)
        };
        if !ln_p.is_finite() {
            return None;
        }
        e.nll -= w * ln_p;
        let x = design(spec.predictor, h);
        for j in 0..2 {
            e.gradient[j] += w * score * x[j];
            for k in 0..2 {
                e.information[j][k] += w * terms.weight * x[j] * x[k];
            }
        }
    }
    Some(e)
}

/// Solves I δ = g for the free parameters (1 or 2); `None` if I is singular.
fn solve(k: usize, information: &[[f64; 2]; 2], gradient: &[f64; 2]) -> Option<[f64; 2]> {
    let step = if k == 1 {
        [gradient[0] / information[0][0], 0.0]
    } else {
        let [[a, b], [c, d]] = *information;
        let det = a * d - b * c;
        [
            (d * gradient[0] - b * gradient[1]) / det,
            (a * gradient[1] - c * gradient[0]) / det,
        ]
    };
    (step[0].is_finite() && step[1].is_finite()).then_some(step)
}

/// The standard errors sqrt(diag I⁻¹), expanded to (b0, b1).
fn wald_se(predictor: Predictor, information: &[[f64; 2]; 2]) -> [f64; 2] {
    let free = match predictor {
        Predictor::Full => {
            let [[a, b], [c, d]] = *information;
            let det = a * d - b * c;
            [(d / det).sqrt(), (a / det).sqrt()]
        }
        _ => [(1.0 / information[0][0]).sqrt(), 0.0],
    };
    match predictor {
        Predictor::Slope => [0.0, free[0]],
        Predictor::Intercept => [free[0], 0.0],
        Predictor::Full => free,
    }
}

/// A starting point inside the domain: the constant model's MLE g(ȳ) for the intercept,
/// and for the slope-only model the b1 that gives μ = ȳ at the mean of h.
fn start(spec: &GlmSpec, data: &GlmData) -> [f64; 2] {
    let g = spec.link.of_mean(data.accuracy());
    match spec.predictor {
        Predictor::Intercept => [g, 0.0],
        Predictor::Full => [g, 0.0],
        Predictor::Slope => {
            let total: f64 = data.weights.iter().sum();
            let mean_h = data
                .logs
                .iter()
                .zip(&data.weights)
                .map(|(l, w)| w * spec.transform.apply(l))
                .sum::<f64>()
                / total;
            let b1 = g / mean_h;
            [if b1.is_finite() { b1 } else { 1.0 }, 0.0]
        }
    }
}

/// Fits one model by maximum likelihood.
pub fn fit_glm(spec: GlmSpec, data: &GlmData) -> Result<GlmFit, GlmError> {
    let accuracy = data.accuracy();
    if accuracy <= 0.0 || accuracy >= 1.0 {
        return Err(GlmError::NoVariation);
    }
    // From the fit on the cells, when there are enough rows for them (module docs).
    let Some(cells) = data.coarse() else {
        return Ok(fit_from(spec, data, None, MAX_ITERATIONS));
    };
    let coarse = fit_from(spec, cells, None, MAX_ITERATIONS);
    let theta = match spec.predictor {
        Predictor::Slope => [coarse.b1, 0.0],
        Predictor::Intercept => [coarse.b0, 0.0],
        Predictor::Full => [coarse.b0, coarse.b1],
    };
    if coarse.validity == Validity::Valid {
        return Ok(fit_from(spec, data, Some(theta), MAX_ITERATIONS));
    }
    // Unsettled on the cells (a mean pressing on μ = 1, or no convergence): the rows,
    // whose scores reach further than their cells' means, press harder, and each step
    // there costs a pass per halving (seconds at n = 10^6 for nothing). The verdict
    // stands; the coefficients are the cells', moved back towards the start until every
    // row is inside the link's domain, with the rows' NLL there.
    Ok(unsettled(spec, data, theta, coarse.validity))
}

/// A fit that did not settle on the cells, reported on the rows (see [`fit_glm`]).
fn unsettled(spec: GlmSpec, data: &GlmData, theta: [f64; 2], validity: Validity) -> GlmFit {
    let mut origin = start(&spec, data);
    if evaluate(&spec, data, &origin).is_none() {
        origin = [1.0, 0.0];
    }
    let mut t = 1.0;
    let mut found = None;
    for _ in 0..MAX_HALVINGS {
        let trial = [
            origin[0] + t * (theta[0] - origin[0]),
            origin[1] + t * (theta[1] - origin[1]),
        ];
        if let Some(e) = evaluate(&spec, data, &trial) {
            found = Some((trial, e));
            break;
        }
        t *= 0.5;
    }
    let (theta, e) = found.unwrap_or_else(|| {
        let e = evaluate(&spec, data, &origin).expect("b1 = 1 is inside every domain");
        (origin, e)
    });
    finish(spec, &theta, &e, validity, 0)
}

/// The fit at θ with its evaluation there.
fn finish(
    spec: GlmSpec,
    theta: &[f64; 2],
    e: &Evaluation,
    validity: Validity,
    iterations: usize,
) -> GlmFit {
    let k = spec.predictor.free_coefficients();
    let (b0, b1) = expand(spec.predictor, theta);
    GlmFit {
        spec,
        b0,
        b1,
        wald_se: wald_se(spec.predictor, &e.information),
        nll: e.nll,
        aic: 2.0 * k as f64 + 2.0 * e.nll,
        validity,
        curve: spec.curve(b0, b1),
        iterations,
    }
}

/// Fisher scoring from `start` (if inside the domain; else from [`start`]) for at most
/// `max_iterations` iterations.
fn fit_from(
    spec: GlmSpec,
    data: &GlmData,
    from: Option<[f64; 2]>,
    max_iterations: usize,
) -> GlmFit {
    let k = spec.predictor.free_coefficients();
    let mut theta = start(&spec, data);
    let mut current = None;
    let mut max_iterations = max_iterations;
    if let Some(from) = from {
        current = evaluate(&spec, data, &from);
        if current.is_some() {
            theta = from;
        } else {
            max_iterations = MAX_ITERATIONS;
        }
    }
    if current.is_none() {
        current = evaluate(&spec, data, &theta);
    }
    if current.is_none() {
        // Only the slope-only start can leave the domain (a log or logflip link with a
        // slope of the wrong sign); b1 = 1, μ = c or 1 − (1 − c), is always inside since
        // the endpoint rule keeps every score at least ε from 0 and 1.
        theta = [1.0, 0.0];
        current = evaluate(&spec, data, &theta);
    }
    let mut iterations = 0;
    let mut validity = Validity::NotConverged;
    while let Some(e) = current.as_ref() {
        if iterations >= max_iterations {
            break;
        }
        iterations += 1;
        let Some(step) = solve(k, &e.information, &e.gradient) else {
            break;
        };
        let decrement = step[0] * e.gradient[0] + step[1] * e.gradient[1];
        if decrement <= DECREMENT_TOLERANCE * e.nll.max(1.0) {
            validity = Validity::Valid;
            break;
        }
        let mut scale = 1.0;
        let mut accepted = None;
        for _ in 0..MAX_HALVINGS {
            let trial = [theta[0] + scale * step[0], theta[1] + scale * step[1]];
            if let Some(next) = evaluate(&spec, data, &trial) {
                if next.nll <= e.nll {
                    accepted = Some((trial, next));
                    break;
                }
            }
            scale *= 0.5;
        }
        match accepted {
            Some((trial, next)) => {
                // A step that had to be cut and still lowered the NLL by less than
                // rounding is stuck against the domain's edge (a log or logflip mean
                // pressing on μ = 1): further iterations would each cost up to
                // MAX_HALVINGS passes over the data for nothing (minutes at n = 10^6).
                let stalled =
                    scale < 1.0 && e.nll - next.nll <= DECREMENT_TOLERANCE * e.nll.max(1.0);
                theta = trial;
                current = Some(next);
                if stalled {
                    break;
                }
            }
            None => break,
        }
    }
    let e = current.expect("b1 = 1 is inside every domain");
    if validity != Validity::Valid
        && matches!(spec.link, Link::Log | Link::LogFlip)
        && e.max_eta > -BOUNDARY_ETA
    {
        validity = Validity::MeanLeavesUnitInterval;
    }
    finish(spec, &theta, &e, validity, iterations)
}

/// Fits all twelve models (in parallel).
pub fn fit_all(data: &GlmData) -> Result<Vec<GlmFit>, GlmError> {
    use rayon::prelude::*;
    GlmSpec::all()
        .into_par_iter()
        .map(|spec| fit_glm(spec, data))
        .collect()
}

/// The index of the usable fit with the lowest AIC (first on ties), if any.
pub fn best(fits: &[GlmFit]) -> Option<usize> {
    fits.iter()
        .enumerate()
        .filter(|(_, f)| f.usable())
        .min_by(|(_, a), (_, b)| a.aic.total_cmp(&b.aic))
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::{model::repetition_rng, Beta, Model};

    fn spec(link: Link, transform: Transform, predictor: Predictor) -> GlmSpec {
        GlmSpec {
            link,
            transform,
            predictor,
        }
    }

    /// Above `coarse::MIN_DISTINCT_ROWS` rows, the fit through the cells finds the
    /// rows' own maximum: every model's NLL and coefficients as Fisher scoring on the
    /// rows alone from the usual start, and its verdict.
    #[test]
    fn the_cells_change_the_path_not_the_maximum() {
        let model = Model::new(
            Beta::new(2.8, 0.05).unwrap(),
            crate::sim::Curve::polynomial(1.1).unwrap(),
        );
        let (all_scores, all_labels) = model.sample(30_000, &mut repetition_rng(11, 0));
        let (scores, labels): (Vec<f64>, Vec<u8>) = all_scores
            .into_iter()
            .zip(all_labels)
            .filter(|(s, _)| *s < 1.0)
            .unzip();
        let data = GlmData::new(&scores, &labels, &EndpointRule::default()).unwrap();
        assert!(data.coarse().is_some());
        let mut unsettled = 0;
        for spec in GlmSpec::all() {
            let through_cells = fit_glm(spec, &data).unwrap();
            let direct = fit_from(spec, &data, None, MAX_ITERATIONS);
            assert_eq!(through_cells.validity, direct.validity, "{spec}");
            if direct.validity != Validity::Valid {
                // Unsettled on the cells: the verdict, without iterating on the rows.
                assert_eq!(through_cells.iterations, 0, "{spec}");
                unsettled += 1;
                continue;
            }
            assert!(
                (through_cells.nll - direct.nll).abs() <= 1e-9 * direct.nll,
                "{spec}: {} vs {}",
                through_cells.nll,
                direct.nll
            );
            for (a, b, se) in [
                (through_cells.b0, direct.b0, direct.wald_se[0]),
                (through_cells.b1, direct.b1, direct.wald_se[1]),
            ] {
                assert!((a - b).abs() <= 1e-3 * se.max(1e-9), "{spec}: {a} vs {b}");
            }
            assert!(through_cells.iterations <= 4, "{spec}: {through_cells:?}");
        }
        // The log link's two-coefficient model presses on μ = 1 here.
        assert!(unsettled >= 1);
    }

    #[test]
    fn twelve_models_with_unique_names() {
        let names: Vec<String> = GlmSpec::all().iter().map(GlmSpec::name).collect();
        assert_eq!(names.len(), 12);
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 12);
        assert!(names.contains(&"logit_logit_b0_b1".to_string()));
        assert!(names.contains(&"logflip_logflip_b1".to_string()));
        assert!(names.contains(&"logit_logflip_b0".to_string()));
    }

    /// Simulates n rows from a density and the spec's curve at (b0, b1), fits, and
    /// checks the coefficients within 5 Wald standard errors.
    fn recovers(spec: GlmSpec, density: Beta, b0: f64, b1: f64) {
        let curve = spec.curve(b0, b1).unwrap();
        let model = Model::new(density, curve);
        let (scores, labels) = model.sample(100_000, &mut repetition_rng(5, 1));
        let data = GlmData::new(&scores, &labels, &EndpointRule::default()).unwrap();
        let fit = fit_glm(spec, &data).unwrap();
        assert_eq!(fit.validity, Validity::Valid, "{spec}: {fit:?}");
        for (name, estimate, truth, se) in [
            ("b0", fit.b0, b0, fit.wald_se[0]),
            ("b1", fit.b1, b1, fit.wald_se[1]),
        ] {
            assert!(
                (estimate - truth).abs() <= 5.0 * se + 1e-12,
                "{spec} {name}: {estimate} vs {truth} (se {se})"
            );
        }
        assert_eq!(fit.curve, spec.curve(fit.b0, fit.b1));
        // The optimum: a nudge of any free coefficient does not lower the NLL.
        let k = spec.predictor.free_coefficients();
        let theta = match spec.predictor {
            Predictor::Slope => [fit.b1, 0.0],
            Predictor::Intercept => [fit.b0, 0.0],
            Predictor::Full => [fit.b0, fit.b1],
        };
        for j in 0..k {
            for sign in [-1.0, 1.0] {
                let mut nudged = theta;
                nudged[j] += sign * 1e-3 * fit.wald_se[0].max(fit.wald_se[1]);
                let other = evaluate(&spec, &data, &nudged).map_or(f64::INFINITY, |e| e.nll);
                assert!(other >= fit.nll - 1e-9, "{spec}: {other} < {}", fit.nll);
            }
        }
    }

    #[test]
    fn each_model_recovers_its_generating_coefficients() {
        use Link as L;
        use Predictor::*;
        use Transform as T;
        let density = Beta::new(2.0, 0.6).unwrap();
        let cases = [
            (spec(L::Log, T::Log, Full), -0.1, 1.8),
            (spec(L::Log, T::Log, Slope), 0.0, 1.5),
            (spec(L::Log, T::Log, Intercept), -0.4, 0.0),
            (spec(L::LogFlip, T::LogFlip, Full), -0.2, 0.7),
            (spec(L::LogFlip, T::LogFlip, Slope), 0.0, 0.8),
            (spec(L::LogFlip, T::LogFlip, Intercept), -1.2, 0.0),
            (spec(L::Logit, T::Logit, Full), -0.5, 0.6),
            (spec(L::Logit, T::Logit, Slope), 0.0, 0.7),
            (spec(L::Logit, T::Logit, Intercept), 1.1, 0.0),
            (spec(L::Logit, T::LogFlip, Full), 0.3, -0.9),
            (spec(L::Logit, T::LogFlip, Slope), 0.0, -1.1),
            (spec(L::Logit, T::LogFlip, Intercept), 0.9, 0.0),
        ];
        for (spec, b0, b1) in cases {
            recovers(spec, density, b0, b1);
        }
    }

    #[test]
    fn aic_prefers_the_generating_family() {
        let truth = spec(Link::Logit, Transform::Logit, Predictor::Full);
        let model = Model::new(
            Beta::new(3.0, 0.8).unwrap(),
            truth.curve(-0.8, 0.5).unwrap(),
        );
        let (scores, labels) = model.sample(50_000, &mut repetition_rng(8, 0));
        let data = GlmData::new(&scores, &labels, &EndpointRule::default()).unwrap();
        let fits = fit_all(&data).unwrap();
        assert_eq!(fits.len(), 12);
        let best = best(&fits).unwrap();
        assert_eq!(fits[best].spec, truth, "{fits:#?}");
        for fit in &fits {
            let k = fit.spec.predictor.free_coefficients() as f64;
            assert!((fit.aic - (2.0 * k + 2.0 * fit.nll)).abs() < 1e-9);
        }
    }

    #[test]
    fn a_mean_pushed_past_one_is_reported_invalid() {
        // Accuracy 1 at low confidence, 0 at high: e^b0 c^b1 with b1 < 0 wants μ > 1 at
        // small c; the log-link intercept+slope fit runs into μ = 1 there.
        let scores: Vec<f64> = (1..=200).map(|i| f64::from(i) / 201.0).collect();
        let labels: Vec<u8> = scores
            .iter()
            .enumerate()
            .map(|(i, &c)| u8::from(c < 0.3 || i % 7 == 0))
            .collect();
        let data = GlmData::new(&scores, &labels, &EndpointRule::default()).unwrap();
        let fit = fit_glm(spec(Link::Log, Transform::Log, Predictor::Full), &data).unwrap();
        assert!(!fit.usable(), "{fit:?}");
        assert_eq!(fit.validity, Validity::MeanLeavesUnitInterval, "{fit:?}");
    }

    #[test]
    fn refuses_bad_rows() {
        let rule = EndpointRule::default();
        assert_eq!(
            GlmData::new(&[0.5], &[1, 0], &rule).unwrap_err(),
            GlmError::LengthMismatch {
                scores: 1,
                labels: 2
            }
        );
        assert_eq!(
            GlmData::new(&[0.5, 2.0], &[1, 0], &rule).unwrap_err(),
            GlmError::InvalidScore(1)
        );
        assert_eq!(
            GlmData::new(&[0.5, 0.2], &[1, 3], &rule).unwrap_err(),
            GlmError::InvalidLabel(1)
        );
        let all_hits = GlmData::new(&[0.5, 0.2], &[1, 1], &rule).unwrap();
        assert_eq!(
            fit_glm(GlmSpec::all()[0], &all_hits).unwrap_err(),
            GlmError::NoVariation
        );
    }
}
