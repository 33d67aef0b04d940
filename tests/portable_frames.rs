//! Portable frames with valid checksums, of every kind, into every decoder: each decodes
//! to a usable state that encodes back to the very same bytes, or is refused with a named
//! [`DecodeError`] and leaves the destination as it was; nothing panics. The frames and
//! the properties are the fuzz targets' own (fuzz/src/frames.rs and fuzz/src/decoders.rs,
//! included by path), so the fuzzers and this test check one thing.
//!
//! Also keeps the fuzz seed corpus (fuzz/corpus/decode/, one valid frame of every kind)
//! up to date: `TCE_BLESS=1 cargo test --all-features --test portable_frames` rewrites it.

#[path = "../fuzz/src/decoders.rs"]
mod decoders;
#[path = "../fuzz/src/frames.rs"]
mod frames;

use std::path::PathBuf;

use arbitrary::{Arbitrary, Unstructured};
use frames::{Frame, Kind};
use proptest::prelude::*;
use tce::portable::DecodeError;

/// Where a kind's decoder is in [`decoders::Outcomes`].
fn index(kind: Kind) -> usize {
    Kind::ALL.iter().position(|&k| k == kind).unwrap()
}

/// Only the decoder of the frame's kind may accept it; the others say `WrongKind` once the
/// header is readable.
fn at_most_its_kind(outcomes: &decoders::Outcomes) {
    let accepted: Vec<usize> = (0..outcomes.len())
        .filter(|&i| outcomes[i].is_ok())
        .collect();
    assert!(
        accepted.len() <= 1,
        "decoders {accepted:?} all accepted one frame"
    );
    if let [k] = accepted[..] {
        for (i, outcome) in outcomes.iter().enumerate().filter(|&(i, _)| i != k) {
            assert!(
                matches!(outcome, Err(DecodeError::WrongKind { .. })),
                "decoder {i} said {outcome:?} to a frame of kind {}",
                k + 1
            );
        }
    }
}

fn sample() -> impl Strategy<Value = (f64, u8)> {
    (
        prop_oneof![
            4 => 0.0..=1.0f64,
            1 => prop::sample::select(vec![0.0, 0.5, 1.0, 1.0 / 15.0, 14.0 / 15.0]),
        ],
        0..=1u8,
    )
}

fn kind() -> impl Strategy<Value = Kind> {
    prop::sample::select(Kind::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// Structure-aware frames (the fuzz target `decode_structured`'s input), built from
    /// random bytes.
    #[test]
    fn structured_frames_decode_or_are_refused(bytes in prop::collection::vec(any::<u8>(), 0..4096)) {
        let frame = Frame::arbitrary_take_rest(Unstructured::new(&bytes)).unwrap();
        at_most_its_kind(&decoders::check(&frame.to_bytes()));
    }

    /// Frames that real states wrote decode, with their own decoder only.
    #[test]
    fn recorded_frames_decode(
        kind in kind(),
        samples in prop::collection::vec(sample(), 0..300),
        half_life in 0..4000u16,
    ) {
        let outcomes = decoders::check(&frames::recorded(kind, &samples, half_life));
        prop_assert_eq!(outcomes[index(kind)], Ok(()));
        at_most_its_kind(&outcomes);
    }

    /// A word of a real state's payload overwritten (by an edge count, raw bits or an
    /// f64), then signed again: the content checks decide, and nothing panics.
    #[test]
    fn rewritten_fields_decode_or_are_refused(
        kind in kind(),
        samples in prop::collection::vec(sample(), 0..100),
        at in any::<prop::sample::Index>(),
        word in prop_oneof![
            prop::sample::select(frames::Count::EDGES.to_vec()),
            any::<u64>(),
            prop::sample::select(frames::Real::EDGES.map(f64::to_bits).to_vec()),
            (0..1000u64),
        ],
        width in prop::sample::select(vec![1usize, 4, 8]),
    ) {
        let mut frame = frames::recorded(kind, &samples, 160);
        let payload = 12..frame.len() - 4;
        let at = payload.start + at.index(payload.len().saturating_sub(width) + 1);
        let end = (at + width).min(payload.end);
        frame[at..end].copy_from_slice(&word.to_le_bytes()[..end - at]);
        let frame = frames::resign(&frame).unwrap();
        at_most_its_kind(&decoders::check(&frame));
    }

    /// Calibration alarms of any threshold (the recorded frames' are at most 8): a real
    /// alarm's frame decodes with its decoder alone, and with one payload word rewritten
    /// and the frame signed again, the content checks decide and nothing panics.
    #[test]
    fn alarm_frames_decode_or_are_refused(
        samples in prop::collection::vec(sample(), 0..300),
        threshold in 0.5..8.0f64,
        at in any::<prop::sample::Index>(),
        word in prop_oneof![
            prop::sample::select(frames::Count::EDGES.to_vec()),
            any::<u64>(),
            prop::sample::select(frames::Real::EDGES.map(f64::to_bits).to_vec()),
            (0..1000u64),
        ],
    ) {
        let mut alarm = tce::InlineAlarm::<{ frames::BINS }>::new(
            tce::Closure::Left,
            core::f64::consts::LN_2,
            threshold,
        )
        .unwrap();
        for &(score, label) in &samples {
            alarm.push(score, label).unwrap();
        }
        let mut frame = vec![0u8; alarm.encoded_len()];
        alarm.encode(&mut frame).unwrap();
        let outcomes = decoders::check(&frame);
        prop_assert_eq!(outcomes[index(Kind::Alarm)], Ok(()));
        at_most_its_kind(&outcomes);
        let payload = 12..frame.len() - 4;
        let at = payload.start + at.index(payload.len() - 8 + 1);
        frame[at..at + 8].copy_from_slice(&word.to_le_bytes());
        let frame = frames::resign(&frame).unwrap();
        at_most_its_kind(&decoders::check(&frame));
    }
}

fn corpus() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/decode")
}

