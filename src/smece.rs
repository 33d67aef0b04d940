//! Smooth ECE (Błasiok & Nakkiran 2023, "Smooth ECE: Principled Reliability Diagrams via
//! Kernel Smoothing"), computed as relplot 1.0.3's `smECE` computes it by default, so
//! that the two agree to rounding (tests/smece.rs checks 1e-12 on the bundled data).
//!
//! **At a bandwidth σ** ([`smooth_ece_at`]): the residuals r_i = f_i − y_i and the unit
//! weights are smoothed over [0, 1] by a Gaussian kernel of standard deviation σ,
//! reflected at 0 and 1, giving R(t) ≈ Σ_i r_i K_σ(t − f_i) and D(t) ≈ Σ_i K_σ(t − f_i);
//! then
//!
//! ```text
//! smECE_σ = Σ_t |R(t)| / Σ_t (D(t) + 1e-4)      over M mesh points t = linspace(0, 1, M)
//! ```
//!
//! i.e. the mean of |R/D| weighted by D. relplot discretises, and so does this module,
//! step for step:
//!
//! - the kernel grid has E = ⌊max(2000, round(20/σ))/2⌋ + 1 points i/(E − 1), and each
//!   sample's r_i (and weight 1) is split linearly between the two grid points around f_i
//!   (index ⌊f_i(E − 1)⌋, at most E − 2);
//! - the grid values are convolved with the kernel sampled on the same grid,
//!   exp(−(t_j − ½)²/2σ²)/(√(2π)σ) for t_j = j/(E − 1), j = 0..E − 1 (so the kernel is cut
//!   at ±½ and, for even E, centred half a step off), after reflecting the grid about its
//!   first and last points (`ReflectedGaussianKernel.convolve`);
//! - R and D at the mesh points are linear interpolations of the convolved grid, and
//!   M = max(200, round(10/σ)); `round` is Python's, half to even;
//! - 1e-4 is relplot's floor on the density (`BaseKernelMixin.smooth`).
//!
//! **The bandwidth** ([`smooth_ece`]): σ* is the fixed point smECE_σ = σ, found as relplot
//! finds it: if 1 < smECE_1, σ* = 1; otherwise 10 bisection steps on [0, 1] keeping
//! `start` where σ ≥ smECE_σ (σ < 0.001 counts as below the curve), and σ* = that `start`.
//! So σ* is a multiple of 2⁻¹⁰, the smallest one 2⁻⁹, and the reported value is smECE at
//! σ*, which is σ* to within the bisection's resolution. The kernel grid then has at most
//! [`SEARCH_GRID_POINTS`] points.
//!
//! **Where tce departs from relplot's arithmetic** (not its steps), for speed; each change
//! moves results by rounding only, and tests/smece.rs checks 1e-12 against relplot's
//! values and against a literal transcription of its algorithm:
//!
//! - a sample's residual and weight go to the same grid points in the same order as in
//!   relplot (so the rounded grids are relplot's, bit for bit), but the convolution sums
//!   in its own order: four interleaved partial sums, and the reflected points apart;
//! - the kernel is cut at 12σ: relplot adds weights down to their underflow at 38.6σ, but
//!   beyond 12σ each is below e^−72 ≈ 5.4e−32 of the peak k̂ = 1/(√(2π)σ). A grid point
//!   meets each grid value at most three times (itself and two reflections), so each
//!   smoothed R(t), D(t) moves by less than 3 · 5.4e−32 · k̂ · n; and Σ_t D(t) ≥ 0.9 k̂ n
//!   (each sample weighs at least 0.9 k̂ at its nearest mesh point, which lies within
//!   0.3σ). So both sums move by less than 2e−31 · M relative to Σ_t D(t), and smECE_σ
//!   by less than 4e−31 · M absolutely (M ≤ 5120 in the search: 2e−27);
//! - the search coarsens grids instead of rounding them afresh (below): the coarse grid
//!   is the fine one's values shared out with weights j/q, equal to relplot's rounding in
//!   exact arithmetic, regrouped in floating point (and the weights j/5 are inexact).
//!   So `smooth_ece`'s value at σ* can differ from `smooth_ece_at(σ*)` in the last bits
//!   when σ* is 4 or 8 · 2⁻¹⁰.
//!
//! **Weights** ([`smooth_ece_weighted`], [`smooth_ece_at_weighted`]): frequency weights
//! w_i ≥ 0 (docs/estimators.md, "Weights"). Each sample spreads w_i·r_i and w_i (not
//! r_i and 1) onto the grid, so R(t) ≈ Σ_i w_i r_i K_σ(t − f_i) and D(t) ≈ Σ_i w_i
//! K_σ(t − f_i), and the bandwidth search runs unchanged on these grids. Every step is a
//! sum over samples, so integer weights give the repeated rows' smECE (to rounding: w·x
//! once against x added w times) and the same σ*; weights all 1 give the unweighted
//! result bit for bit (x · 1 = x, and the unweighted path is this one with w = 1); a row
//! of weight 0 adds ±0 to every sum, which changes no bit: exactly as if absent. The
//! density floor 1e-4 stays absolute, as for repeated rows, so the result depends on the
//! weights' scale as the unweighted one depends on n: give weights on the scale of
//! counts. The weights live in the `no_std` core: they are floating-point sums like the
//! rest, in the same scratch, with no allocation. A bad weight vector is
//! [`SmoothEceError::Weights`], checked after the scores and labels and before anything
//! is computed.
//!
//! Results are deterministic: the same samples in the same order give the same bits,
//! whatever the scratch held.
//!
//! **Memory**: the caller's scratch, no allocation, no sorting. [`smooth_ece_at`] needs
//! [`scratch_len`]`(σ)` = 4E doubles: the (residual, weight) grid, 2E, and the kernel
//! sampled forwards and backwards, 2E. [`smooth_ece`] needs [`SCRATCH_LEN`] = 29 314
//! doubles (229 KiB): the two kernels at E = 5121 and three grids it keeps through the
//! search (1001, 5121 and 3414 points), so that each grid it uses is rounded once.
//!
//! **Cost.** The bandwidths of the search are multiples of 2⁻¹⁰, and all those from
//! 11 · 2⁻¹⁰ up share the floor's grid of 1001 points; below that each has its own grid,
//! and those of 1025, 1281 and 2561 points are coarsened from the 5121-point one
//! (E − 1 divides 5120: the coarse points are fine points, so a coarse hat function is a
//! combination of fine ones). So a search passes over the samples once when σ* > 16 ·
//! 2⁻¹⁰ (a miscalibrated model), and at most four times otherwise (a calibrated model at
//! large n: 1001, 5121 and 3414 points for σ* = 3 · 2⁻¹⁰), in the order given (relplot
//! adds in input order too). Each σ then costs O(M · min(E, 24σE)) for the convolution
//! at the mesh. At n = 10^6 that is ~5.5 ms for a miscalibrated model and ~12 ms for a
//! calibrated one (docs/performance.md, "Smooth ECE").

