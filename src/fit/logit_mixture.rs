//! Fitting the flexible score density [`LogitMixture`] (issue 36): a mixture of K normals
//! in the log-odds z = ln(c / (1 − c)) of scores strictly inside (0, 1), by EM, with K
//! chosen by BIC or by held-out log-likelihood.
//!
//! **Scores.** Exact 0s and 1s are the point masses' job ([`crate::sim::PointMasses`]):
//! they have no log-odds, and are refused ([`LogitMixtureFitError::EndpointScore`]), as
//! are NaN and scores outside [0, 1].
//!
//! **Likelihood.** Every log-likelihood reported is that of the scores c, not of z: it
//! includes the Jacobian Σ −ln c − ln(1 − c), so it is on the same footing as the Beta
//! fit's (`−`[`super::BetaFit::nll`]) on the same scores, and the two can be compared
//! directly. (The choice of K is unaffected: the Jacobian is the same for every K.)
//!
//! **EM on binned log-odds.** A fit of 10^6 scores must take well under a second, and
//! EM costs (points × K) per iteration. The log-odds are therefore grouped into cells of
//! width h ([`Binning::Width`], default [`DEFAULT_BIN_WIDTH`] = 1/64) and each
//! non-empty cell keeps its count, mean and within-cell sum of squares: EM evaluates
//! responsibilities once per cell (at its mean) and its M-step uses the cells' exact
//! first and second moments, so no Sheppard-type variance inflation enters, and the only
//! approximation is that a cell's points share one responsibility. Over z ∈ [−2, 16]
//! that is at most about 1150 cells whatever n is. [`Binning::Exact`] runs EM over the
//! distinct log-odds with their counts instead (the exact EM; its cost grows with the
//! number of distinct values: 6 minutes for 10^6 continuous scores, where the binned
//! fit takes under a second). `binning_costs_nothing_measurable` bounds the difference
//! of the two fits' log-likelihoods by 1e−6 per score on simulated data (at 10^6 draws
//! it is below 1e−7); on every bundled file they agree to 4 decimals per score for
//! every K (the ignored `bundled_report`). The log-likelihoods reported are always
//! evaluated exactly, over every score.
//!
//! **Ties and the variance floor.** float32 softmax makes the log-odds of saturated
//! scores take few values: 1 − c = k·2^−23 gives z = 15.94, 15.25, 14.84, … (gaps
//! ln((k + 1)/k): 0.69, 0.41, 0.29, …), and up to 10 % of a CIFAR-10 file's unsaturated
//! scores sit on the first of them. A normal narrower than those gaps gains likelihood by
//! sitting on one tie, which fits the rounding, not the classifier (and without a floor
//! the likelihood is unbounded). Every σ_k is therefore held at or above
//! [`LogitMixtureOptions::min_sd`] (default [`DEFAULT_MIN_SD`]); the M-step with the
//! floor is the constrained maximiser, so EM keeps increasing the likelihood.
//!
//! **Starts.** Deterministic: for each K, (a) means at the (k + ½)/K quantiles of z,
//! equal weights, σ = sd(z)/K; and (b) the K − 1 fit with its widest component (largest
//! weight × variance) split at μ ± σ/2. EM runs from both, and the higher likelihood
//! wins; (b) makes the fitted likelihood (nearly) increase with K.
//!
//! **Acceleration.** EM on overlapping components converges linearly and slowly (2000
//! iterations for six components on a CIFAR-10 file). Every two EM iterations are
//! extrapolated by SQUAREM (Varadhan & Roland, "Simple and globally convergent methods
//! for accelerating the convergence of any EM algorithm", Scand. J. Stat. 35, 2008,
//! scheme S3); the extrapolated point, after one EM iteration, is kept only if its
//! likelihood is not below the plain iterate's, so the likelihood never falls and the
//! fixed points are EM's. Two to six times fewer iterations (the test
//! `acceleration_reaches_plain_em_fixed_point`; 2222 to 372 for K = 6 on 10^4 scores of
//! Beta(2.8, 0.05)).
//!
//! **Convergence.** EM stops when an iteration raises the (binned) log-likelihood by at
//! most [`LogitMixtureOptions::tolerance`] per score; a K whose starts all hit
//! [`LogitMixtureOptions::max_iterations`] is reported unconverged and not chosen; if no
//! K converges the fit fails ([`LogitMixtureFitError::NotConverged`]).
//!
//! **Choosing K.** BIC = −2 LL + (3K − 1) ln n (default), or the held-out
//! log-likelihood summed over a deterministic, seeded F-fold split
//! ([`Selection::HeldOut`]): each fold is scored by the K-component fit to the others.

use core::fmt;

use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;

use crate::sim::logit_mixture::{LogitComponent, LogitMixture};
use crate::sim::unit_point::UnitPoint;

/// At most this many components are fitted.
pub const MAX_COMPONENTS: usize = 16;

/// The default largest K, as issue 36 proposes.
pub const DEFAULT_MAX_COMPONENTS: usize = 6;

/// The default floor of every component's sd in log-odds (module docs: ties).
pub const DEFAULT_MIN_SD: f64 = 0.25;

/// The default width of a log-odds cell.
pub const DEFAULT_BIN_WIDTH: f64 = 1.0 / 64.0;

/// The default convergence tolerance: a rise of the log-likelihood per score.
pub const DEFAULT_TOLERANCE: f64 = 1e-9;

/// The default cap on EM iterations per start.
pub const DEFAULT_MAX_ITERATIONS: usize = 5000;

/// At most this many log-odds cells (the width is refused if the data need more).
pub const MAX_CELLS: usize = 1 << 22;

/// The most folds a held-out selection may use.
pub const MAX_FOLDS: usize = 100;

/// A component whose share of the points falls below this has collapsed: its start is
/// abandoned.
const COLLAPSED_WEIGHT: f64 = 1e-12;

/// Scores per rayon task when evaluating log-likelihoods.
const CHUNK: usize = 1 << 14;

/// How K is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// The smallest BIC = −2 LL + (3K − 1) ln n.
    Bic,
    /// The largest held-out log-likelihood over `folds` folds (2 to [`MAX_FOLDS`], at most
    /// n), the scores assigned to folds by a shuffle seeded with `seed`.
    HeldOut {
        /// The number of folds F.
        folds: usize,
        /// The shuffle's seed.
        seed: u64,
    },
}

/// How the log-odds are grouped for EM (module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Binning {
    /// Cells of this width in z (finite, > 0, at most [`MAX_CELLS`] cells over the data).
    Width(f64),
    /// The distinct log-odds with their counts: exact EM.
    Exact,
}

/// Settings of [`fit_logit_mixture`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogitMixtureOptions {
    /// K = 1..=max_components are fitted (1 to [`MAX_COMPONENTS`]; K is also capped by
    /// the number of distinct cells).
    pub max_components: usize,
    /// How K is chosen.
    pub selection: Selection,
    /// The floor of every σ_k (finite, > 0).
    pub min_sd: f64,
    /// How the log-odds are grouped.
    pub binning: Binning,
    /// EM stops when the log-likelihood per score rises by at most this (finite, > 0).
    pub tolerance: f64,
    /// EM iterations per start (≥ 1).
    pub max_iterations: usize,
}

