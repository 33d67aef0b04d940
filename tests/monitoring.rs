//! Monitoring states: portable bytes and concurrent recording.

use proptest::prelude::*;
use tce::portable::{crc32, DecodeError, EncodeError, FORMAT_VERSION};
use tce::{
    BinStats, Closure, ConcurrentHistogram, Histogram, InlineBuffer, InlineHistogram, Norm, Slot,
    SortedBuffer,
};

fn samples(max: usize) -> impl Strategy<Value = (Vec<f64>, Vec<u8>)> {
    prop::collection::vec(
        (prop_oneof![0.0..=1.0f64, Just(1.0), Just(0.5)], 0u8..=1),
        0..max,
    )
    .prop_map(|v| v.into_iter().unzip())
}

fn histogram_bytes(
    scores: &[f64],
    labels: &[u8],
    closure: Closure,
) -> (InlineHistogram<15>, Vec<u8>) {
    let mut h = InlineHistogram::<15>::new(closure);
    h.push_batch(scores, labels).unwrap();
    let mut bytes = vec![0u8; h.encoded_len()];
    assert_eq!(h.encode(&mut bytes), Ok(bytes.len()));
    (h, bytes)
}

#[test]
fn crc32_known_value() {
    // The standard check value of CRC-32/IEEE.
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn histogram_frame_layout() {
    let (_, bytes) = histogram_bytes(&[0.5], &[1], Closure::Right);
    assert_eq!(&bytes[0..4], b"TCE\0");
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), FORMAT_VERSION);
    assert_eq!(u16::from_le_bytes([bytes[6], bytes[7]]), 1);
    assert_eq!(
        u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
        8 + 32 * 15
    );
    assert_eq!(bytes[12], 1, "closure right");
    assert_eq!(bytes.len(), 12 + 8 + 32 * 15 + 4);
    let mut short = [0u8; 10];
    assert_eq!(
        InlineHistogram::<15>::new(Closure::Left).encode(&mut short),
        Err(EncodeError::BufferTooSmall {
            needed: bytes.len()
        })
    );
}

#[test]
fn every_truncation_and_every_flipped_byte_is_a_named_error() {
    let (_, bytes) = histogram_bytes(&[0.1, 0.5, 0.9, 1.0], &[0, 1, 1, 1], Closure::Left);
    let mut target = InlineHistogram::<15>::new(Closure::Left);
    target.push(0.3, 1).unwrap();
    let before = target.clone();
    for cut in 0..bytes.len() {
        assert_eq!(
            target.decode(&bytes[..cut]),
            Err(DecodeError::Truncated),
            "cut at {cut}"
        );
    }
    for i in 0..bytes.len() {
        for bit in 0..8 {
            let mut corrupted = bytes.clone();
            corrupted[i] ^= 1 << bit;
            assert!(
                target.decode(&corrupted).is_err(),
                "flip byte {i} bit {bit}"
            );
        }
    }
    assert_eq!(target, before, "a failed decode changed the state");

    let mut other_version = bytes.clone();
    other_version[4] = 2;
    assert_eq!(
        target.decode(&other_version),
        Err(DecodeError::UnsupportedVersion { found: 2 })
    );
    let mut not_tce = bytes.clone();
    not_tce[0] = b'X';
    assert_eq!(target.decode(&not_tce), Err(DecodeError::BadMagic));
    let mut longer = bytes.clone();
    longer.push(0);
    assert_eq!(target.decode(&longer), Err(DecodeError::Inconsistent));
    let mut fewer_bins = InlineHistogram::<10>::new(Closure::Left);
    assert_eq!(
        fewer_bins.decode(&bytes),
        Err(DecodeError::BinCountMismatch {
            expected: 10,
            found: 15
        })
    );
    let mut buffer = InlineBuffer::<8>::new();
    assert_eq!(
        buffer.decode(&bytes),
        Err(DecodeError::WrongKind { found: 1 })
    );
}

