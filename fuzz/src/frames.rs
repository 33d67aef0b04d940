//! Structure-aware portable frames (the layout of `src/portable.rs`): a header and a
//! payload of each state kind, built from `arbitrary` input and signed with a valid
//! CRC-32, so that fuzzing and property tests reach the decoders' content checks instead
//! of stopping at the checksum.
//!
//! Every field is either the value a real state would write ("usual", the first variant,
//! which `arbitrary` picks when the input runs out) or a raw value, and numbers favour the
//! edges of their ranges (the count bound, `u64::MAX`, zero, ...). Shared by the fuzz
//! targets and by `tests/portable_frames.rs` (which includes this file by path).

use arbitrary::Arbitrary;
use tce::{
    Closure, DecayedBin, DecayingHistogram, InlineAlarm, InlineBuffer, InlineHistogram,
    InlineReservoir, InlineWindow,
};

/// Bins of the histograms the decoders are tried with.
pub const BINS: usize = 15;
/// Capacity of the sorted buffer the decoders are tried with.
pub const BUFFER: usize = 256;
/// Capacity of the reservoir the decoders are tried with.
pub const RESERVOIR: usize = 64;
/// Size of the sliding window the decoders are tried with.
pub const WINDOW: usize = 64;
/// The reservoir's seed (it does not matter: decoding replaces the generator's state).
pub const RESERVOIR_SEED: u64 = 1;
/// The decaying histogram's half-life before decoding (decoding replaces it).
pub const HALF_LIFE: f64 = 10.0;

const MAGIC: [u8; 4] = *b"TCE\0";
const VERSION: u16 = 1;

/// The kinds of the frame header, as `src/portable.rs` numbers them.
#[derive(Arbitrary, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Equal-width histogram.
    Histogram = 1,
    /// Sorted buffer.
    Buffer = 2,
    /// Reservoir.
    Reservoir = 3,
    /// Sliding window.
    Window = 4,
    /// Decaying histogram.
    Decaying = 5,
    /// Calibration alarm (recorded frames only: no field-by-field payload yet).
    Alarm = 6,
}

impl Kind {
    /// Every kind, in header order.
    pub const ALL: [Kind; 6] = [
        Kind::Histogram,
        Kind::Buffer,
        Kind::Reservoir,
        Kind::Window,
        Kind::Decaying,
        Kind::Alarm,
    ];

    /// A file name for the seed corpus.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Histogram => "histogram",
            Kind::Buffer => "buffer",
            Kind::Reservoir => "reservoir",
            Kind::Window => "window",
            Kind::Decaying => "decaying",
            Kind::Alarm => "alarm",
        }
    }
}

/// One frame: header fields, a payload, and optional bytes after the payload (covered by
/// the length field when that is usual, so they make a frame with trailing bytes).
#[derive(Arbitrary, Clone, Debug)]
pub struct Frame {
    /// The header's magic, version, kind and length fields.
    pub header: Header,
    /// What follows the header.
    pub payload: Payload,
    /// Bytes appended to the payload.
    pub trailing: Option<Vec<u8>>,
}

/// The header fields; usual means what an encoder writes for this payload.
#[derive(Arbitrary, Clone, Debug)]
pub struct Header {
    /// `b"TCE\0"` or not.
    pub magic: Field<[u8; 4]>,
    /// Format version 1 or not.
    pub version: Field<u16>,
    /// The payload's kind or not.
    pub kind: Field<u16>,
    /// The payload's length or not.
    pub length: Field<u32>,
}

/// A field that an encoder would write as a known value, or any raw value.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Field<T> {
    /// What an encoder writes.
    Usual,
    /// Anything.
    Raw(T),
}

impl<T: Copy> Field<T> {
    fn or(self, usual: T) -> T {
        match self {
            Field::Usual => usual,
            Field::Raw(value) => value,
        }
    }
}

/// A count field: the destination's size, the number of items actually written, or raw.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Size {
    /// As many items as the destination holds (the item list is cycled or cut to it).
    Destination,
    /// As many items as the list has.
    Actual,
    /// A raw count, with the list written as it is.
    Raw(u32),
}

/// A 64-bit count: small, at an edge of the count bound, or raw.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Count {
    /// A small count.
    Small(u16),
    /// A count at an edge: see [`Count::EDGES`].
    Edge(u8),
    /// Any count.
    Raw(u64),
}

