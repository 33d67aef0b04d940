//! The heap-owned states (`with_boxed_storage`, for hosts such as the Python package),
//! `ConcurrentHistogram::merge_histogram`, `portable::frame_shape` and
//! `SortedSamples::bins_with_score_ranges`: each equals the inline or borrowed form.

use tce::portable::{frame_shape, DecodeError, FrameShape};
use tce::{
    AtomicBin, BinStats, Binning, Closure, ConcurrentHistogram, ConfigError, DecayedBin,
    DecayingHistogram, Histogram, InlineBuffer, InlineHistogram, MergeError, Norm, Reservoir,
    SlidingWindow, Slot, SortedBuffer, SweepOptions, Ties,
};

fn data(n: usize) -> (Vec<f64>, Vec<u8>) {
    let scores: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1000) as f64 / 999.0).collect();
    let labels: Vec<u8> = (0..n).map(|i| u8::from((i * 31) % 10 < 7)).collect();
    (scores, labels)
}

#[test]
fn boxed_states_equal_inline_ones() {
    let (s, y) = data(500);
    let mut boxed =
        Histogram::with_boxed_storage(vec![BinStats::EMPTY; 15].into(), Closure::Left).unwrap();
    let mut inline = InlineHistogram::<15>::new(Closure::Left);
    boxed.push_batch(&s, &y).unwrap();
    inline.push_batch(&s, &y).unwrap();
    assert_eq!(boxed.bins(), inline.bins());
    assert_eq!(boxed.ece_bin(Norm::L2), inline.ece_bin(Norm::L2));

    let mut buffer = SortedBuffer::with_boxed_storage(vec![Slot::EMPTY; 600].into()).unwrap();
    let mut inline = InlineBuffer::<600>::new();
    buffer.push_batch(&s, &y).unwrap();
    inline.push_batch(&s, &y).unwrap();
    let options = SweepOptions::default();
    assert_eq!(
        buffer
            .sorted()
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, options),
        inline
            .sorted()
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, options)
    );

    let mut r = Reservoir::with_boxed_storage(vec![Slot::EMPTY; 50].into(), 3).unwrap();
    let mut inline = tce::InlineReservoir::<50>::new(3);
    r.push_batch(&s, &y).unwrap();
    inline.push_batch(&s, &y).unwrap();
    let (mut a, mut b) = (vec![0; r.encoded_len()], vec![0; inline.encoded_len()]);
    r.encode(&mut a).unwrap();
    inline.encode(&mut b).unwrap();
    assert_eq!(a, b);

    let mut w =
        SlidingWindow::with_boxed_storage(vec![Slot::EMPTY; 64].into(), vec![0.0; 64].into())
            .unwrap();
    let mut inline = tce::InlineWindow::<64>::new();
    w.push_batch(&s, &y).unwrap();
    inline.push_batch(&s, &y).unwrap();
    assert_eq!(
        w.samples().ece_bin(Binning::EQUAL_MASS, 5, Norm::L2),
        inline.samples().ece_bin(Binning::EQUAL_MASS, 5, Norm::L2)
    );

    let mut d = DecayingHistogram::with_boxed_storage(
        vec![DecayedBin::EMPTY; 15].into(),
        Closure::Left,
        80.0,
    )
    .unwrap();
    let mut inline = DecayingHistogram::<[DecayedBin; 15]>::new(Closure::Left, 80.0).unwrap();
    d.push_batch(&s, &y).unwrap();
    inline.push_batch(&s, &y).unwrap();
    assert_eq!(d.ece_bin(Norm::L2), inline.ece_bin(Norm::L2));
}

#[test]
fn boxed_constructors_check_like_the_others() {
    assert_eq!(
        Histogram::with_boxed_storage(Vec::new().into(), Closure::Left).err(),
        Some(ConfigError::ZeroBins)
    );
    assert_eq!(
        SortedBuffer::with_boxed_storage(Vec::new().into()).err(),
        Some(ConfigError::ZeroCapacity)
    );
    assert!(matches!(
        SlidingWindow::with_boxed_storage(vec![Slot::EMPTY; 3].into(), vec![0.0; 2].into()),
        Err(ConfigError::StorageMismatch { slots: 3, ring: 2 })
    ));
    assert_eq!(
        DecayingHistogram::with_boxed_storage(
            vec![DecayedBin::EMPTY; 3].into(),
            Closure::Left,
            0.0
        )
        .err(),
        Some(ConfigError::InvalidHalfLife)
    );
    let storage: Box<[AtomicBin]> = (0..10).map(|_| AtomicBin::default()).collect();
    assert!(matches!(
        ConcurrentHistogram::with_boxed_storage(storage, 3, Closure::Left),
        Err(ConfigError::ShardMismatch {
            storage: 10,
            bins: 3
        })
    ));
}