/// Re-signs a frame after editing it, so that the checks behind the checksum are reached.
fn resign(bytes: &mut [u8]) {
    let end = bytes.len() - 4;
    let crc = crc32(&bytes[..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn impossible_contents_are_refused_even_with_a_valid_checksum() {
    let (_, bytes) = histogram_bytes(&[0.5, 0.6], &[1, 1], Closure::Left);
    let mut target = InlineHistogram::<15>::new(Closure::Left);
    let mut bad_closure = bytes.clone();
    bad_closure[12] = 7;
    resign(&mut bad_closure);
    assert_eq!(target.decode(&bad_closure), Err(DecodeError::Inconsistent));
    // Bin 7 holds both samples: claim 3 hits out of 2.
    let mut too_many_hits = bytes.clone();
    too_many_hits[12 + 8 + 32 * 7 + 8] = 3;
    resign(&mut too_many_hits);
    assert_eq!(
        target.decode(&too_many_hits),
        Err(DecodeError::Inconsistent)
    );
    // Counts that sum beyond u64 (the estimates sum them): bins 0 and 1 at 2^63 each.
    let mut overflowing = bytes.clone();
    for k in 0..2 {
        overflowing[12 + 8 + 32 * k..][..8].copy_from_slice(&(1u64 << 63).to_le_bytes());
    }
    resign(&mut overflowing);
    assert_eq!(target.decode(&overflowing), Err(DecodeError::Inconsistent));
    // A buffer sample with score 2.0.
    let mut buffer = InlineBuffer::<4>::new();
    buffer.push(0.5, 1).unwrap();
    let mut bytes = vec![0u8; buffer.encoded_len()];
    buffer.encode(&mut bytes).unwrap();
    bytes[16..24].copy_from_slice(&2.0f64.to_bits().to_le_bytes());
    resign(&mut bytes);
    let mut target = InlineBuffer::<4>::new();
    assert_eq!(target.decode(&bytes), Err(DecodeError::Inconsistent));
    // −0: a valid confidence, but states store +0 and no encoder writes it.
    bytes[16..24].copy_from_slice(&(-0.0f64).to_bits().to_le_bytes());
    resign(&mut bytes);
    assert_eq!(target.decode(&bytes), Err(DecodeError::Inconsistent));
    assert!(target.is_empty());
    let mut small = InlineBuffer::<1>::new();
    let mut two = InlineBuffer::<2>::new();
    two.push_batch(&[0.1, 0.2], &[0, 1]).unwrap();
    let mut bytes = vec![0u8; two.encoded_len()];
    two.encode(&mut bytes).unwrap();
    assert_eq!(
        small.decode(&bytes),
        Err(DecodeError::Full {
            capacity: 1,
            found: 2
        })
    );
}

proptest! {
    #[test]
    fn histogram_round_trips((scores, labels) in samples(300), right in any::<bool>()) {
        let closure = if right { Closure::Right } else { Closure::Left };
        let (h, bytes) = histogram_bytes(&scores, &labels, closure);
        let mut back = InlineHistogram::<15>::new(Closure::Left);
        back.decode(&bytes).unwrap();
        prop_assert_eq!(back, h);
    }

    #[test]
    fn merging_decoded_states_equals_merging_the_originals(
        (a_scores, a_labels) in samples(200), (b_scores, b_labels) in samples(200)
    ) {
        let (mut a, _) = histogram_bytes(&a_scores, &a_labels, Closure::Left);
        let (b, b_bytes) = histogram_bytes(&b_scores, &b_labels, Closure::Left);
        let (mut a_again, _) = histogram_bytes(&a_scores, &a_labels, Closure::Left);
        let mut b_decoded = InlineHistogram::<15>::new(Closure::Left);
        b_decoded.decode(&b_bytes).unwrap();
        a.merge(&b).unwrap();
        a_again.merge(&b_decoded).unwrap();
        prop_assert_eq!(a, a_again);
    }

    #[test]
    fn buffer_round_trips_in_arrival_order((scores, labels) in samples(300), sort_first in any::<bool>()) {
        let mut storage = vec![Slot::EMPTY; 300];
        let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
        buffer.push_batch(&scores, &labels).unwrap();
        if sort_first {
            let _ = buffer.sorted();
        }
        let mut bytes = vec![0u8; buffer.encoded_len()];
        buffer.encode(&mut bytes).unwrap();
        let decoded: Vec<(f64, u8)> = bytes[16..bytes.len() - 4]
            .chunks_exact(9)
            .map(|c| (f64::from_bits(u64::from_le_bytes(c[..8].try_into().unwrap())), c[8]))
            .collect();
        let pushed: Vec<(f64, u8)> = scores.iter().copied().zip(labels.iter().copied()).collect();
        prop_assert_eq!(decoded, pushed);
        let mut other = vec![Slot::EMPTY; 300];
        let mut back = SortedBuffer::with_storage(&mut other).unwrap();
        back.push(0.25, 0).unwrap();
        back.decode(&bytes).unwrap();
        let a: Vec<(f64, u8)> = back.sorted().iter().collect();
        let b: Vec<(f64, u8)> = buffer.sorted().iter().collect();
        prop_assert_eq!(a, b);
    }

    #[test]
    fn decoding_random_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..600)) {
        let mut h = InlineHistogram::<15>::new(Closure::Left);
        let _ = h.decode(&bytes);
        let mut b = InlineBuffer::<64>::new();
        let _ = b.decode(&bytes);
        let mut w = tce::InlineWindow::<64>::new();
        let _ = w.decode(&bytes);
        let mut d = tce::DecayingHistogram::<[tce::DecayedBin; 15]>::new(Closure::Left, 10.0).unwrap();
        let _ = d.decode(&bytes);
    }
}

#[test]
fn concurrent_pushes_equal_the_same_pushes_made_sequentially() {
    // Four shards: each thread pushes mostly into its own (thread t names shard t + 4,
    // the same modulo 4), and now and then into the shared shard 0.
    static SHARED: ConcurrentHistogram<[[tce::AtomicBin; 15]; 4]> =
        ConcurrentHistogram::new(Closure::Left);
    assert_eq!(SHARED.shard_count(), 4);
    let threads = 4;
    let per_thread = 50_000;
    let stream = |t: usize| -> (Vec<f64>, Vec<u8>) {
        (0..per_thread)
            .map(|i| {
                let x = ((t * 7919 + i * 104_729) % 100_003) as f64 / 100_002.0;
                (x, u8::from((i + t) % 3 != 0))
            })
            .unzip()
    };
    std::thread::scope(|scope| {
        for t in 0..threads {
            scope.spawn(move || {
                let (scores, labels) = stream(t);
                for (chunk, (s, l)) in scores.chunks(1000).zip(labels.chunks(1000)).enumerate() {
                    match chunk % 4 {
                        0 => SHARED.push_batch_to(t + 4, s, l).unwrap(),
                        1 => s
                            .iter()
                            .zip(l)
                            .for_each(|(&s, &l)| SHARED.push_to(t + 4, s, l).unwrap()),
                        2 => SHARED.push_batch(s, l).unwrap(),
                        _ => s
                            .iter()
                            .zip(l)
                            .for_each(|(&s, &l)| SHARED.push(s, l).unwrap()),
                    }
                }
            });
        }
        // Readable while being written.
        scope.spawn(|| {
            let mut storage = vec![BinStats::EMPTY; 15];
            let mut snapshot = Histogram::with_storage(&mut storage, Closure::Left).unwrap();
            for _ in 0..100 {
                SHARED.snapshot_into(&mut snapshot).unwrap();
                assert!(snapshot.samples() <= (threads * per_thread) as u64);
                if snapshot.samples() > 0 {
                    let e = snapshot.ece_bin(Norm::L2).unwrap();
                    assert!((0.0..=1.0).contains(&e.value));
                }
            }
        });
    });
    let mut sequential = InlineHistogram::<15>::new(Closure::Left);
    for t in 0..threads {
        let (scores, labels) = stream(t);
        sequential.push_batch(&scores, &labels).unwrap();
    }
    let mut snapshot = InlineHistogram::<15>::new(Closure::Left);
    SHARED.snapshot_into(&mut snapshot).unwrap();
    assert_eq!(snapshot.samples(), (threads * per_thread) as u64);
    assert_eq!(
        snapshot, sequential,
        "concurrent recording lost or changed something"
    );
    SHARED.reset();
    SHARED.snapshot_into(&mut snapshot).unwrap();
    assert_eq!(snapshot.samples(), 0);
}

#[test]
fn concurrent_histogram_refuses_bad_input_and_mismatched_snapshots() {
    let h = ConcurrentHistogram::<[tce::AtomicBin; 4]>::new(Closure::Right);
    assert!(h.push(f64::NAN, 1).is_err());
    assert!(h.push_batch(&[0.5, 2.0], &[1, 1]).is_err());
    let mut wrong_bins = InlineHistogram::<5>::new(Closure::Right);
    assert!(h.snapshot_into(&mut wrong_bins).is_err());
    let mut wrong_closure = InlineHistogram::<4>::new(Closure::Left);
    assert!(h.snapshot_into(&mut wrong_closure).is_err());
    let mut snapshot = InlineHistogram::<4>::new(Closure::Right);
    h.snapshot_into(&mut snapshot).unwrap();
    assert_eq!(snapshot.samples(), 0, "refused input was recorded");
}

mod window {
    use super::*;
    use tce::{Binning, InlineWindow, SlidingWindow, SweepOptions, Ties};

    proptest! {
        #[test]
        fn a_window_equals_a_fresh_buffer_of_the_last_n_samples(
            data in prop::collection::vec((prop_oneof![0.0..=1.0f64, Just(1.0), Just(0.5), Just(0.0)], 0u8..=1), 1..400),
            window_size in 1usize..60,
            batch in any::<bool>(),
            chunk in 1usize..120,
        ) {
            let (scores, labels): (Vec<f64>, Vec<u8>) = data.into_iter().unzip();
            let (mut slots, mut ring) = (vec![Slot::EMPTY; window_size], vec![0.0; window_size]);
            let mut window = SlidingWindow::with_storage(&mut slots, &mut ring).unwrap();
            if batch {
                // Batches of every length: short ones push one by one, long ones rebuild.
                for (s, l) in scores.chunks(chunk).zip(labels.chunks(chunk)) {
                    window.push_batch(s, l).unwrap();
                    if chunk % 3 == 0 {
                        let _ = window.samples();
                    }
                }
            } else {
                for (i, (&s, &l)) in scores.iter().zip(&labels).enumerate() {
                    window.push(s, l).unwrap();
                    if i % 7 == 0 {
                        let _ = window.samples(); // reading in between changes nothing
                    }
                }
            }
            let start = scores.len().saturating_sub(window_size);
            let mut storage = vec![Slot::EMPTY; window_size];
            let mut fresh = SortedBuffer::with_storage(&mut storage).unwrap();
            fresh.push_batch(&scores[start..], &labels[start..]).unwrap();
            prop_assert_eq!(window.len(), scores.len() - start);
            prop_assert_eq!(window.seen(), scores.len() as u64);
            prop_assert_eq!(window.hits(), fresh.hits());
            let expected = fresh.sorted();
            let held = window.samples();
            prop_assert_eq!(held.iter().collect::<Vec<_>>(), expected.iter().collect::<Vec<_>>());
            for binning in [Binning::EQUAL_MASS, Binning::EqualMass(Ties::Keep), Binning::EQUAL_WIDTH] {
                prop_assert_eq!(held.ece_bin(binning, 7, Norm::L2), expected.ece_bin(binning, 7, Norm::L2));
                prop_assert_eq!(held.ece_debias(binning, 5, Norm::L2), expected.ece_debias(binning, 5, Norm::L2));
                prop_assert_eq!(held.mce(binning, 3), expected.mce(binning, 3));
                prop_assert_eq!(
                    held.ece_sweep(binning, Norm::L1, SweepOptions::default()),
                    expected.ece_sweep(binning, Norm::L1, SweepOptions::default())
                );
            }
        }
    }

    fn window_state<S: AsRef<[Slot]> + AsMut<[Slot]>, R: AsRef<[f64]> + AsMut<[f64]>>(
        w: &mut SlidingWindow<S, R>,
    ) -> (Vec<(f64, u8)>, u64, u64) {
        let held = w.samples().iter().collect();
        (held, w.seen(), w.hits())
    }

    fn window_bytes<S: AsRef<[Slot]> + AsMut<[Slot]>, R: AsRef<[f64]> + AsMut<[f64]>>(
        w: &mut SlidingWindow<S, R>,
    ) -> Vec<u8> {
        let mut bytes = vec![0u8; w.encoded_len()];
        assert_eq!(w.encode(&mut bytes), Ok(bytes.len()));
        bytes
    }

    proptest! {
        #[test]
        fn a_decoded_window_goes_on_exactly_like_the_original(
            data in prop::collection::vec((prop_oneof![0.0..=1.0f64, Just(1.0), Just(0.5), Just(0.0)], 0u8..=1), 0..300),
            window_size in 1usize..40,
            split in 0usize..300,
            read_first in any::<bool>(),
            batch in any::<bool>(),
        ) {
            let (scores, labels): (Vec<f64>, Vec<u8>) = data.into_iter().unzip();
            let split = split.min(scores.len());
            let (mut slots, mut ring) = (vec![Slot::EMPTY; window_size], vec![0.0; window_size]);
            let mut original = SlidingWindow::with_storage(&mut slots, &mut ring).unwrap();
            // Long batches rebuild the window, short ones evict one by one.
            original.push_batch(&scores[..split / 2], &labels[..split / 2]).unwrap();
            for (&s, &l) in scores[split / 2..split].iter().zip(&labels[split / 2..split]) {
                original.push(s, l).unwrap();
            }
            if read_first {
                let _ = original.samples(); // sorted by score when encoded
            }
            let bytes = window_bytes(&mut original);
            prop_assert_eq!(bytes.len(), 12 + 16 + 9 * original.len() + 4);
            let (mut slots2, mut ring2) = (vec![Slot::EMPTY; window_size], vec![0.0; window_size]);
            let mut copy = SlidingWindow::with_storage(&mut slots2, &mut ring2).unwrap();
            copy.push_batch(&[0.25, 0.75], &[1, 0]).unwrap(); // replaced whole
            copy.decode(&bytes).unwrap();
            prop_assert_eq!(window_bytes(&mut copy), bytes.clone(), "re-encoding differs");
            prop_assert_eq!(window_state(&mut copy), window_state(&mut original));
            let (rest_s, rest_l) = (&scores[split..], &labels[split..]);
            if batch {
                original.push_batch(rest_s, rest_l).unwrap();
                copy.push_batch(rest_s, rest_l).unwrap();
            } else {
                for (&s, &l) in rest_s.iter().zip(rest_l) {
                    original.push(s, l).unwrap();
                    copy.push(s, l).unwrap();
                }
            }
            prop_assert_eq!(copy.len(), original.len());
            prop_assert_eq!(window_state(&mut copy), window_state(&mut original));
            prop_assert_eq!(
                copy.samples().ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default()),
                original.samples().ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
            );
            prop_assert_eq!(window_bytes(&mut copy), window_bytes(&mut original));
        }
    }

    #[test]
    fn window_frame_layout_and_named_errors() {
        let mut window = InlineWindow::<4>::new();
        window
            .push_batch(&[0.9, 0.1, 0.5, 0.3, 0.7, 0.2], &[1, 0, 1, 0, 1, 1])
            .unwrap();
        let _ = window.samples();
        let bytes = window_bytes(&mut window);
        assert_eq!(u16::from_le_bytes([bytes[6], bytes[7]]), 4, "kind");
        assert_eq!(
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
            16 + 9 * 4
        );
        assert_eq!(
            u32::from_le_bytes(bytes[12..16].try_into().unwrap()),
            4,
            "size"
        );
        assert_eq!(
            u64::from_le_bytes(bytes[16..24].try_into().unwrap()),
            6,
            "seen"
        );
        assert_eq!(
            u32::from_le_bytes(bytes[24..28].try_into().unwrap()),
            4,
            "held"
        );
        let held: Vec<(f64, u8)> = bytes[28..bytes.len() - 4]
            .chunks_exact(9)
            .map(|c| {
                (
                    f64::from_bits(u64::from_le_bytes(c[..8].try_into().unwrap())),
                    c[8],
                )
            })
            .collect();
        assert_eq!(
            held,
            vec![(0.5, 1), (0.3, 0), (0.7, 1), (0.2, 1)],
            "arrival order"
        );
        let mut short = [0u8; 20];
        assert_eq!(
            window.encode(&mut short),
            Err(EncodeError::BufferTooSmall {
                needed: bytes.len()
            })
        );

        let mut other_size = InlineWindow::<5>::new();
        assert_eq!(
            other_size.decode(&bytes),
            Err(DecodeError::CapacityMismatch {
                expected: 5,
                found: 4
            })
        );
        let mut reservoir = tce::InlineReservoir::<4>::new(1);
        assert_eq!(
            reservoir.decode(&bytes),
            Err(DecodeError::WrongKind { found: 4 })
        );
        let (_, histogram) = histogram_bytes(&[0.5], &[1], Closure::Left);
        let mut target = InlineWindow::<4>::new();
        assert_eq!(
            target.decode(&histogram),
            Err(DecodeError::WrongKind { found: 1 })
        );
        let mut reservoir = tce::InlineReservoir::<4>::new(1);
        reservoir.push(0.5, 1).unwrap();
        let mut reservoir_bytes = vec![0u8; reservoir.encoded_len()];
        reservoir.encode(&mut reservoir_bytes).unwrap();
        assert_eq!(
            target.decode(&reservoir_bytes),
            Err(DecodeError::WrongKind { found: 3 })
        );
        let mut too_big = InlineWindow::<8>::new();
        too_big.push_batch(&[0.5; 6], &[1; 6]).unwrap();
        let six = window_bytes(&mut too_big);
        let mut eight = six.clone();
        eight[12] = 4; // claims size 4, holds 6
        resign(&mut eight);
        assert_eq!(
            target.decode(&eight),
            Err(DecodeError::Full {
                capacity: 4,
                found: 6
            })
        );
    }

    #[test]
    fn every_truncation_and_flipped_bit_of_a_window_is_an_error() {
        let mut window = InlineWindow::<6>::new();
        window
            .push_batch(
                &[0.1, 0.9, 0.4, 0.4, 0.6, 0.3, 0.8, 0.2],
                &[0, 1, 1, 0, 1, 0, 1, 0],
            )
            .unwrap();
        let bytes = window_bytes(&mut window);
        let mut target = InlineWindow::<6>::new();
        target.push_batch(&[0.5, 0.7], &[1, 1]).unwrap();
        let before = window_state(&mut target);
        for cut in 0..bytes.len() {
            assert_eq!(
                target.decode(&bytes[..cut]),
                Err(DecodeError::Truncated),
                "cut {cut}"
            );
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut corrupted = bytes.clone();
                corrupted[i] ^= 1 << bit;
                assert!(
                    target.decode(&corrupted).is_err(),
                    "flip byte {i} bit {bit}"
                );
            }
        }
        assert_eq!(
            window_state(&mut target),
            before,
            "a failed decode changed the window"
        );
    }

    #[test]
    fn impossible_windows_are_refused_even_with_a_valid_checksum() {
        let mut window = InlineWindow::<4>::new();
        window
            .push_batch(&[0.1, 0.9, 0.4, 0.6, 0.3], &[0, 1, 1, 0, 1])
            .unwrap();
        let bytes = window_bytes(&mut window);
        let mut target = InlineWindow::<4>::new();
        target.push(0.5, 1).unwrap();
        let before = window_state(&mut target);
        type Edit = (&'static str, fn(&mut Vec<u8>));
        let edits: [Edit; 7] = [
            ("seen 3, but 4 held", |b| {
                b[16..24].copy_from_slice(&3u64.to_le_bytes())
            }),
            ("seen 0", |b| b[16..24].copy_from_slice(&0u64.to_le_bytes())),
            ("score 2", |b| {
                b[28..36].copy_from_slice(&2.0f64.to_bits().to_le_bytes())
            }),
            ("score −0", |b| {
                b[28..36].copy_from_slice(&(-0.0f64).to_bits().to_le_bytes())
            }),
            ("score NaN", |b| {
                b[37..45].copy_from_slice(&f64::NAN.to_bits().to_le_bytes())
            }),
            ("label 2", |b| b[28 + 8] = 2),
            ("3 held of 4 seen, length unchanged", |b| b[24] = 3),
        ];
        for (what, edit) in edits {
            let mut bad = bytes.clone();
            edit(&mut bad);
            resign(&mut bad);
            assert_eq!(
                target.decode(&bad),
                Err(DecodeError::Inconsistent),
                "{what}"
            );
        }
        // Fewer held than min(N, seen), consistently framed: one sample dropped.
        let mut fewer = bytes.clone();
        fewer.drain(28..37);
        fewer[24] = 3;
        let payload = (fewer.len() - 16) as u32;
        fewer[8..12].copy_from_slice(&payload.to_le_bytes());
        resign(&mut fewer);
        assert_eq!(target.decode(&fewer), Err(DecodeError::Inconsistent));
        assert_eq!(window_state(&mut target), before);
        // ... which is a window that has seen 3 once the count says so.
        fewer[16..24].copy_from_slice(&3u64.to_le_bytes());
        resign(&mut fewer);
        assert_eq!(target.decode(&fewer), Ok(()));
        assert_eq!((target.len(), target.seen(), target.hits()), (3, 3, 2));
    }

    #[test]
    fn window_refuses_bad_input_whole_and_bad_storage() {
        let mut window = InlineWindow::<4>::new();
        window.push_batch(&[0.1, 0.2, 0.3], &[0, 1, 1]).unwrap();
        let before: Vec<(f64, u8)> = window.samples().iter().collect();
        assert!(window.push_batch(&[0.4, f64::NAN], &[1, 1]).is_err());
        assert!(window.push(0.4, 2).is_err());
        assert_eq!(window.samples().iter().collect::<Vec<_>>(), before);
        assert_eq!(window.seen(), 3);
        let (mut slots, mut ring) = (vec![Slot::EMPTY; 4], vec![0.0; 3]);
        assert_eq!(
            SlidingWindow::with_storage(&mut slots, &mut ring).unwrap_err(),
            tce::ConfigError::StorageMismatch { slots: 4, ring: 3 }
        );
        assert_eq!(
            SlidingWindow::with_storage(&mut [], &mut []).unwrap_err(),
            tce::ConfigError::ZeroCapacity
        );
        window.clear();
        assert!(window.is_empty());
        assert_eq!(
            window.samples().ece_bin(Binning::EQUAL_MASS, 2, Norm::L2),
            Err(tce::EstimateError::NoSamples)
        );
    }
}

