//! Arbitrary batches (9 bytes a sample: an f64's bits and a label byte) into every state:
//! a refused batch leaves the state as it was; an accepted one gives estimates that are
//! fractions.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tce::{Binning, Closure, InlineBuffer, InlineHistogram, InlineWindow, Norm, SweepOptions, Ties};

fuzz_target!(|bytes: &[u8]| {
    let (scores, labels): (Vec<f64>, Vec<u8>) = bytes
        .chunks_exact(9)
        .map(|c| (f64::from_le_bytes(c[..8].try_into().unwrap()), c[8]))
        .unzip();
    let closure = if bytes.len() % 2 == 0 { Closure::Left } else { Closure::Right };
    let mut histogram = InlineHistogram::<7>::new(closure);
    histogram.push(0.25, 1).unwrap();
    let before = histogram.clone();
    match histogram.push_batch(&scores, &labels) {
        Err(_) => assert_eq!(histogram, before),
        Ok(()) => {
            let e = histogram.ece_bin(Norm::L2).unwrap();
            assert!((0.0..=1.0).contains(&e.value));
            assert_eq!(e.samples, scores.len() as u64 + 1);
        }
    }
    let mut buffer = InlineBuffer::<128>::new();
    buffer.push(0.75, 0).unwrap();
    let accepted = buffer.push_batch(&scores, &labels).is_ok();
    assert_eq!(buffer.len(), if accepted { scores.len() + 1 } else { 1 });
    let sorted = buffer.sorted();
    for binning in [Binning::EQUAL_MASS, Binning::EqualMass(Ties::Keep), Binning::EqualWidth(closure)] {
        let sweep = sorted.ece_sweep(binning, Norm::L1, SweepOptions::default()).unwrap();
        assert!((0.0..=1.0).contains(&sweep.value) && sweep.bins <= sorted.len());
        let debias = sorted.ece_debias(binning, 5, Norm::L2).unwrap();
        assert!((0.0..=1.0).contains(&debias.value));
    }
    let mut window = InlineWindow::<16>::new();
    if window.push_batch(&scores, &labels).is_ok() && !scores.is_empty() {
        assert_eq!(window.len(), scores.len().min(16));
        window.samples().ece_bin(Binning::EQUAL_MASS, 4, Norm::L2).unwrap();
    }
});