impl Default for LogitMixtureOptions {
    fn default() -> Self {
        LogitMixtureOptions {
            max_components: DEFAULT_MAX_COMPONENTS,
            selection: Selection::Bic,
            min_sd: DEFAULT_MIN_SD,
            binning: Binning::Width(DEFAULT_BIN_WIDTH),
            tolerance: DEFAULT_TOLERANCE,
            max_iterations: DEFAULT_MAX_ITERATIONS,
        }
    }
}

/// Why a log-odds mixture fit failed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LogitMixtureFitError {
    /// No scores.
    Empty,
    /// A score is NaN or outside [0, 1] (its index and value).
    InvalidScore(usize, f64),
    /// A score is exactly 0 or 1 (its index and value): those belong to the point masses.
    EndpointScore(usize, f64),
    /// `max_components` is not in 1..=[`MAX_COMPONENTS`].
    InvalidMaxComponents(usize),
    /// `min_sd` is not finite and > 0.
    InvalidMinSd(f64),
    /// The bin width is not finite and > 0.
    InvalidBinWidth(f64),
    /// The bin width needs more than [`MAX_CELLS`] cells over the data's log-odds.
    TooManyCells(f64),
    /// `tolerance` is not finite and > 0.
    InvalidTolerance(f64),
    /// `max_iterations` is 0.
    InvalidMaxIterations,
    /// Held-out folds not in 2..=min([`MAX_FOLDS`], n) (folds, n).
    InvalidFolds(usize, usize),
    /// Memory for the per-score or per-cell arrays was refused (the number of scores).
    OutOfMemory(usize),
    /// No K converged within `max_iterations` (the cap).
    NotConverged(usize),
}

impl fmt::Display for LogitMixtureFitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Empty => f.write_str("no scores to fit a log-odds mixture to"),
            Self::InvalidScore(i, x) => write!(f, "score {i} ({x}) is not a number in [0, 1]"),
            Self::EndpointScore(i, x) => write!(
                f,
                "score {i} is exactly {x}: a log-odds mixture fits scores strictly inside (0, 1); exact 0s and 1s are point masses"
            ),
            Self::InvalidMaxComponents(k) => write!(
                f,
                "the largest number of components must be 1 to {MAX_COMPONENTS}, got {k}"
            ),
            Self::InvalidMinSd(s) => {
                write!(f, "the sd floor must be finite and > 0, got {s}")
            }
            Self::InvalidBinWidth(h) => {
                write!(f, "the log-odds bin width must be finite and > 0, got {h}")
            }
            Self::TooManyCells(h) => write!(
                f,
                "a log-odds bin width of {h} needs more than {MAX_CELLS} cells over these scores"
            ),
            Self::InvalidTolerance(t) => {
                write!(f, "the EM tolerance must be finite and > 0, got {t}")
            }
            Self::InvalidMaxIterations => f.write_str("EM needs at least one iteration"),
            Self::InvalidFolds(folds, n) => write!(
                f,
                "held-out selection needs 2 to {MAX_FOLDS} folds and at most one per score ({n} scores), got {folds}"
            ),
            Self::OutOfMemory(n) => write!(f, "out of memory for the log-odds of {n} scores"),
            Self::NotConverged(cap) => write!(
                f,
                "no number of components converged within {cap} EM iterations"
            ),
        }
    }
}

impl std::error::Error for LogitMixtureFitError {}

/// The fit with K components.
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentCountFit {
    /// K.
    pub components: usize,
    /// The fitted mixture (the last iterate if EM did not converge).
    pub mixture: LogitMixture,
    /// Whether EM converged (from the start that won).
    pub converged: bool,
    /// EM iterations of the start that won.
    pub iterations: usize,
    /// The log-likelihood of all n scores c (with the Jacobian; module docs).
    pub log_likelihood: f64,
    /// −2 LL + (3K − 1) ln n.
    pub bic: f64,
    /// The held-out log-likelihood of the scores summed over the folds
    /// ([`Selection::HeldOut`] only; `None` also when a fold's fit did not converge).
    pub held_out_log_likelihood: Option<f64>,
}

/// A fitted log-odds mixture, with every K tried.
#[derive(Clone, Debug, PartialEq)]
pub struct LogitMixtureFit {
    /// The chosen fit.
    pub mixture: LogitMixture,
    /// Its K.
    pub components: usize,
    /// Its log-likelihood of the n scores c (with the Jacobian).
    pub log_likelihood: f64,
    /// Its BIC.
    pub bic: f64,
    /// The number of scores.
    pub n: usize,
    /// How K was chosen.
    pub selection: Selection,
    /// Every K tried, K = 1 first.
    pub by_components: Vec<ComponentCountFit>,
}

impl LogitMixtureFit {
    /// The chosen fit's log-likelihood per score.
    pub fn mean_log_likelihood(&self) -> f64 {
        self.log_likelihood / self.n as f64
    }
}

fn check_options(options: &LogitMixtureOptions, n: usize) -> Result<(), LogitMixtureFitError> {
    use LogitMixtureFitError::*;
    if !(1..=MAX_COMPONENTS).contains(&options.max_components) {
        return Err(InvalidMaxComponents(options.max_components));
    }
    if !(options.min_sd.is_finite() && options.min_sd > 0.0) {
        return Err(InvalidMinSd(options.min_sd));
    }
    if let Binning::Width(h) = options.binning {
        if !(h.is_finite() && h > 0.0) {
            return Err(InvalidBinWidth(h));
        }
    }
    if !(options.tolerance.is_finite() && options.tolerance > 0.0) {
        return Err(InvalidTolerance(options.tolerance));
    }
    if options.max_iterations == 0 {
        return Err(InvalidMaxIterations);
    }
    if let Selection::HeldOut { folds, .. } = options.selection {
        if !(2..=MAX_FOLDS).contains(&folds) || folds > n {
            return Err(InvalidFolds(folds, n));
        }
    }
    Ok(())
}

/// The scores' log-odds and the Jacobian term of each fold.
struct LogOdds {
    z: Vec<f64>,
    /// Σ −ln c − ln(1 − c) over all scores.
    jacobian: f64,
}

fn log_odds(scores: &[f64]) -> Result<LogOdds, LogitMixtureFitError> {
    let mut z = Vec::new();
    z.try_reserve_exact(scores.len())
        .map_err(|_| LogitMixtureFitError::OutOfMemory(scores.len()))?;
    let mut jacobian = 0.0;
    for (i, &c) in scores.iter().enumerate() {
        if !(0.0..=1.0).contains(&c) {
            return Err(LogitMixtureFitError::InvalidScore(i, c));
        }
        if c == 0.0 || c == 1.0 {
            return Err(LogitMixtureFitError::EndpointScore(i, c));
        }
        // 1 − c is exact for c ≥ ½ (Sterbenz), and UnitPoint takes each logarithm from
        // the accurate side, so z keeps its digits near both ends.
        let point = UnitPoint::from_x(c);
        jacobian -= point.ln_x + point.ln_one_minus_x;
        z.push(point.logit());
    }
    Ok(LogOdds { z, jacobian })
}