mod reservoir {
    use super::*;
    use tce::{InlineReservoir, Reservoir};

    /// Item i of a stream gets score i / (len − 1) and label i % 2, so held samples name
    /// their items.
    fn stream(len: usize) -> (Vec<f64>, Vec<u8>) {
        (0..len)
            .map(|i| (i as f64 / (len - 1) as f64, (i % 2) as u8))
            .unzip()
    }

    fn item(score: f64, len: usize) -> usize {
        (score * (len - 1) as f64).round() as usize
    }

    #[test]
    fn every_item_is_held_with_probability_capacity_over_seen() {
        let (len, runs) = (40, 4000);
        let (scores, labels) = stream(len);
        let mut held = vec![0u32; len];
        for seed in 0..runs {
            let mut r = InlineReservoir::<10>::new(seed);
            r.push_batch(&scores, &labels).unwrap();
            assert_eq!((r.len(), r.seen()), (10, len as u64));
            for (score, label) in r.samples().iter() {
                let i = item(score, len);
                assert_eq!(label as usize, i % 2);
                held[i] += 1;
            }
        }
        // Each item: Binomial(4000, 1/4): mean 1000, sd ≈ 27; allow 5 sd.
        assert!(held.iter().all(|&h| (865..=1135).contains(&h)), "{held:?}");
    }

