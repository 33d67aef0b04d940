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
//! **Memory**: the caller's scratch, 3E doubles (two grids and the sampled kernel);
//! [`SCRATCH_LEN`] covers the bandwidth search, [`scratch_len`] a fixed σ. No allocation,
//! no sorting: each σ makes one pass over the samples, in the order given (relplot adds
//! in input order too). Cost per σ: O(n + M · min(E, 77σE)).

use core::fmt;

use crate::error::PushError;
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
/// Scratch doubles [`smooth_ece`] needs: three grids of [`SEARCH_GRID_POINTS`].
pub const SCRATCH_LEN: usize = 2 * SEARCH_GRID_POINTS + SEARCH_GRIDS_LEN;

/// The kernel's reach: terms more than this many σ from the centre are skipped. relplot
/// adds them (its weights underflow to 0 only beyond 38.6σ), but they are below
/// e^−72 ≈ 5e−32 of the peak: they move each convolved sum by less than 5e−32 of the
/// grid's total |weight| at the peak's scale, and smECE by less than 1e−27 absolutely
/// (module docs), while cutting the convolution's cost threefold.
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

/// Scratch doubles [`smooth_ece_at`] needs for bandwidth σ (3E), or `None` for a σ that is
/// not finite and above 0 or whose grid does not fit in memory.
pub fn scratch_len(sigma: f64) -> Option<usize> {
    if !(sigma.is_finite() && sigma > 0.0) {
        return None;
    }
    kernel_grid_points(sigma)?.checked_mul(4)
}

/// numpy's `linspace(0, 1, points)[i]`: i · (1/(points − 1)), the last point exactly 1.
fn linspace_point(i: usize, points: usize) -> f64 {
    if i + 1 == points {
        1.0
    } else {
        i as f64 * (1.0 / (points - 1) as f64)
    }
}

