//! Arbitrary batches (9 bytes a sample: an f64's bits and a label byte) into every state:
//! a refused batch leaves the state as it was, and is refused exactly when the validation
//! rule says so; an accepted one equals pushing its samples one at a time and gives
//! estimates that are fractions.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tce::{Binning, Closure, InlineBuffer, InlineHistogram, InlineWindow, Norm, SweepOptions, Ties};

fuzz_target!(|bytes: &[u8]| {
    let (scores, labels): (Vec<f64>, Vec<u8>) = bytes
        .chunks_exact(9)
        .map(|c| (f64::from_le_bytes(c[..8].try_into().unwrap()), c[8]))
        .unzip();
    let closure = if bytes.len() % 2 == 0 { Closure::Left } else { Closure::Right };
    // The batch as given, and cycled to 1500 samples so that it takes the histogram's
    // laned path (batches of 1024 or more), which validates on the fly.
    let long: (Vec<f64>, Vec<u8>) = scores.iter().copied().zip(labels.iter().copied()).cycle().take(1500).unzip();
    for (scores, labels) in [(&scores, &labels), (&long.0, &long.1)] {
        let mut histogram = InlineHistogram::<7>::new(closure);
        histogram.push(0.25, 1).unwrap();
        let before = histogram.clone();
        let result = histogram.push_batch(scores, labels);
        assert_eq!(result, tce::sample::check_batch(scores, labels));
        match result {
            Err(_) => assert_eq!(histogram, before),
            Ok(()) => {
                let mut single = before.clone();
                for (&s, &l) in scores.iter().zip(labels) {
                    single.push(s, l).unwrap();
                }
                assert_eq!(histogram, single);
                let e = histogram.ece_bin(Norm::L2).unwrap();
                assert!((0.0..=1.0).contains(&e.value));
                assert_eq!(e.samples, scores.len() as u64 + 1);
            }
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