    #[test]
    fn a_merge_is_a_uniform_sample_of_both_streams() {
        // Stream A has 30 items, B 90: after merging, every item of either is held with
        // probability 10/120, whichever device saw it.
        let total = 120;
        let (scores, labels) = stream(total);
        let runs = 6000;
        let mut held = vec![0u32; total];
        for seed in 0..runs {
            let mut a = InlineReservoir::<10>::new(seed);
            let mut b = InlineReservoir::<10>::new(seed + 1_000_000);
            a.push_batch(&scores[..30], &labels[..30]).unwrap();
            b.push_batch(&scores[30..], &labels[30..]).unwrap();
            a.merge(&b).unwrap();
            assert_eq!((a.len(), a.seen()), (10, 120));
            for (score, _) in a.samples().iter() {
                held[item(score, total)] += 1;
            }
        }
        // Binomial(6000, 1/12): mean 500, sd ≈ 21.4; allow 5 sd. Compare the two sides too.
        assert!(held.iter().all(|&h| (393..=607).contains(&h)), "{held:?}");
        let side_a: u32 = held[..30].iter().sum();
        let side_b: u32 = held[30..].iter().sum();
        // Expected 15 000 and 45 000 of 60 000 draws.
        assert!(
            (14_400..=15_600).contains(&side_a) && (44_400..=45_600).contains(&side_b),
            "{side_a} {side_b}"
        );
    }