use core::fmt;
use core::num::NonZeroUsize;

use crate::error::{BadWeights, PushError};
use crate::floor::floor_nonnegative;
use crate::sample;

/// relplot's `config.smECE_mesh_pts`: the least number of mesh points M.
pub const MESH_POINTS: usize = 200;
/// relplot's `eval_points` floor before halving: the kernel grid has at least 1001 points.
pub const KERNEL_GRID_FLOOR: usize = 2000;
/// relplot's `eps` of `smECE`: bandwidths below it count as below the fixed point.
pub const MIN_BANDWIDTH: f64 = 0.001;
/// relplot's `refine` of `search_param`: bisection steps of the bandwidth search.
pub const REFINE_STEPS: u32 = 10;
/// relplot's `eps` of `BaseKernelMixin.smooth`, added to the smoothed density.
pub const DENSITY_FLOOR: f64 = 1e-4;
/// Kernel grid points at the smallest bandwidth the search can pick, 2⁻⁹:
/// round(20 · 2⁹) / 2 + 1.
pub const SEARCH_GRID_POINTS: usize = 5121;
/// Scratch doubles [`smooth_ece`] needs: the kernel forwards and backwards at
/// [`SEARCH_GRID_POINTS`], and the search's three (residual, weight) grids (module docs).
pub const SCRATCH_LEN: usize = 2 * SEARCH_GRID_POINTS + SEARCH_GRIDS_LEN;

/// The kernel's reach: terms more than this many σ from the centre are skipped. relplot
/// adds them (its weights underflow to 0 only beyond 38.6σ), but they are below e^−72 of
/// the peak and move smECE_σ by less than 4e−31 · M (module docs), while the cut makes
/// the convolution three times cheaper.
const KERNEL_REACH_SIGMAS: f64 = 12.0;

/// A smooth ECE and the bandwidth it was computed at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SmoothEce {
    /// smECE at σ*, a fraction.
    pub value: f64,
    /// σ*, the bandwidth found by the search (for [`smooth_ece_at`], the σ given).
    pub bandwidth: f64,
}

/// Why a smooth ECE could not be computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SmoothEceError {
    /// There are no samples.
    Empty,
    /// A score or label is invalid, or the slices differ in length (the core's rule).
    Input(PushError),
    /// The bandwidth is NaN, infinite or not above 0.
    InvalidBandwidth(f64),
    /// The scratch holds fewer doubles than this bandwidth's grids need.
    ScratchTooSmall {
        /// Doubles needed.
        needed: usize,
        /// Doubles given.
        given: usize,
    },
    /// The weights of a weighted smooth ECE are refused (their count, a negative, NaN or
    /// infinite weight, or a zero total). Checked after the scores and labels.
    Weights(BadWeights),
}