/// Grouped log-odds for EM: per cell, its mean (centred on the data's mean), its count
/// and the sum of squared deviations from its mean. Cells are in ascending order of z.
#[derive(Clone, Debug, Default)]
struct Bins {
    x: Vec<f64>,
    count: Vec<f64>,
    within: Vec<f64>,
    total: f64,
}

/// Per cell and fold: count, Σ (z − reference), Σ (z − reference)², each score measured
/// from its cell's reference (the cell's centre, or the distinct value itself) so that
/// the within-cell sum of squares is formed without cancellation.
struct CellStatistics {
    reference: Vec<f64>,
    /// [fold][cell] → (count, Σ d, Σ d²).
    sums: Vec<Vec<(f64, f64, f64)>>,
    /// The data's mean log-odds, subtracted from every cell mean.
    centre: f64,
}

impl CellStatistics {
    fn new(
        z: &[f64],
        fold: Option<&[u8]>,
        folds: usize,
        binning: Binning,
    ) -> Result<CellStatistics, LogitMixtureFitError> {
        let centre = z.iter().sum::<f64>() / z.len() as f64;
        let (lo, hi) = z
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            });
        // Each score's cell, and the cells' references.
        let (cells, reference): (Vec<u32>, Vec<f64>) = match binning {
            Binning::Width(h) => {
                let span = ((hi - lo) / h).floor();
                // (NaN cannot arise: the log-odds are finite and h > 0.)
                if span.is_nan() || span >= MAX_CELLS as f64 {
                    return Err(LogitMixtureFitError::TooManyCells(h));
                }
                let dense = span as usize + 1;
                let cell_of = |v: f64| (((v - lo) / h).floor() as usize).min(dense - 1);
                // Compact the non-empty cells, keeping their order.
                let mut index = vec![u32::MAX; dense];
                for &v in z {
                    index[cell_of(v)] = 0;
                }
                let mut reference = Vec::new();
                for (d, slot) in index.iter_mut().enumerate() {
                    if *slot == 0 {
                        *slot = reference.len() as u32;
                        reference.push(lo + (d as f64 + 0.5) * h);
                    }
                }
                (z.iter().map(|&v| index[cell_of(v)]).collect(), reference)
            }
            Binning::Exact => {
                let mut distinct = z.to_vec();
                distinct.sort_unstable_by(f64::total_cmp);
                distinct.dedup();
                let cells = z
                    .iter()
                    .map(|v| distinct.partition_point(|d| d < v) as u32)
                    .collect();
                (cells, distinct)
            }
        };
        // folds × cells sums: up to 100 × 10^6 × 24 bytes with exact binning of 10^6
        // distinct scores, so asked of the allocator, not assumed.
        let out_of_memory = || LogitMixtureFitError::OutOfMemory(z.len());
        let mut sums: Vec<Vec<(f64, f64, f64)>> = Vec::new();
        sums.try_reserve_exact(folds).map_err(|_| out_of_memory())?;
        for _ in 0..folds {
            let mut fold_sums = Vec::new();
            fold_sums
                .try_reserve_exact(reference.len())
                .map_err(|_| out_of_memory())?;
            fold_sums.resize(reference.len(), (0.0, 0.0, 0.0));
            sums.push(fold_sums);
        }
        for (i, (&v, &cell)) in z.iter().zip(&cells).enumerate() {
            let f = fold.map_or(0, |fold| usize::from(fold[i]));
            let d = v - reference[cell as usize];
            let s = &mut sums[f][cell as usize];
            s.0 += 1.0;
            s.1 += d;
            s.2 += d * d;
        }
        Ok(CellStatistics {
            reference,
            sums,
            centre,
        })
    }

    /// The bins of every fold but `excluded` (all folds with `None`).
    fn bins(&self, excluded: Option<usize>) -> Bins {
        let mut bins = Bins::default();
        for (cell, &reference) in self.reference.iter().enumerate() {
            let (mut n, mut s, mut q) = (0.0, 0.0, 0.0);
            for (f, sums) in self.sums.iter().enumerate() {
                if Some(f) != excluded {
                    let (a, b, c) = sums[cell];
                    n += a;
                    s += b;
                    q += c;
                }
            }
            if n > 0.0 {
                let mean_deviation = s / n;
                bins.x.push(reference + mean_deviation - self.centre);
                bins.count.push(n);
                bins.within.push((q - s * mean_deviation).max(0.0));
                bins.total += n;
            }
        }
        bins
    }
}

/// Mixture parameters in the centred frame.
#[derive(Clone, Debug, PartialEq)]
struct Params {
    weight: Vec<f64>,
    mean: Vec<f64>,
    sd: Vec<f64>,
}

impl Params {
    fn len(&self) -> usize {
        self.weight.len()
    }

    /// The simulator's mixture, shifted back by `centre`; `None` if a weight has
    /// underflowed (a collapsed component).
    fn mixture(&self, centre: f64) -> Option<LogitMixture> {
        let components = (0..self.len())
            .map(|k| LogitComponent::new(self.weight[k], self.mean[k] + centre, self.sd[k]))
            .collect();
        LogitMixture::new(components).ok()
    }
}

struct EmOutcome {
    params: Params,
    /// The binned log-likelihood of z at `params`.
    objective: f64,
    iterations: usize,
    converged: bool,
}

/// Bins per parallel task of the E-step: the usual 1000-2000 cells of a fit run as one
/// task (rayon's per-iteration overhead would cost more than it saves); wide log-odds
/// ranges split.
const BIN_CHUNK: usize = 2048;

/// The E-step's sums over some bins: the binned log-likelihood and, per component, Σ n r,
/// Σ n r x and Σ r (n x² + within).
#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    objective: f64,
    n: [f64; MAX_COMPONENTS],
    s: [f64; MAX_COMPONENTS],
    q: [f64; MAX_COMPONENTS],
}

fn e_step(
    bins: &Bins,
    range: core::ops::Range<usize>,
    params: &Params,
    ln_scale: &[f64],
    inverse_variance: &[f64],
) -> Sums {
    let k_count = params.len();
    let mut sums = Sums::default();
    let mut terms = [0.0; MAX_COMPONENTS];
    for b in range {
        let (x, n, w) = (bins.x[b], bins.count[b], bins.within[b]);
        let mut largest = f64::NEG_INFINITY;
        for k in 0..k_count {
            let d = x - params.mean[k];
            terms[k] = ln_scale[k] - 0.5 * d * d * inverse_variance[k];
            largest = largest.max(terms[k]);
        }
        let mut total = 0.0;
        for t in terms[..k_count].iter_mut() {
            *t = (*t - largest).exp();
            total += *t;
        }
        sums.objective += n * (largest + total.ln());
        for (k, term) in terms[..k_count].iter().enumerate() {
            let r = term / total;
            sums.n[k] += n * r;
            sums.s[k] += n * r * x;
            sums.q[k] += r * (n * x * x + w);
        }
    }
    sums
}

