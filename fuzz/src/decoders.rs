//! Bytes into every decoder, with the properties each must keep (a failed assertion is a
//! finding): a refused frame is a named error and leaves the destination as it was; a
//! decoded state encodes back to the very same bytes, gives estimates that are fractions
//! (never NaN), and takes another sample, after which its own encoding decodes again (or
//! it refuses the sample and stays as it was). Shared by the fuzz targets and by
//! `tests/portable_frames.rs` (which includes this file by path).

use tce::portable::{DecodeError, EncodeError};
use tce::{
    Binning, Closure, DecayedBin, DecayingHistogram, Estimate, EstimateError, InlineAlarm,
    InlineBuffer, InlineHistogram, InlineReservoir, InlineWindow, Norm, SweepOptions,
};

use crate::frames::{BINS, BUFFER, HALF_LIFE, RESERVOIR, RESERVOIR_SEED, WINDOW};

/// What each decoder made of a frame, in the order of `frames::Kind::ALL`.
pub type Outcomes = [Result<(), DecodeError>; 6];

/// Tries `bytes` with every decoder, checking the properties above.
pub fn check(bytes: &[u8]) -> Outcomes {
    [
        histogram(bytes),
        buffer(bytes),
        reservoir(bytes),
        window(bytes),
        decaying(bytes),
        alarm(bytes),
    ]
}

/// The bytes `encode` writes into a buffer of exactly `len` bytes.
fn encoded(len: usize, encode: impl FnOnce(&mut [u8]) -> Result<usize, EncodeError>) -> Vec<u8> {
    let mut out = vec![0u8; len];
    let written = encode(&mut out).expect("a state encodes into encoded_len() bytes");
    assert_eq!(written, len, "encode wrote other than encoded_len() bytes");
    out
}

/// An estimate, if one was given, is a fraction: in [0, 1] up to `slack`, never NaN.
fn fraction(estimate: Result<Estimate, EstimateError>, slack: f64, what: &str) {
    if let Ok(e) = estimate {
        assert!(
            e.value >= 0.0 && e.value <= 1.0 + slack,
            "{what} returned {} (not a fraction)",
            e.value
        );
    }
}

/// A score and a label that every state accepts.
const SAMPLE: (f64, u8) = (0.5, 1);

fn histogram(bytes: &[u8]) -> Result<(), DecodeError> {
    let fresh = InlineHistogram::<BINS>::new(Closure::Left);
    let mut state = fresh.clone();
    if let Err(e) = state.decode(bytes) {
        assert_eq!(
            state, fresh,
            "a refused frame ({e:?}) changed the histogram"
        );
        return Err(e);
    }
    assert_eq!(encoded(state.encoded_len(), |o| state.encode(o)), bytes);
    fraction(state.ece_bin(Norm::L2), 0.0, "histogram ece_bin");
    fraction(state.ece_bin(Norm::L1), 0.0, "histogram ece_bin L1");
    fraction(state.mce(), 0.0, "histogram mce");
    fraction(state.ece_debias(Norm::L2), 0.0, "histogram ece_debias");
    let before = state.clone();
    match state.push(SAMPLE.0, SAMPLE.1) {
        Ok(()) => {
            let again = encoded(state.encoded_len(), |o| state.encode(o));
            let mut copy = fresh.clone();
            copy.decode(&again)
                .expect("a histogram decodes its own encoding after a push");
            assert_eq!(copy, state);
            fraction(
                state.ece_bin(Norm::L2),
                0.0,
                "histogram ece_bin after a push",
            );
        }
        Err(_) => assert_eq!(state, before, "a refused push changed the histogram"),
    }
    Ok(())
}

fn buffer(bytes: &[u8]) -> Result<(), DecodeError> {
    let mut fresh = InlineBuffer::<BUFFER>::new();
    let empty = encoded(fresh.encoded_len(), |o| fresh.encode(o));
    let mut state = fresh.clone();
    if let Err(e) = state.decode(bytes) {
        let after = encoded(state.encoded_len(), |o| state.encode(o));
        assert_eq!(after, empty, "a refused frame ({e:?}) changed the buffer");
        return Err(e);
    }
    assert_eq!(encoded(state.encoded_len(), |o| state.encode(o)), bytes);
    let sorted = state.sorted();
    for binning in [Binning::EQUAL_MASS, Binning::EqualWidth(Closure::Left)] {
        fraction(
            sorted.ece_sweep(binning, Norm::L2, SweepOptions::default()),
            0.0,
            "buffer ece_sweep",
        );
        fraction(sorted.ece_bin(binning, 15, Norm::L2), 0.0, "buffer ece_bin");
        fraction(sorted.mce(binning, 15), 0.0, "buffer mce");
        fraction(
            sorted.ece_debias(binning, 15, Norm::L2),
            0.0,
            "buffer ece_debias",
        );
    }
    let held = state.len();
    match state.push(SAMPLE.0, SAMPLE.1) {
        Ok(()) => {
            assert_eq!(state.len(), held + 1);
            let again = encoded(state.encoded_len(), |o| state.encode(o));
            InlineBuffer::<BUFFER>::new()
                .decode(&again)
                .expect("a buffer decodes its own encoding after a push");
        }
        Err(_) => {
            assert_eq!(held, BUFFER, "a buffer with room refused a valid sample");
            let after = encoded(state.encoded_len(), |o| state.encode(o));
            assert_eq!(after, bytes, "a refused push changed the buffer");
        }
    }
    Ok(())
}