    #[test]
    fn small_streams_are_kept_whole_and_merged_whole() {
        let mut a = InlineReservoir::<10>::new(1);
        let mut b = InlineReservoir::<10>::new(2);
        a.push_batch(&[0.1, 0.2, 0.3], &[0, 1, 0]).unwrap();
        b.push_batch(&[0.4, 0.5], &[1, 1]).unwrap();
        a.merge(&b).unwrap();
        let held: Vec<(f64, u8)> = a.samples().iter().collect();
        assert_eq!(held, vec![(0.1, 0), (0.2, 1), (0.3, 0), (0.4, 1), (0.5, 1)]);
        assert_eq!(a.seen(), 5);
        let small = InlineReservoir::<5>::new(3);
        assert_eq!(
            a.merge(&small),
            Err(tce::MergeError::CapacityMismatch { left: 10, right: 5 })
        );
        assert_eq!(a.seen(), 5, "a refused merge changed the reservoir");
    }

    #[test]
    fn a_decoded_reservoir_continues_exactly_like_the_original() {
        let (scores, labels) = stream(500);
        let mut storage = vec![Slot::EMPTY; 50];
        let mut original = Reservoir::with_storage(&mut storage, 9).unwrap();
        original.push_batch(&scores[..300], &labels[..300]).unwrap();
        let mut bytes = vec![0u8; original.encoded_len()];
        original.encode(&mut bytes).unwrap();
        let mut copy = InlineReservoir::<50>::new(0);
        copy.decode(&bytes).unwrap();
        assert_eq!(copy.seen(), 300);
        original.push_batch(&scores[300..], &labels[300..]).unwrap();
        copy.push_batch(&scores[300..], &labels[300..]).unwrap();
        assert_eq!(
            copy.samples().iter().collect::<Vec<_>>(),
            original.samples().iter().collect::<Vec<_>>()
        );

        let mut wrong = InlineReservoir::<49>::new(0);
        assert_eq!(
            wrong.decode(&bytes),
            Err(DecodeError::CapacityMismatch {
                expected: 49,
                found: 50
            })
        );
        let mut truncated = InlineReservoir::<50>::new(0);
        for cut in [0, 11, 20, bytes.len() - 1] {
            assert_eq!(truncated.decode(&bytes[..cut]), Err(DecodeError::Truncated));
        }
        assert_eq!(truncated.seen(), 0);
    }