impl Count {
    /// Counts at the edges of what states can hold.
    pub const EDGES: [u64; 10] = [
        0,
        1,
        tce::MAX_COUNT / 2,
        tce::MAX_COUNT - 1,
        tce::MAX_COUNT,
        tce::MAX_COUNT + 1,
        u64::MAX / 2 + 1,
        u64::MAX - 64,
        u64::MAX - 6,
        u64::MAX,
    ];

    fn value(self) -> u64 {
        match self {
            Count::Small(n) => u64::from(n),
            Count::Edge(i) => Self::EDGES[usize::from(i) % Self::EDGES.len()],
            Count::Raw(n) => n,
        }
    }
}

/// A part of a whole (hits of a count, hit weight of a weight, ...).
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Part<T> {
    /// `fraction / 2^16` of the whole (0 ..= 1).
    Fraction(u16),
    /// All of it.
    Whole,
    /// Any value.
    Raw(T),
}

/// An f64: a fraction of the unit interval, an edge value, or raw bits.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Real {
    /// `n / (2^32 − 1)`, in [0, 1].
    Unit(u32),
    /// An edge: see [`Real::EDGES`].
    Edge(u8),
    /// Any bits (NaN payloads included).
    Bits(u64),
}

impl Real {
    /// Values at the edges of what scores and weights may be.
    pub const EDGES: [f64; 14] = [
        0.0,
        1.0,
        -0.0,
        0.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1.0 + f64::EPSILON,
        -f64::MIN_POSITIVE,
        f64::MIN_POSITIVE,
        5e-324,
        1e308,
        f64::MAX,
        1.606_938_044_258_990_3e60, // 2^200, where decaying weights are rescaled
    ];

    fn value(self) -> f64 {
        match self {
            Real::Unit(n) => f64::from(n) / f64::from(u32::MAX),
            Real::Edge(i) => Self::EDGES[usize::from(i) % Self::EDGES.len()],
            Real::Bits(bits) => f64::from_bits(bits),
        }
    }
}

/// A sample as a state stores it: a score and a label.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct Sample {
    /// The score.
    pub score: Real,
    /// The label: 0 or 1 (usual) or any byte.
    pub label: Field<u8>,
    /// The label when usual.
    pub hit: bool,
}

impl Sample {
    fn parts(self) -> (f64, u8) {
        (self.score.value(), self.label.or(u8::from(self.hit)))
    }
}

/// A buffer payload: a sample count and the samples.
#[derive(Arbitrary, Clone, Debug)]
pub struct Samples {
    /// The count field.
    pub count: Size,
    /// The samples.
    pub samples: Vec<Sample>,
}

/// One equal-width bin.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct Bin {
    /// Samples in the bin.
    pub count: Count,
    /// Label-1 samples, of the count.
    pub hits: Part<u64>,
    /// The score sum in units of 2^−64, of one per sample.
    pub score_sum: Part<u128>,
}

/// One decaying bin.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub struct Decayed {
    /// Samples in the bin.
    pub count: Count,
    /// Total weight; 0 when usual and the count is 0.
    pub weight: Field<Real>,
    /// Weight of the label-1 samples, of the weight.
    pub hit_weight: Part<Real>,
    /// Score-weighted weight, of the weight.
    pub score_weight: Part<Real>,
    /// Sum of squared weights, of the weight squared.
    pub weight_squared: Part<Real>,
}

/// The decaying histogram's retain factor λ.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum Retain {
    /// λ = 2^(−1/h) for a half-life h = (n + 1)/16 samples.
    HalfLife(u16),
    /// Any value.
    Raw(Real),
}

/// The decaying histogram's next weight.
#[derive(Arbitrary, Clone, Copy, Debug)]
pub enum NextWeight {
    /// 2^(200·n/2^16), in [1, 2^200).
    Scaled(u16),
    /// Any value.
    Raw(Real),
}