/// The committed seeds are the frames `frames::seeds` builds, and each decodes with its
/// own decoder.
#[test]
fn seed_corpus_is_current() {
    let dir = corpus();
    for (kind, frame) in frames::seeds() {
        let outcomes = decoders::check(&frame);
        assert_eq!(outcomes[index(kind)], Ok(()), "the {kind:?} seed");
        at_most_its_kind(&outcomes);
        let path = dir.join(format!("seed-{}", kind.name()));
        if std::env::var_os("TCE_BLESS").is_some() {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &frame).unwrap();
        }
        let committed = std::fs::read(&path).unwrap_or_default();
        assert!(
            committed == frame,
            "{} is not the current seed. Regenerate the corpus with:\n\n    \
             TCE_BLESS=1 cargo test --all-features --test portable_frames\n",
            path.display()
        );
    }
}

/// The seeds cover what the decoders check: full and evicting reservoirs and windows, a
/// decaying histogram that has decayed, every histogram bin.
#[test]
fn seeds_are_deep_states() {
    let seeds = frames::seeds();
    let frame = |kind: Kind| &seeds[index(kind)].1;
    let mut histogram = tce::InlineHistogram::<{ frames::BINS }>::new(tce::Closure::Left);
    histogram.decode(frame(Kind::Histogram)).unwrap();
    assert!(histogram.bins().iter().all(|bin| bin.count() > 0));
    let mut window = tce::InlineWindow::<{ frames::WINDOW }>::new();
    window.decode(frame(Kind::Window)).unwrap();
    assert_eq!((window.len(), window.seen()), (frames::WINDOW, 100));
    let mut reservoir = tce::InlineReservoir::<{ frames::RESERVOIR }>::new(7);
    reservoir.decode(frame(Kind::Reservoir)).unwrap();
    assert_eq!(
        (reservoir.len(), reservoir.seen()),
        (frames::RESERVOIR, 100)
    );
    let mut buffer = tce::InlineBuffer::<{ frames::BUFFER }>::new();
    buffer.decode(frame(Kind::Buffer)).unwrap();
    assert_eq!(buffer.len(), 100);
    let mut decaying =
        tce::DecayingHistogram::<[tce::DecayedBin; frames::BINS]>::new(tce::Closure::Left, 1.0)
            .unwrap();
    decaying.decode(frame(Kind::Decaying)).unwrap();
    assert_eq!(decaying.samples(), 100);
    assert!((decaying.half_life() - 161.0 / 16.0).abs() < 1e-9);
    // Threshold 161/64 ≈ 2.5: 100 samples of a miscalibrated stream raise the alarm.
    let mut alarm =
        tce::InlineAlarm::<{ frames::BINS }>::new(tce::Closure::Left, 1.0, 1.0).unwrap();
    alarm.decode(frame(Kind::Alarm)).unwrap();
    assert_eq!(alarm.samples(), 100);
    assert_eq!(alarm.threshold(), 161.0 / 64.0);
    assert!(alarm.alarm());
}

