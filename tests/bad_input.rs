//! Every bad input gets its named error, and the state is left exactly as it was.

use tce::{
    BinStats, Binning, Closure, ConfigError, EstimateError, Histogram, InlineBuffer,
    InlineHistogram, MergeError, Norm, NormError, PushError, Slot, SortedBuffer, SweepOptions,
};

/// A bad score and the error it must get at a given index.
type BadScore = (f64, fn(usize) -> PushError);

const BAD_SCORES: [BadScore; 10] = [
    (f64::NAN, |index| PushError::NonFiniteScore { index }),
    (f64::INFINITY, |index| PushError::NonFiniteScore { index }),
    (f64::NEG_INFINITY, |index| PushError::NonFiniteScore {
        index,
    }),
    (1.5, |index| PushError::ScoreOutOfRange { index }),
    (-0.1, |index| PushError::ScoreOutOfRange { index }),
    (1.0 + f64::EPSILON, |index| PushError::ScoreOutOfRange {
        index,
    }),
    // Negative scores too small to move any bin index or fixed-point sum.
    (-1e-300, |index| PushError::ScoreOutOfRange { index }),
    (-5e-324, |index| PushError::ScoreOutOfRange { index }),
    (2.0, |index| PushError::ScoreOutOfRange { index }),
    (-1.5, |index| PushError::ScoreOutOfRange { index }),
];

fn filled_histogram() -> InlineHistogram<15> {
    filled_histogram_closed(Closure::Left)
}

fn filled_histogram_closed(closure: Closure) -> InlineHistogram<15> {
    let mut h = InlineHistogram::<15>::new(closure);
    h.push_batch(&[0.1, 0.5, 0.9], &[0, 1, 1]).unwrap();
    h
}

fn filled_buffer() -> InlineBuffer<8> {
    let mut b = InlineBuffer::<8>::new();
    b.push_batch(&[0.1, 0.5, 0.9], &[0, 1, 1]).unwrap();
    b
}

fn buffer_snapshot(b: &mut InlineBuffer<8>) -> (usize, u64, Vec<(f64, u8)>) {
    (b.len(), b.hits(), b.sorted().iter().collect())
}

#[test]
fn bad_scores_and_labels_are_refused_by_the_histogram() {
    for (score, error) in BAD_SCORES {
        let mut h = filled_histogram();
        let before = h.clone();
        assert_eq!(h.push(score, 1), Err(error(0)), "{score}");
        assert_eq!(
            h.push_batch(&[0.2, 0.3, score], &[1, 0, 1]),
            Err(error(2)),
            "{score}"
        );
        assert_eq!(h, before, "state changed after {score}");
    }
    let mut h = filled_histogram();
    let before = h.clone();
    assert_eq!(h.push(0.5, 2), Err(PushError::InvalidLabel { index: 0 }));
    assert_eq!(
        h.push_batch(&[0.5, 0.5], &[1, 7]),
        Err(PushError::InvalidLabel { index: 1 })
    );
    assert_eq!(
        h.push_batch(&[0.5, 0.5], &[1]),
        Err(PushError::LengthMismatch {
            scores: 2,
            labels: 1
        })
    );
    assert_eq!(h, before);
}

#[test]
fn a_bad_element_late_in_a_long_batch_records_nothing() {
    // Long batches take the laned path; the refusal must still be whole.
    let mut scores = vec![0.7; 5000];
    let labels = vec![1u8; 5000];
    for closure in [Closure::Left, Closure::Right] {
        for (bad, error) in BAD_SCORES {
            let mut h = filled_histogram_closed(closure);
            let before = h.clone();
            scores[4321] = bad;
            assert_eq!(h.push_batch(&scores, &labels), Err(error(4321)), "{bad}");
            assert_eq!(h, before);
        }
    }
}

#[test]
fn bad_scores_and_labels_are_refused_by_the_buffer() {
    for (score, error) in BAD_SCORES {
        let mut b = filled_buffer();
        let before = buffer_snapshot(&mut b);
        assert_eq!(b.push(score, 0), Err(error(0)));
        assert_eq!(b.push_batch(&[score, 0.3], &[1, 0]), Err(error(0)));
        assert_eq!(buffer_snapshot(&mut b), before);
    }
    let mut b = filled_buffer();
    let before = buffer_snapshot(&mut b);
    assert_eq!(b.push(0.5, 255), Err(PushError::InvalidLabel { index: 0 }));
    assert_eq!(
        b.push_batch(&[0.5], &[1, 1]),
        Err(PushError::LengthMismatch {
            scores: 1,
            labels: 2
        })
    );
    assert_eq!(buffer_snapshot(&mut b), before);
}