/// A payload of each kind, field by field.
#[derive(Arbitrary, Clone, Debug)]
pub enum Payload {
    /// An equal-width histogram.
    Histogram {
        /// Closure byte and padding.
        closure: Field<[u8; 4]>,
        /// Right-closed when the closure is usual.
        right: bool,
        /// The bin-count field.
        count: Size,
        /// The bins.
        bins: Vec<Bin>,
    },
    /// A sorted buffer.
    Buffer(Samples),
    /// A reservoir.
    Reservoir {
        /// The capacity field.
        capacity: Field<u32>,
        /// Samples seen: consistent with those held (with this many more when full), or raw.
        seen: Part<Count>,
        /// The generator's state.
        rng: [u64; 4],
        /// The held samples (cut to the capacity when it is usual).
        held: Samples,
    },
    /// A sliding window.
    Window {
        /// The window-size field.
        capacity: Field<u32>,
        /// Samples seen: consistent with those held (with this many more when full), or raw.
        seen: Part<Count>,
        /// The held samples (cut to the window when its size is usual).
        held: Samples,
    },
    /// A decaying histogram.
    Decaying {
        /// Closure byte and padding.
        closure: Field<[u8; 4]>,
        /// Right-closed when the closure is usual.
        right: bool,
        /// The bin-count field.
        count: Size,
        /// λ.
        retain: Retain,
        /// The next sample's weight.
        next_weight: NextWeight,
        /// The bins.
        bins: Vec<Decayed>,
    },
    /// A real state of `kind` (the decoders' destination type) after recording `samples`,
    /// as its own encoder writes it (decaying histograms with a half-life of
    /// `(half_life + 1)/16` samples).
    Recorded {
        /// Which state.
        kind: Kind,
        /// What it records (invalid samples are refused and skipped).
        samples: Vec<Sample>,
        /// The decaying histogram's half-life.
        half_life: u16,
    },
}

/// `items` as `size` says: cycled or cut to `destination` items, or as they are; and the
/// count to write.
fn sized<T: Copy + Default>(items: &[T], size: Size, destination: usize) -> (u32, Vec<T>) {
    match size {
        Size::Destination => {
            let cycled = if items.is_empty() {
                vec![T::default(); destination]
            } else {
                items.iter().copied().cycle().take(destination).collect()
            };
            (destination as u32, cycled)
        }
        Size::Actual => (items.len() as u32, items.to_vec()),
        Size::Raw(n) => (n, items.to_vec()),
    }
}

impl Default for Sample {
    fn default() -> Self {
        Sample {
            score: Real::Unit(u32::MAX / 2),
            label: Field::Usual,
            hit: true,
        }
    }
}

impl Default for Bin {
    fn default() -> Self {
        Bin {
            count: Count::Small(0),
            hits: Part::Whole,
            score_sum: Part::Whole,
        }
    }
}

impl Default for Decayed {
    fn default() -> Self {
        Decayed {
            count: Count::Small(0),
            weight: Field::Usual,
            hit_weight: Part::Whole,
            score_weight: Part::Whole,
            weight_squared: Part::Whole,
        }
    }
}

fn closure_bytes(closure: Field<[u8; 4]>, right: bool) -> [u8; 4] {
    closure.or([u8::from(right), 0, 0, 0])
}

fn write_samples(out: &mut Vec<u8>, count: u32, samples: &[Sample]) {
    out.extend_from_slice(&count.to_le_bytes());
    for sample in samples {
        let (score, label) = sample.parts();
        out.extend_from_slice(&score.to_bits().to_le_bytes());
        out.push(label);
    }
}

/// Held samples of a reservoir or window and the `seen` to write with them.
fn held(
    held: &Samples,
    capacity: Field<u32>,
    seen: Part<Count>,
    size: usize,
) -> (u32, Vec<Sample>, u64) {
    let mut samples = held.samples.clone();
    if let Field::Usual = capacity {
        samples.truncate(size);
    }
    let (count, samples) = sized(&samples, held.count, size);
    let n = samples.len() as u64;
    let full = n == u64::from(capacity.or(size as u32));
    let seen = match seen {
        Part::Whole => n,
        Part::Fraction(more) if full => n.saturating_add(u64::from(more)),
        Part::Fraction(_) => n,
        Part::Raw(count) => count.value(),
    };
    (count, samples, seen)
}

fn of_u64(whole: u64, part: Part<u64>) -> u64 {
    match part {
        Part::Fraction(f) => ((u128::from(whole) * u128::from(f)) >> 16) as u64,
        Part::Whole => whole,
        Part::Raw(value) => value,
    }
}