impl fmt::Display for SmoothEceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("smooth ECE needs at least one sample"),
            Self::Input(e) => write!(f, "bad sample: {e:?}"),
            Self::InvalidBandwidth(s) => write!(f, "bandwidth {s} is not a finite value above 0"),
            Self::ScratchTooSmall { needed, given } => write!(
                f,
                "smooth ECE needs {needed} scratch doubles, {given} were given"
            ),
            Self::Weights(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SmoothEceError {}

/// Python's `round` of a non-negative finite value: to nearest, ties to even (`rint` in
/// the default rounding mode).
fn round_half_even(x: f64) -> f64 {
    libm::rint(x)
}

/// The kernel grid size E for bandwidth σ, or `None` if it does not fit in a `usize`.
fn kernel_grid_points(sigma: f64) -> Option<usize> {
    let points = round_half_even(20.0 / sigma).max(KERNEL_GRID_FLOOR as f64);
    // 2^52: far beyond any scratch, and every integer below it is exact in f64.
    if points > 4_503_599_627_370_496.0 {
        return None;
    }
    Some(points as usize / 2 + 1)
}

/// The number of mesh points M for bandwidth σ (at most E, see [`kernel_grid_points`]).
fn mesh_points(sigma: f64) -> usize {
    round_half_even(10.0 / sigma).max(MESH_POINTS as f64) as usize
}

/// Scratch doubles [`smooth_ece_at`] needs for bandwidth σ (4E), or `None` for a σ that is
/// not finite and above 0 or whose grid does not fit in memory.
pub fn scratch_len(sigma: f64) -> Option<usize> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return None;
    }
    kernel_grid_points(sigma)?.checked_mul(4)
}

/// numpy's `linspace(0, 1, points)[i]`: i · (1/(points − 1)), the last point exactly 1.
fn linspace_point(i: usize, points: usize) -> f64 {
    if i.checked_add(1) == Some(points) {
        1.0
    } else {
        i as f64 * (1.0 / (points - 1) as f64)
    }
}

/// `smooth_round_to_grid`: each (score, label, weight) split between the two points of
/// the grid of `last + 1` points around it, its weight w and residual·w shared linearly.
/// `grid` holds the points' (residual, weight) sums as adjacent pairs, so that a sample's
/// four additions touch one 32-byte run. Unweighted callers pass w = 1.0, which the
/// compiler folds away, and which gives the same bits (x · 1 = x).
// Not inlined: one copy of the loop serves the search's three grids. Inlined into
// `SearchGrids::grid`, one copy compiled the clamp below to a branch, which the ties at 1
// mispredict (twice the time with 30 % of them); here it is a conditional move.
#[inline(never)]
fn round_to_grid(samples: impl Iterator<Item = Weighted>, last: f64, grid: &mut [f64]) {
    grid.fill(0.0);
    let top_cell = (grid.len() / 2).saturating_sub(2);
    for (score, label, weight) in samples {
        // A validated score times the grid's last index lies in [0, E − 1]: its floor
        // is the truncation.
        let position = score * last;
        let below = (floor_nonnegative(position) as usize).min(top_cell);
        let fraction = position - below as f64;
        let residual = score - f64::from(label);
        let (lower, upper) = ((1.0 - fraction) * weight, fraction * weight);
        // below ≤ E − 2 (E ≥ KERNEL_GRID_FLOOR), so both pairs exist.
        if let Some([r0, w0, r1, w1]) = grid.get_mut(2 * below..2 * below + 4) {
            *r0 += lower * residual;
            *w0 += lower;
            *r1 += upper * residual;
            *w1 += upper;
        }
    }
}

/// Σ_t kernel[t] · (r, w)[t] over a kernel run and the (residual, weight) pairs it
/// meets, in four interleaved partial sums (the adds of one sum would otherwise wait on
/// each other; four keep the adder busy).
fn dot_pairs(kernel: &[f64], pairs: &[f64]) -> (f64, f64) {
    let mut lanes = [[0.0f64; 2]; 4];
    let mut kernel_chunks = kernel.chunks_exact(4);
    let mut pair_chunks = pairs.chunks_exact(8);
    for (k, p) in kernel_chunks.by_ref().zip(pair_chunks.by_ref()) {
        if let ([k0, k1, k2, k3], [r0, w0, r1, w1, r2, w2, r3, w3]) = (k, p) {
            lanes[0][0] += k0 * r0;
            lanes[0][1] += k0 * w0;
            lanes[1][0] += k1 * r1;
            lanes[1][1] += k1 * w1;
            lanes[2][0] += k2 * r2;
            lanes[2][1] += k2 * w2;
            lanes[3][0] += k3 * r3;
            lanes[3][1] += k3 * w3;
        }
    }
    for (k, p) in kernel_chunks
        .remainder()
        .iter()
        .zip(pair_chunks.remainder().chunks_exact(2))
    {
        if let [r, w] = p {
            lanes[0][0] += k * r;
            lanes[0][1] += k * w;
        }
    }
    (
        (lanes[0][0] + lanes[1][0]) + (lanes[2][0] + lanes[3][0]),
        (lanes[0][1] + lanes[1][1]) + (lanes[2][1] + lanes[3][1]),
    )
}