/// One EM iteration at `params`: the binned log-likelihood there and the M-step's
/// update; `None` if the likelihood is not finite or a component collapses.
fn em_step(bins: &Bins, params: &Params, floor: f64) -> Option<(f64, Params)> {
    const HALF_LN_TWO_PI: f64 = 0.918_938_533_204_672_8;
    let k_count = params.len();
    let ln_scale: Vec<f64> = (0..k_count)
        .map(|k| params.weight[k].ln() - params.sd[k].ln() - HALF_LN_TWO_PI)
        .collect();
    let inverse_variance: Vec<f64> = params.sd.iter().map(|sd| 1.0 / (sd * sd)).collect();
    // The E-step and the M-step's sums, in fixed chunks of bins (in parallel), added in
    // chunk order so that the result does not depend on the threads.
    let partials: Vec<Sums> = (0..bins.x.len())
        .step_by(BIN_CHUNK)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|first| {
            let last = (first + BIN_CHUNK).min(bins.x.len());
            e_step(bins, first..last, params, &ln_scale, &inverse_variance)
        })
        .collect();
    let mut sums = Sums::default();
    for part in &partials {
        sums.objective += part.objective;
        for k in 0..k_count {
            sums.n[k] += part.n[k];
            sums.s[k] += part.s[k];
            sums.q[k] += part.q[k];
        }
    }
    if !sums.objective.is_finite() {
        return None;
    }
    let mut next = params.clone();
    for k in 0..k_count {
        let n_k = sums.n[k];
        if n_k.is_nan() || n_k <= COLLAPSED_WEIGHT * bins.total {
            return None;
        }
        let mean = sums.s[k] / n_k;
        let variance = (sums.q[k] / n_k - mean * mean).max(floor);
        next.weight[k] = n_k / bins.total;
        next.mean[k] = mean;
        next.sd[k] = variance.sqrt();
    }
    Some((sums.objective, next))
}

/// SQUAREM's extrapolation (Varadhan & Roland 2008, scheme S3) from θ0 through two EM
/// iterates θ1, θ2: θ0 − 2αr + α²v with r = θ1 − θ0 and v = θ2 − 2θ1 + θ0; weights
/// renormalised and sds held at the floor. `None` where it leaves the parameter space (a
/// weight ≤ 0).
fn extrapolate(p0: &Params, r: &[f64], v: &[f64], alpha: f64, min_sd: f64) -> Option<Params> {
    let k = p0.len();
    let a: Vec<f64> = p0
        .weight
        .iter()
        .chain(&p0.mean)
        .chain(&p0.sd)
        .copied()
        .collect();
    let x: Vec<f64> = (0..a.len())
        .map(|i| a[i] - 2.0 * alpha * r[i] + alpha * alpha * v[i])
        .collect();
    let (weight, rest) = x.split_at(k);
    let (mean, sd) = rest.split_at(k);
    let total: f64 = weight.iter().sum();
    if weight.iter().any(|&w| w.is_nan() || w <= 0.0)
        || !total.is_finite()
        || mean.iter().any(|m| !m.is_finite())
    {
        return None;
    }
    Some(Params {
        weight: weight.iter().map(|w| w / total).collect(),
        mean: mean.to_vec(),
        sd: sd.iter().map(|s| s.max(min_sd)).collect(),
    })
}

/// The steps of SQUAREM's backtracking: a rejected α moves halfway to −1 (plain EM).
const SQUAREM_BACKTRACKS: usize = 4;

/// EM from `start`, accelerated by SQUAREM (a step is kept only if it does not lower the
/// likelihood, so the iteration stays monotone like plain EM); `None` if a component
/// collapses. Converged when an EM iteration raises the binned log-likelihood by at most
/// the tolerance per score; `iterations` counts every E-step.
fn em(bins: &Bins, start: Params, options: &LogitMixtureOptions) -> Option<EmOutcome> {
    let floor = options.min_sd * options.min_sd;
    let settled = |a: f64, b: f64| (a - b).abs() <= options.tolerance * bins.total;
    let outcome = |params, objective, iterations, converged| {
        Some(EmOutcome {
            params,
            objective,
            iterations,
            converged,
        })
    };
    let mut params = start;
    // The likelihood one EM iteration before `params` (−∞ at the start).
    let mut previous = f64::NEG_INFINITY;
    let mut iterations = 0;
    loop {
        let (l0, p1) = em_step(bins, &params, floor)?;
        iterations += 1;
        if iterations > 1 && settled(l0, previous) {
            return outcome(params, l0, iterations, true);
        }
        if iterations >= options.max_iterations {
            return outcome(params, l0, iterations, false);
        }
        let (l1, p2) = em_step(bins, &p1, floor)?;
        iterations += 1;
        if settled(l1, l0) {
            return outcome(p1, l1, iterations, true);
        }
        if iterations >= options.max_iterations {
            return outcome(p1, l1, iterations, false);
        }
        // α = min(−‖r‖/‖v‖, −1), halved towards −1 while the step leaves the space or
        // lowers the likelihood below the plain iterate's.
        let flat = |p: &Params| -> Vec<f64> {
            p.weight
                .iter()
                .chain(&p.mean)
                .chain(&p.sd)
                .copied()
                .collect()
        };
        let (a, b, c) = (flat(&params), flat(&p1), flat(&p2));
        let r: Vec<f64> = b.iter().zip(&a).map(|(x, y)| x - y).collect();
        let v: Vec<f64> = (0..a.len()).map(|i| c[i] - 2.0 * b[i] + a[i]).collect();
        let norm = |x: &[f64]| x.iter().map(|t| t * t).sum::<f64>().sqrt();
        let mut alpha = (-norm(&r) / norm(&v)).min(-1.0);
        let mut accelerated = None;
        for _ in 0..SQUAREM_BACKTRACKS {
            if !(alpha.is_finite() && alpha < -1.0) || iterations >= options.max_iterations {
                break;
            }
            if let Some(p) = extrapolate(&params, &r, &v, alpha, options.min_sd) {
                iterations += 1;
                if let Some((l, next)) = em_step(bins, &p, floor).filter(|(l, _)| *l >= l1) {
                    accelerated = Some((l, next));
                    break;
                }
            }
            alpha = (alpha - 1.0) / 2.0;
        }
        (previous, params) = match accelerated {
            Some((l, next)) => (l, next),
            None => (l1, p2),
        };
    }
}

/// Start (a): means at the (k + ½)/K quantiles of the bins, equal weights, sd(z)/K.
fn quantile_start(bins: &Bins, k_count: usize, min_sd: f64) -> Params {
    let mean = bins
        .x
        .iter()
        .zip(&bins.count)
        .map(|(x, n)| x * n)
        .sum::<f64>()
        / bins.total;
    let variance = bins
        .x
        .iter()
        .zip(&bins.count)
        .zip(&bins.within)
        .map(|((x, n), w)| n * (x - mean) * (x - mean) + w)
        .sum::<f64>()
        / bins.total;
    let sd = (variance.sqrt() / k_count as f64).max(min_sd);
    let mut means = Vec::with_capacity(k_count);
    let mut cumulative = 0.0;
    let mut b = 0;
    for k in 0..k_count {
        let target = (k as f64 + 0.5) / k_count as f64 * bins.total;
        while b + 1 < bins.x.len() && cumulative + bins.count[b] < target {
            cumulative += bins.count[b];
            b += 1;
        }
        means.push(bins.x[b]);
    }
    Params {
        weight: vec![1.0 / k_count as f64; k_count],
        mean: means,
        sd: vec![sd; k_count],
    }
}