fn of_f64(whole: f64, part: Part<Real>) -> f64 {
    match part {
        Part::Fraction(f) => whole * f64::from(f) / 65536.0,
        Part::Whole => whole,
        Part::Raw(value) => value.value(),
    }
}

impl Payload {
    /// The kind and payload bytes.
    pub fn bytes(&self) -> (u16, Vec<u8>) {
        let mut out = Vec::new();
        let kind = match self {
            Payload::Histogram {
                closure,
                right,
                count,
                bins,
            } => {
                let (count, bins) = sized(bins, *count, BINS);
                out.extend_from_slice(&closure_bytes(*closure, *right));
                out.extend_from_slice(&count.to_le_bytes());
                for bin in bins {
                    let n = bin.count.value();
                    let sum = match bin.score_sum {
                        Part::Fraction(f) => (u128::from(n) * u128::from(f)) << 48,
                        Part::Whole => u128::from(n) << 64,
                        Part::Raw(sum) => sum,
                    };
                    out.extend_from_slice(&n.to_le_bytes());
                    out.extend_from_slice(&of_u64(n, bin.hits).to_le_bytes());
                    out.extend_from_slice(&(sum as u64).to_le_bytes());
                    out.extend_from_slice(&((sum >> 64) as u64).to_le_bytes());
                }
                Kind::Histogram
            }
            Payload::Buffer(samples) => {
                let (count, samples) = sized(&samples.samples, samples.count, BUFFER);
                write_samples(&mut out, count, &samples);
                Kind::Buffer
            }
            Payload::Reservoir {
                capacity,
                seen,
                rng,
                held: samples,
            } => {
                let (count, samples, seen) = held(samples, *capacity, *seen, RESERVOIR);
                out.extend_from_slice(&capacity.or(RESERVOIR as u32).to_le_bytes());
                out.extend_from_slice(&seen.to_le_bytes());
                for word in rng {
                    out.extend_from_slice(&word.to_le_bytes());
                }
                write_samples(&mut out, count, &samples);
                Kind::Reservoir
            }
            Payload::Window {
                capacity,
                seen,
                held: samples,
            } => {
                let (count, samples, seen) = held(samples, *capacity, *seen, WINDOW);
                out.extend_from_slice(&capacity.or(WINDOW as u32).to_le_bytes());
                out.extend_from_slice(&seen.to_le_bytes());
                write_samples(&mut out, count, &samples);
                Kind::Window
            }
            Payload::Decaying {
                closure,
                right,
                count,
                retain,
                next_weight,
                bins,
            } => {
                let (count, bins) = sized(bins, *count, BINS);
                let retain = match retain {
                    Retain::HalfLife(n) => 2f64.powf(-16.0 / (f64::from(*n) + 1.0)),
                    Retain::Raw(real) => real.value(),
                };
                let next_weight = match next_weight {
                    NextWeight::Scaled(n) => 2f64.powf(200.0 * f64::from(*n) / 65536.0),
                    NextWeight::Raw(real) => real.value(),
                };
                out.extend_from_slice(&closure_bytes(*closure, *right));
                out.extend_from_slice(&count.to_le_bytes());
                out.extend_from_slice(&retain.to_bits().to_le_bytes());
                out.extend_from_slice(&next_weight.to_bits().to_le_bytes());
                for bin in bins {
                    let n = bin.count.value();
                    let weight = match bin.weight {
                        Field::Usual if n == 0 => 0.0,
                        Field::Usual => n as f64,
                        Field::Raw(real) => real.value(),
                    };
                    out.extend_from_slice(&n.to_le_bytes());
                    for w in [
                        weight,
                        of_f64(weight, bin.hit_weight),
                        of_f64(weight, bin.score_weight),
                        of_f64(weight * weight, bin.weight_squared),
                    ] {
                        out.extend_from_slice(&w.to_bits().to_le_bytes());
                    }
                }
                Kind::Decaying
            }
            Payload::Recorded {
                kind,
                samples,
                half_life,
            } => {
                let samples: Vec<(f64, u8)> = samples.iter().map(|s| s.parts()).collect();
                return (
                    *kind as u16,
                    payload_of(&recorded(*kind, &samples, *half_life)),
                );
            }
        };
        (kind as u16, out)
    }
}

