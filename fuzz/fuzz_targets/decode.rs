//! Arbitrary bytes into every decoder: a named error or a state, never a panic; a state
//! that decodes encodes back to the very same bytes, and its estimates are fractions.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tce::{Binning, Closure, InlineBuffer, InlineHistogram, InlineReservoir, Norm, SweepOptions};

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
});