/// The convolved (residual, weight) grid at point m: Σ_j kernel[j] · V(m + ⌊E/2⌋ − j)
/// over the kernel indices j in [first, end) whose weight can be non-zero, V the grid
/// reflected about its first and last points (`ReflectedGaussianKernel.convolve`,
/// 'valid' mode and its slice). `reversed[t]` is kernel[E − 1 − t]: the points inside
/// the grid meet the kernel backwards, the reflected ones (within the kernel's reach of
/// either end) forwards, so each part is a forward run of both arrays.
fn convolved(
    m: usize,
    kernel: &[f64],
    reversed: &[f64],
    grid: &[f64],
    first: usize,
    end: usize,
) -> (f64, f64) {
    // The index arithmetic below wraps rather than checks: every value is below 3E, E
    // the length of a slice of doubles (far below usize::MAX), and the bounds derived in
    // the comments keep the subtractions from crossing 0; a wrapped value could only make
    // a `get` fail, adding nothing.
    let points = kernel.len();
    let top = points.wrapping_sub(1);
    // p = m + ⌊E/2⌋ − j runs over (centre − end, centre − first], inside
    // [−(E − 1), 2(E − 1)]: one reflection suffices.
    let centre = m.wrapping_add(points / 2);
    // Σ kernel[j] · V(index) over a run of `len` steps on which both grow by 1.
    let run = |kernel: &[f64], j: usize, index: usize, len: usize| -> (f64, f64) {
        match (
            kernel.get(j..j.wrapping_add(len)),
            grid.get(index.wrapping_mul(2)..index.wrapping_add(len).wrapping_mul(2)),
        ) {
            (Some(k), Some(v)) => dot_pairs(k, v),
            _ => (0.0, 0.0),
        }
    };
    let add = |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, a.1 + b.1);
    // Inside the grid: p in [low, high], j = centre − p, reversed index top − centre + p.
    let low = centre.wrapping_add(1).saturating_sub(end);
    let high = centre.saturating_sub(first).min(top);
    let mut sum = if low <= high {
        // top + low ≥ top + centre + 1 − end ≥ centre (end ≤ E), and low ≤ high.
        let offset = top.wrapping_add(low).wrapping_sub(centre);
        run(
            reversed,
            offset,
            low,
            high.wrapping_sub(low).wrapping_add(1),
        )
    } else {
        (0.0, 0.0)
    };
    // Below the first point: p = −index, index in [1, end − 1 − centre], j = centre + index.
    let below = end.saturating_sub(centre.wrapping_add(1));
    if below > 0 {
        sum = add(sum, run(kernel, centre.wrapping_add(1), 1, below));
    }
    // Beyond the last point: p in [top + 1, centre − first], index = 2·top − p rising
    // from 2·top − centre + first to top − 1, j = centre − 2·top + index.
    let beyond = centre.saturating_sub(first).saturating_sub(top);
    if beyond > 0 {
        // beyond ≤ centre − top ≤ ⌊E/2⌋ ≤ top, and centre + index − 2·top = j ≥ first.
        let index = top.wrapping_sub(beyond);
        let j = centre.wrapping_add(index).wrapping_sub(top.wrapping_mul(2));
        sum = add(sum, run(kernel, j, index, beyond));
    }
    sum
}

/// The kernel on a grid of `points` points and its reach: `GaussianKernel.kernel_ev`,
/// centred at ½, unnormalised on the grid (the normalisation cancels in the ratio,
/// except against the density floor), into `kernel` and, last point first, `reversed`.
/// Returns the kernel indices [first, end) whose weight can be non-zero.
fn sample_kernel(sigma: f64, kernel: &mut [f64], reversed: &mut [f64]) -> (usize, usize) {
    let points = kernel.len();
    let top = points.saturating_sub(1);
    let reach = KERNEL_REACH_SIGMAS * sigma * top as f64;
    let half = points / 2;
    let (first, end) = if reach < half as f64 {
        let reach = (reach as usize).saturating_add(1);
        (
            half.saturating_sub(reach),
            half.saturating_add(reach).saturating_add(1).min(points),
        )
    } else {
        (0, points)
    };
    // Only the weights in [first, end) are ever read (`convolved`).
    let variance = sigma * sigma;
    let scale = libm::sqrt(2.0 * core::f64::consts::PI) * sigma;
    for (j, k) in (first..end).zip(kernel.iter_mut().skip(first)) {
        let d = linspace_point(j, points) - 0.5;
        *k = libm::exp(-d * d / (2.0 * variance)) / scale;
    }
    for (r, k) in reversed
        .iter_mut()
        .skip(points.saturating_sub(end))
        .zip(kernel.iter().take(end).skip(first).rev())
    {
        *r = *k;
    }
    (first, end)
}

