//! Issue 10's decaying-histogram and bin-count defects: half-lives whose weights cannot
//! be represented are refused before anything changes, `half_life()` reads back what was
//! given, impossible frames are refused, no estimate is NaN, and bin counts are bounded
//! by `tce::MAX_BINS` before any work.

use proptest::prelude::*;
use tce::estimate::{self, BinSummary};
use tce::portable::{crc32, DecodeError};
use tce::sweep::SweepOptions;
use tce::{
    AtomicBin, Binning, Closure, ConcurrentHistogram, ConfigError, DecayedBin, DecayingHistogram,
    EstimateError, InlineBuffer, Norm, MAX_BINS,
};

type Decaying = DecayingHistogram<[DecayedBin; 4]>;

/// Half-lives the issue found accepted although a push zeroes every weight (defect 7),
/// refused but after writing (defect 1), or whose λ rounds to 1 (defect 8).
const REFUSED: [f64; 14] = [
    1e-4,
    1.0 / 1100.0,
    1e-300,
    5e-324,
    1.0 / 1030.0,
    1.0 / 1050.0,
    1.0 / 1074.0,
    1.0 / 1024.0,
    1.0 / 600.0,
    1.0 / 511.0,
    1e17,
    1e300,
    2e16,
    f64::MAX,
];

fn bytes_of(h: &DecayingHistogram<&mut [DecayedBin]>) -> Vec<u8> {
    let mut out = vec![0; h.encoded_len()];
    h.encode(&mut out).unwrap();
    out
}

#[test]
fn half_lives_whose_weights_cannot_be_represented_are_refused_and_storage_is_untouched() {
    let marked = DecayedBin::default();
    for half_life in REFUSED {
        assert_eq!(
            Decaying::new(Closure::Left, half_life),
            Err(ConfigError::InvalidHalfLife),
            "{half_life:e}"
        );
        // Storage holding a live histogram stays as it was.
        let mut storage = [marked; 4];
        let mut live = DecayingHistogram::with_storage(&mut storage, Closure::Left, 10.0).unwrap();
        live.push(0.3, 1).unwrap();
        let before = bytes_of(&live);
        let copy = storage;
        assert_eq!(
            DecayingHistogram::with_storage(&mut storage, Closure::Left, half_life).unwrap_err(),
            ConfigError::InvalidHalfLife
        );
        assert_eq!(storage, copy);
        let mut live = DecayingHistogram::with_storage(&mut storage, Closure::Left, 10.0).unwrap();
        live.push(0.3, 1).unwrap();
        assert_eq!(bytes_of(&live), before);
    }
}

#[test]
fn the_ends_of_the_accepted_range_give_finite_estimates_and_read_back_their_half_life() {
    for half_life in [1.0 / 510.0, 1.0 / 200.0, 1.0 / 3.0, 1.0, 1e6, 1e15, 1e16] {
        let mut h = Decaying::new(Closure::Left, half_life).unwrap();
        assert_eq!(h.half_life(), half_life);
        for _ in 0..3000 {
            h.push(0.1, 0).unwrap();
        }
        // Defect 7: mce said 0 and ece_bin NaN where the sample says 0.1.
        let ece = h.ece_bin(Norm::L2).unwrap();
        assert!(
            (ece.value - 0.1).abs() < 1e-12,
            "{half_life:e}: {}",
            ece.value
        );
        assert!(
            (h.mce().unwrap().value - 0.1).abs() < 1e-12,
            "{half_life:e}"
        );
        assert!(h.ece_debias(Norm::L1).unwrap().value.is_finite());
        assert_eq!(h.half_life(), half_life);
    }
}