/// Start (b): the K − 1 fit with its widest component split at μ ± σ/2.
fn split_start(previous: &Params, min_sd: f64) -> Params {
    let widest = (0..previous.len())
        .max_by(|&a, &b| {
            let spread = |k: usize| previous.weight[k] * previous.sd[k] * previous.sd[k];
            spread(a).total_cmp(&spread(b))
        })
        .unwrap_or(0);
    let mut params = previous.clone();
    let (w, m, s) = (
        previous.weight[widest],
        previous.mean[widest],
        previous.sd[widest],
    );
    // Two halves at μ ± σ/2 with sd σ·√¾ keep the component's mean and variance.
    let sd = (s * 0.75f64.sqrt()).max(min_sd);
    params.weight[widest] = 0.5 * w;
    params.mean[widest] = m - 0.5 * s;
    params.sd[widest] = sd;
    params.weight.push(0.5 * w);
    params.mean.push(m + 0.5 * s);
    params.sd.push(sd);
    params
}

/// Iterations both starts get before only the better one continues.
const RACE_ITERATIONS: usize = 50;

/// The EM fits for K = 1..=max on `bins`, each from the better of its starts; `None` for
/// a K whose every start collapsed. Both starts run [`RACE_ITERATIONS`] iterations and
/// only the one with the higher likelihood then runs on, which halves the cost of the
/// slow (overlapping, many-component) fits.
fn fit_all_counts(
    bins: &Bins,
    max: usize,
    options: &LogitMixtureOptions,
) -> Vec<Option<EmOutcome>> {
    let race = LogitMixtureOptions {
        max_iterations: options.max_iterations.min(RACE_ITERATIONS),
        ..*options
    };
    let mut fits: Vec<Option<EmOutcome>> = Vec::with_capacity(max);
    for k_count in 1..=max {
        let mut best = em(bins, quantile_start(bins, k_count, options.min_sd), &race);
        if let Some(Some(previous)) = fits.last() {
            let split = em(bins, split_start(&previous.params, options.min_sd), &race);
            best = match (best, split) {
                (Some(a), Some(b)) => Some(better(a, b)),
                (a, b) => a.or(b),
            };
        }
        let outcome = match best {
            Some(leader) if !leader.converged && leader.iterations < options.max_iterations => {
                let rest = LogitMixtureOptions {
                    max_iterations: options.max_iterations - leader.iterations,
                    ..*options
                };
                em(bins, leader.params, &rest).map(|o| EmOutcome {
                    iterations: o.iterations + leader.iterations,
                    ..o
                })
            }
            other => other,
        };
        fits.push(outcome);
    }
    fits
}

/// The converged outcome over the unconverged, then the higher likelihood.
fn better(a: EmOutcome, b: EmOutcome) -> EmOutcome {
    let key = |o: &EmOutcome| (o.converged, o.objective);
    if key(&b).0 && !key(&a).0 || (key(&b).0 == key(&a).0 && b.objective > a.objective) {
        b
    } else {
        a
    }
}

/// Σ ln p_z(z) over `z` (the mixture's log-density of the log-odds), in fixed chunks
/// summed in order so that the result does not depend on the thread count.
fn log_likelihood_of_logits(mixture: &LogitMixture, z: &[f64]) -> f64 {
    let parts: Vec<f64> = z
        .par_chunks(CHUNK)
        .map(|chunk| chunk.iter().map(|&v| mixture.ln_pdf_logit(v)).sum::<f64>())
        .collect();
    parts.iter().sum()
}