/// The payload of a frame an encoder wrote.
fn payload_of(frame: &[u8]) -> Vec<u8> {
    frame[12..frame.len() - 4].to_vec()
}

/// The frame of a real state of `kind` (the decoders' destination type) after recording
/// `samples`, skipping those it refuses.
pub fn recorded(kind: Kind, samples: &[(f64, u8)], half_life: u16) -> Vec<u8> {
    let mut out = vec![0u8; 1 << 16];
    let written = match kind {
        Kind::Histogram => {
            let mut state = InlineHistogram::<BINS>::new(Closure::Left);
            for &(score, label) in samples {
                let _ = state.push(score, label);
            }
            state.encode(&mut out)
        }
        Kind::Buffer => {
            let mut state = InlineBuffer::<BUFFER>::new();
            for &(score, label) in samples {
                let _ = state.push(score, label);
            }
            state.encode(&mut out)
        }
        Kind::Reservoir => {
            let mut state = InlineReservoir::<RESERVOIR>::new(RESERVOIR_SEED);
            for &(score, label) in samples {
                let _ = state.push(score, label);
            }
            state.encode(&mut out)
        }
        Kind::Window => {
            let mut state = InlineWindow::<WINDOW>::new();
            for &(score, label) in samples {
                let _ = state.push(score, label);
            }
            state.encode(&mut out)
        }
        Kind::Decaying => {
            let half_life = (f64::from(half_life) + 1.0) / 16.0;
            let mut state = DecayingHistogram::<[DecayedBin; BINS]>::new(Closure::Right, half_life)
                .expect("half-lives of 1/16 sample and more are valid");
            for &(score, label) in samples {
                let _ = state.push(score, label);
            }
            state.encode(&mut out)
        }
        Kind::Alarm => {
            // Threshold (half_life mod 512 + 1)/64, in (0, 8]: low enough that some
            // recorded alarms have gone off.
            let threshold = (f64::from(half_life % 512) + 1.0) / 64.0;
            let mut state =
                InlineAlarm::<BINS>::new(Closure::Right, core::f64::consts::LN_2, threshold)
                    .expect("a shift of ln 2 and thresholds in (0, 8] are valid");
            for &(score, label) in samples {
                let _ = state.push(score, label);
            }
            state.encode(&mut out)
        }
    }
    .expect("64 KiB hold every destination's frame");
    out.truncate(written);
    out
}

impl Frame {
    /// The frame's bytes, signed with a valid CRC-32.
    pub fn to_bytes(&self) -> Vec<u8> {
        let (kind, mut payload) = self.payload.bytes();
        if let Some(trailing) = &self.trailing {
            payload.extend_from_slice(trailing);
        }
        let mut out = Vec::with_capacity(12 + payload.len() + 4);
        out.extend_from_slice(&self.header.magic.or(MAGIC));
        out.extend_from_slice(&self.header.version.or(VERSION).to_le_bytes());
        out.extend_from_slice(&self.header.kind.or(kind).to_le_bytes());
        out.extend_from_slice(&self.header.length.or(payload.len() as u32).to_le_bytes());
        out.extend_from_slice(&payload);
        sign(out)
    }
}

/// Appends the CRC-32 of `bytes`.
pub fn sign(mut bytes: Vec<u8>) -> Vec<u8> {
    let crc = tce::portable::crc32(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes
}

/// `bytes` with their last four bytes replaced by the CRC-32 of the others (so that raw
/// mutations of a valid frame keep a valid checksum), or `None` when too short to hold one.
pub fn resign(bytes: &[u8]) -> Option<Vec<u8>> {
    let body = bytes.len().checked_sub(4)?;
    Some(sign(bytes[..body].to_vec()))
}

/// One valid frame of every kind, from a fixed set of samples: the seed corpus.
pub fn seeds() -> Vec<(Kind, Vec<u8>)> {
    // 100 samples that cover every bin, both labels, and the edges 0 and 1: the window
    // and the reservoir are full and have evicted, the buffer is not full.
    let samples: Vec<(f64, u8)> = (0..100u32)
        .map(|i| (f64::from(i * 37 % 101) / 100.0, u8::from(i % 3 == 0)))
        .collect();
    Kind::ALL
        .iter()
        .map(|&kind| (kind, recorded(kind, &samples, 160)))
        .collect()
}