/// smECE at bandwidth σ from the rounded (residual, weight) `grid` of σ's grid size,
/// using `kernels` (at least twice that size) for the sampled kernel.
fn from_grid(sigma: f64, grid: &[f64], kernels: &mut [f64]) -> f64 {
    let points = grid.len() / 2;
    if points < 2 {
        return f64::NAN;
    }
    let (kernel, rest) = kernels.split_at_mut(points.min(kernels.len()));
    let reversed = rest.get_mut(..points).unwrap_or_default();
    let (first, end) = sample_kernel(sigma, kernel, reversed);
    let (kernel, reversed): (&[f64], &[f64]) = (kernel, reversed);
    let last = (points - 1) as f64;
    // `interpolate` at the mesh, and the weighted mean of |R/D|.
    let mesh = mesh_points(sigma);
    let (mut numerator, mut denominator) = (0.0, 0.0);
    let mut cached: Option<(usize, (f64, f64))> = None;
    for i in 0..mesh {
        let t = linspace_point(i, mesh);
        let below = (floor_nonnegative(t * last) as usize).min(points - 2);
        let bucket = 1.0 / last;
        let fraction = (t - below as f64 * bucket) / bucket;
        let lower = match cached {
            Some((index, value)) if index == below => value,
            _ => convolved(below, kernel, reversed, grid, first, end),
        };
        // below ≤ E − 2.
        let next = below.wrapping_add(1);
        let upper = convolved(next, kernel, reversed, grid, first, end);
        cached = Some((next, upper));
        let r = lower.0 * (1.0 - fraction) + upper.0 * fraction;
        let w = lower.1 * (1.0 - fraction) + upper.1 * fraction;
        numerator += r.abs();
        denominator += w + DENSITY_FLOOR;
    }
    numerator / denominator
}

/// Kernel grid points of the bandwidth floor's grid (every σ ≥ 0.01).
const FLOOR_GRID_POINTS: usize = KERNEL_GRID_FLOOR / 2 + 1;

/// The coarse (residual, weight) grid of `fine.len() / 2 − 1` intervals over `step`,
/// from the fine one: each fine point's sums shared between the two coarse points
/// around it in proportion to its distance. The coarse points are fine points (every
/// `step`-th), so a coarse hat is a combination of fine hats with these weights, and a
/// sample's linear split onto the coarse grid is the same split taken through the fine
/// grid: equal in exact arithmetic, differing in rounding (the weights j/5 are inexact,
/// the sums regrouped).
fn coarsen(fine: &[f64], step: NonZeroUsize, coarse: &mut [f64]) {
    coarse.fill(0.0);
    let share = 1.0 / step.get() as f64;
    // (A bounded range, not `enumerate`: no overflow path.)
    for (j, pair) in (0..fine.len()).zip(fine.chunks_exact(2)) {
        // below ≤ j < E: the doubled indices wrap nowhere near usize::MAX.
        let (below, offset) = (j / step, j % step);
        let at = below.wrapping_mul(2);
        if let [r, w] = pair {
            if offset == 0 {
                if let Some([cr, cw]) = coarse.get_mut(at..at.wrapping_add(2)) {
                    *cr += r;
                    *cw += w;
                }
            } else {
                // offset < step: both shares lie in (0, 1).
                let upper = offset as f64 * share;
                let lower = (step.get() - offset) as f64 * share;
                if let Some([r0, w0, r1, w1]) = coarse.get_mut(at..at.wrapping_add(4)) {
                    *r0 += lower * r;
                    *w0 += lower * w;
                    *r1 += upper * r;
                    *w1 += upper * w;
                }
            }
        }
    }
}

/// Kernel grid points at σ = 3 · 2⁻¹⁰: round(20480/3)/2 + 1, the largest grid of the
/// search below the finest one that is rounded from the samples rather than coarsened.
const WORK_GRID_POINTS: usize = 3414;

/// Doubles of the search's three (residual, weight) grids.
const SEARCH_GRIDS_LEN: usize = 2 * (FLOOR_GRID_POINTS + SEARCH_GRID_POINTS + WORK_GRID_POINTS);

/// The rounded grids of a bandwidth search: the floor's grid (1001 points: every
/// σ ≥ 0.01), the finest grid ([`SEARCH_GRID_POINTS`], σ = 2⁻⁹), and a working grid for
/// the sizes between. The grids with E − 1 dividing 5120 (1025, 1281 and 2561 points:
/// σ = 10, 8 and 4 · 2⁻¹⁰) are coarsened from the finest grid, which is rounded the
/// first time any of them is needed; the others (σ = 3, 5, 6, 7 and 9 · 2⁻¹⁰) are
/// rounded from the samples into the working grid. So a search makes at most one pass
/// over the samples per grid it uses, and none for the coarsened ones.
struct SearchGrids<'a> {
    floor: &'a mut [f64],
    finest: &'a mut [f64],
    work: &'a mut [f64],
    floor_ready: bool,
    finest_ready: bool,
    work_holds: Option<usize>,
}

impl<'a> SearchGrids<'a> {
    fn new(scratch: &'a mut [f64]) -> Option<Self> {
        let (floor, rest) = scratch.split_at_mut_checked(2 * FLOOR_GRID_POINTS)?;
        let (finest, rest) = rest.split_at_mut_checked(2 * SEARCH_GRID_POINTS)?;
        let work = rest.get_mut(..2 * WORK_GRID_POINTS)?;
        Some(Self {
            floor,
            finest,
            work,
            floor_ready: false,
            finest_ready: false,
            work_holds: None,
        })
    }