#[test]
fn merging_a_histogram_into_a_concurrent_one_is_exact() {
    let (s, y) = data(1000);
    let storage: Box<[AtomicBin]> = (0..30).map(|_| AtomicBin::default()).collect();
    let shared = ConcurrentHistogram::with_boxed_storage(storage, 15, Closure::Left).unwrap();
    let mut part = InlineHistogram::<15>::new(Closure::Left);
    part.push_batch(&s[..400], &y[..400]).unwrap();
    shared.merge_histogram(1, &part).unwrap();
    shared.push_batch_to(0, &s[400..], &y[400..]).unwrap();
    let mut whole = InlineHistogram::<15>::new(Closure::Left);
    whole.push_batch(&s, &y).unwrap();
    let mut snapshot = InlineHistogram::<15>::new(Closure::Left);
    shared.snapshot_into(&mut snapshot).unwrap();
    assert_eq!(snapshot, whole);

    let right = InlineHistogram::<15>::new(Closure::Right);
    assert_eq!(
        shared.merge_histogram(0, &right),
        Err(MergeError::ClosureMismatch)
    );
    let small = InlineHistogram::<4>::new(Closure::Left);
    assert_eq!(
        shared.merge_histogram(0, &small),
        Err(MergeError::BinCountMismatch { left: 15, right: 4 })
    );
}

#[test]
fn frame_shape_reads_every_kind() {
    let (s, y) = data(40);
    let mut h = InlineHistogram::<7>::new(Closure::Right);
    h.push_batch(&s, &y).unwrap();
    let mut frame = vec![0; h.encoded_len()];
    h.encode(&mut frame).unwrap();
    assert_eq!(
        frame_shape(&frame),
        Ok(FrameShape::Histogram {
            closure: Closure::Right,
            bins: 7
        })
    );
    let mut flipped = frame.clone();
    flipped[14] ^= 1;
    assert_eq!(frame_shape(&flipped), Err(DecodeError::Checksum));
    assert_eq!(frame_shape(&frame[..10]), Err(DecodeError::Truncated));

    let mut b = InlineBuffer::<64>::new();
    b.push_batch(&s, &y).unwrap();
    let mut frame = vec![0; b.encoded_len()];
    b.encode(&mut frame).unwrap();
    assert_eq!(frame_shape(&frame), Ok(FrameShape::Buffer { samples: 40 }));

    let mut r = tce::InlineReservoir::<16>::new(1);
    r.push_batch(&s, &y).unwrap();
    let mut frame = vec![0; r.encoded_len()];
    r.encode(&mut frame).unwrap();
    assert_eq!(
        frame_shape(&frame),
        Ok(FrameShape::Reservoir { capacity: 16 })
    );

    let mut w = tce::InlineWindow::<9>::new();
    w.push_batch(&s, &y).unwrap();
    let mut frame = vec![0; w.encoded_len()];
    w.encode(&mut frame).unwrap();
    assert_eq!(frame_shape(&frame), Ok(FrameShape::Window { size: 9 }));

    let d = DecayingHistogram::<[DecayedBin; 5]>::new(Closure::Left, 10.0).unwrap();
    let mut frame = vec![0; d.encoded_len()];
    d.encode(&mut frame).unwrap();
    assert_eq!(
        frame_shape(&frame),
        Ok(FrameShape::Decaying {
            closure: Closure::Left,
            bins: 5
        })
    );
}

/// Rewrites a frame's CRC after editing it, as a forger would.
fn resign(frame: &mut [u8]) {
    let n = frame.len() - 4;
    let crc = tce::portable::crc32(&frame[..n]);
    frame[n..].copy_from_slice(&crc.to_le_bytes());
}

