//! A synthetic model: a score density and a calibration curve, its exact TCE, and
//! reproducible data sets drawn from it.

use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::{SplitMix64, Xoshiro256PlusPlus};

use super::beta::Beta;
use super::curve::Curve;
use super::point_mass::PointMasses;
use super::tce::{true_calibration_error_with_point_masses, TceError};

/// Scores f ~ `density`, labels y ~ Bernoulli(T(f)) with T = `curve`; optionally with
/// atoms at 0 and 1 (`point_masses`), each with its own accuracy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// The distribution of the confidence scores (of the non-atomic part, if there are
    /// point masses).
    pub density: Beta,
    /// The calibration curve T(c) = P(y = 1 | f = c) (off the atoms).
    pub curve: Curve,
    /// Atoms at 0 and 1 ([`PointMasses::NONE`] for a pure Beta model, as [`Model::new`]
    /// makes): saturated float32 confidences of exactly 1.0.
    pub point_masses: PointMasses,
}

/// A data set of n pairs that the allocator cannot hold (or that passes the address
/// space); nothing was drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatasetTooLarge {
    /// The pairs asked for.
    pub n: usize,
}

impl core::fmt::Display for DatasetTooLarge {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "cannot allocate a data set of {} samples (9 bytes each)",
            self.n
        )
    }
}

impl std::error::Error for DatasetTooLarge {}

/// What the simulator needs of a synthetic model: reproducible data sets and the exact
/// TCE. The paper's [`Model`] (Beta density, one of SPEC §7's curves, point masses) is
/// one; a model whose density or curve is more flexible is another, and the simulator,
/// the fit check and the report's bias figures run on either.
pub trait Synthetic: Sync {
    /// The data set of repetition `rep` under `seed`, of size n: deterministic,
    /// independent of threading, and a prefix of the same repetition's data set of any
    /// larger size (the paper's common-random-numbers protocol, SPEC §7); or
    /// [`DatasetTooLarge`] before any draw.
    fn try_dataset(
        &self,
        seed: u64,
        rep: u64,
        n: usize,
    ) -> Result<(Vec<f64>, Vec<u8>), DatasetTooLarge>;

    /// TCE_p as a fraction.
    fn tce(&self, p: f64) -> Result<f64, TceError>;
}

impl Synthetic for Model {
    fn try_dataset(
        &self,
        seed: u64,
        rep: u64,
        n: usize,
    ) -> Result<(Vec<f64>, Vec<u8>), DatasetTooLarge> {
        Model::try_dataset(self, seed, rep, n)
    }

    fn tce(&self, p: f64) -> Result<f64, TceError> {
        Model::tce(self, p)
    }
}

/// Domain separation between the two SplitMix64 streams of [`repetition_rng`], so that
/// (seed, rep) = (k, k) does not fill all four state words alike.
const REPETITION_DOMAIN: u64 = 0x243F_6A88_85A3_08D3;

/// The generator of repetition `rep` under `seed`: a pure function of the pair, so a
/// repetition draws the same data whichever thread runs it and in whatever order.
///
/// The 256-bit xoshiro state is two SplitMix64 outputs from `seed` and two from `rep`
/// (domain-separated). SplitMix64's output is a bijection of its state, so distinct pairs
/// give distinct states.
pub fn repetition_rng(seed: u64, rep: u64) -> Xoshiro256PlusPlus {
    let mut from_seed = SplitMix64::seed_from_u64(seed);
    let mut from_rep = SplitMix64::seed_from_u64(rep ^ REPETITION_DOMAIN);
    let words = [
        from_seed.next_u64(),
        from_seed.next_u64(),
        from_rep.next_u64(),
        from_rep.next_u64(),
    ];
    let mut state = [0u8; 32];
    for (chunk, word) in state.chunks_exact_mut(8).zip(words) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    Xoshiro256PlusPlus::from_seed(state)
}

/// Room for n (score, label) pairs, or [`DatasetTooLarge`] (by arithmetic alone when
/// their bytes pass the address space).
pub(crate) fn reserve_pairs(n: usize) -> Result<(Vec<f64>, Vec<u8>), DatasetTooLarge> {
    let (mut scores, mut labels) = (Vec::new(), Vec::new());
    scores
        .try_reserve_exact(n)
        .and_then(|()| labels.try_reserve_exact(n))
        .map_err(|_| DatasetTooLarge { n })?;
    Ok((scores, labels))
}