    /// The rounded grid of `points` points, or `None` for a size the search never uses
    /// (above [`SEARCH_GRID_POINTS`], or above [`WORK_GRID_POINTS`] and not coarsened).
    fn grid<I>(&mut self, points: usize, samples: impl Fn() -> I) -> Option<&[f64]>
    where
        I: Iterator<Item = Weighted>,
    {
        if points == FLOOR_GRID_POINTS {
            if !self.floor_ready {
                round_to_grid(samples(), (points - 1) as f64, self.floor);
                self.floor_ready = true;
            }
            return Some(self.floor);
        }
        const INTERVALS: usize = SEARCH_GRID_POINTS - 1;
        // The coarsening step, when the grid's E − 1 intervals divide the finest grid's.
        let cells = NonZeroUsize::new(points.checked_sub(1)?)?;
        let step = if INTERVALS % cells == 0 {
            NonZeroUsize::new(INTERVALS / cells)
        } else if points <= WORK_GRID_POINTS {
            None
        } else {
            return None;
        };
        if step.is_some() && !self.finest_ready {
            round_to_grid(samples(), INTERVALS as f64, self.finest);
            self.finest_ready = true;
        }
        if step == NonZeroUsize::new(1) {
            return Some(self.finest);
        }
        // points ≤ SEARCH_GRID_POINTS here.
        let work = self.work.get_mut(..points.wrapping_mul(2))?;
        if self.work_holds != Some(points) {
            match step {
                Some(step) => coarsen(self.finest, step, work),
                None => round_to_grid(samples(), (points - 1) as f64, work),
            }
            self.work_holds = Some(points);
        }
        Some(work)
    }
}

/// Validates a batch: lengths, scores, labels, n ≥ 1.
fn check(scores: &[f64], labels: &[u8]) -> Result<(), SmoothEceError> {
    sample::check_batch(scores, labels).map_err(SmoothEceError::Input)?;
    if scores.is_empty() {
        return Err(SmoothEceError::Empty);
    }
    Ok(())
}

/// The bandwidth search over validated samples, replayable by `samples()`.
fn search<I, F>(samples: F, scratch: &mut [f64]) -> Result<SmoothEce, SmoothEceError>
where
    F: Fn() -> I,
    I: Iterator<Item = Weighted>,
{
    let too_small = SmoothEceError::ScratchTooSmall {
        needed: SCRATCH_LEN,
        given: scratch.len(),
    };
    let (kernels, rest) = scratch
        .split_at_mut_checked(2 * SEARCH_GRID_POINTS)
        .ok_or(too_small)?;
    let mut grids = SearchGrids::new(rest).ok_or(too_small)?;
    // `check_smooth_ece`: whether σ lies below the curve σ ↦ smECE_σ, with the value
    // computed (`None` when σ < MIN_BANDWIDTH short-circuits it).
    let mut below = |sigma: f64| -> (bool, Option<f64>) {
        if sigma < MIN_BANDWIDTH {
            return (true, None);
        }
        // Every σ of the search is a multiple of 2⁻¹⁰ whose grid SearchGrids holds.
        let value = kernel_grid_points(sigma)
            .and_then(|points| grids.grid(points, &samples))
            .map_or(f64::NAN, |grid| from_grid(sigma, grid, kernels));
        (sigma < value, Some(value))
    };
    // `search_param(start = 1, refine = 10)`.
    let (one_below, at_one) = below(1.0);
    let (bandwidth, value) = if one_below {
        (1.0, at_one)
    } else {
        let (mut start, mut end, mut at_start) = (1.0, 0.0, at_one);
        for _ in 0..REFINE_STEPS {
            let mid = 0.5 * (start + end);
            match below(mid) {
                (true, _) => end = mid,
                (false, value) => (start, at_start) = (mid, value),
            }
        }
        (start, at_start)
    };
    // `start` was only ever set where the value was computed (start ≥ 2⁻⁹ > 0.001), and
    // every grid of the search is held: a NaN would be a defect, named rather than
    // returned.
    match value {
        Some(value) if value.is_finite() => Ok(SmoothEce { value, bandwidth }),
        _ => Err(SmoothEceError::InvalidBandwidth(bandwidth)),
    }
}

/// Smooth ECE of (`scores[i]`, `labels[i]`) with relplot's bandwidth σ*, using `scratch`
/// (at least [`SCRATCH_LEN`] doubles).
pub fn smooth_ece(
    scores: &[f64],
    labels: &[u8],
    scratch: &mut [f64],
) -> Result<SmoothEce, SmoothEceError> {
    check(scores, labels)?;
    search(|| unit_weights(scores, labels), scratch)
}

/// Smooth ECE of samples the core has already validated (a sorted buffer's, a window's),
/// replayed by `samples()`; `Empty` if there are none.
pub fn smooth_ece_of<I, F>(samples: F, scratch: &mut [f64]) -> Result<SmoothEce, SmoothEceError>
where
    F: Fn() -> I,
    I: Iterator<Item = (f64, u8)>,
{
    if samples().next().is_none() {
        return Err(SmoothEceError::Empty);
    }
    search(
        || samples().map(|(score, label)| (score, label, 1.0)),
        scratch,
    )
}

/// smECE_σ of (`scores[i]`, `labels[i]`) at a bandwidth σ of the caller's choosing
/// (relplot's `smECE_sigma`), using `scratch` (at least [`scratch_len`]`(σ)` doubles).
pub fn smooth_ece_at(
    scores: &[f64],
    labels: &[u8],
    sigma: f64,
    scratch: &mut [f64],
) -> Result<f64, SmoothEceError> {
    let needed = scratch_len(sigma).ok_or(SmoothEceError::InvalidBandwidth(sigma))?;
    check(scores, labels)?;
    at(|| unit_weights(scores, labels), sigma, needed, scratch)
}

