//! Arbitrary bytes into every decoder: a named error or a state, never a panic; a state
//! that decodes encodes back to the very same bytes, and its estimates are fractions.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tce::{
    Binning, Closure, DecayedBin, DecayingHistogram, InlineBuffer, InlineHistogram,
    InlineReservoir, InlineWindow, Norm, SweepOptions,
};

fuzz_target!(|bytes: &[u8]| {
    let mut histogram = InlineHistogram::<15>::new(Closure::Left);
    if histogram.decode(bytes).is_ok() {
        let mut again = [0u8; 1024];
        let written = histogram.encode(&mut again).unwrap();
        assert_eq!(&again[..written], bytes);
        if let Ok(e) = histogram.ece_bin(Norm::L2) {
            assert!((0.0..=1.0).contains(&e.value));
        }
    }
    let mut buffer = InlineBuffer::<256>::new();
    if buffer.decode(bytes).is_ok() {
        let mut again = vec![0u8; buffer.encoded_len()];
        buffer.encode(&mut again).unwrap();
        assert_eq!(again, bytes);
        if let Ok(e) = buffer.sorted().ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default()) {
            assert!((0.0..=1.0).contains(&e.value) && e.bins >= 1);
        }
    }
    let mut reservoir = InlineReservoir::<64>::new(1);
    if reservoir.decode(bytes).is_ok() {
        let mut again = vec![0u8; reservoir.encoded_len()];
        reservoir.encode(&mut again).unwrap();
        assert_eq!(again, bytes);
        reservoir.push(0.5, 1).unwrap();
    }
    let mut window = InlineWindow::<64>::new();
    if window.decode(bytes).is_ok() {
        let mut again = vec![0u8; window.encoded_len()];
        window.encode(&mut again).unwrap();
        assert_eq!(again, bytes);
        if let Ok(e) = window.samples().ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default()) {
            assert!((0.0..=1.0).contains(&e.value) && e.bins >= 1);
        }
        window.push_batch(&[0.5; 70], &[1; 70]).unwrap(); // evicts every decoded sample
        assert_eq!(window.len(), 64);
    }
    let mut decaying = DecayingHistogram::<[DecayedBin; 15]>::new(Closure::Left, 10.0).unwrap();
    if decaying.decode(bytes).is_ok() {
        let mut again = vec![0u8; decaying.encoded_len()];
        decaying.encode(&mut again).unwrap();
        assert_eq!(again, bytes);
        let _ = decaying.ece_bin(Norm::L2);
        let _ = decaying.ece_debias(Norm::L2);
        decaying.push(0.5, 1).unwrap();
    }
});