/// Appends n pairs drawn by the simulator's protocol: with point masses, a uniform V
/// first picks the part (V < π₁ the atom at 1, then π₀ more the atom at 0, else the
/// continuous part); without them V is not drawn. The continuous part is
/// `continuous(rng)`, the score and its accuracy T(score). Then a uniform U, and the label
/// U < the accuracy. Every model draws its data sets through this one loop, so a model's
/// first n pairs are its n-pair draw, and two models with the same parts draw the same
/// pairs.
pub(crate) fn draw_pairs<R: Rng + ?Sized>(
    n: usize,
    rng: &mut R,
    masses: &PointMasses,
    mut continuous: impl FnMut(&mut R) -> (f64, f64),
    scores: &mut Vec<f64>,
    labels: &mut Vec<u8>,
) {
    let one = masses.one().map(|a| (a.mass(), a.accuracy()));
    let zero = masses.zero().map(|a| (a.mass(), a.accuracy()));
    for _ in 0..n {
        let atom = if masses.is_none() {
            None
        } else {
            let part: f64 = rng.gen();
            let pi_one = one.map_or(0.0, |a| a.0);
            match (one, zero) {
                (Some((pi, accuracy)), _) if part < pi => Some((1.0, accuracy)),
                (_, Some((pi, accuracy))) if part < pi_one + pi => Some((0.0, accuracy)),
                _ => None,
            }
        };
        let (score, accuracy) = match atom {
            Some(atom) => atom,
            None => continuous(rng),
        };
        let uniform: f64 = rng.gen();
        scores.push(score);
        labels.push(u8::from(uniform < accuracy));
    }
}

impl Model {
    /// The model with this density and curve.
    pub fn new(density: Beta, curve: Curve) -> Model {
        Model::with_point_masses(density, curve, PointMasses::NONE)
    }

    /// The model with atoms at 0 and/or 1 besides the density.
    pub fn with_point_masses(density: Beta, curve: Curve, point_masses: PointMasses) -> Model {
        Model {
            density,
            curve,
            point_masses,
        }
    }

    /// TCE_p as a fraction (see [`true_calibration_error_with_point_masses`]; without
    /// atoms, `tce::true_calibration_error`).
    pub fn tce(&self, p: f64) -> Result<f64, TceError> {
        true_calibration_error_with_point_masses(&self.density, &self.curve, &self.point_masses, p)
    }

    /// TCE_p in percent, as the simulation layer reports it.
    pub fn tce_percent(&self, p: f64) -> Result<f64, TceError> {
        Ok(super::percent(self.tce(p)?))
    }

    /// n (score, label) pairs. Each pair draws its score and then its uniform U, label
    /// y = 1 if U < T(f); so the first n pairs of a longer draw are exactly the n-pair draw.
    ///
    /// With point masses, each pair first draws a uniform V that picks the part: V < π₁
    /// the atom at 1, then π₀ more the atom at 0, else the Beta; an atom's label is
    /// U < its accuracy. Without atoms V is not drawn, so a pure Beta model's data sets
    /// are the same as before point masses existed.
    ///
    /// Aborts if the allocator cannot hold n pairs, as `Vec` does: for an n from outside
    /// the program, use [`Model::try_sample`].
    pub fn sample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> (Vec<f64>, Vec<u8>) {
        let (mut scores, mut labels) = (Vec::with_capacity(n), Vec::with_capacity(n));
        self.fill(n, rng, &mut scores, &mut labels);
        (scores, labels)
    }

    /// [`Model::sample`], or [`DatasetTooLarge`] (before any draw) when the allocator
    /// cannot hold n pairs, 9 bytes each: an n whose bytes pass the address space is
    /// refused by arithmetic alone, without asking the allocator.
    pub fn try_sample<R: Rng + ?Sized>(
        &self,
        n: usize,
        rng: &mut R,
    ) -> Result<(Vec<f64>, Vec<u8>), DatasetTooLarge> {
        let (mut scores, mut labels) = reserve_pairs(n)?;
        self.fill(n, rng, &mut scores, &mut labels);
        Ok((scores, labels))
    }