/// smECE_σ of samples validated by the caller, `needed` = [`scratch_len`]`(σ)`.
fn at<I: Iterator<Item = Weighted>>(
    samples: impl Fn() -> I,
    sigma: f64,
    needed: usize,
    scratch: &mut [f64],
) -> Result<f64, SmoothEceError> {
    if scratch.len() < needed {
        return Err(SmoothEceError::ScratchTooSmall {
            needed,
            given: scratch.len(),
        });
    }
    let points = needed / 4;
    let too_small = SmoothEceError::ScratchTooSmall {
        needed,
        given: scratch.len(),
    };
    let (grid, kernels) = scratch.split_at_mut_checked(2 * points).ok_or(too_small)?;
    round_to_grid(samples(), (points - 1) as f64, grid);
    Ok(from_grid(sigma, grid, kernels))
}

/// A sample with its weight: (score, label, w).
type Weighted = (f64, u8, f64);

/// The samples of validated slices, each of weight 1.
fn unit_weights<'a>(scores: &'a [f64], labels: &'a [u8]) -> impl Iterator<Item = Weighted> + 'a {
    scores
        .iter()
        .zip(labels)
        .map(|(&score, &label)| (score, label, 1.0))
}

/// The samples of validated slices with their weights. A row of weight 0 adds ±0 to
/// grid sums that start at +0 and so are never −0: it changes no bit, exactly as if
/// absent, and needs no branch.
fn with_weights<'a>(
    scores: &'a [f64],
    labels: &'a [u8],
    weights: &'a [f64],
) -> impl Iterator<Item = Weighted> + 'a {
    scores
        .iter()
        .zip(labels)
        .zip(weights)
        .map(|((&score, &label), &w)| (score, label, w))
}

/// Validates a weighted batch: scores and labels, n ≥ 1, then the weights
/// ([`sample::check_weights`]).
fn check_weighted(scores: &[f64], labels: &[u8], weights: &[f64]) -> Result<(), SmoothEceError> {
    check(scores, labels)?;
    sample::check_weights(weights, scores.len()).map_err(SmoothEceError::Weights)?;
    Ok(())
}

/// Weighted smooth ECE of (`scores[i]`, `labels[i]`) with frequency weights `weights[i]`
/// (module docs, "Weights"), relplot's bandwidth search run on the weighted sample;
/// `scratch` as [`smooth_ece`]. Weights all 1 give [`smooth_ece`]'s result bit for bit.
pub fn smooth_ece_weighted(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    scratch: &mut [f64],
) -> Result<SmoothEce, SmoothEceError> {
    check_weighted(scores, labels, weights)?;
    search(|| with_weights(scores, labels, weights), scratch)
}