    #[test]
    fn merging_decoded_reservoirs_equals_merging_the_originals() {
        let (scores, labels) = stream(400);
        let mut a = InlineReservoir::<20>::new(5);
        let mut b = InlineReservoir::<20>::new(6);
        a.push_batch(&scores[..150], &labels[..150]).unwrap();
        b.push_batch(&scores[150..], &labels[150..]).unwrap();
        let mut a_bytes = vec![0u8; a.encoded_len()];
        let mut b_bytes = vec![0u8; b.encoded_len()];
        a.encode(&mut a_bytes).unwrap();
        b.encode(&mut b_bytes).unwrap();
        let (mut a2, mut b2) = (InlineReservoir::<20>::new(0), InlineReservoir::<20>::new(0));
        a2.decode(&a_bytes).unwrap();
        b2.decode(&b_bytes).unwrap();
        a.merge(&b).unwrap();
        a2.merge(&b2).unwrap();
        assert_eq!(a.seen(), a2.seen());
        assert_eq!(
            a.samples().iter().collect::<Vec<_>>(),
            a2.samples().iter().collect::<Vec<_>>()
        );
    }

    #[test]
    fn bad_input_is_refused_whole() {
        let mut r = InlineReservoir::<4>::new(1);
        r.push_batch(&[0.1, 0.2], &[0, 1]).unwrap();
        assert!(r.push_batch(&[0.3, 1.5], &[1, 1]).is_err());
        assert!(r.push(0.3, 9).is_err());
        assert_eq!((r.len(), r.seen()), (2, 2));
        assert_eq!(
            Reservoir::with_storage(&mut [], 1).unwrap_err(),
            tce::ConfigError::ZeroCapacity
        );
    }
}

mod decay {
    use super::*;
    use tce::{DecayedBin, DecayingHistogram};

    /// The decayed ECE computed directly: sample t of N weighs 2^(−(N−1−t)/half_life).
    /// Also the smallest n_eff − 1 of the bins whose effective size is above 1 (how well
    /// posed the debiasing term ȳ(1−ȳ)/(n_eff − 1) is).
    fn naive(
        scores: &[f64],
        labels: &[u8],
        bins: usize,
        half_life: f64,
        p: f64,
    ) -> (f64, f64, f64) {
        let n = scores.len();
        let mut table = vec![(0.0f64, 0.0f64, 0.0f64, 0.0f64); bins]; // w, w·y, w·f, w²
        for (t, (&f, &y)) in scores.iter().zip(labels).enumerate() {
            let w = (-((n - 1 - t) as f64) / half_life).exp2();
            let k = ((f * bins as f64) as usize).min(bins - 1);
            table[k].0 += w;
            table[k].1 += w * y as f64;
            table[k].2 += w * f;
            table[k].3 += w * w;
        }
        let total: f64 = table.iter().map(|t| t.0).sum();
        let (mut ece, mut debiased, mut excess) = (0.0, 0.0, f64::INFINITY);
        for &(w, wy, wf, w2) in table.iter().filter(|t| t.0 > 0.0) {
            let (acc, conf) = (wy / w, wf / w);
            ece += w / total * (conf - acc).abs().powf(p);
            let n_eff = w * w / w2;
            if n_eff > 1.0 {
                debiased += w / total * ((conf - acc).powi(2) - acc * (1.0 - acc) / (n_eff - 1.0));
                excess = excess.min(n_eff - 1.0);
            }
        }
        (ece.powf(1.0 / p), debiased.max(0.0).sqrt(), excess)
    }

    proptest! {
        #[test]
        fn decayed_estimates_equal_the_direct_weighted_sums(
            (scores, labels) in samples(400), half_life in prop_oneof![0.5..5.0f64, 5.0..500.0f64], p in 1.0..3.0f64
        ) {
            prop_assume!(!scores.is_empty());
            let mut storage = vec![DecayedBin::EMPTY; 10];
            let mut h = DecayingHistogram::with_storage(&mut storage, Closure::Left, half_life).unwrap();
            h.push_batch(&scores, &labels).unwrap();
            let (ece, debias, excess) = naive(&scores, &labels, 10, half_life, p);
            let got = h.ece_bin(Norm::new(p).unwrap()).unwrap();
            prop_assert!((got.value - ece).abs() <= 1e-9 * ece.max(1e-3), "{} vs {}", got.value, ece);
            prop_assert_eq!(got.samples, scores.len() as u64);
            // With a short half-life, a bin's effective size can sit just above 1 (one
            // recent sample and old ones of weight near 0), and ȳ(1−ȳ)/(n_eff − 1) is then
            // 0/0-like, its rounding in either computation blown up by 1/(n_eff − 1):
            // compare where it is well posed.
            // Compared squared: the estimate is sqrt(max(D, 0)), and where D is 0 in exact
            // arithmetic the root turns a rounding residue of D into its square root.
            if half_life >= 5.0 && excess >= 1e-3 {
                let got = h.ece_debias(Norm::L2).unwrap().value;
                let (got2, debias2) = (got * got, debias * debias);
                prop_assert!((got2 - debias2).abs() <= 1e-9 * debias2.max(1e-3), "debias {} vs {}", got, debias);
            }
        }
    }