#[test]
fn a_full_buffer_is_an_error_never_an_overwrite() {
    let mut b = filled_buffer();
    let before = buffer_snapshot(&mut b);
    // 3 held, 5 free: a batch of 6 is refused whole.
    assert_eq!(
        b.push_batch(&[0.5; 6], &[1; 6]),
        Err(PushError::Full {
            capacity: 8,
            len: 3,
            requested: 6
        })
    );
    assert_eq!(buffer_snapshot(&mut b), before);
    b.push_batch(&[0.5; 5], &[1; 5]).unwrap();
    let full = buffer_snapshot(&mut b);
    assert_eq!(
        b.push(0.2, 0),
        Err(PushError::Full {
            capacity: 8,
            len: 8,
            requested: 1
        })
    );
    assert_eq!(buffer_snapshot(&mut b), full);

    let mut other = filled_buffer();
    assert_eq!(
        other.merge(&b),
        Err(MergeError::Full {
            capacity: 8,
            len: 3,
            requested: 8
        })
    );
    assert_eq!(buffer_snapshot(&mut other), before);
}

#[test]
fn mismatched_histograms_do_not_merge() {
    let mut h = filled_histogram();
    let before = h.clone();
    let other = InlineHistogram::<10>::new(Closure::Left);
    assert_eq!(
        h.merge(&other),
        Err(MergeError::BinCountMismatch {
            left: 15,
            right: 10
        })
    );
    let other = InlineHistogram::<15>::new(Closure::Right);
    assert_eq!(h.merge(&other), Err(MergeError::ClosureMismatch));
    assert_eq!(h, before);
}

#[test]
fn empty_storage_and_zero_bins_are_named() {
    assert_eq!(
        Histogram::with_storage(&mut [], Closure::Left).unwrap_err(),
        ConfigError::ZeroBins
    );
    assert_eq!(
        SortedBuffer::with_storage(&mut []).unwrap_err(),
        ConfigError::ZeroCapacity
    );

    let mut b = filled_buffer();
    let sorted = b.sorted();
    assert_eq!(
        sorted.ece_bin(Binning::EQUAL_MASS, 0, Norm::L2),
        Err(EstimateError::ZeroBins)
    );
    assert_eq!(
        sorted.mce(Binning::EQUAL_WIDTH, 0),
        Err(EstimateError::ZeroBins)
    );
    assert_eq!(
        sorted.ece_debias(Binning::EQUAL_MASS, 0, Norm::L2),
        Err(EstimateError::ZeroBins)
    );
    let capped = SweepOptions {
        max_bins: Some(0),
        ..SweepOptions::default()
    };
    assert_eq!(
        sorted.ece_sweep(Binning::EQUAL_MASS, Norm::L2, capped),
        Err(EstimateError::ZeroBins)
    );
}

#[test]
fn no_samples_is_named() {
    let h = InlineHistogram::<15>::new(Closure::Left);
    assert_eq!(h.ece_bin(Norm::L1), Err(EstimateError::NoSamples));
    assert_eq!(h.mce(), Err(EstimateError::NoSamples));
    assert_eq!(h.ece_debias(Norm::L2), Err(EstimateError::NoSamples));
    let mut storage = [Slot::EMPTY; 4];
    let mut b = SortedBuffer::with_storage(&mut storage).unwrap();
    let sorted = b.sorted();
    assert_eq!(
        sorted.ece_bin(Binning::EQUAL_MASS, 15, Norm::L2),
        Err(EstimateError::NoSamples)
    );
    assert_eq!(
        sorted.ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default()),
        Err(EstimateError::NoSamples)
    );
}

#[test]
fn norms_below_one_or_not_finite_are_refused() {
    for p in [0.0, 0.5, -2.0, f64::NAN, f64::INFINITY] {
        assert_eq!(Norm::new(p), Err(NormError::InvalidExponent), "{p}");
    }
    assert_eq!(Norm::new(1.0).unwrap().p(), 1.0);
    assert_eq!(Norm::new(3.5).unwrap().p(), 3.5);
}

#[test]
fn reset_and_clear_forget_everything() {
    let mut h = filled_histogram();
    h.reset();
    assert_eq!(h.samples(), 0);
    assert!(h.bins().iter().all(|b| *b == BinStats::EMPTY));
    let mut b = filled_buffer();
    b.clear();
    assert_eq!((b.len(), b.hits(), b.capacity()), (0, 0, 8));
}

#[test]
fn negative_zero_is_the_same_confidence_as_zero() {
    let mut b = InlineBuffer::<4>::new();
    b.push_batch(&[-0.0, 0.0, 0.5], &[1, 0, 1]).unwrap();
    let sorted = b.sorted();
    // −0 and +0 tie and keep arrival order: they share the first of 3 equal-mass bins.
    let first: Vec<(f64, u8)> = sorted.iter().take(2).collect();
    assert_eq!(first, vec![(0.0, 1), (0.0, 0)]);
}