/// Fits a log-odds mixture to scores strictly inside (0, 1) (module docs).
pub fn fit_logit_mixture(
    scores: &[f64],
    options: &LogitMixtureOptions,
) -> Result<LogitMixtureFit, LogitMixtureFitError> {
    if scores.is_empty() {
        return Err(LogitMixtureFitError::Empty);
    }
    check_options(options, scores.len())?;
    let n = scores.len();
    let data = log_odds(scores)?;
    let (folds, fold) = match options.selection {
        Selection::Bic => (1, None),
        Selection::HeldOut { folds, seed } => {
            // Balanced folds: a seeded permutation, dealt round-robin.
            let mut order: Vec<u32> = Vec::new();
            order
                .try_reserve_exact(n)
                .map_err(|_| LogitMixtureFitError::OutOfMemory(n))?;
            order.extend(0..n as u32);
            order.shuffle(&mut Xoshiro256PlusPlus::seed_from_u64(seed));
            let mut fold = vec![0u8; n];
            for (position, &i) in order.iter().enumerate() {
                fold[i as usize] = (position % folds) as u8;
            }
            (folds, Some(fold))
        }
    };
    let cells = CellStatistics::new(&data.z, fold.as_deref(), folds, options.binning)?;
    let all = cells.bins(None);
    let max = options.max_components.min(all.x.len());
    let ln_n = (n as f64).ln();

    let mut by_components = Vec::with_capacity(max);
    for (index, outcome) in fit_all_counts(&all, max, options).into_iter().enumerate() {
        let Some(outcome) = outcome else { continue };
        let Some(mixture) = outcome.params.mixture(cells.centre) else {
            continue;
        };
        let log_likelihood = log_likelihood_of_logits(&mixture, &data.z) + data.jacobian;
        by_components.push(ComponentCountFit {
            components: index + 1,
            bic: -2.0 * log_likelihood + mixture.parameter_count() as f64 * ln_n,
            mixture,
            converged: outcome.converged,
            iterations: outcome.iterations,
            log_likelihood,
            held_out_log_likelihood: None,
        });
    }

    if let Some(fold) = &fold {
        // Each fold's scores, in their original order, and its Jacobian.
        let mut held_out_z: Vec<Vec<f64>> = vec![Vec::new(); folds];
        let mut held_out_jacobian = vec![0.0; folds];
        for (i, &v) in data.z.iter().enumerate() {
            let f = usize::from(fold[i]);
            held_out_z[f].push(v);
            // −ln c − ln(1 − c) = softplus(z) + softplus(−z), from z alone.
            held_out_jacobian[f] +=
                crate::sim::unit_point::softplus(v) + crate::sim::unit_point::softplus(-v);
        }
        let mut totals: Vec<Option<f64>> = vec![Some(0.0); max];
        for f in 0..folds {
            let training = cells.bins(Some(f));
            let fits = fit_all_counts(&training, max, options);
            for (k, outcome) in fits.into_iter().enumerate() {
                let scored = outcome
                    .filter(|o| o.converged)
                    .and_then(|o| o.params.mixture(cells.centre))
                    .map(|m| log_likelihood_of_logits(&m, &held_out_z[f]) + held_out_jacobian[f]);
                totals[k] = match (totals[k], scored) {
                    (Some(total), Some(value)) => Some(total + value),
                    _ => None,
                };
            }
        }
        for fit in &mut by_components {
            fit.held_out_log_likelihood = totals[fit.components - 1];
        }
    }

    let chosen = match options.selection {
        Selection::Bic => by_components
            .iter()
            .filter(|f| f.converged)
            .min_by(|a, b| a.bic.total_cmp(&b.bic)),
        Selection::HeldOut { .. } => by_components
            .iter()
            .filter(|f| f.converged && f.held_out_log_likelihood.is_some())
            .max_by(|a, b| {
                a.held_out_log_likelihood
                    .unwrap_or(f64::NEG_INFINITY)
                    .total_cmp(&b.held_out_log_likelihood.unwrap_or(f64::NEG_INFINITY))
                    // On a tie, the smaller K (max_by keeps the last maximum).
                    .then(b.components.cmp(&a.components))
            }),
    };
    let Some(chosen) = chosen else {
        return Err(LogitMixtureFitError::NotConverged(options.max_iterations));
    };
    Ok(LogitMixtureFit {
        mixture: chosen.mixture.clone(),
        components: chosen.components,
        log_likelihood: chosen.log_likelihood,
        bic: chosen.bic,
        n,
        selection: options.selection,
        by_components,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::{fit_beta, EndpointRule};
    use crate::sim::model::repetition_rng;

    /// The bundled file's scores strictly inside (0, 1).
    fn bundled(file: &str) -> Vec<f64> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(file);
        let mut reader = csv::Reader::from_path(path).unwrap();
        reader
            .records()
            .map(|r| r.unwrap()[0].parse::<f64>().unwrap())
            .filter(|&c| c > 0.0 && c < 1.0)
            .collect()
    }

    const FILES: [&str; 6] = [
        "densenet40_c100_test.csv",
        "densenet40_c10_test.csv",
        "resnet110_c100_test.csv",
        "resnet110_c10_test.csv",
        "resnet50_birds_test.csv",
        "torchvision_densenet161_imgnet_test.csv",
    ];

    fn mixture(parts: &[(f64, f64, f64)]) -> LogitMixture {
        LogitMixture::new(
            parts
                .iter()
                .map(|&(w, m, s)| LogitComponent::new(w, m, s))
                .collect(),
        )
        .unwrap()
    }

    fn draws(truth: &LogitMixture, n: usize, seed: u64) -> Vec<f64> {
        let mut rng = repetition_rng(seed, 0);
        (0..n).map(|_| truth.sample(&mut rng)).collect()
    }

    #[test]
    fn refuses_bad_input() {
        use LogitMixtureFitError::*;
        let ok = LogitMixtureOptions::default();
        let fit = |scores: &[f64], options: LogitMixtureOptions| {
            fit_logit_mixture(scores, &options).map(|f| f.components)
        };
        assert_eq!(fit(&[], ok), Err(Empty));
        assert_eq!(fit(&[0.5, 1.0], ok), Err(EndpointScore(1, 1.0)));
        assert_eq!(fit(&[0.0, 0.5], ok), Err(EndpointScore(0, 0.0)));
        assert_eq!(fit(&[0.5, 1.5], ok), Err(InvalidScore(1, 1.5)));
        assert_eq!(fit(&[-0.1], ok), Err(InvalidScore(0, -0.1)));
        assert!(matches!(fit(&[0.2, f64::NAN], ok), Err(InvalidScore(1, _))));
        let scores = [0.2, 0.4, 0.9];
        let with = |change: fn(&mut LogitMixtureOptions)| {
            let mut options = ok;
            change(&mut options);
            fit(&scores, options)
        };
        assert_eq!(with(|o| o.max_components = 0), Err(InvalidMaxComponents(0)));
        assert_eq!(
            with(|o| o.max_components = 17),
            Err(InvalidMaxComponents(17))
        );
        assert_eq!(with(|o| o.min_sd = 0.0), Err(InvalidMinSd(0.0)));
        assert!(matches!(
            with(|o| o.min_sd = f64::NAN),
            Err(InvalidMinSd(_))
        ));
        assert_eq!(
            with(|o| o.binning = Binning::Width(-1.0)),
            Err(InvalidBinWidth(-1.0))
        );
        assert_eq!(
            with(|o| o.binning = Binning::Width(1e-300)),
            Err(TooManyCells(1e-300))
        );
        assert_eq!(with(|o| o.tolerance = 0.0), Err(InvalidTolerance(0.0)));
        assert_eq!(with(|o| o.max_iterations = 0), Err(InvalidMaxIterations));
        assert_eq!(
            with(|o| o.selection = Selection::HeldOut { folds: 4, seed: 0 }),
            Err(InvalidFolds(4, 3))
        );
        assert_eq!(
            with(|o| o.selection = Selection::HeldOut { folds: 1, seed: 0 }),
            Err(InvalidFolds(1, 3))
        );
        // One EM iteration cannot show convergence (it needs two likelihoods).
        assert_eq!(with(|o| o.max_iterations = 1), Err(NotConverged(1)));
    }

    /// Tied and constant scores: the floor keeps every σ at or above it, and the
    /// likelihood finite.
    #[test]
    fn ties_do_not_collapse_a_component() {
        let constant = vec![0.9; 1000];
        let fit = fit_logit_mixture(&constant, &LogitMixtureOptions::default()).unwrap();
        assert_eq!(fit.components, 1);
        let c = fit.mixture.components()[0];
        assert!((c.mean - 9f64.ln()).abs() < 1e-12 && c.sd == DEFAULT_MIN_SD);
        assert!(fit.log_likelihood.is_finite());
        // 30 % of the scores on one float32 value near 1, the rest spread.
        let truth = mixture(&[(0.5, 2.0, 1.0), (0.5, 6.0, 2.0)]);
        let mut scores = draws(&truth, 7000, 5);
        scores.extend(std::iter::repeat(1.0 - 2f64.powi(-23)).take(3000));
        let fit = fit_logit_mixture(&scores, &LogitMixtureOptions::default()).unwrap();
        for f in &fit.by_components {
            assert!(f.log_likelihood.is_finite());
            assert!(f
                .mixture
                .components()
                .iter()
                .all(|c| c.sd >= DEFAULT_MIN_SD));
        }
    }

    /// Recovers weights, means and sds of well-separated mixtures (about 6 σ apart, so
    /// that the complete-data standard errors apply: √(w(1 − w)/n), σ/√(nw), σ/√(2nw)),
    /// within 5 of them; BIC and held-out likelihood choose the true K.
    #[test]
    fn recovers_known_mixtures() {
        let truths = [
            mixture(&[(1.0, 3.0, 1.2)]),
            mixture(&[(0.4, -1.0, 0.8), (0.6, 5.0, 1.5)]),
            mixture(&[(0.2, -1.0, 0.7), (0.3, 4.0, 1.0), (0.5, 11.0, 1.2)]),
        ];
        for (case, truth) in truths.iter().enumerate() {
            let n = 50_000;
            let scores = draws(truth, n, 100 + case as u64);
            let options = LogitMixtureOptions {
                max_components: 5,
                ..Default::default()
            };
            let fit = fit_logit_mixture(&scores, &options).unwrap();
            assert_eq!(fit.components, truth.len(), "case {case}: BIC");
            let mut fitted = fit.mixture.components().to_vec();
            fitted.sort_by(|a, b| a.mean.total_cmp(&b.mean));
            for (f, t) in fitted.iter().zip(truth.components()) {
                let nw = n as f64 * t.weight;
                let se_weight = (t.weight * (1.0 - t.weight) / n as f64).sqrt();
                let se_mean = t.sd / nw.sqrt();
                let se_sd = t.sd / (2.0 * nw).sqrt();
                assert!(
                    (f.weight - t.weight).abs() <= 5.0 * se_weight + 1e-12,
                    "case {case}: weight {} vs {} (se {se_weight})",
                    f.weight,
                    t.weight
                );
                assert!(
                    (f.mean - t.mean).abs() <= 5.0 * se_mean,
                    "case {case}: mean {} vs {} (se {se_mean})",
                    f.mean,
                    t.mean
                );
                assert!(
                    (f.sd - t.sd).abs() <= 5.0 * se_sd,
                    "case {case}: sd {} vs {} (se {se_sd})",
                    f.sd,
                    t.sd
                );
            }
            // The reported likelihood is the scores' under the simulator's density.
            let direct: f64 = scores
                .iter()
                .map(|&c| fit.mixture.ln_pdf_at(&UnitPoint::from_x(c)))
                .sum();
            assert!((direct - fit.log_likelihood).abs() < 1e-9 * direct.abs());
            let held_out = LogitMixtureOptions {
                selection: Selection::HeldOut { folds: 5, seed: 1 },
                max_components: truth.len() + 1,
                ..options
            };
            let by_held_out = fit_logit_mixture(&scores[..20_000], &held_out).unwrap();
            assert_eq!(by_held_out.components, truth.len(), "case {case}: held out");
            assert!(by_held_out
                .by_components
                .iter()
                .all(|f| f.held_out_log_likelihood.is_some()));
        }
    }

    /// Binned EM loses nothing measurable against exact EM over the distinct log-odds.
    #[test]
    fn binning_costs_nothing_measurable() {
        let truth = mixture(&[(0.3, 1.0, 0.8), (0.7, 8.0, 2.5)]);
        let scores = draws(&truth, 20_000, 9);
        let options = LogitMixtureOptions {
            max_components: 3,
            ..Default::default()
        };
        let binned = fit_logit_mixture(&scores, &options).unwrap();
        let exact = fit_logit_mixture(
            &scores,
            &LogitMixtureOptions {
                binning: Binning::Exact,
                ..options
            },
        )
        .unwrap();
        assert_eq!(binned.components, exact.components);
        for (b, e) in binned.by_components.iter().zip(&exact.by_components) {
            let per_score = (b.log_likelihood - e.log_likelihood) / scores.len() as f64;
            assert!(per_score.abs() < 1e-6, "K {}: {per_score}", b.components);
        }
    }

    /// SQUAREM reaches plain EM's fixed point in under half the iterations: on two overlapping
    /// components (plain EM's slow case), both run to a tolerance of 1e-13 per score
    /// from the same start agree on the likelihood to 1e-9 per score and on every
    /// parameter to 1e-3 (the likelihood is flat enough along the weights that plain EM's
    /// stopping rule leaves them 2e-4 from its limit).
    #[test]
    fn acceleration_reaches_plain_em_fixed_point() {
        let truth = mixture(&[(0.4, 2.0, 1.0), (0.6, 3.5, 1.5)]);
        let scores = draws(&truth, 20_000, 4);
        let z = log_odds(&scores).unwrap().z;
        let bins = CellStatistics::new(&z, None, 1, Binning::Width(DEFAULT_BIN_WIDTH))
            .unwrap()
            .bins(None);
        let options = LogitMixtureOptions {
            tolerance: 1e-13,
            max_iterations: 200_000,
            ..Default::default()
        };
        let start = quantile_start(&bins, 2, options.min_sd);
        let fast = em(&bins, start.clone(), &options).unwrap();
        assert!(fast.converged);
        let floor = options.min_sd * options.min_sd;
        let (mut params, mut previous, mut plain_iterations) = (start, f64::NEG_INFINITY, 0);
        let plain_objective = loop {
            let (objective, next) = em_step(&bins, &params, floor).unwrap();
            plain_iterations += 1;
            if (objective - previous).abs() <= options.tolerance * bins.total {
                break objective;
            }
            (previous, params) = (objective, next);
        };
        let per_score = (fast.objective - plain_objective) / bins.total;
        assert!(per_score.abs() < 1e-9, "{per_score}");
        for (a, b) in [
            (&fast.params.weight, &params.weight),
            (&fast.params.mean, &params.mean),
            (&fast.params.sd, &params.sd),
        ] {
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() < 1e-3, "{a:?} vs {b:?}");
            }
        }
        assert!(
            2 * fast.iterations < plain_iterations,
            "{} vs {plain_iterations}",
            fast.iterations
        );
    }

    #[test]
    fn held_out_selection_is_deterministic() {
        let truth = mixture(&[(0.5, 0.0, 1.0), (0.5, 4.0, 1.0)]);
        let scores = draws(&truth, 3000, 2);
        let options = LogitMixtureOptions {
            max_components: 3,
            selection: Selection::HeldOut { folds: 3, seed: 7 },
            ..Default::default()
        };
        let a = fit_logit_mixture(&scores, &options).unwrap();
        let b = fit_logit_mixture(&scores, &options).unwrap();
        assert_eq!(a, b);
    }

    /// On every bundled file (exact 1.0s removed), the mixture's log-likelihood of the
    /// scores beats the Beta fit's on the same scores. Prints the table of
    /// docs/fitting.md (`cargo test --release --all-features --lib
    /// fit::logit_mixture::tests::beats_the_beta_on_every_bundled_file -- --nocapture`).
    #[test]
    fn beats_the_beta_on_every_bundled_file() {
        println!("| file | n | K (BIC) | LL/n mixture | LL/n Beta | difference |");
        println!("|---|---:|---:|---:|---:|---:|");
        for file in FILES {
            let scores = bundled(file);
            let n = scores.len() as f64;
            let beta = fit_beta(&scores, &EndpointRule::default()).unwrap();
            let fit = fit_logit_mixture(&scores, &LogitMixtureOptions::default()).unwrap();
            let (ours, theirs) = (fit.mean_log_likelihood(), -beta.nll / n);
            println!(
                "| {file} | {} | {} | {ours:.4} | {theirs:.4} | {:+.4} |",
                scores.len(),
                fit.components,
                ours - theirs
            );
            assert!(ours > theirs, "{file}: {ours} vs Beta {theirs}");
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(32))]

            /// On any data (a random two-component mixture, a share of one tied value,
            /// and scores within 1e−300 or one ulp of the ends), every K's fit is a valid
            /// mixture with every σ at the floor or above, its reported likelihood is the
            /// direct sum of ln p(c), and the chosen K has the smallest BIC.
            #[test]
            fn every_fit_is_valid_and_the_choice_is_the_smallest_bic(
                w in 0.05f64..0.95,
                m1 in -5.0f64..5.0,
                m2 in 0.0f64..15.0,
                s1 in 0.05f64..3.0,
                s2 in 0.05f64..3.0,
                n in 30usize..1500,
                tied in 0usize..300,
                seed in 0u64..1000,
            ) {
                let truth = mixture(&[(w, m1, s1), (1.0 - w, m2, s2)]);
                let mut scores: Vec<f64> = draws(&truth, n, seed)
                    .into_iter()
                    .map(|c| c.clamp(1e-300, 1.0 - f64::EPSILON / 2.0))
                    .collect();
                scores.extend(std::iter::repeat(1.0 - 2f64.powi(-23)).take(tied));
                scores.push(1e-300);
                scores.push(1.0 - f64::EPSILON / 2.0);
                let options = LogitMixtureOptions { max_components: 3, ..Default::default() };
                let fit = fit_logit_mixture(&scores, &options).unwrap();
                for f in &fit.by_components {
                    let weights: f64 = f.mixture.components().iter().map(|c| c.weight).sum();
                    prop_assert!((weights - 1.0).abs() < 1e-12);
                    prop_assert!(f
                        .mixture
                        .components()
                        .iter()
                        .all(|c| c.sd >= DEFAULT_MIN_SD * (1.0 - 1e-15)));
                    let direct: f64 = scores
                        .iter()
                        .map(|&c| f.mixture.ln_pdf_at(&UnitPoint::from_x(c)))
                        .sum();
                    prop_assert!(
                        (direct - f.log_likelihood).abs() <= 1e-9 * direct.abs().max(1.0),
                        "{direct} vs {}",
                        f.log_likelihood
                    );
                }
                let smallest = fit
                    .by_components
                    .iter()
                    .filter(|f| f.converged)
                    .map(|f| f.bic)
                    .fold(f64::INFINITY, f64::min);
                prop_assert_eq!(fit.bic, smallest);
            }
        }
    }

    /// The fuller report (release): held-out K, exact EM, the per-K likelihoods.
    #[test]
    #[ignore]
    fn bundled_report() {
        for file in FILES {
            let scores = bundled(file);
            let n = scores.len() as f64;
            let fit = fit_logit_mixture(&scores, &LogitMixtureOptions::default()).unwrap();
            let held = fit_logit_mixture(
                &scores,
                &LogitMixtureOptions {
                    selection: Selection::HeldOut { folds: 5, seed: 0 },
                    ..Default::default()
                },
            )
            .unwrap();
            let exact = fit_logit_mixture(
                &scores,
                &LogitMixtureOptions {
                    binning: Binning::Exact,
                    ..Default::default()
                },
            )
            .unwrap();
            let up_to_ten = fit_logit_mixture(
                &scores,
                &LogitMixtureOptions {
                    max_components: 10,
                    ..Default::default()
                },
            )
            .unwrap();
            // The fit's mass above the data's largest log-odds (float32 saturation: the
            // real scores beyond it are exact 1.0s, removed here).
            let largest = scores
                .iter()
                .map(|&c| UnitPoint::from_x(c).logit())
                .fold(f64::NEG_INFINITY, f64::max);
            println!(
                "{file}: largest z {largest:.3}, fitted mass above it {:.4}, sampled as 1.0 {:.2e}",
                1.0 - fit.mixture.cdf_logit(largest),
                fit.mixture.share_sampled_as_one()
            );
            println!(
                "{file}: K {} held-out K {} exact K {} (K ≤ 10: {}, LL/n {:.4}) LL/n per K {:?} exact {:?} held-out/n {:?}",
                fit.components,
                held.components,
                exact.components,
                up_to_ten.components,
                up_to_ten.mean_log_likelihood(),
                fit.by_components
                    .iter()
                    .map(|f| format!("{:.4}", f.log_likelihood / n))
                    .collect::<Vec<_>>(),
                exact
                    .by_components
                    .iter()
                    .map(|f| format!("{:.4}", f.log_likelihood / n))
                    .collect::<Vec<_>>(),
                held.by_components
                    .iter()
                    .map(|f| format!("{:.4}", f.held_out_log_likelihood.unwrap_or(f64::NAN) / n))
                    .collect::<Vec<_>>(),
            );
        }
    }
}