    #[test]
    fn a_long_half_life_is_the_plain_histogram_and_a_short_one_forgets() {
        let scores: Vec<f64> = (0..5000).map(|i| (i % 97) as f64 / 96.0).collect();
        let old_labels: Vec<u8> = scores.iter().map(|&s| u8::from(s > 0.5)).collect(); // miscalibrated
        let new_labels: Vec<u8> = (0..5000)
            .map(|i| u8::from((i * 7919) % 96 < (i % 97)))
            .collect(); // ≈ calibrated
        let mut plain = InlineHistogram::<15>::new(Closure::Left);
        plain.push_batch(&scores, &old_labels).unwrap();
        let mut slow = DecayingHistogram::<[DecayedBin; 15]>::new(Closure::Left, 1e12).unwrap();
        slow.push_batch(&scores, &old_labels).unwrap();
        let (a, b) = (
            slow.ece_bin(Norm::L2).unwrap().value,
            plain.ece_bin(Norm::L2).unwrap().value,
        );
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
        // Half-life 100: after 5000 new samples the old regime weighs 2^-50.
        let mut fast = DecayingHistogram::<[DecayedBin; 15]>::new(Closure::Left, 100.0).unwrap();
        fast.push_batch(&scores, &old_labels).unwrap();
        let before = fast.ece_bin(Norm::L2).unwrap().value;
        fast.push_batch(&scores, &new_labels).unwrap();
        let mut recent = InlineHistogram::<15>::new(Closure::Left);
        recent
            .push_batch(&scores[4000..], &new_labels[4000..])
            .unwrap();
        let after = fast.ece_bin(Norm::L2).unwrap().value;
        let recent = recent.ece_bin(Norm::L2).unwrap().value;
        assert!(
            before > 0.2 && after < before / 2.0,
            "before {before}, after {after}"
        );
        assert!(
            (after - recent).abs() < 0.03,
            "after {after}, last 1000 alone {recent}"
        );
        assert!((fast.half_life() - 100.0).abs() < 1e-9);
    }

    fn decaying_bytes<S: AsRef<[DecayedBin]> + ?Sized>(h: &DecayingHistogram<S>) -> Vec<u8> {
        let mut bytes = vec![0u8; h.encoded_len()];
        assert_eq!(h.encode(&mut bytes), Ok(bytes.len()));
        bytes
    }

    /// Byte offset of bin k's field `at` (0 count, 8 weight, 16 hit weight, 24 score
    /// weight, 32 squared weight) in a decaying histogram's frame.
    fn field(k: usize, at: usize) -> usize {
        12 + 24 + 40 * k + at
    }

    proptest! {
        #[test]
        fn a_decoded_decaying_histogram_equals_and_goes_on_like_the_original(
            (scores, labels) in samples(400),
            (more_scores, more_labels) in samples(200),
            half_life in prop_oneof![0.5..5.0f64, 5.0..500.0f64, Just(1e16)],
            right in any::<bool>(),
        ) {
            let closure = if right { Closure::Right } else { Closure::Left };
            let mut original = DecayingHistogram::<[DecayedBin; 15]>::new(closure, half_life).unwrap();
            original.push_batch(&scores, &labels).unwrap();
            let bytes = decaying_bytes(&original);
            prop_assert_eq!(bytes.len(), 12 + 24 + 40 * 15 + 4);
            let mut storage = vec![DecayedBin::EMPTY; 15];
            let mut copy = DecayingHistogram::with_storage(&mut storage, Closure::Left, 3.0).unwrap();
            copy.push(0.5, 1).unwrap(); // replaced whole
            copy.decode(&bytes).unwrap();
            prop_assert_eq!(copy.bins(), original.bins());
            prop_assert_eq!(decaying_bytes(&copy), bytes.clone());
            // The frame carries λ, not the half-life: a destination with the same λ keeps
            // its half-life (so equals the original), another one reports −1/log2 λ.
            let retain = (-1.0 / half_life).exp2();
            prop_assert!(((-1.0 / copy.half_life()).exp2() - retain).abs() <= 4.0 * f64::EPSILON * retain);
            let mut back = DecayingHistogram::<[DecayedBin; 15]>::new(Closure::Left, half_life).unwrap();
            back.push(0.5, 1).unwrap();
            back.decode(&bytes).unwrap();
            prop_assert_eq!(&back, &original);
            prop_assert_eq!(back.half_life(), half_life);
            original.push_batch(&more_scores, &more_labels).unwrap();
            back.push_batch(&more_scores, &more_labels).unwrap();
            copy.push_batch(&more_scores, &more_labels).unwrap();
            prop_assert_eq!(&back, &original);
            prop_assert_eq!(copy.bins(), original.bins());
            prop_assert_eq!(copy.ece_bin(Norm::L2), original.ece_bin(Norm::L2));
        }
    }

    #[test]
    fn old_weights_that_underflowed_to_zero_round_trip() {
        // Half-life 1: after 2000 more pushes, bin 0's samples weigh 2^-2000 of the next
        // (itself at most 2^200), below the smallest double: a bin with samples and
        // weight 0.
        let mut h = DecayingHistogram::<[DecayedBin; 10]>::new(Closure::Left, 1.0).unwrap();
        h.push_batch(&[0.05; 1200], &[1; 1200]).unwrap();
        h.push_batch(&[0.95; 2000], &[0; 2000]).unwrap();
        assert_eq!(
            (
                h.bins()[0].weight(),
                tce::estimate::BinSummary::count(&h.bins()[0])
            ),
            (0.0, 1200)
        );
        let bytes = decaying_bytes(&h);
        let mut back = DecayingHistogram::<[DecayedBin; 10]>::new(Closure::Left, 2.0).unwrap();
        back.decode(&bytes).unwrap();
        assert_eq!(back, h);
    }