/// A re-signed frame whose bin holds a mean score outside the bin's edges (a bin [0, 0.5)
/// whose mean score is 0.9) is refused as impossible, for the exact histogram and the
/// decaying one, and the destination keeps its state.
#[test]
fn a_bin_whose_mean_score_lies_outside_its_edges_is_refused() {
    use tce::{Closure, DecayingHistogram, Histogram};
    let (scores, labels) = ([0.1, 0.3, 0.7], [0u8, 1, 1]);

    let mut histogram = Histogram::<[tce::BinStats; 2]>::new(Closure::Left);
    histogram.push_batch(&scores, &labels).unwrap();
    let mut frame = vec![0u8; histogram.encoded_len()];
    histogram.encode(&mut frame).unwrap();
    // Bin 0 (2 samples) starts after the 12-byte header and the closure and bin count:
    // count, hits, then the score sum in units of 2^-64 (low word, high word).
    let at = 12 + 8 + 16;
    let mean_of_0_9 = (1.8 * 2f64.powi(64)) as u128; // 2 samples of 0.9
    let mut tampered = frame.clone();
    tampered[at..at + 8].copy_from_slice(&(mean_of_0_9 as u64).to_le_bytes());
    tampered[at + 8..at + 16].copy_from_slice(&((mean_of_0_9 >> 64) as u64).to_le_bytes());
    let tampered = frames::resign(&tampered).unwrap();
    let mut destination = Histogram::<[tce::BinStats; 2]>::new(Closure::Left);
    destination.push(0.2, 1).unwrap();
    let before = destination.bins().to_vec();
    assert_eq!(
        destination.decode(&tampered),
        Err(DecodeError::Inconsistent)
    );
    assert_eq!(destination.bins(), &before[..]);
    // The untouched frame decodes, and a sum at the bin's very edges (0 and just under
    // 0.5 for both samples) is possible, so it decodes too.
    destination.decode(&frame).unwrap();
    for sum in [0u128, (2f64.powi(64) - 2f64.powi(12)) as u128] {
        let mut edge = frame.clone();
        edge[at..at + 8].copy_from_slice(&(sum as u64).to_le_bytes());
        edge[at + 8..at + 16].copy_from_slice(&((sum >> 64) as u64).to_le_bytes());
        destination.decode(&frames::resign(&edge).unwrap()).unwrap();
    }

    let mut decaying =
        DecayingHistogram::<[tce::DecayedBin; 2]>::new(Closure::Left, 100.0).unwrap();
    decaying.push_batch(&scores, &labels).unwrap();
    let mut frame = vec![0u8; decaying.encoded_len()];
    decaying.encode(&mut frame).unwrap();
    // Bin 0 starts after the header and 24 bytes (closure, bin count, λ, next weight):
    // count, weight, hit weight, score weight, squared weight.
    let bin = 12 + 24;
    let weight = f64::from_le_bytes(frame[bin + 8..bin + 16].try_into().unwrap());
    let mut tampered = frame.clone();
    tampered[bin + 24..bin + 32].copy_from_slice(&(0.9 * weight).to_le_bytes());
    let tampered = frames::resign(&tampered).unwrap();
    let mut destination =
        DecayingHistogram::<[tce::DecayedBin; 2]>::new(Closure::Left, 100.0).unwrap();
    assert_eq!(
        destination.decode(&tampered),
        Err(DecodeError::Inconsistent)
    );
    assert_eq!(destination.samples(), 0);
    destination.decode(&frame).unwrap();
    assert_eq!(destination.samples(), 3);
}
