//! Consistency resampling (Bröcker & Smith 2007, "Increasing the reliability of
//! reliability diagrams", Weather and Forecasting 22:651–661): under H0: E[Y | f] = f,
//! the labels are independent draws y_i ~ Bernoulli(f_i) given the scores. So the
//! statistic T of the data and its values T*_1..T*_B on labels drawn so
//! (y*_i = 1 if U < f_i, U uniform, as the simulator draws labels) are exchangeable under
//! H0, and
//!
//! ```text
//! p = (1 + #{b : T*_b ≥ T}) / (B + 1)
//! ```
//!
//! satisfies P(p ≤ α) ≤ α at every n, for any statistic (with equality when (B + 1)α is
//! a whole number and T has no ties). Resample b draws from its own generator,
//! [`repetition_rng`]`(stream_seed(seed, NULL_STREAM), b)`, so the replicates do not
//! depend on the thread count, and a test written from this description reproduces them.
//!
//! The scores never change, so they are sorted once; a resample only
//! redraws the labels in sorted order, and the statistic reads the sorted samples as on
//! the data, through [`EstimatorSpec::evaluate`]: the data's T and every T* come from the
//! same code on the same order of samples, so equal labels give equal bits.

use rand::{Rng, RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;
use rayon::prelude::*;

use super::TestError;
use crate::buffer::{record_running_hits, Slot, SortedBuffer, SortedSamples};
use crate::norm::Norm;
use crate::sim::estimator::{DataView, EstimatorSpec, EvaluateError, EvaluationSettings};
use crate::sim::repetition_rng;
use crate::sweep::SweepOptions;

/// The samples sorted by score once (ties in arrival order), with the observed labels.
#[derive(Clone, Debug)]
pub(crate) struct SortedData {
    /// The sorted slots with the observed labels and their running hit counts.
    slots: Vec<Slot>,
    /// The scores in sorted order.
    scores: Vec<f64>,
    /// The observed labels in sorted order.
    labels: Vec<u8>,
    hits: u64,
}

/// A set of labels for the sorted scores, with their slots: the observed ones or a
/// resample's.
#[derive(Clone, Debug)]
pub(crate) struct Labeling {
    slots: Vec<Slot>,
    labels: Vec<u8>,
    hits: u64,
}

/// How the estimators are evaluated: the norm (smooth ECE is always at p = 1, the only
/// p it has), the bins of those that take them, the sweep's options.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Evaluation {
    pub norm: Norm,
    pub bins: usize,
    pub sweep: SweepOptions,
}

impl Evaluation {
    /// `spec` on the samples of `view`: its value and, for the sweep, b*.
    pub(crate) fn evaluate(
        &self,
        spec: &EstimatorSpec,
        view: &DataView<'_>,
    ) -> Result<(f64, Option<usize>), EvaluateError> {
        let bins = spec.uses_bins().then_some(self.bins);
        spec.evaluate(view, bins, &self.settings(spec))
            .map(|e| (e.value, e.sweep_bins))
    }
}

impl Evaluation {
    /// The estimator settings of `spec`: the norm (L1 for smooth ECE, the only p it
    /// has) and the sweep's options.
    pub(crate) fn settings(&self, spec: &EstimatorSpec) -> EvaluationSettings {
        EvaluationSettings {
            norm: if spec.kind().needs_l1() {
                Norm::L1
            } else {
                self.norm
            },
            sweep: self.sweep,
        }
    }
}

impl SortedData {
    /// The row (input index) at each sorted position.
    pub(crate) fn rows(&self) -> Vec<u32> {
        self.slots.iter().map(|s| s.order >> 1).collect()
    }

    /// Checks (scores, labels) as every state does (a bad element refuses the whole
    /// input), then sorts them once.
    pub(crate) fn new(scores: &[f64], labels: &[u8]) -> Result<SortedData, TestError> {
        crate::sample::check_batch(scores, labels).map_err(TestError::Push)?;
        let n = scores.len();
        if n == 0 {
            return Err(TestError::NoSamples);
        }
        crate::buffer::check_capacity(n).map_err(|_| TestError::TooManySamples(n))?;
        let mut storage = crate::storage::sorting_slots(n).map_err(|_| TestError::OutOfMemory {
            bytes: 2 * n * core::mem::size_of::<Slot>(),
        })?;
        let mut buffer = SortedBuffer::with_storage(&mut storage[..])
            .map_err(|_| TestError::TooManySamples(n))?;
        buffer.push_batch(scores, labels).map_err(TestError::Push)?;
        let hits = buffer.hits();
        let sorted = buffer.sorted_parallel();
        let slots = sorted.slots().to_vec();
        Ok(SortedData {
            scores: slots.iter().map(|s| s.score).collect(),
            labels: slots.iter().map(Slot::label).collect(),
            slots,
            hits,
        })
    }