fn reservoir(bytes: &[u8]) -> Result<(), DecodeError> {
    let mut fresh = InlineReservoir::<RESERVOIR>::new(RESERVOIR_SEED);
    let empty = encoded(fresh.encoded_len(), |o| fresh.encode(o));
    let mut state = fresh.clone();
    if let Err(e) = state.decode(bytes) {
        let after = encoded(state.encoded_len(), |o| state.encode(o));
        assert_eq!(
            after, empty,
            "a refused frame ({e:?}) changed the reservoir"
        );
        return Err(e);
    }
    assert_eq!(encoded(state.encoded_len(), |o| state.encode(o)), bytes);
    fraction(
        state
            .samples()
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default()),
        0.0,
        "reservoir ece_sweep",
    );
    let seen = state.seen();
    match state.push(SAMPLE.0, SAMPLE.1) {
        Ok(()) => {
            assert_eq!(
                Some(state.seen()),
                seen.checked_add(1),
                "seen did not count the push"
            );
            let again = encoded(state.encoded_len(), |o| state.encode(o));
            InlineReservoir::<RESERVOIR>::new(RESERVOIR_SEED)
                .decode(&again)
                .expect("a reservoir decodes its own encoding after a push");
        }
        Err(_) => {
            let after = encoded(state.encoded_len(), |o| state.encode(o));
            assert_eq!(after, bytes, "a refused push changed the reservoir");
        }
    }
    Ok(())
}

fn window(bytes: &[u8]) -> Result<(), DecodeError> {
    let mut fresh = InlineWindow::<WINDOW>::new();
    let empty = encoded(fresh.encoded_len(), |o| fresh.encode(o));
    let mut state = fresh.clone();
    if let Err(e) = state.decode(bytes) {
        let after = encoded(state.encoded_len(), |o| state.encode(o));
        assert_eq!(after, empty, "a refused frame ({e:?}) changed the window");
        return Err(e);
    }
    assert_eq!(encoded(state.encoded_len(), |o| state.encode(o)), bytes);
    fraction(
        state
            .samples()
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default()),
        0.0,
        "window ece_sweep",
    );
    let seen = state.seen();
    match state.push(SAMPLE.0, SAMPLE.1) {
        Ok(()) => {
            assert_eq!(
                Some(state.seen()),
                seen.checked_add(1),
                "seen did not count the push"
            );
            let again = encoded(state.encoded_len(), |o| state.encode(o));
            InlineWindow::<WINDOW>::new()
                .decode(&again)
                .expect("a window decodes its own encoding after a push");
        }
        Err(_) => {
            let after = encoded(state.encoded_len(), |o| state.encode(o));
            assert_eq!(after, bytes, "a refused push changed the window");
        }
    }
    // A batch longer than the window evicts every decoded sample (or is refused whole).
    let before = encoded(state.encoded_len(), |o| state.encode(o));
    let batch = [SAMPLE.0; WINDOW + 6];
    match state.push_batch(&batch, &[SAMPLE.1; WINDOW + 6]) {
        Ok(()) => assert_eq!(state.len(), WINDOW),
        Err(_) => {
            let after = encoded(state.encoded_len(), |o| state.encode(o));
            assert_eq!(after, before, "a refused batch changed the window");
        }
    }
    Ok(())
}

fn decaying(bytes: &[u8]) -> Result<(), DecodeError> {
    let fresh = DecayingHistogram::<[DecayedBin; BINS]>::new(Closure::Left, HALF_LIFE)
        .expect("a half-life of 10 samples is valid");
    let mut state = fresh.clone();
    if let Err(e) = state.decode(bytes) {
        assert_eq!(
            state, fresh,
            "a refused frame ({e:?}) changed the decaying histogram"
        );
        return Err(e);
    }
    assert_eq!(encoded(state.encoded_len(), |o| state.encode(o)), bytes);
    // Hit and score weights may exceed the weight by a rounding margin.
    let slack = 1e-9;
    fraction(state.ece_bin(Norm::L2), slack, "decaying ece_bin");
    fraction(state.mce(), slack, "decaying mce");
    fraction(state.ece_debias(Norm::L2), slack, "decaying ece_debias");
    let before = state.clone();
    match state.push(SAMPLE.0, SAMPLE.1) {
        Ok(()) => {
            let again = encoded(state.encoded_len(), |o| state.encode(o));
            let mut copy = fresh.clone();
            copy.decode(&again)
                .expect("a decaying histogram decodes its own encoding after a push");
            assert_eq!(copy, state);
            fraction(
                state.ece_bin(Norm::L2),
                slack,
                "decaying ece_bin after a push",
            );
        }
        Err(_) => assert_eq!(
            state, before,
            "a refused push changed the decaying histogram"
        ),
    }
    Ok(())
}

fn alarm(bytes: &[u8]) -> Result<(), DecodeError> {
    let fresh = InlineAlarm::<BINS>::new(Closure::Left, core::f64::consts::LN_2, 5.0)
        .expect("a shift of ln 2 and a threshold of 5 are valid");
    let mut state = fresh.clone();
    if let Err(e) = state.decode(bytes) {
        assert_eq!(state, fresh, "a refused frame ({e:?}) changed the alarm");
        return Err(e);
    }
    assert_eq!(encoded(state.encoded_len(), |o| state.encode(o)), bytes);
    let statistic = state.statistic();
    assert!(
        statistic.is_finite() && statistic >= 0.0,
        "alarm statistic {statistic}"
    );
    let before = state.clone();
    match state.push(SAMPLE.0, SAMPLE.1) {
        Ok(()) => {
            let again = encoded(state.encoded_len(), |o| state.encode(o));
            let mut copy = fresh.clone();
            copy.decode(&again)
                .expect("an alarm decodes its own encoding after a push");
            assert_eq!(copy, state);
        }
        Err(_) => assert_eq!(state, before, "a refused push changed the alarm"),
    }
    Ok(())
}
