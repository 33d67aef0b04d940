//! The count bound (`tce::MAX_COUNT`, 2^63 − 1) and the frame-size bound, as issue 10
//! found them broken: each defect reproduced, now refused with a named error and the
//! state unchanged (compared by its encoded bytes). The same defects through the C ABI
//! are in ffi-tests/test_api.c (`test_count_bound`).

use proptest::prelude::*;
use tce::portable::{crc32, DecodeError};
use tce::{
    Closure, DecayedBin, DecayingHistogram, InlineHistogram, InlineReservoir, InlineWindow,
    MergeError, PushError, MAX_COUNT,
};

/// Payload offsets (see `src/portable.rs`): the frame's header is 12 bytes.
const HISTOGRAM_BIN: usize = 12 + 8; // then 32 bytes a bin, count first
const SEEN: usize = 12 + 4; // reservoir and window: after the u32 capacity
const DECAYED_BIN: usize = 12 + 24; // then 40 bytes a bin, count first

/// `bytes` with the u64 at `at` replaced and the CRC recomputed: a frame that passes
/// every check before the content checks.
fn patched(bytes: &[u8], at: usize, value: u64) -> Vec<u8> {
    let mut bytes = bytes.to_vec();
    bytes[at..at + 8].copy_from_slice(&value.to_le_bytes());
    let end = bytes.len() - 4;
    let crc = crc32(&bytes[..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
    bytes
}

fn histogram_bytes(h: &InlineHistogram<4>) -> Vec<u8> {
    let mut bytes = vec![0u8; h.encoded_len()];
    h.encode(&mut bytes).unwrap();
    bytes
}

fn reservoir_bytes(r: &mut InlineReservoir<4>) -> Vec<u8> {
    let mut bytes = vec![0u8; r.encoded_len()];
    r.encode(&mut bytes).unwrap();
    bytes
}

fn window_bytes(w: &mut InlineWindow<4>) -> Vec<u8> {
    let mut bytes = vec![0u8; w.encoded_len()];
    w.encode(&mut bytes).unwrap();
    bytes
}

type Decaying = DecayingHistogram<[DecayedBin; 4]>;

fn decaying_bytes(h: &Decaying) -> Vec<u8> {
    let mut bytes = vec![0u8; h.encoded_len()];
    h.encode(&mut bytes).unwrap();
    bytes
}

/// A histogram of 4 bins whose bin `k` counts `counts[k]` samples (all misses at the
/// bin's lower edge k/4, so every count is a valid bin: decoding checks that a bin's score
/// sum lies within its edges times its count), decoded from a patched frame.
fn histogram_with_counts(counts: [u64; 4]) -> InlineHistogram<4> {
    let mut bytes = histogram_bytes(&InlineHistogram::<4>::new(Closure::Left));
    for (k, &count) in counts.iter().enumerate() {
        let bin = HISTOGRAM_BIN + 32 * k;
        bytes = patched(&bytes, bin, count);
        // The score sum in units of 2^-64: count · k/4 · 2^64 (below 2^127).
        let sum = (u128::from(count) * k as u128) << 62;
        bytes = patched(&bytes, bin + 16, sum as u64);
        bytes = patched(&bytes, bin + 24, (sum >> 64) as u64);
    }
    let mut h = InlineHistogram::<4>::new(Closure::Left);
    h.decode(&bytes).unwrap();
    h
}

/// A full reservoir of 4 that has seen `seen` (≥ 4) samples.
fn reservoir_with_seen(seen: u64, seed: u64) -> InlineReservoir<4> {
    let mut r = InlineReservoir::<4>::new(seed);
    r.push_batch(&[0.1, 0.4, 0.6, 0.9], &[0, 1, 0, 1]).unwrap();
    let bytes = patched(&reservoir_bytes(&mut r), SEEN, seen);
    r.decode(&bytes).unwrap();
    r
}

/// A full window of 4 that has seen `seen` (≥ 4) samples.
fn window_with_seen(seen: u64) -> InlineWindow<4> {
    let mut w = InlineWindow::<4>::new();
    w.push_batch(&[0.1, 0.4, 0.6, 0.9], &[0, 1, 0, 1]).unwrap();
    let bytes = patched(&window_bytes(&mut w), SEEN, seen);
    w.decode(&bytes).unwrap();
    w
}

/// Defect 2: merging a 1-sample histogram into a copy of itself doubles its count; the
/// 64th doubling wrapped it to 0 (release) or panicked (debug). Now the merge that would
/// pass 2^63 − 1 is refused and the state stays as it was.
#[test]
fn doubling_a_histogram_by_merges_stops_at_the_bound() {
    let mut h = InlineHistogram::<4>::new(Closure::Left);
    h.push(0.3, 1).unwrap();
    for doubling in 1..=62 {
        let copy = h.clone();
        h.merge(&copy).unwrap();
        assert_eq!(h.samples(), 1 << doubling);
    }
    let before = histogram_bytes(&h);
    let copy = h.clone();
    assert_eq!(h.merge(&copy), Err(MergeError::CountOverflow));
    assert_eq!(histogram_bytes(&h), before);
    assert_eq!(h.samples(), 1 << 62);
    // The bound is reachable exactly, and not one past it.
    let mut rest = histogram_with_counts([0, (1 << 62) - 1, 0, 0]);
    h.merge(&rest).unwrap();
    assert_eq!(h.samples(), MAX_COUNT);
    let at_bound = histogram_bytes(&h);
    assert_eq!(h.push(0.3, 1), Err(PushError::CountOverflow));
    assert_eq!(h.push_batch(&[0.5], &[0]), Err(PushError::CountOverflow));
    assert_eq!(
        h.merge(&histogram_with_counts([0, 0, 0, 1])),
        Err(MergeError::CountOverflow)
    );
    assert_eq!(histogram_bytes(&h), at_bound);
    // An empty batch and an empty merge add nothing: fine at the bound.
    h.push_batch(&[], &[]).unwrap();
    rest.reset();
    h.merge(&rest).unwrap();
    assert_eq!(histogram_bytes(&h), at_bound);
    // The state's own encoding still decodes.
    let mut back = InlineHistogram::<4>::new(Closure::Left);
    back.decode(&at_bound).unwrap();
    assert_eq!(back, h);
}

/// The batch push checks the bound once, for the whole batch, on both the plain and the
/// packed-lane path (≥ 1024 samples into ≤ 64 bins).
#[test]
fn a_batch_that_would_pass_the_bound_is_refused_whole() {
    for len in [10usize, 5000] {
        let scores = vec![0.7; len];
        let labels = vec![1u8; len];
        let mut h = histogram_with_counts([MAX_COUNT - len as u64 + 1, 0, 0, 0]);
        let before = histogram_bytes(&h);
        assert_eq!(
            h.push_batch(&scores, &labels),
            Err(PushError::CountOverflow)
        );
        assert_eq!(histogram_bytes(&h), before);
        // One sample fewer fits exactly.
        h.push_batch(&scores[1..], &labels[1..]).unwrap();
        assert_eq!(h.samples(), MAX_COUNT);
        assert_eq!(h.bins()[2].count(), len as u64 - 1);
    }
}

/// Defect 3: reservoir merges doubling `seen` panicked in debug and saturated in
/// release (after which a push wrapped it to 0). Now refused, nothing changed.
#[test]
fn doubling_a_reservoir_by_merges_stops_at_the_bound() {
    let mut r = InlineReservoir::<4>::new(7);
    r.push_batch(&[0.1, 0.4, 0.6, 0.9], &[0, 1, 0, 1]).unwrap();
    // 4 · 2^61 = 2^63 seen after 61 doublings would pass the bound: the 61st is refused.
    for doubling in 1..=60 {
        let copy = r.clone();
        r.merge(&copy).unwrap();
        assert_eq!(r.seen(), 4 << doubling);
    }
    let before = reservoir_bytes(&mut r);
    let copy = r.clone();
    assert_eq!(r.merge(&copy), Err(MergeError::CountOverflow));
    assert_eq!(reservoir_bytes(&mut r), before);
    // Pushes go on up to the bound exactly, then stop.
    let mut r = reservoir_with_seen(MAX_COUNT - 2, 7);
    r.push_batch(&[0.5, 0.5], &[1, 1]).unwrap();
    assert_eq!(r.seen(), MAX_COUNT);
    let at_bound = reservoir_bytes(&mut r);
    assert_eq!(r.push(0.5, 1), Err(PushError::CountOverflow));
    assert_eq!(r.push_batch(&[0.5], &[1]), Err(PushError::CountOverflow));
    assert_eq!(
        r.merge(&reservoir_with_seen(4, 1)),
        Err(MergeError::CountOverflow)
    );
    assert_eq!(reservoir_bytes(&mut r), at_bound);
    // Its own encoding decodes (it was refused as INCONSISTENT after the wrap).
    let mut back = InlineReservoir::<4>::new(0);
    back.decode(&at_bound).unwrap();
    assert_eq!(back.seen(), MAX_COUNT);
}

/// Defect 4: frames with a valid CRC whose counts or `seen` exceed the bound decoded
/// without complaint. Now `Inconsistent`, the destination unchanged; a count of exactly
/// the bound decodes, and the next push is refused.
#[test]
fn frames_with_counts_above_the_bound_are_inconsistent() {
    for too_many in [MAX_COUNT + 1, u64::MAX] {
        // Histogram: one bin above the bound.
        let mut h = InlineHistogram::<4>::new(Closure::Right);
        h.push_batch(&[0.2, 0.9], &[0, 1]).unwrap();
        let before = histogram_bytes(&h);
        let empty = histogram_bytes(&InlineHistogram::<4>::new(Closure::Left));
        let bad = patched(&empty, HISTOGRAM_BIN, too_many);
        assert_eq!(h.decode(&bad), Err(DecodeError::Inconsistent));
        assert_eq!(histogram_bytes(&h), before);

        // Reservoir and window: `seen` above the bound.
        let mut r = reservoir_with_seen(10, 3);
        let before = reservoir_bytes(&mut r);
        let bad = patched(&before, SEEN, too_many);
        assert_eq!(r.decode(&bad), Err(DecodeError::Inconsistent));
        assert_eq!(reservoir_bytes(&mut r), before);

        let mut w = window_with_seen(10);
        let before = window_bytes(&mut w);
        let bad = patched(&before, SEEN, too_many);
        assert_eq!(w.decode(&bad), Err(DecodeError::Inconsistent));
        assert_eq!(window_bytes(&mut w), before);

        // Decaying histogram: one bin above the bound.
        let mut d = Decaying::new(Closure::Left, 100.0).unwrap();
        d.push_batch(&[0.2, 0.9], &[0, 1]).unwrap();
        let before = decaying_bytes(&d);
        let bad = patched(&before, DECAYED_BIN, too_many);
        assert_eq!(d.decode(&bad), Err(DecodeError::Inconsistent));
        assert_eq!(decaying_bytes(&d), before);
    }

    // Bins each within the bound whose sum is not (and whose sum overflows a u64).
    for (a, b) in [(MAX_COUNT, 1), (MAX_COUNT, MAX_COUNT), (1 << 62, 1 << 62)] {
        let mut h = InlineHistogram::<4>::new(Closure::Left);
        let before = histogram_bytes(&h);
        let bad = patched(&before, HISTOGRAM_BIN, a);
        let bad = patched(&bad, HISTOGRAM_BIN + 32 * 3, b);
        assert_eq!(h.decode(&bad), Err(DecodeError::Inconsistent));
        assert_eq!(histogram_bytes(&h), before);

        let mut d = Decaying::new(Closure::Left, 100.0).unwrap();
        d.push_batch(&[0.1, 0.9], &[0, 1]).unwrap();
        let before = decaying_bytes(&d);
        let bad = patched(&before, DECAYED_BIN, a);
        let bad = patched(&bad, DECAYED_BIN + 40 * 3, b);
        assert_eq!(d.decode(&bad), Err(DecodeError::Inconsistent));
        assert_eq!(decaying_bytes(&d), before);
    }

    // Exactly the bound decodes; then nothing more is counted.
    let h = histogram_with_counts([MAX_COUNT - 3, 1, 1, 1]);
    assert_eq!(h.samples(), MAX_COUNT);
    let mut d = Decaying::new(Closure::Left, 100.0).unwrap();
    d.push_batch(&[0.1, 0.9], &[0, 1]).unwrap();
    let bytes = patched(&decaying_bytes(&d), DECAYED_BIN, MAX_COUNT - 1);
    d.decode(&bytes).unwrap();
    assert_eq!(d.samples(), MAX_COUNT);
    assert_eq!(d.push(0.5, 1), Err(PushError::CountOverflow));
    assert_eq!(d.push_batch(&[0.5], &[1]), Err(PushError::CountOverflow));
    assert_eq!(decaying_bytes(&d), bytes);
    let mut w = window_with_seen(MAX_COUNT);
    let before = window_bytes(&mut w);
    assert_eq!(w.push(0.5, 1), Err(PushError::CountOverflow));
    assert_eq!(window_bytes(&mut w), before);
}

/// Defect 5: a window frame with `seen` = 2^64 − 6 and a batch of 100 indexed out of
/// bounds (a panic even in release). Such a frame is now inconsistent; the largest valid
/// `seen` close to it refuses the batch with nothing changed, and takes what fits.
#[test]
fn a_window_near_the_bound_refuses_the_batch_that_would_pass_it() {
    let mut w = InlineWindow::<4>::new();
    w.push_batch(&[0.1, 0.4, 0.6, 0.9], &[0, 1, 0, 1]).unwrap();
    let before = window_bytes(&mut w);
    let bad = patched(&before, SEEN, u64::MAX - 5);
    assert_eq!(w.decode(&bad), Err(DecodeError::Inconsistent));
    assert_eq!(window_bytes(&mut w), before);

    let scores: Vec<f64> = (0..100).map(|i| f64::from(i) / 99.0).collect();
    let labels: Vec<u8> = (0..100).map(|i| (i % 2) as u8).collect();
    let mut w = window_with_seen(MAX_COUNT - 6);
    let before = window_bytes(&mut w);
    assert_eq!(
        w.push_batch(&scores, &labels),
        Err(PushError::CountOverflow)
    );
    assert_eq!(window_bytes(&mut w), before);
    // Six fit: the window then holds the last four of them.
    w.push_batch(&scores[94..], &labels[94..]).unwrap();
    assert_eq!(w.seen(), MAX_COUNT);
    let held: Vec<(f64, u8)> = w.samples().iter().collect();
    let expected: Vec<(f64, u8)> = (96..100).map(|i| (scores[i], labels[i])).collect();
    assert_eq!(held, expected);
    // A long batch (the rebuilding path) far from the bound keeps the last four.
    let mut w = window_with_seen(MAX_COUNT - 1000);
    w.push_batch(&scores, &labels).unwrap();
    assert_eq!(w.seen(), MAX_COUNT - 900);
    let held: Vec<(f64, u8)> = w.samples().iter().collect();
    assert_eq!(held, expected);
}

/// Defect 10 (a histogram of 2^27 bins encoded with its length field truncated) needs a
/// 4 GiB state, which a test cannot allocate (and `MAX_BINS` now forbids): the frame-size
/// check itself is unit-tested in `src/portable.rs`. Here: every state's `encoded_len`
/// is what `encode` writes.
#[test]
fn encoded_len_is_what_encode_writes() {
    let h = histogram_with_counts([1, 2, 3, 4]);
    assert_eq!(histogram_bytes(&h).len(), 24 + 32 * 4);
    let mut r = reservoir_with_seen(9, 1);
    assert_eq!(reservoir_bytes(&mut r).len(), 64 + 9 * 4);
    let mut w = window_with_seen(9);
    assert_eq!(window_bytes(&mut w).len(), 32 + 9 * 4);
    let d = Decaying::new(Closure::Left, 10.0).unwrap();
    assert_eq!(decaying_bytes(&d).len(), 40 + 40 * 4);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Merging histograms near the bound never wraps: it either succeeds exactly (every
    /// bin the sum of the two) or refuses with the state unchanged.
    #[test]
    fn histogram_merges_near_the_bound_are_exact_or_refused(
        a in prop::array::uniform4(0..=MAX_COUNT / 4),
        b in prop::array::uniform4(0..=MAX_COUNT / 4),
    ) {
        // Each histogram on its own is within the bound; together about half are not.
        let mut h = histogram_with_counts(a);
        let other = histogram_with_counts(b);
        let before = histogram_bytes(&h);
        let total = a.iter().chain(&b).map(|&c| u128::from(c)).sum::<u128>();
        match h.merge(&other) {
            Ok(()) => {
                prop_assert!(total <= u128::from(MAX_COUNT));
                prop_assert_eq!(u128::from(h.samples()), total);
                for k in 0..4 {
                    prop_assert_eq!(h.bins()[k].count(), a[k] + b[k]);
                }
            }
            Err(e) => {
                prop_assert_eq!(e, MergeError::CountOverflow);
                prop_assert!(total > u128::from(MAX_COUNT));
                prop_assert_eq!(histogram_bytes(&h), before);
            }
        }
    }

    /// Pushing near the bound, into a histogram, a reservoir and a window: the batch is
    /// taken whole when it fits and refused whole (state unchanged) when it does not.
    #[test]
    fn pushes_near_the_bound_are_exact_or_refused(
        room in 0u64..40,
        len in 0usize..40,
        single in any::<bool>(),
    ) {
        let start = MAX_COUNT - room;
        let scores: Vec<f64> = (0..len).map(|i| (i % 10) as f64 / 9.0).collect();
        let labels: Vec<u8> = (0..len).map(|i| (i % 3 == 0) as u8).collect();
        let fits = len as u64 <= room;

        let mut h = histogram_with_counts([start, 0, 0, 0]);
        let before = histogram_bytes(&h);
        let result = if single && len > 0 { h.push(scores[0], labels[0]) } else { h.push_batch(&scores, &labels) };
        let added = if single && len > 0 { 1 } else { len as u64 };
        if added <= room {
            prop_assert_eq!(result, Ok(()));
            prop_assert_eq!(h.samples(), start + added);
        } else {
            prop_assert_eq!(result, Err(PushError::CountOverflow));
            prop_assert_eq!(histogram_bytes(&h), before);
        }

        let mut r = reservoir_with_seen(start, room);
        let before = reservoir_bytes(&mut r);
        let result = r.push_batch(&scores, &labels);
        if fits {
            prop_assert_eq!(result, Ok(()));
            prop_assert_eq!(r.seen(), start + len as u64);
        } else {
            prop_assert_eq!(result, Err(PushError::CountOverflow));
            prop_assert_eq!(reservoir_bytes(&mut r), before);
        }

        let mut w = window_with_seen(start);
        let before = window_bytes(&mut w);
        let result = w.push_batch(&scores, &labels);
        if fits {
            prop_assert_eq!(result, Ok(()));
            prop_assert_eq!(w.seen(), start + len as u64);
            prop_assert!(w.len() == 4);
        } else {
            prop_assert_eq!(result, Err(PushError::CountOverflow));
            prop_assert_eq!(window_bytes(&mut w), before);
        }
    }

    /// Reservoir merges near the bound: `seen` is the exact sum, or the merge is refused
    /// with nothing changed.
    #[test]
    fn reservoir_merges_near_the_bound_are_exact_or_refused(
        a in 4..=MAX_COUNT,
        b in 4..=MAX_COUNT,
        seed in any::<u64>(),
    ) {
        let mut r = reservoir_with_seen(a, seed);
        let other = reservoir_with_seen(b, seed ^ 1);
        let before = reservoir_bytes(&mut r);
        match r.merge(&other) {
            Ok(()) => {
                prop_assert!(u128::from(a) + u128::from(b) <= u128::from(MAX_COUNT));
                prop_assert_eq!(r.seen(), a + b);
                prop_assert_eq!(r.len(), 4);
            }
            Err(e) => {
                prop_assert_eq!(e, MergeError::CountOverflow);
                prop_assert!(u128::from(a) + u128::from(b) > u128::from(MAX_COUNT));
                prop_assert_eq!(reservoir_bytes(&mut r), before);
            }
        }
    }
}