    /// n.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// The hits of the observed labels.
    pub(crate) fn hits(&self) -> u64 {
        self.hits
    }

    /// The scores in sorted order.
    pub(crate) fn scores(&self) -> &[f64] {
        &self.scores
    }

    /// The observed labels in sorted order.
    pub(crate) fn labels(&self) -> &[u8] {
        &self.labels
    }

    /// The observed samples, sorted.
    pub(crate) fn observed(&self) -> SortedSamples<'_> {
        SortedSamples::new(&self.slots, self.hits)
    }

    /// The observed samples as the estimators read them.
    pub(crate) fn observed_view(&self) -> DataView<'_> {
        DataView {
            sorted: self.observed(),
            scores: &self.scores,
            labels: &self.labels,
        }
    }

    /// Room for resampled labels.
    pub(crate) fn labeling(&self) -> Labeling {
        Labeling {
            slots: self.slots.clone(),
            labels: self.labels.clone(),
            hits: self.hits,
        }
    }

    /// Draws new labels into `into`: y_i = 1 if U < `accuracies[i]` (for the sorted
    /// position i), U uniform in [0, 1) from `rng`, in sorted order.
    pub(crate) fn draw<R: Rng>(&self, accuracies: &[f64], rng: &mut R, into: &mut Labeling) {
        for ((slot, label), &accuracy) in
            into.slots.iter_mut().zip(&mut into.labels).zip(accuracies)
        {
            let u: f64 = rng.gen();
            let y = u8::from(u < accuracy);
            *label = y;
            slot.order = (slot.order & !1) | u32::from(y);
        }
        record_running_hits(&mut into.slots);
        into.hits = into.labels.iter().map(|&y| u64::from(y)).sum();
    }

    /// The samples of `labeling` as the estimators read them.
    pub(crate) fn view<'a>(&'a self, labeling: &'a Labeling) -> DataView<'a> {
        DataView {
            sorted: SortedSamples::new(&labeling.slots, labeling.hits),
            scores: &self.scores,
            labels: &labeling.labels,
        }
    }

    /// Each of `specs` on `count` label sets drawn with `accuracies` (at the sorted
    /// scores), draw b from the generator of (`seed`, b): for spec s, its values in draw
    /// order, or its first failure. In parallel; the same values whatever the thread
    /// count.
    pub(crate) fn replicates(
        &self,
        accuracies: &[f64],
        specs: &[EstimatorSpec],
        count: usize,
        seed: u64,
        evaluation: &Evaluation,
    ) -> Vec<Result<Vec<f64>, ReplicateError>> {
        let rows: Vec<Vec<Result<f64, EvaluateError>>> = (0..count)
            .into_par_iter()
            .map_init(
                || self.labeling(),
                |labeling, b| {
                    let mut rng = repetition_rng(seed, b as u64);
                    self.draw(accuracies, &mut rng, labeling);
                    let view = self.view(labeling);
                    specs
                        .iter()
                        .map(|spec| evaluation.evaluate(spec, &view).map(|(value, _)| value))
                        .collect()
                },
            )
            .collect();
        (0..specs.len())
            .map(|s| {
                rows.iter()
                    .enumerate()
                    .map(|(draw, row)| row[s].map_err(|cause| ReplicateError { draw, cause }))
                    .collect()
            })
            .collect()
    }
}

/// A statistic failed on a drawn label set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ReplicateError {
    /// Which draw.
    pub draw: usize,
    /// Why.
    pub cause: EvaluateError,
}

/// #{b : replicates[b] ≥ value}, the replicates sorted ascending.
pub(crate) fn at_least(sorted_replicates: &[f64], value: f64) -> usize {
    sorted_replicates.len() - sorted_replicates.partition_point(|&x| x < value)
}

/// The resampling p-value (1 + at_least) / (B + 1).
pub fn p_value(at_least: usize, resamples: usize) -> f64 {
    (at_least as f64 + 1.0) / (resamples as f64 + 1.0)
}

/// The stream of a test's null resamples: resample b draws from
/// [`repetition_rng`]`(stream_seed(seed, NULL_STREAM), b)`.
pub const NULL_STREAM: u64 = 0;

/// The stream of a test's power simulations: simulated label set r draws from
/// [`repetition_rng`]`(stream_seed(seed, POWER_STREAM), r)`.
pub const POWER_STREAM: u64 = 1;

/// The seed of stream `stream` of a test seeded with `seed`: one SplitMix64 output from
/// `seed ^ (stream · 0x9E3779B97F4A7C15)`, so that the streams of one seed differ and
/// nearby seeds do not share streams.
pub fn stream_seed(seed: u64, stream: u64) -> u64 {
    let mut mix = SplitMix64::seed_from_u64(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    mix.next_u64()
}