#[test]
fn a_frame_with_retain_one_and_huge_weights_is_inconsistent() {
    // Defect 6: λ = 1, two bins of count 1 and weight 1e308 decoded, then ece_bin = NaN.
    let mut source = DecayingHistogram::<[DecayedBin; 2]>::new(Closure::Left, 5.0).unwrap();
    source.push_batch(&[0.2, 0.8], &[0, 1]).unwrap();
    let mut bytes = vec![0; source.encoded_len()];
    source.encode(&mut bytes).unwrap();
    bytes[20..28].copy_from_slice(&1.0f64.to_le_bytes());
    for k in 0..2 {
        for field in [8, 16, 24, 32] {
            let at = 36 + 40 * k + field;
            bytes[at..at + 8].copy_from_slice(&1e308f64.to_le_bytes());
        }
    }
    let end = bytes.len() - 4;
    let crc = crc32(&bytes[..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
    let mut target = DecayingHistogram::<[DecayedBin; 2]>::new(Closure::Right, 3.0).unwrap();
    target.push(0.5, 1).unwrap();
    let before = target.clone();
    assert_eq!(target.decode(&bytes), Err(DecodeError::Inconsistent));
    // With λ valid again, the weights alone are still impossible.
    bytes[20..28].copy_from_slice(&0.5f64.to_le_bytes());
    let crc = crc32(&bytes[..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(target.decode(&bytes), Err(DecodeError::Inconsistent));
    // And samples whose weights are all 0 (defect 7's state).
    source.encode(&mut bytes).unwrap();
    for k in 0..2 {
        for field in [8, 16, 24, 32] {
            let at = 36 + 40 * k + field;
            bytes[at..at + 8].copy_from_slice(&0.0f64.to_le_bytes());
        }
    }
    let crc = crc32(&bytes[..end]);
    bytes[end..].copy_from_slice(&crc.to_le_bytes());
    assert_eq!(target.decode(&bytes), Err(DecodeError::Inconsistent));
    assert_eq!(target, before);
}

#[test]
fn a_decoded_histogram_reports_a_half_life_of_the_same_decay() {
    let mut source = Decaying::new(Closure::Left, 7.0).unwrap();
    source.push_batch(&[0.1, 0.6, 0.9], &[0, 1, 1]).unwrap();
    let mut bytes = vec![0; source.encoded_len()];
    source.encode(&mut bytes).unwrap();
    let mut same = Decaying::new(Closure::Right, 7.0).unwrap();
    same.decode(&bytes).unwrap();
    assert_eq!(same, source);
    let mut other = Decaying::new(Closure::Right, 2.0).unwrap();
    other.decode(&bytes).unwrap();
    assert!((other.half_life() - 7.0).abs() < 1e-12);
    assert_eq!(other.bins(), source.bins());
}

/// Bins an estimator cannot divide by: samples, but no weight.
#[derive(Clone, Copy)]
struct Weightless;

impl BinSummary for Weightless {
    fn count(&self) -> u64 {
        1
    }
    fn weight(&self) -> f64 {
        0.0
    }
    fn mean_score(&self) -> f64 {
        f64::NAN
    }
    fn accuracy(&self) -> f64 {
        f64::NAN
    }
    fn effective_count(&self) -> f64 {
        f64::NAN
    }
}

#[test]
fn degenerate_weights_are_a_named_error_never_a_nan() {
    let bins = [Weightless; 2];
    assert_eq!(
        estimate::ece_bin(bins, Norm::L2),
        Err(EstimateError::DegenerateWeights)
    );
    assert_eq!(estimate::mce(bins), Err(EstimateError::DegenerateWeights));
    assert_eq!(
        estimate::ece_debias(bins, Norm::L1),
        Err(EstimateError::DegenerateWeights)
    );
}

#[test]
fn bin_counts_above_max_bins_are_refused_before_any_work() {
    let mut buffer = InlineBuffer::<32>::new();
    buffer
        .push_batch(&[0.1, 0.4, 0.8, 0.9], &[0, 1, 1, 1])
        .unwrap();
    let sorted = buffer.sorted();
    for bins in [MAX_BINS + 1, 1 << 32, usize::MAX] {
        let refused = EstimateError::TooManyBins {
            bins,
            max: MAX_BINS,
        };
        for binning in [Binning::EQUAL_WIDTH, Binning::EQUAL_MASS] {
            assert_eq!(sorted.ece_bin(binning, bins, Norm::L2), Err(refused));
            assert_eq!(sorted.mce(binning, bins), Err(refused));
            assert_eq!(sorted.ece_debias(binning, bins, Norm::L1), Err(refused));
        }
        let storage: Vec<AtomicBin> = (0..4).map(|_| AtomicBin::default()).collect();
        assert_eq!(
            ConcurrentHistogram::with_storage(&storage, bins, Closure::Left).unwrap_err(),
            ConfigError::TooManyBins {
                bins,
                max: MAX_BINS
            }
        );
    }
    // MAX_BINS itself is a valid bin count.
    assert!(sorted
        .ece_bin(Binning::EQUAL_WIDTH, MAX_BINS, Norm::L2)
        .is_ok());
    // A sweep cap is a cap: any size, the same b* as no cap.
    let capped = SweepOptions {
        max_bins: Some(usize::MAX),
        ..Default::default()
    };
    assert_eq!(
        sorted.ece_sweep(Binning::EQUAL_MASS, Norm::L2, capped),
        sorted.ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
    );
}

proptest! {
    /// Any half-life at all: either refused, or every estimate after any pushes is finite
    /// and the half-life reads back as given.
    #[test]
    fn any_half_life_is_refused_or_gives_finite_estimates(
        bits in any::<u64>(),
        pick in 0usize..4,
        scores in prop::collection::vec(0.0..=1.0f64, 1..300),
        hits in any::<u64>(),
    ) {
        let half_life = match pick {
            0 => f64::from_bits(bits),
            // Around the lower end of the range.
            1 => 1.0 / (400.0 + (bits % 800) as f64),
            // Around the upper end.
            2 => 1e15 * (1.0 + (bits % 400) as f64 / 10.0),
            _ => f64::from_bits(bits & 0x7fff_ffff_ffff_ffff),
        };
        let labels: Vec<u8> = (0..scores.len()).map(|i| ((hits >> (i % 64)) & 1) as u8).collect();
        match Decaying::new(Closure::Left, half_life) {
            Err(e) => prop_assert_eq!(e, ConfigError::InvalidHalfLife),
            Ok(mut h) => {
                prop_assert_eq!(h.half_life().to_bits(), half_life.to_bits());
                h.push_batch(&scores, &labels).unwrap();
                for e in [h.ece_bin(Norm::L2), h.ece_bin(Norm::L1), h.mce(), h.ece_debias(Norm::L2), h.ece_debias(Norm::new(1.5).unwrap())] {
                    let e = e.unwrap();
                    prop_assert!(e.value.is_finite() && e.value >= 0.0 && e.value <= 1.0 + 1e-9, "{:e}: {}", half_life, e.value);
                }
            }
        }
    }
}