#[cfg(test)]
mod timing {
    use super::*;
    use crate::sim::model::repetition_rng;

    #[test]
    #[ignore]
    fn a_million_scores() {
        let truth = LogitMixture::new(vec![
            LogitComponent::new(0.2, 2.0, 1.5),
            LogitComponent::new(0.3, 7.0, 2.0),
            LogitComponent::new(0.5, 12.0, 1.0),
        ])
        .unwrap();
        let mut rng = repetition_rng(36, 0);
        let scores: Vec<f64> = (0..1_000_000)
            .map(|_| truth.sample(&mut rng))
            .filter(|&c| c < 1.0)
            .collect();
        // 10^6 draws with replacement from ResNet-110 / CIFAR-10's unsaturated scores
        // (heavy float32 ties, the edge at z = 16.6).
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/resnet110_c10_test.csv");
        let real: Vec<f64> = csv::Reader::from_path(path)
            .unwrap()
            .records()
            .map(|r| r.unwrap()[0].parse::<f64>().unwrap())
            .filter(|&c| c > 0.0 && c < 1.0)
            .collect();
        let resampled: Vec<f64> = (0..1_000_000)
            .map(|_| real[rand::Rng::gen_range(&mut rng, 0..real.len())])
            .collect();
        let start = std::time::Instant::now();
        let fit = fit_logit_mixture(&resampled, &LogitMixtureOptions::default()).unwrap();
        println!(
            "resampled ResNet-110/CIFAR-10: {:?} K {} iterations {:?}",
            start.elapsed(),
            fit.components,
            fit.by_components
                .iter()
                .map(|f| f.iterations)
                .collect::<Vec<_>>()
        );
        for (binning, max_components) in [
            (Binning::Width(1.0 / 64.0), 1),
            (Binning::Width(1.0 / 256.0), 6),
            (Binning::Width(1.0 / 64.0), 6),
        ] {
            let options = LogitMixtureOptions {
                binning,
                max_components,
                ..Default::default()
            };
            let start = std::time::Instant::now();
            let fit = fit_logit_mixture(&scores, &options).unwrap();
            println!(
                "{binning:?}: {:?} K {} ll/n {:.7} iterations {:?} per K {:?}",
                start.elapsed(),
                fit.components,
                fit.mean_log_likelihood(),
                fit.by_components
                    .iter()
                    .map(|f| f.iterations)
                    .collect::<Vec<_>>(),
                fit.by_components
                    .iter()
                    .map(|f| format!("{:.7}", f.log_likelihood / fit.n as f64))
                    .collect::<Vec<_>>(),
            );
        }
    }
}