    /// Appends n draws to `scores` and `labels` (which have room for them).
    fn fill<R: Rng + ?Sized>(
        &self,
        n: usize,
        rng: &mut R,
        scores: &mut Vec<f64>,
        labels: &mut Vec<u8>,
    ) {
        let sampler = self.density.sampler();
        let continuous = |rng: &mut R| {
            let score: f64 = rng.sample(sampler);
            (score, self.curve.eval(score))
        };
        draw_pairs(n, rng, &self.point_masses, continuous, scores, labels);
    }

    /// The data set of repetition `rep` under `seed`, of size n: deterministic, independent
    /// of threading, and a prefix of the same repetition's data set of any larger size
    /// (the paper's common-random-numbers protocol, SPEC §7).
    pub fn dataset(&self, seed: u64, rep: u64, n: usize) -> (Vec<f64>, Vec<u8>) {
        self.sample(n, &mut repetition_rng(seed, rep))
    }

    /// [`Model::dataset`], or [`DatasetTooLarge`] where [`Model::try_sample`] gives it.
    pub fn try_dataset(
        &self,
        seed: u64,
        rep: u64,
        n: usize,
    ) -> Result<(Vec<f64>, Vec<u8>), DatasetTooLarge> {
        self.try_sample(n, &mut repetition_rng(seed, rep))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rayon::prelude::*;

    fn model() -> Model {
        Model::new(
            Beta::new(2.8, 0.05).unwrap(),
            Curve::polynomial(2.0).unwrap(),
        )
    }

    #[test]
    fn a_data_set_the_allocator_cannot_hold_is_an_error_before_any_draw() {
        // 2^62 pairs pass the address space: refused by arithmetic, at once.
        let n = 1usize << 62;
        assert_eq!(
            model().try_dataset(1, 0, n).unwrap_err(),
            DatasetTooLarge { n }
        );
        assert_eq!(
            model().try_dataset(1, 0, 300).unwrap(),
            model().dataset(1, 0, 300)
        );
    }

    #[test]
    fn smaller_data_sets_are_prefixes() {
        let (small_scores, small_labels) = model().dataset(42, 3, 200);
        let (large_scores, large_labels) = model().dataset(42, 3, 12_800);
        assert_eq!(small_scores[..], large_scores[..200]);
        assert_eq!(small_labels[..], large_labels[..200]);
    }

    #[test]
    fn repetitions_are_deterministic_and_distinct() {
        let a = model().dataset(1, 0, 500);
        assert_eq!(a, model().dataset(1, 0, 500));
        assert_ne!(a.0, model().dataset(1, 1, 500).0);
        assert_ne!(a.0, model().dataset(2, 0, 500).0);
        // (seed, rep) = (1, 0) and (0, 1) must not coincide either.
        assert_ne!(a.0, model().dataset(0, 1, 500).0);
    }

    #[test]
    fn thread_count_does_not_change_the_data() {
        let sequential: Vec<_> = (0..16).map(|rep| model().dataset(9, rep, 300)).collect();
        // Each repetition on its own thread, started in reverse order.
        let threaded: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..16)
                .rev()
                .map(|rep| scope.spawn(move || model().dataset(9, rep, 300)))
                .collect();
            handles
                .into_iter()
                .rev()
                .map(|h| h.join().unwrap())
                .collect()
        });
        assert_eq!(sequential, threaded);
        let pooled: Vec<_> = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
            .install(|| {
                (0..16u32)
                    .into_par_iter()
                    .map(|rep| model().dataset(9, rep.into(), 300))
                    .collect()
            });
        assert_eq!(sequential, pooled);
    }

    #[test]
    fn labels_follow_the_curve() {
        // Accuracy E[T(f)] = E[f²] = m(2); with n = 100 000 the standard error is < 0.002.
        let model = model();
        let (scores, labels) = model.dataset(5, 0, 100_000);
        assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)));
        assert!(labels.iter().all(|&y| y <= 1));
        let accuracy = labels.iter().map(|&y| f64::from(y)).sum::<f64>() / labels.len() as f64;
        let expected = model.density.raw_moment(2.0);
        assert!(
            (accuracy - expected).abs() < 0.008,
            "{accuracy} vs {expected}"
        );
    }

    #[test]
    fn point_masses_are_drawn_with_their_probabilities_and_accuracies() {
        use crate::sim::point_mass::{PointMass, PointMasses};
        let masses = PointMasses::new(
            Some(PointMass::new(0.1, 0.3).unwrap()),
            Some(PointMass::new(0.3, 0.95).unwrap()),
        )
        .unwrap();
        let atoms = Model::with_point_masses(model().density, model().curve, masses);
        let n = 200_000;
        let (scores, labels) = atoms.dataset(4, 0, n);
        let share = |pred: &dyn Fn(f64) -> bool| {
            let rows: Vec<usize> = (0..n).filter(|&i| pred(scores[i])).collect();
            let hits = rows.iter().filter(|&&i| labels[i] == 1).count();
            (
                rows.len() as f64 / n as f64,
                hits as f64 / rows.len() as f64,
            )
        };
        // Exactly 1.0 also comes from the Beta part: 17 % of Beta(2.8, 0.05) draws round
        // to 1.0 in f64, so P(C = 1.0) = 0.3 + 0.6·P_Beta(1.0) and exact zeros come only
        // from the atom (the Beta puts ~0 mass near 0). Binomial standard errors are
        // below 0.0011 for the shares and 0.0025 for the accuracies.
        let (at_zero, accuracy_zero) = share(&|s| s == 0.0);
        assert!((at_zero - 0.1).abs() < 0.005, "{at_zero}");
        assert!((accuracy_zero - 0.3).abs() < 0.012, "{accuracy_zero}");
        let beta_at_one = {
            let (s, _) = model().dataset(4, 1, n);
            s.iter().filter(|&&x| x == 1.0).count() as f64 / n as f64
        };
        let (at_one, _) = share(&|s| s == 1.0);
        let expected = 0.3 + 0.6 * beta_at_one;
        assert!((at_one - expected).abs() < 0.006, "{at_one} vs {expected}");
        // Prefixes and determinism hold with atoms too.
        let (small, _) = atoms.dataset(4, 0, 500);
        assert_eq!(small[..], scores[..500]);
        // No atoms: the same draws as a model built without them.
        assert_eq!(
            Model::with_point_masses(model().density, model().curve, PointMasses::NONE)
                .dataset(4, 0, 300),
            model().dataset(4, 0, 300)
        );
    }

    #[test]
    fn tce_with_point_masses_matches_monte_carlo() {
        use crate::sim::point_mass::{PointMass, PointMasses};
        // Beta(2, 2), T = c², π₁ = 0.3 at a₁ = 0.8, π₀ = 0.05 at a₀ = 0.1. The Monte-Carlo
        // mean of |C − T(C)|² over the atoms' and the Beta's draws (the atoms' gaps are
        // |1 − 0.8|² and |0 − 0.1|²) estimates TCE₂²; its standard error with 400 000
        // draws is ~3e-5 relative to ~0.02.
        let masses = PointMasses::new(
            Some(PointMass::new(0.05, 0.1).unwrap()),
            Some(PointMass::new(0.3, 0.8).unwrap()),
        )
        .unwrap();
        let curve = Curve::polynomial(2.0).unwrap();
        let model = Model::with_point_masses(Beta::new(2.0, 2.0).unwrap(), curve, masses);
        let (scores, _) = model.dataset(11, 0, 400_000);
        let gap = |s: f64| {
            if s == 1.0 {
                0.2
            } else if s == 0.0 {
                0.1
            } else {
                s - s * s
            }
        };
        let mc = scores.iter().map(|&s| gap(s).powi(2)).sum::<f64>() / scores.len() as f64;
        let exact = model.tce(2.0).unwrap().powi(2);
        // Closed form: E_Beta(2,2)(c − c²)² = E[c²] − 2E[c³] + E[c⁴] = 3/10 − 2/5 + 1/7.
        let closed = 0.65 * (0.3 - 0.4 + 1.0 / 7.0) + 0.3 * 0.04 + 0.05 * 0.01;
        assert!((exact - closed).abs() < 1e-14, "{exact} vs {closed}");
        assert!((mc - exact).abs() < 2e-4, "{mc} vs {exact}");
    }

    #[test]
    fn tce_in_percent() {
        let percent = model().tce_percent(2.0).unwrap();
        assert!((percent - 4.2359309162).abs() < 1e-9, "{percent}");
    }
}