/// Weighted smECE_σ at a bandwidth σ of the caller's choosing, as [`smooth_ece_at`] with
/// frequency weights `weights[i]`.
pub fn smooth_ece_at_weighted(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
    sigma: f64,
    scratch: &mut [f64],
) -> Result<f64, SmoothEceError> {
    let needed = scratch_len(sigma).ok_or(SmoothEceError::InvalidBandwidth(sigma))?;
    check_weighted(scores, labels, weights)?;
    at(
        || with_weights(scores, labels, weights),
        sigma,
        needed,
        scratch,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_grid_is_that_of_the_smallest_pickable_bandwidth() {
        // σ* ≥ 2⁻⁹: 2⁻¹⁰ < MIN_BANDWIDTH is never computed, so never kept as `start`.
        const { assert!(1.0 / 1024.0 < MIN_BANDWIDTH && 2.0 / 1024.0 > MIN_BANDWIDTH) };
        assert_eq!(kernel_grid_points(2.0 / 1024.0), Some(SEARCH_GRID_POINTS));
        assert_eq!(scratch_len(2.0 / 1024.0), Some(4 * SEARCH_GRID_POINTS));
        assert_eq!(SCRATCH_LEN, 29_314);
        assert_eq!(kernel_grid_points(0.05), Some(1001));
        assert_eq!(mesh_points(0.05), 200);
        assert_eq!(mesh_points(0.01), 1000);
        // Python: round(2.5) = 2, round(3.5) = 4.
        assert_eq!(round_half_even(2.5), 2.0);
        assert_eq!(round_half_even(3.5), 4.0);
        assert_eq!(scratch_len(0.0), None);
        assert_eq!(scratch_len(f64::NAN), None);
        assert_eq!(scratch_len(1e-300), None);
    }

    /// The grid sizes a search can use, k · 2⁻¹⁰ for k = 2..1023 (k = 1 is below
    /// MIN_BANDWIDTH), and how `SearchGrids` holds each.
    #[test]
    fn every_grid_of_the_search_is_held() {
        let mut coarsened = Vec::new();
        for k in 2..1024 {
            let points = kernel_grid_points(k as f64 / 1024.0).unwrap();
            if points == FLOOR_GRID_POINTS || points == SEARCH_GRID_POINTS {
                continue;
            }
            assert!(points < SEARCH_GRID_POINTS, "k = {k}");
            if (SEARCH_GRID_POINTS - 1) % (points - 1) == 0 {
                coarsened.push(points);
            } else {
                assert!(points <= WORK_GRID_POINTS, "k = {k}: {points} points");
            }
        }
        assert_eq!(coarsened, [2561, 1281, 1025]);
        assert_eq!(kernel_grid_points(3.0 / 1024.0), Some(WORK_GRID_POINTS));
        assert_eq!(kernel_grid_points(11.0 / 1024.0), Some(FLOOR_GRID_POINTS));
        // And a search over samples at every kind of grid keeps them apart: the values
        // of the search's σ equal smooth_ece_at's to rounding.
        let scores: Vec<f64> = (0..3000)
            .map(|i| ((i * 7919) % 3001) as f64 / 3000.0)
            .collect();
        let labels: Vec<u8> = scores.iter().map(|&s| u8::from(s > 0.37)).collect();
        let mut scratch = [0.0; SCRATCH_LEN];
        let mut grids = SearchGrids::new(&mut scratch[2 * SEARCH_GRID_POINTS..]).unwrap();
        let mut kernels = [0.0; 2 * SEARCH_GRID_POINTS];
        let mut direct = [0.0; 4 * SEARCH_GRID_POINTS];
        let samples = || unit_weights(&scores, &labels);
        for k in [16, 8, 4, 2, 3, 10, 9, 5, 1000, 4, 8, 3] {
            let sigma = k as f64 / 1024.0;
            let points = kernel_grid_points(sigma).unwrap();
            let grid = grids.grid(points, samples).unwrap();
            assert_eq!(grid.len(), 2 * points);
            let ours = from_grid(sigma, grid, &mut kernels);
            let at = smooth_ece_at(&scores, &labels, sigma, &mut direct).unwrap();
            assert!((ours - at).abs() <= 1e-13 * at, "k = {k}: {ours} vs {at}");
        }
        assert!(grids.grid(SEARCH_GRID_POINTS + 1, samples).is_none());
        assert!(grids.grid(WORK_GRID_POINTS + 1, samples).is_none());
    }

    /// Coarsening the finest grid gives the direct rounding onto the coarse grid, to
    /// rounding, point by point (also at the ends, and for scores on grid points).
    #[test]
    fn coarsened_grids_equal_rounded_ones() {
        let mut scores: Vec<f64> = (0..4000)
            .map(|i| ((i * 6007) % 4001) as f64 / 4000.0)
            .collect();
        scores.extend([0.0, 1.0, 1.0, 5e-324, 0.5, 0.25, 1.0 - f64::EPSILON]);
        let labels: Vec<u8> = scores
            .iter()
            .map(|&s| u8::from(s * 13.0 % 1.0 < 0.6))
            .collect();
        let samples = || unit_weights(&scores, &labels);
        let mut fine = vec![0.0; 2 * SEARCH_GRID_POINTS];
        round_to_grid(samples(), (SEARCH_GRID_POINTS - 1) as f64, &mut fine);
        for points in [2561, 1281, 1025] {
            let step = NonZeroUsize::new((SEARCH_GRID_POINTS - 1) / (points - 1)).unwrap();
            let (mut coarse, mut direct) = (vec![0.0; 2 * points], vec![0.0; 2 * points]);
            coarsen(&fine, step, &mut coarse);
            round_to_grid(samples(), (points - 1) as f64, &mut direct);
            let scale = scores.len() as f64;
            for (j, (c, d)) in coarse.iter().zip(&direct).enumerate() {
                assert!(
                    (c - d).abs() <= 1e-15 * scale,
                    "{points} points, [{j}]: {c} vs {d}"
                );
            }
            let (total, direct_total): (f64, f64) = (
                coarse.iter().skip(1).step_by(2).sum(),
                direct.iter().skip(1).step_by(2).sum(),
            );
            assert!((total - scale).abs() < 1e-9 && (direct_total - scale).abs() < 1e-9);
        }
    }

    #[test]
    fn bad_input_is_named() {
        let mut scratch = [0.0; SCRATCH_LEN];
        assert_eq!(
            smooth_ece(&[], &[], &mut scratch),
            Err(SmoothEceError::Empty)
        );
        assert!(matches!(
            smooth_ece(&[1.5], &[1], &mut scratch),
            Err(SmoothEceError::Input(_))
        ));
        assert_eq!(
            smooth_ece(&[0.5], &[1], &mut scratch[..10]),
            Err(SmoothEceError::ScratchTooSmall {
                needed: SCRATCH_LEN,
                given: 10
            })
        );
        assert_eq!(
            smooth_ece_at(&[0.5], &[1], -1.0, &mut scratch),
            Err(SmoothEceError::InvalidBandwidth(-1.0))
        );
        assert_eq!(
            smooth_ece_at(&[0.5], &[1], 1e-4, &mut scratch),
            Err(SmoothEceError::ScratchTooSmall {
                needed: 4 * 100_001,
                given: SCRATCH_LEN
            })
        );
    }
}
