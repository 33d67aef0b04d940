//! A synthetic model: a score density and a calibration curve, its exact TCE, and
//! reproducible data sets drawn from it.

use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::{SplitMix64, Xoshiro256PlusPlus};

use super::beta::Beta;
use super::curve::Curve;
use super::tce::{true_calibration_error, TceError};

/// Scores f ~ `density`, labels y ~ Bernoulli(T(f)) with T = `curve`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// The distribution of the confidence scores.
    pub density: Beta,
    /// The calibration curve T(c) = P(y = 1 | f = c).
    pub curve: Curve,
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

impl Model {
    /// The model with this density and curve.
    pub fn new(density: Beta, curve: Curve) -> Model {
        Model { density, curve }
    }

    /// TCE_p as a fraction (see [`true_calibration_error`]).
    pub fn tce(&self, p: f64) -> Result<f64, TceError> {
        true_calibration_error(&self.density, &self.curve, p)
    }

    /// TCE_p in percent, as the simulation layer reports it.
    pub fn tce_percent(&self, p: f64) -> Result<f64, TceError> {
        Ok(super::percent(self.tce(p)?))
    }

    /// n (score, label) pairs. Each pair draws its score and then its uniform U, label
    /// y = 1 if U < T(f); so the first n pairs of a longer draw are exactly the n-pair draw.
    pub fn sample<R: Rng + ?Sized>(&self, n: usize, rng: &mut R) -> (Vec<f64>, Vec<u8>) {
        let sampler = self.density.sampler();
        let mut scores = Vec::with_capacity(n);
        let mut labels = Vec::with_capacity(n);
        for _ in 0..n {
            let score: f64 = rng.sample(sampler);
            let uniform: f64 = rng.gen();
            scores.push(score);
            labels.push(u8::from(uniform < self.curve.eval(score)));
        }
        (scores, labels)
    }

    /// The data set of repetition `rep` under `seed`, of size n: deterministic, independent
    /// of threading, and a prefix of the same repetition's data set of any larger size
    /// (the paper's common-random-numbers protocol, SPEC §7).
    pub fn dataset(&self, seed: u64, rep: u64, n: usize) -> (Vec<f64>, Vec<u8>) {
        self.sample(n, &mut repetition_rng(seed, rep))
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
    fn tce_in_percent() {
        let percent = model().tce_percent(2.0).unwrap();
        assert!((percent - 4.2359309162).abs() < 1e-9, "{percent}");
    }
}