/// `smooth_round_to_grid`: each sample split between the two points of the grid of
/// `last + 1` points around it. `grid` holds the points' (residual, weight) sums as
/// adjacent pairs, so that a sample's four additions touch one 32-byte run.
fn round_to_grid(samples: impl Iterator<Item = (f64, u8)>, last: f64, grid: &mut [f64]) {
    grid.fill(0.0);
    let top_cell = (grid.len() / 2).saturating_sub(2);
    for (score, label) in samples {
        // A validated score times the grid's last index lies in [0, E − 1]: its floor
        // is the truncation.
        let position = score * last;
        let below = (floor_nonnegative(position) as usize).min(top_cell);
        let fraction = position - below as f64;
        let residual = score - f64::from(label);
        // below ≤ E − 2 (E ≥ KERNEL_GRID_FLOOR), so both pairs exist.
        if let Some([r0, w0, r1, w1]) = grid.get_mut(2 * below..2 * below + 4) {
            *r0 += (1.0 - fraction) * residual;
            *w0 += 1.0 - fraction;
            *r1 += fraction * residual;
            *w1 += fraction;
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
    let points = kernel.len();
    let top = points - 1;
    // p = m + ⌊E/2⌋ − j runs over (centre − end, centre − first], inside
    // [−(E − 1), 2(E − 1)]: one reflection suffices.
    let centre = m + points / 2;
    // Σ kernel[j] · V(index) over a run of `len` steps on which both grow by 1.
    let run = |kernel: &[f64], j: usize, index: usize, len: usize| -> (f64, f64) {
        match (
            kernel.get(j..j + len),
            grid.get(2 * index..2 * (index + len)),
        ) {
            (Some(k), Some(v)) => dot_pairs(k, v),
            _ => (0.0, 0.0),
        }
    };
    let add = |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, a.1 + b.1);
    // Inside the grid: p in [low, high], j = centre − p, reversed index top − centre + p.
    let low = (centre + 1).saturating_sub(end);
    let high = centre.saturating_sub(first).min(top);
    let mut sum = if low <= high {
        run(reversed, top + low - centre, low, high - low + 1)
    } else {
        (0.0, 0.0)
    };
    // Below the first point: p = −index, index in [1, end − 1 − centre], j = centre + index.
    let below = end.saturating_sub(centre + 1);
    if below > 0 {
        sum = add(sum, run(kernel, centre + 1, 1, below));
    }
    // Beyond the last point: p in [top + 1, centre − first], index = 2·top − p rising
    // from 2·top − centre + first to top − 1, j = centre − 2·top + index.
    let beyond = centre.saturating_sub(first).saturating_sub(top);
    if beyond > 0 {
        let index = top - beyond;
        sum = add(sum, run(kernel, centre + index - 2 * top, index, beyond));
    }
    sum
}

/// The kernel on a grid of `points` points and its reach: `GaussianKernel.kernel_ev`,
/// centred at ½, unnormalised on the grid (the normalisation cancels in the ratio,
/// except against the density floor), into `kernel` and, last point first, `reversed`.
/// Returns the kernel indices [first, end) whose weight can be non-zero.
fn sample_kernel(sigma: f64, kernel: &mut [f64], reversed: &mut [f64]) -> (usize, usize) {
    let points = kernel.len();
    let reach = KERNEL_REACH_SIGMAS * sigma * (points - 1) as f64;
    let half = points / 2;
    let (first, end) = if reach < half as f64 {
        let reach = reach as usize + 1;
        (half.saturating_sub(reach), (half + reach + 1).min(points))
    } else {
        (0, points)
    };
    // Only the weights in [first, end) are ever read (`convolved`).
    let variance = sigma * sigma;
    let scale = libm::sqrt(2.0 * core::f64::consts::PI) * sigma;
    for (j, k) in kernel.iter_mut().enumerate().take(end).skip(first) {
        let d = linspace_point(j, points) - 0.5;
        *k = libm::exp(-d * d / (2.0 * variance)) / scale;
    }
    let top = points - 1;
    for (r, k) in reversed
        .iter_mut()
        .skip(top + 1 - end)
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
        let upper = convolved(below + 1, kernel, reversed, grid, first, end);
        cached = Some((below + 1, upper));
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
fn coarsen(fine: &[f64], step: usize, coarse: &mut [f64]) {
    coarse.fill(0.0);
    let share = 1.0 / step as f64;
    for (j, pair) in fine.chunks_exact(2).enumerate() {
        let (below, offset) = (j / step, j % step);
        if let [r, w] = pair {
            if offset == 0 {
                if let Some([cr, cw]) = coarse.get_mut(2 * below..2 * below + 2) {
                    *cr += r;
                    *cw += w;
                }
            } else {
                let upper = offset as f64 * share;
                let lower = (step - offset) as f64 * share;
                if let Some([r0, w0, r1, w1]) = coarse.get_mut(2 * below..2 * below + 4) {
                    *r0 += lower * r;
                    *w0 += lower * w;
                    *r1 += upper * r;
                    *w1 += upper * w;
                }
            }
        }
    }
}

/// The rounded grids of a bandwidth search, in the scratch after the two kernels:
/// the floor's grid (1001 points: every σ ≥ 0.01), the finest grid ([`SEARCH_GRID_POINTS`],
/// σ = 2⁻⁹), and a working grid for the other sizes. The grids with E − 1 dividing
/// 5120 (1025, 1281, 2561 points: σ = 10, 8 and 4 · 2⁻¹⁰) are coarsened from the finest
/// grid, which is rounded the first time any of them is needed; the others are rounded
/// from the samples. A bandwidth search rounds each grid at most once, and reuses it.
struct SearchGrids<'a> {
    floor: &'a mut [f64],
    finest: &'a mut [f64],
    work: &'a mut [f64],
    floor_ready: bool,
    finest_ready: bool,
    work_holds: Option<usize>,
}

/// Doubles of the search's grids: three (residual, weight) grids.
const SEARCH_GRIDS_LEN: usize = 2 * FLOOR_GRID_POINTS + 4 * SEARCH_GRID_POINTS;

impl<'a> SearchGrids<'a> {
    fn new(scratch: &'a mut [f64]) -> Option<Self> {
        let (floor, rest) = scratch.split_at_mut_checked(2 * FLOOR_GRID_POINTS)?;
        let (finest, rest) = rest.split_at_mut_checked(2 * SEARCH_GRID_POINTS)?;
        let work = rest.get_mut(..2 * SEARCH_GRID_POINTS)?;
        Some(Self {
            floor,
            finest,
            work,
            floor_ready: false,
            finest_ready: false,
            work_holds: None,
        })
    }

    /// The rounded grid of `points` points (at most [`SEARCH_GRID_POINTS`]).
    fn grid<I>(&mut self, points: usize, samples: impl Fn() -> I) -> &[f64]
    where
        I: Iterator<Item = (f64, u8)>,
    {
        let last = (points - 1) as f64;
        if points == FLOOR_GRID_POINTS {
            if !self.floor_ready {
                round_to_grid(samples(), last, self.floor);
                self.floor_ready = true;
            }
            return self.floor;
        }
        let intervals = SEARCH_GRID_POINTS - 1;
        let coarsened = (intervals % (points - 1) == 0).then(|| intervals / (points - 1));
        if coarsened.is_some() && !self.finest_ready {
            round_to_grid(samples(), intervals as f64, self.finest);
            self.finest_ready = true;
        }
        if points == SEARCH_GRID_POINTS {
            return self.finest;
        }
        let work = self.work.get_mut(..2 * points).unwrap_or_default();
        if self.work_holds != Some(points) {
            match coarsened {
                Some(step) => coarsen(self.finest, step, work),
                None => round_to_grid(samples(), last, work),
            }
            self.work_holds = Some(points);
        }
        work
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
    I: Iterator<Item = (f64, u8)>,
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
        // Every σ of the search has a grid of at most SEARCH_GRID_POINTS points.
        let value = match kernel_grid_points(sigma) {
            Some(points) if points <= SEARCH_GRID_POINTS => {
                from_grid(sigma, grids.grid(points, &samples), kernels)
            }
            _ => f64::NAN,
        };
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
    // at_bandwidth cannot fail there: a NaN would be a defect, named rather than returned.
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
    search(
        || scores.iter().copied().zip(labels.iter().copied()),
        scratch,
    )
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
    search(samples, scratch)
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
    if scratch.len() < needed {
        return Err(SmoothEceError::ScratchTooSmall {
            needed,
            given: scratch.len(),
        });
    }
    let points = needed / 4;
    let (grid, kernels) = scratch.split_at_mut(2 * points);
    round_to_grid(
        scores.iter().copied().zip(labels.iter().copied()),
        (points - 1) as f64,
        grid,
    );
    Ok(from_grid(sigma, grid, kernels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_search_grid_is_that_of_the_smallest_pickable_bandwidth() {
        // σ* ≥ 2⁻⁹: 2⁻¹⁰ < MIN_BANDWIDTH is never computed, so never kept as `start`.
        const { assert!(1.0 / 1024.0 < MIN_BANDWIDTH && 2.0 / 1024.0 > MIN_BANDWIDTH) };
        assert_eq!(kernel_grid_points(2.0 / 1024.0), Some(SEARCH_GRID_POINTS));
        assert_eq!(scratch_len(2.0 / 1024.0), Some(SCRATCH_LEN));
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
                needed: 3 * 100_001,
                given: SCRATCH_LEN
            })
        );
    }
}