#[test]
fn frame_shape_reports_only_sizes_the_frame_backs() {
    // A size field is at payload offset 4 (histograms, after the closure) or 0.
    let edit = |frame: &[u8], at: usize, value: u32| {
        let mut forged = frame.to_vec();
        forged[12 + at..12 + at + 4].copy_from_slice(&value.to_le_bytes());
        resign(&mut forged);
        forged
    };
    let (s, y) = data(3);
    let mut h = InlineHistogram::<7>::new(Closure::Left);
    h.push_batch(&s, &y).unwrap();
    let mut frame = vec![0; h.encoded_len()];
    h.encode(&mut frame).unwrap();
    for bins in [8, 6, 1 << 24] {
        let forged = edit(&frame, 4, bins);
        assert_eq!(
            frame_shape(&forged),
            Err(DecodeError::Inconsistent),
            "{bins} bins"
        );
    }
    let d = DecayingHistogram::<[DecayedBin; 5]>::new(Closure::Left, 10.0).unwrap();
    let mut frame = vec![0; d.encoded_len()];
    d.encode(&mut frame).unwrap();
    assert_eq!(
        frame_shape(&edit(&frame, 4, 1 << 24)),
        Err(DecodeError::Inconsistent)
    );
    let mut b = InlineBuffer::<8>::new();
    b.push_batch(&s, &y).unwrap();
    let mut frame = vec![0; b.encoded_len()];
    b.encode(&mut frame).unwrap();
    assert_eq!(
        frame_shape(&edit(&frame, 0, (1 << 31) - 1)),
        Err(DecodeError::Inconsistent)
    );

    // A window that has seen 3 samples may have any size: its frame holds all 3.
    let mut w = tce::InlineWindow::<4>::new();
    w.push_batch(&s, &y).unwrap();
    let mut frame = vec![0; w.encoded_len()];
    w.encode(&mut frame).unwrap();
    let huge: u32 = (1 << 30) - 1;
    assert_eq!(
        frame_shape(&edit(&frame, 0, huge)),
        Ok(FrameShape::Window {
            size: huge as usize
        })
    );
    // A full one's size is its sample count: claiming more than it holds is refused.
    let (s9, y9) = data(9);
    w.push_batch(&s9, &y9).unwrap();
    let mut frame = vec![0; w.encoded_len()];
    w.encode(&mut frame).unwrap();
    assert_eq!(
        frame_shape(&edit(&frame, 0, huge)),
        Err(DecodeError::Inconsistent)
    );
    assert_eq!(
        frame_shape(&edit(&frame, 0, 3)),
        Err(DecodeError::Inconsistent)
    );
    // Likewise a reservoir (capacity first, then seen, the generator, the samples).
    let mut r = tce::InlineReservoir::<16>::new(1);
    r.push_batch(&s, &y).unwrap();
    let mut frame = vec![0; r.encoded_len()];
    r.encode(&mut frame).unwrap();
    let most: u32 = (1 << 31) - 1;
    assert_eq!(
        frame_shape(&edit(&frame, 0, most)),
        Ok(FrameShape::Reservoir {
            capacity: most as usize
        })
    );
    let (s40, y40) = data(40);
    r.push_batch(&s40, &y40).unwrap();
    let mut frame = vec![0; r.encoded_len()];
    r.encode(&mut frame).unwrap();
    assert_eq!(
        frame_shape(&edit(&frame, 0, most)),
        Err(DecodeError::Inconsistent)
    );
    // The sample count must fill the payload.
    let mut short = frame.clone();
    short.truncate(short.len() - 4 - 9);
    let payload = (short.len() - 12) as u32;
    short[8..12].copy_from_slice(&payload.to_le_bytes());
    short.extend_from_slice(&[0; 4]);
    resign(&mut short);
    assert_eq!(frame_shape(&short), Err(DecodeError::Inconsistent));
}

#[test]
fn score_ranges_are_each_bins_first_and_last_score() {
    let (s, y) = data(37);
    let mut b = InlineBuffer::<64>::new();
    b.push_batch(&s, &y).unwrap();
    let sorted = b.sorted();
    let all: Vec<f64> = sorted.iter().map(|(score, _)| score).collect();
    for binning in [
        Binning::EQUAL_MASS,
        Binning::EqualMass(Ties::Keep),
        Binning::EQUAL_WIDTH,
    ] {
        let mut position = 0;
        let with: Vec<_> = sorted.bins_with_score_ranges(binning, 50).collect();
        let plain: Vec<_> = sorted.bins(binning, 50).collect();
        assert_eq!(with.len(), 50);
        for ((stats, range), plain) in with.into_iter().zip(plain) {
            assert_eq!(stats, plain);
            let n = stats.count() as usize;
            match range {
                None => assert_eq!(n, 0),
                Some((lo, hi)) => {
                    assert_eq!((lo, hi), (all[position], all[position + n - 1]));
                }
            }
            position += n;
        }
        assert_eq!(position, 37);
    }
}