    #[test]
    fn every_truncation_and_flipped_bit_of_a_decaying_histogram_is_an_error() {
        let mut h = DecayingHistogram::<[DecayedBin; 4]>::new(Closure::Right, 7.0).unwrap();
        h.push_batch(&[0.1, 0.9, 0.4, 0.6, 0.3], &[0, 1, 1, 0, 1])
            .unwrap();
        let bytes = decaying_bytes(&h);
        let mut target = DecayingHistogram::<[DecayedBin; 4]>::new(Closure::Left, 3.0).unwrap();
        target.push(0.5, 1).unwrap();
        let before = target.clone();
        for cut in 0..bytes.len() {
            assert_eq!(
                target.decode(&bytes[..cut]),
                Err(DecodeError::Truncated),
                "cut {cut}"
            );
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut corrupted = bytes.clone();
                corrupted[i] ^= 1 << bit;
                assert!(
                    target.decode(&corrupted).is_err(),
                    "flip byte {i} bit {bit}"
                );
            }
        }
        assert_eq!(target, before, "a failed decode changed the histogram");
        let mut fewer = DecayingHistogram::<[DecayedBin; 3]>::new(Closure::Left, 3.0).unwrap();
        assert_eq!(
            fewer.decode(&bytes),
            Err(DecodeError::BinCountMismatch {
                expected: 3,
                found: 4
            })
        );
        let mut plain = InlineHistogram::<4>::new(Closure::Left);
        assert_eq!(
            plain.decode(&bytes),
            Err(DecodeError::WrongKind { found: 5 })
        );
        let (_, histogram) = histogram_bytes(&[0.5], &[1], Closure::Left);
        assert_eq!(
            target.decode(&histogram),
            Err(DecodeError::WrongKind { found: 1 })
        );
        assert_eq!(target, before);
    }

    #[test]
    fn impossible_decaying_histograms_are_refused_even_with_a_valid_checksum() {
        let mut h = DecayingHistogram::<[DecayedBin; 4]>::new(Closure::Left, 7.0).unwrap();
        // Bin 0: 0.1 (miss), 0.2 (hit); bin 3: 0.9 (hit). Bins 1 and 2 empty.
        h.push_batch(&[0.1, 0.9, 0.2], &[0, 1, 1]).unwrap();
        let bytes = decaying_bytes(&h);
        let mut target = DecayingHistogram::<[DecayedBin; 4]>::new(Closure::Right, 3.0).unwrap();
        target.push(0.5, 1).unwrap();
        let before = target.clone();
        let f = |x: f64| x.to_bits().to_le_bytes();
        let weight = f64::from_le_bytes(bytes[field(0, 8)..field(0, 16)].try_into().unwrap());
        let edits: Vec<(&str, usize, Vec<u8>)> = vec![
            ("closure 2", 12, vec![2]),
            ("padding", 13, vec![1]),
            ("λ 0", 20, f(0.0).to_vec()),
            ("λ −0.5", 20, f(-0.5).to_vec()),
            ("λ 1.5", 20, f(1.5).to_vec()),
            ("λ NaN", 20, f(f64::NAN).to_vec()),
            ("next weight 0.5", 28, f(0.5).to_vec()),
            ("next weight 2^201", 28, f(2f64.powi(201)).to_vec()),
            ("next weight ∞", 28, f(f64::INFINITY).to_vec()),
            ("next weight NaN", 28, f(f64::NAN).to_vec()),
            ("negative weight", field(3, 8), f(-1.0).to_vec()),
            ("NaN weight", field(3, 8), f(f64::NAN).to_vec()),
            ("∞ squared weight", field(3, 32), f(f64::INFINITY).to_vec()),
            ("negative score weight", field(0, 24), f(-0.1).to_vec()),
            (
                "hit weight above weight",
                field(0, 16),
                f(weight * 1.001).to_vec(),
            ),
            (
                "score weight above weight",
                field(0, 24),
                f(weight * 1.001).to_vec(),
            ),
            ("weight without samples", field(1, 8), f(0.5).to_vec()),
            (
                "squared weight without samples",
                field(2, 32),
                f(1e-300).to_vec(),
            ),
            (
                "counts beyond u64",
                field(1, 0),
                u64::MAX.to_le_bytes().to_vec(),
            ),
            ("bin count 5, length for 4", 16, vec![5]),
            // Defect 6 of issue 10: λ = 1 is no accepted half-life.
            ("λ 1", 20, f(1.0).to_vec()),
            ("λ below 2^-510", 20, f(2f64.powi(-511)).to_vec()),
            (
                "weight above count × next weight",
                field(0, 8),
                f(1e308).to_vec(),
            ),
            (
                "squared weight above count × next weight²",
                field(0, 32),
                f(1e300).to_vec(),
            ),
        ];
        for (what, at, value) in edits {
            let mut bad = bytes.clone();
            bad[at..at + value.len()].copy_from_slice(&value);
            resign(&mut bad);
            assert_eq!(
                target.decode(&bad),
                Err(DecodeError::Inconsistent),
                "{what}"
            );
        }
        assert_eq!(target, before);
        // Rounding slack: a hit weight a hair above the weight is accepted.
        let mut fine = bytes.clone();
        fine[field(0, 16)..field(0, 24)].copy_from_slice(&f(weight * (1.0 + 1e-13)));
        resign(&mut fine);
        assert_eq!(target.decode(&fine), Ok(()));
    }

    #[test]
    fn bins_whose_weight_underflowed_do_not_make_estimates_nan() {
        // Half-life 1: after 2000 pushes into another bin, the first bin's weight is 0.
        let mut h = DecayingHistogram::<[DecayedBin; 4]>::new(Closure::Left, 1.0).unwrap();
        h.push_batch(&[0.1; 1200], &[1; 1200]).unwrap();
        h.push_batch(&[0.9; 2000], &[1; 2000]).unwrap();
        assert_eq!(h.bins()[0].weight(), 0.0);
        let e = h.ece_bin(Norm::L2).unwrap();
        assert!((e.value - 0.1).abs() < 1e-12, "{}", e.value);
        assert_eq!(e.samples, 3200);
        assert!(h.ece_debias(Norm::L1).unwrap().value.is_finite());
    }

    #[test]
    fn bad_half_lives_and_inputs_are_refused() {
        for h in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e-4, 1e17] {
            assert_eq!(
                DecayingHistogram::<[DecayedBin; 4]>::new(Closure::Left, h).unwrap_err(),
                tce::ConfigError::InvalidHalfLife
            );
        }
        let mut h = DecayingHistogram::<[DecayedBin; 4]>::new(Closure::Left, 10.0).unwrap();
        h.push(0.5, 1).unwrap();
        let before = h.clone();
        assert!(h.push_batch(&[0.2, -0.2], &[1, 0]).is_err());
        assert!(h.push(0.2, 3).is_err());
        assert_eq!(h, before);
        h.reset();
        assert_eq!(h.ece_bin(Norm::L1), Err(tce::EstimateError::NoSamples));
    }
}
