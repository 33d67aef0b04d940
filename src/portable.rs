//! Portable state: a state serialised to bytes on one device and read back on another
//! (to merge a fleet's histograms, say).
//!
//! Every encoding is one frame, all integers little-endian:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `b"TCE\0"` |
//! | 4 | 2 | format version, [`FORMAT_VERSION`] |
//! | 6 | 2 | kind: 1 equal-width histogram, 2 sorted buffer, 3 reservoir, 4 sliding window, 5 decaying histogram, 6 calibration alarm |
//! | 8 | 4 | payload length L |
//! | 12 | L | payload |
//! | 12 + L | 4 | CRC-32 (IEEE 802.3) of bytes 0 .. 12 + L |
//!
//! Histogram payload: closure (u8: 0 left, 1 right), 3 zero bytes, bin count B (u32), then
//! per bin count (u64), hits (u64), score sum low and high words (u64 each; 64.64 fixed
//! point), so 8 + 32·B bytes. Buffer payload: sample count n (u32), then each sample in
//! arrival order as its score's bits (u64) and label (u8), so 4 + 9·n bytes. Reservoir
//! payload: capacity (u32), samples seen (u64), the generator's state (4 × u64), then the
//! held samples as a buffer payload, so 48 + 9·n bytes. Sliding-window payload: window
//! size N (u32), samples seen (u64), then the held samples (the last min(N, seen)) in
//! arrival order as a buffer payload, so 16 + 9·n bytes. Decaying-histogram payload:
//! closure (u8), 3 zero bytes, bin count B (u32), the retain factor λ and the next
//! sample's weight (f64 bits each), then per bin count (u64) and weight, hit weight,
//! score weight and squared weight (f64 bits each), so 24 + 40·B bytes. Calibration-alarm
//! payload: closure (u8), 3 zero bytes, bin count B (u32), the shift θ and the threshold
//! h (f64 bits each), samples since the reset and the alarm's sample (0: none) (u64
//! each), the information sum (f64 bits), then per bin its two CUSUMs (f64 bits each)
//! and its samples (u64), so 48 + 24·B bytes. Scores are never
//! −0 (states store +0) and every f64 is written by its IEEE-754 bits, so a decoded state
//! encodes back to the very same bytes.
//!
//! Decoding checks everything before it changes the destination: a truncated, corrupted
//! (CRC), wrong-version, wrong-kind or inconsistent frame is a named [`DecodeError`] and
//! leaves the destination as it was.

use core::fmt;

use crate::alarm::{self, AlarmBin, CalibrationAlarm};
use crate::binning::{equal_width_score_bounds, Closure};
use crate::buffer::{Slot, SortedBuffer};
use crate::decay::{self, DecayedBin, DecayingHistogram, MIN_RETAIN, RESCALE_ABOVE};
use crate::error::PushError;
use crate::histogram::Histogram;
use crate::limits::{add_counts, CountOverflow, MAX_COUNT};
use crate::reservoir::Reservoir;
use crate::rng::Xoshiro256PlusPlus;
use crate::stats::BinStats;
use crate::window::SlidingWindow;

/// The format version this library writes and reads.
pub const FORMAT_VERSION: u16 = 1;
const MAGIC: [u8; 4] = *b"TCE\0";
const HEADER: usize = 12;
const TRAILER: usize = 4;
const KIND_HISTOGRAM: u16 = 1;
const KIND_BUFFER: u16 = 2;
const KIND_RESERVOIR: u16 = 3;
const KIND_WINDOW: u16 = 4;
const KIND_DECAYING: u16 = 5;
const KIND_ALARM: u16 = 6;
/// Closure, padding, bin count, shift, threshold, samples, alarm sample, information.
const ALARM_HEADER: usize = 4 + 4 + 5 * 8;
const ALARM_BIN_BYTES: usize = 3 * 8;
/// Capacity, samples seen and the generator's state, before the reservoir's samples.
const RESERVOIR_HEADER: usize = 4 + 8 + 32;
/// Window size and samples seen, before the window's samples.
const WINDOW_HEADER: usize = 4 + 8;
/// Closure, padding, bin count, λ and next weight, before the decaying bins.
const DECAYING_HEADER: usize = 4 + 4 + 8 + 8;
const DECAYED_BIN_BYTES: usize = 8 + 4 * 8;
/// Rounding slack allowed when a decaying bin's hit or score weight is compared with its
/// weight (the recording code keeps them ≤ the weight exactly; this is only a margin).
const WEIGHT_SLACK: f64 = 1e-12;

/// How far (relative to a decayed bin's weight) its weighted score sum may pass the bin's
/// edges times the weight: the sums round at every push, and unlike the hit weight, which
/// adds the same weights as the weight itself when every sample is a hit, the score
/// weight's rounding differs from the weight's. Far above any rounding, far below any
/// score outside the bin.
const DECAYED_SCORE_SLACK: f64 = 1e-9;
const BIN_BYTES: usize = 32;
const SAMPLE_BYTES: usize = 9;

/// Why a state could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeError {
    /// The output holds fewer than `needed` bytes.
    BufferTooSmall {
        /// Bytes the encoding takes.
        needed: usize,
    },
    /// The state's payload (`payload` bytes) is longer than the format's 32-bit length
    /// field can describe.
    FrameTooLarge {
        /// Bytes the payload would take.
        payload: usize,
    },
}

/// Why bytes could not be read back into a state. The destination is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// Fewer bytes than the frame needs.
    Truncated,
    /// The bytes do not start with the magic number: not a tce state.
    BadMagic,
    /// Written by another format version.
    UnsupportedVersion {
        /// The version in the bytes.
        found: u16,
    },
    /// A state of another kind (a buffer where a histogram was expected, say).
    WrongKind {
        /// The kind in the bytes.
        found: u16,
    },
    /// The checksum does not match: the bytes were corrupted.
    Checksum,
    /// The frame is well formed but its contents are impossible (an unknown closure,
    /// more hits than samples, a score outside [0, 1], trailing bytes, ...).
    Inconsistent,
    /// The destination has a different number of bins than the state.
    BinCountMismatch {
        /// Bins of the destination.
        expected: usize,
        /// Bins in the bytes.
        found: usize,
    },
    /// A reservoir or sliding-window state of another capacity than the destination's.
    CapacityMismatch {
        /// Capacity of the destination.
        expected: usize,
        /// Capacity in the bytes.
        found: usize,
    },
    /// The destination buffer cannot hold the state's samples.
    Full {
        /// Capacity of the destination.
        capacity: usize,
        /// Samples in the bytes.
        found: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BufferTooSmall { needed } => {
                write!(f, "the output buffer is too small: {needed} bytes needed")
            }
            Self::FrameTooLarge { payload } => write!(
                f,
                "the state's payload of {payload} bytes is too large for the format (at most 2^32 - 1)"
            ),
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated => f.write_str("truncated state"),
            Self::BadMagic => f.write_str("not a tce state (bad magic number)"),
            Self::UnsupportedVersion { found } => {
                write!(
                    f,
                    "state format version {found} is not supported (this reads {FORMAT_VERSION})"
                )
            }
            Self::WrongKind { found } => {
                write!(f, "state of kind {found} is not the kind expected")
            }
            Self::Checksum => f.write_str("state checksum mismatch: the bytes are corrupted"),
            Self::Inconsistent => f.write_str("state contents are inconsistent"),
            Self::BinCountMismatch { expected, found } => {
                write!(f, "state has {found} bins, the destination {expected}")
            }
            Self::Full { capacity, found } => {
                write!(
                    f,
                    "state has {found} samples, the destination holds {capacity}"
                )
            }
            Self::CapacityMismatch { expected, found } => {
                write!(
                    f,
                    "state of capacity {found}, the destination has {expected}"
                )
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EncodeError {}
#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

/// CRC-32 (IEEE 802.3, reflected, as zlib and PNG use), table built at compile time.
pub fn crc32(bytes: &[u8]) -> u32 {
    !crc32_continue(!0, bytes)
}

/// The CRC register after `bytes`, from register `c` (not inverted: `crc32` inverts it
/// before and after), so that a frame's parts can be signed one after another.
fn crc32_continue(c: u32, bytes: &[u8]) -> u32 {
    const TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[i] = c;
            i += 1;
        }
        table
    };
    // `& 0xff` keeps the index below the table's 256 entries.
    bytes.iter().fold(c, |c, &b| {
        TABLE[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// The length of the frame of a payload of `head` bytes and `count` units of `unit`
/// bytes, or [`EncodeError::FrameTooLarge`] when the format cannot describe it: a payload
/// above `u32::MAX` bytes (its length field has 32 bits), or a length that overflows
/// `usize` (then `payload` is `usize::MAX`). Computed without overflow.
fn frame_len(head: usize, unit: usize, count: usize) -> Result<usize, EncodeError> {
    let payload = unit
        .checked_mul(count)
        .and_then(|body| body.checked_add(head))
        .ok_or(EncodeError::FrameTooLarge {
            payload: usize::MAX,
        })?;
    check_payload_len(payload)?;
    (HEADER + TRAILER)
        .checked_add(payload)
        .ok_or(EncodeError::FrameTooLarge { payload })
}

/// The payload length as the frame's 32-bit length field, or
/// [`EncodeError::FrameTooLarge`].
fn check_payload_len(payload: usize) -> Result<u32, EncodeError> {
    u32::try_from(payload).map_err(|_| EncodeError::FrameTooLarge { payload })
}

/// `frame_len`'s answer as the public `encoded_len` gives it: a state the format cannot
/// describe has no encoding, and `usize::MAX` (which no buffer holds) says so.
fn or_unencodable(frame_len: Result<usize, EncodeError>) -> usize {
    frame_len.unwrap_or(usize::MAX)
}

/// The payload length of a frame of `needed` bytes: `frame_len` adds the header and
/// trailer to the payload, so `needed` is at least their length and nothing saturates.
fn payload_of(needed: usize) -> usize {
    needed.saturating_sub(HEADER + TRAILER)
}

/// Writes a payload's fields one after another, each a fixed-size array: no index and no
/// range to check, only the room left.
///
/// Invariant: `write_frame` gives it exactly the payload length that the state's
/// `frame_len` computed, and each encoder writes the fields that length counts (a fixed
/// head, then one unit per bin or held sample, the count `frame_len` was given). So every
/// field fits and the payload is filled exactly (checked in debug builds, and by every
/// round-trip test: a frame of the wrong length would not decode). Were they ever to
/// disagree, the fields past the end would be left out, never written past the payload.
pub(crate) struct Writer<'a> {
    rest: &'a mut [u8],
    fits: bool,
}

impl<'a> Writer<'a> {
    fn new(bytes: &'a mut [u8]) -> Self {
        Writer {
            rest: bytes,
            fits: true,
        }
    }

    fn put<const N: usize>(&mut self, field: [u8; N]) {
        match core::mem::take(&mut self.rest).split_first_chunk_mut::<N>() {
            Some((to, rest)) => {
                *to = field;
                self.rest = rest;
            }
            None => self.fits = false,
        }
    }

    fn u32(&mut self, value: u32) {
        self.put(value.to_le_bytes());
    }

    fn u64(&mut self, value: u64) {
        self.put(value.to_le_bytes());
    }

    fn f64(&mut self, value: f64) {
        self.u64(value.to_bits());
    }

    /// Whether every field fitted and the payload is full.
    fn filled(&self) -> bool {
        self.fits && self.rest.is_empty()
    }
}

/// Reads a payload's fields one after another; a field past the end is
/// [`DecodeError::Inconsistent`] (the payload is shorter than its own fields say).
#[derive(Clone, Copy)]
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let (field, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(DecodeError::Inconsistent)?;
        self.0 = rest;
        Ok(*field)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_le_bytes)
    }

    /// A u32 count or length as a `usize` (lossless on the 32- and 64-bit targets).
    fn len(&mut self) -> Result<usize, DecodeError> {
        usize::try_from(self.u32()?).map_err(|_| DecodeError::Inconsistent)
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_le_bytes)
    }

    fn f64(&mut self) -> Result<f64, DecodeError> {
        self.u64().map(f64::from_bits)
    }

    /// The bytes not read yet.
    fn rest(self) -> &'a [u8] {
        self.0
    }

    /// The closure byte and its 3 zero bytes (histogram payloads).
    fn closure(&mut self) -> Result<Closure, DecodeError> {
        match self.array::<4>()? {
            [0, 0, 0, 0] => Ok(Closure::Left),
            [1, 0, 0, 0] => Ok(Closure::Right),
            _ => Err(DecodeError::Inconsistent),
        }
    }
}

/// The units of `N` bytes that `bytes` is made of (a trailing part shorter than a unit
/// is not one; callers check with `holds` that there is none).
fn units<const N: usize>(mut bytes: &[u8]) -> impl Iterator<Item = &[u8; N]> + Clone {
    core::iter::from_fn(move || {
        let (unit, rest) = bytes.split_first_chunk::<N>()?;
        bytes = rest;
        Some(unit)
    })
}

/// The closure as its payload byte (histogram payloads).
fn closure_byte(closure: Closure) -> u8 {
    match closure {
        Closure::Left => 0,
        Closure::Right => 1,
    }
}

/// Writes a frame of `kind` whose payload `fill` writes through a [`Writer`]. Checks the
/// payload length (it must fit the 32-bit field) and the output's size before it writes
/// anything.
fn write_frame(
    out: &mut [u8],
    kind: u16,
    payload_len: usize,
    fill: impl FnOnce(&mut Writer<'_>),
) -> Result<usize, EncodeError> {
    let length_field = check_payload_len(payload_len)?;
    let needed = (HEADER + TRAILER)
        .checked_add(payload_len)
        .ok_or(EncodeError::FrameTooLarge {
            payload: payload_len,
        })?;
    let too_small = EncodeError::BufferTooSmall { needed };
    let out = out.get_mut(..needed).ok_or(too_small)?;
    // Cannot fail: `out` is `needed` = HEADER + payload_len + TRAILER bytes long.
    let (header, rest) = out.split_first_chunk_mut::<HEADER>().ok_or(too_small)?;
    let (payload, trailer) = rest.split_at_mut_checked(payload_len).ok_or(too_small)?;
    let trailer = trailer.first_chunk_mut::<TRAILER>().ok_or(too_small)?;
    let mut head = Writer::new(header);
    head.put(MAGIC);
    head.put(FORMAT_VERSION.to_le_bytes());
    head.put(kind.to_le_bytes());
    head.u32(length_field);
    debug_assert!(head.filled());
    let mut body = Writer::new(payload);
    fill(&mut body);
    debug_assert!(
        body.filled(),
        "the payload's length and its fields disagree"
    );
    let crc = !crc32_continue(crc32_continue(!0, header), payload);
    *trailer = crc.to_le_bytes();
    Ok(needed)
}

/// Checks a frame of `kind` and returns its payload.
fn read_frame(bytes: &[u8], kind: u16) -> Result<&[u8], DecodeError> {
    if bytes.len() < HEADER + TRAILER {
        return Err(DecodeError::Truncated);
    }
    let (header, rest) = bytes
        .split_first_chunk::<HEADER>()
        .ok_or(DecodeError::Truncated)?;
    let [m0, m1, m2, m3, v0, v1, k0, k1, l0, l1, l2, l3] = *header;
    if [m0, m1, m2, m3] != MAGIC {
        return Err(DecodeError::BadMagic);
    }
    let version = u16::from_le_bytes([v0, v1]);
    if version != FORMAT_VERSION {
        return Err(DecodeError::UnsupportedVersion { found: version });
    }
    let payload_len = usize::try_from(u32::from_le_bytes([l0, l1, l2, l3]))
        .map_err(|_| DecodeError::Truncated)?;
    let (payload, trailer) = rest
        .split_at_checked(payload_len)
        .ok_or(DecodeError::Truncated)?;
    match trailer.len() {
        TRAILER => {}
        short if short < TRAILER => return Err(DecodeError::Truncated),
        _ => return Err(DecodeError::Inconsistent),
    }
    // The trailer is the last TRAILER bytes: the CRC signs everything before it.
    let (signed, stored) = bytes
        .split_last_chunk::<TRAILER>()
        .ok_or(DecodeError::Truncated)?;
    if crc32(signed) != u32::from_le_bytes(*stored) {
        return Err(DecodeError::Checksum);
    }
    let found = u16::from_le_bytes([k0, k1]);
    if found != kind {
        return Err(DecodeError::WrongKind { found });
    }
    Ok(payload)
}

/// What a frame holds, read from its header and the start of its payload: enough to
/// build a destination of the right shape before decoding into it (a host that receives
/// bytes of unknown shape, such as the Python package's `from_bytes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameShape {
    /// An equal-width histogram of `bins` bins.
    Histogram {
        /// Its bin closure.
        closure: Closure,
        /// Its bin count B.
        bins: usize,
    },
    /// A sorted buffer holding `samples` samples.
    Buffer {
        /// Samples held (the frame does not carry the capacity).
        samples: usize,
    },
    /// A reservoir of capacity `capacity`.
    Reservoir {
        /// Its capacity N.
        capacity: usize,
    },
    /// A sliding window of `size` samples.
    Window {
        /// Its size N.
        size: usize,
    },
    /// A decaying histogram of `bins` bins.
    Decaying {
        /// Its bin closure.
        closure: Closure,
        /// Its bin count B.
        bins: usize,
    },
    /// A calibration alarm of `bins` bins.
    Alarm {
        /// Its bin closure.
        closure: Closure,
        /// Its bin count B.
        bins: usize,
    },
}

/// The shape of the state in `bytes`, after checking the frame (magic, version, length,
/// checksum, known kind) and that the payload's length is the one its shape implies.
/// The rest of the payload is checked only by the decoder of that kind.
///
/// The length check is for hosts that allocate the shape before decoding into it (the
/// Python package's `from_bytes`, `tce merge`): the sizes reported here are backed by
/// the frame's own bytes, so a forged frame of a few bytes cannot claim 2^24 bins or
/// 2^31 samples and have them allocated before its decoder refuses it. A histogram's or
/// decaying histogram's bin count and a buffer's sample count are implied exactly (each
/// bin or sample has its bytes); a reservoir's capacity and a window's size are implied
/// once they are full: they hold min(N, seen) samples, checked here, so only a state
/// that has seen fewer than N samples (all of which it holds) reports an N above what
/// its frame holds. Such a frame is legitimate: a host should allocate its storage
/// lazily (the Python package takes it zero-filled from the allocator, committed only
/// as it is written) or bound N itself. Otherwise [`DecodeError::Inconsistent`].
pub fn frame_shape(bytes: &[u8]) -> Result<FrameShape, DecodeError> {
    let kind = match bytes.get(6..8) {
        Some(&[k0, k1]) => u16::from_le_bytes([k0, k1]),
        _ => return Err(DecodeError::Truncated),
    };
    let payload = read_frame(bytes, kind)?;
    let mut fields = Reader(payload);
    let implied = |backed: bool| backed.then_some(()).ok_or(DecodeError::Inconsistent);
    // A reservoir or window: the held samples' count after the `head` bytes, which must
    // be min(capacity, seen) and fill the rest of the payload.
    let holds_last = |fields: &mut Reader<'_>, head: usize, capacity: usize, seen: u64| {
        let held = fields.len()?;
        implied(
            holds(payload, head + 4, SAMPLE_BYTES, held)
                && held as u64 == seen.min(capacity as u64),
        )
    };
    match kind {
        KIND_HISTOGRAM => {
            let (closure, bins) = (fields.closure()?, fields.len()?);
            implied(holds(payload, 8, BIN_BYTES, bins))?;
            Ok(FrameShape::Histogram { closure, bins })
        }
        KIND_BUFFER => {
            let samples = fields.len()?;
            implied(holds(payload, 4, SAMPLE_BYTES, samples))?;
            Ok(FrameShape::Buffer { samples })
        }
        KIND_RESERVOIR => {
            let (capacity, seen) = (fields.len()?, fields.u64()?);
            fields.array::<32>()?; // the generator's state
            holds_last(&mut fields, RESERVOIR_HEADER, capacity, seen)?;
            Ok(FrameShape::Reservoir { capacity })
        }
        KIND_WINDOW => {
            let (size, seen) = (fields.len()?, fields.u64()?);
            holds_last(&mut fields, WINDOW_HEADER, size, seen)?;
            Ok(FrameShape::Window { size })
        }
        KIND_DECAYING => {
            let (closure, bins) = (fields.closure()?, fields.len()?);
            implied(holds(payload, DECAYING_HEADER, DECAYED_BIN_BYTES, bins))?;
            Ok(FrameShape::Decaying { closure, bins })
        }
        KIND_ALARM => {
            let (closure, bins) = (fields.closure()?, fields.len()?);
            implied(holds(payload, ALARM_HEADER, ALARM_BIN_BYTES, bins))?;
            Ok(FrameShape::Alarm { closure, bins })
        }
        found => Err(DecodeError::WrongKind { found }),
    }
}

/// Writes a sample count and the samples (in arrival order) as a buffer payload. `len`
/// is the number of samples held, below 2^31 (`MAX_CAPACITY`): it fits the u32.
fn write_samples(payload: &mut Writer<'_>, len: usize, samples: impl Iterator<Item = (f64, u8)>) {
    payload.u32(len as u32);
    for (score, label) in samples {
        payload.f64(score);
        payload.put([label]);
    }
}

/// Reads and checks a buffer payload for a destination of `capacity`: every sample is
/// valid before any is returned.
fn read_samples(
    payload: &[u8],
    capacity: usize,
) -> Result<impl Iterator<Item = (f64, u8)> + Clone + '_, DecodeError> {
    let mut fields = Reader(payload);
    let found = fields.len()?;
    let body = fields.rest();
    if !holds(body, 0, SAMPLE_BYTES, found) {
        return Err(DecodeError::Inconsistent);
    }
    if found > capacity {
        return Err(DecodeError::Full { capacity, found });
    }
    let samples = units::<SAMPLE_BYTES>(body).map(|&[b0, b1, b2, b3, b4, b5, b6, b7, label]| {
        let score = f64::from_bits(u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]));
        (score, label)
    });
    for (score, label) in samples.clone() {
        // The index only names the element in the error, which becomes `Inconsistent`.
        crate::sample::check(score, label, 0).map_err(|_: PushError| DecodeError::Inconsistent)?;
        // States store −0 as +0 (their sort orders scores by their bits), so no encoder
        // writes it.
        if score.to_bits() == (-0.0f64).to_bits() {
            return Err(DecodeError::Inconsistent);
        }
    }
    Ok(samples)
}

/// Whether `payload` is exactly `head` bytes and `count` units of `unit` bytes (without
/// overflow on 32-bit targets).
fn holds(payload: &[u8], head: usize, unit: usize, count: usize) -> bool {
    unit.checked_mul(count)
        .and_then(|body| body.checked_add(head))
        == Some(payload.len())
}

impl<S: AsRef<[BinStats]> + AsMut<[BinStats]> + ?Sized> Histogram<S> {
    /// The number of bytes [`Histogram::encode`] writes: 24 + 32 per bin. For a
    /// histogram too large for the format (a payload above `u32::MAX` bytes, about 2^27
    /// bins, more than [`crate::MAX_BINS`] allows) `usize::MAX`: it has no encoding, and
    /// `encode` refuses it with [`EncodeError::FrameTooLarge`].
    pub fn encoded_len(&self) -> usize {
        or_unencodable(self.frame_len())
    }

    /// The frame's length, or why there is none.
    pub(crate) fn frame_len(&self) -> Result<usize, EncodeError> {
        frame_len(8, BIN_BYTES, self.bin_count())
    }

    /// Writes the histogram into `out` and returns the number of bytes written.
    ///
    /// Errors: [`EncodeError::FrameTooLarge`] (see [`Self::encoded_len`]),
    /// [`EncodeError::BufferTooSmall`]; nothing is written then.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let payload_len = payload_of(self.frame_len()?);
        write_frame(out, KIND_HISTOGRAM, payload_len, |payload| {
            payload.put([closure_byte(self.closure()), 0, 0, 0]);
            // The bin count fits: the payload, longer than it, fits 32 bits.
            payload.u32(self.bin_count() as u32);
            for bin in self.bins() {
                payload.u64(bin.count());
                payload.u64(bin.hits());
                // The low and the high word of the 128-bit sum.
                payload.u64(bin.score_sum() as u64);
                payload.u64((bin.score_sum() >> 64) as u64);
            }
        })
    }

    /// Replaces this histogram's state (closure and bins) with the one in `bytes`, which
    /// must have as many bins. On error nothing changes.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut fields = Reader(read_frame(bytes, KIND_HISTOGRAM)?);
        let closure = fields.closure()?;
        let found = fields.len()?;
        let body = fields.rest();
        // No state has more bins than MAX_BINS, so no encoder writes such a frame.
        if found > crate::MAX_BINS || !holds(body, 0, BIN_BYTES, found) {
            return Err(DecodeError::Inconsistent);
        }
        if found != self.bin_count() {
            return Err(DecodeError::BinCountMismatch {
                expected: self.bin_count(),
                found,
            });
        }
        // `from_parts` refuses a bin of more than MAX_COUNT samples.
        let parse = |unit: &[u8; BIN_BYTES]| {
            let mut fields = Reader(unit);
            let (count, hits) = (fields.u64()?, fields.u64()?);
            let (low, high) = (fields.u64()?, fields.u64()?);
            let sum = u128::from(high) << 64 | u128::from(low);
            BinStats::from_parts(count, hits, sum).ok_or(DecodeError::Inconsistent)
        };
        let bins = units::<BIN_BYTES>(body);
        let mut samples = 0u64;
        for (k, chunk) in bins.clone().enumerate() {
            let bin = parse(chunk)?;
            // Each score recorded in bin k lies within the bin's edges, and so does
            // their mean.
            if !scores_fit_bin(&bin, k, found) {
                return Err(DecodeError::Inconsistent);
            }
            // No state counts more than MAX_COUNT samples in all.
            samples = add_counts(samples, bin.count()).map_err(|_| DecodeError::Inconsistent)?;
        }
        // Cannot fail: every bin was checked above, and so was their total.
        self.overwrite(closure, |slots| {
            for (slot, chunk) in slots.iter_mut().zip(bins) {
                *slot = parse(chunk).map_err(|_| CountOverflow)?;
            }
            Ok(())
        })
        .map_err(|_| DecodeError::Inconsistent)
    }
}

/// Whether the score sum of `bin`, equal-width bin `k` of `bins`, lies within `count`
/// times the scores the bin can hold ([`equal_width_score_bounds`]), in the sum's own
/// fixed point (units of 2^-64).
fn scores_fit_bin(bin: &BinStats, k: usize, bins: usize) -> bool {
    const SCALE: f64 = 18_446_744_073_709_551_616.0; // 2^64
    let (lo, hi) = equal_width_score_bounds(k, bins);
    // lo, hi ≤ 1: at most 2^64 units each (the casts floor and ceil, no saturation), and
    // times a count below 2^63 at most 2^127: no product overflows.
    let (lo, hi) = ((lo * SCALE) as u128, libm::ceil(hi * SCALE) as u128);
    let count = u128::from(bin.count());
    (count.wrapping_mul(lo)..=count.wrapping_mul(hi)).contains(&bin.score_sum())
}

impl<S: AsRef<[Slot]> + AsMut<[Slot]> + ?Sized> SortedBuffer<S> {
    /// The number of bytes [`SortedBuffer::encode`] writes: 20 + 9 per sample (a
    /// buffer holds fewer than 2^31 samples, so it always fits the format).
    pub fn encoded_len(&self) -> usize {
        or_unencodable(self.frame_len())
    }

    /// The frame's length, or why there is none.
    pub(crate) fn frame_len(&self) -> Result<usize, EncodeError> {
        frame_len(4, SAMPLE_BYTES, self.len())
    }

    /// Writes the buffer's samples, in arrival order, into `out`; returns the bytes
    /// written. Puts the buffer in arrival order (a later estimate sorts it again).
    /// On error ([`EncodeError::BufferTooSmall`]) nothing is written.
    pub fn encode(&mut self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let needed = self.frame_len()?;
        let payload_len = payload_of(needed);
        if out.len() < needed {
            return Err(EncodeError::BufferTooSmall { needed });
        }
        let len = self.len();
        let samples = self.arrival_order();
        write_frame(out, KIND_BUFFER, payload_len, |payload| {
            write_samples(payload, len, samples)
        })
    }

    /// Replaces this buffer's samples with those in `bytes` (in their arrival order). On
    /// error nothing changes.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let samples = read_samples(read_frame(bytes, KIND_BUFFER)?, self.capacity())?;
        self.clear();
        for (score, label) in samples {
            self.push(score, label)
                .map_err(|_| DecodeError::Inconsistent)?;
        }
        Ok(())
    }
}

impl<S: AsRef<[Slot]>> Reservoir<S> {
    /// The number of bytes [`Reservoir::encode`] writes: 64 + 9 per held sample (it
    /// holds fewer than 2^31, so it always fits the format).
    pub fn encoded_len(&self) -> usize {
        or_unencodable(self.frame_len())
    }

    /// The frame's length, or why there is none.
    pub(crate) fn frame_len(&self) -> Result<usize, EncodeError> {
        frame_len(RESERVOIR_HEADER + 4, SAMPLE_BYTES, self.len())
    }
}

impl<S: AsRef<[Slot]> + AsMut<[Slot]>> Reservoir<S> {
    /// Writes the reservoir (capacity, samples seen, random state and held samples in
    /// arrival order) into `out`; returns the bytes written.
    pub fn encode(&mut self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let needed = self.frame_len()?;
        if out.len() < needed {
            return Err(EncodeError::BufferTooSmall { needed });
        }
        let (capacity, seen, state, len) =
            (self.capacity(), self.seen(), self.rng_state(), self.len());
        let samples = self.arrival_order();
        write_frame(out, KIND_RESERVOIR, payload_of(needed), |payload| {
            // The capacity fits: a reservoir holds at most MAX_CAPACITY < 2^31.
            payload.u32(capacity as u32);
            payload.u64(seen);
            for word in state {
                payload.u64(word);
            }
            write_samples(payload, len, samples);
        })
    }

    /// Replaces this reservoir's state with the one in `bytes`, which must have the same
    /// capacity. On error nothing changes.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let payload = read_frame(bytes, KIND_RESERVOIR)?;
        // A short head is `Inconsistent` before any field is compared.
        if payload.len() < RESERVOIR_HEADER {
            return Err(DecodeError::Inconsistent);
        }
        let mut fields = Reader(payload);
        let found = fields.len()?;
        if found != self.capacity() {
            return Err(DecodeError::CapacityMismatch {
                expected: self.capacity(),
                found,
            });
        }
        let seen = fields.u64()?;
        if seen > MAX_COUNT {
            return Err(DecodeError::Inconsistent);
        }
        let state = [fields.u64()?, fields.u64()?, fields.u64()?, fields.u64()?];
        let rng = Xoshiro256PlusPlus::from_state(state).ok_or(DecodeError::Inconsistent)?;
        let samples = read_samples(fields.rest(), found)?;
        // A reservoir holds min(capacity, seen) samples.
        if samples.clone().count() as u64 != seen.min(found as u64) {
            return Err(DecodeError::Inconsistent);
        }
        self.restore(seen, rng, samples);
        Ok(())
    }
}

impl<S: AsRef<[Slot]>, R> SlidingWindow<S, R> {
    /// The number of bytes [`SlidingWindow::encode`] writes: 32 + 9 per held sample
    /// (it holds fewer than 2^30, so it always fits the format).
    pub fn encoded_len(&self) -> usize {
        or_unencodable(self.frame_len())
    }

    /// The frame's length, or why there is none.
    pub(crate) fn frame_len(&self) -> Result<usize, EncodeError> {
        frame_len(WINDOW_HEADER + 4, SAMPLE_BYTES, self.len())
    }
}

impl<S: AsRef<[Slot]> + AsMut<[Slot]>, R: AsRef<[f64]> + AsMut<[f64]>> SlidingWindow<S, R> {
    /// Writes the window (size, samples seen and held samples in arrival order) into
    /// `out`; returns the bytes written. Puts the samples in arrival order (the next
    /// eviction or estimate sorts them again; results are unaffected).
    pub fn encode(&mut self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let needed = self.frame_len()?;
        if out.len() < needed {
            return Err(EncodeError::BufferTooSmall { needed });
        }
        let (capacity, seen, len) = (self.capacity(), self.seen(), self.len());
        let samples = self.arrival_order();
        write_frame(out, KIND_WINDOW, payload_of(needed), |payload| {
            // The size fits: a window holds at most MAX_WINDOW < 2^30.
            payload.u32(capacity as u32);
            payload.u64(seen);
            write_samples(payload, len, samples);
        })
    }

    /// Replaces this window's state with the one in `bytes`, which must have the same
    /// size: the window then evicts and estimates exactly as the encoded one would, and
    /// `seen` goes on from the encoded count. On error nothing changes.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let payload = read_frame(bytes, KIND_WINDOW)?;
        // A short head is `Inconsistent` before any field is compared.
        if payload.len() < WINDOW_HEADER {
            return Err(DecodeError::Inconsistent);
        }
        let mut fields = Reader(payload);
        let found = fields.len()?;
        if found != self.capacity() {
            return Err(DecodeError::CapacityMismatch {
                expected: self.capacity(),
                found,
            });
        }
        let seen = fields.u64()?;
        if seen > MAX_COUNT {
            return Err(DecodeError::Inconsistent);
        }
        let samples = read_samples(fields.rest(), found)?;
        // A window holds the last min(N, seen) samples.
        if samples.clone().count() as u64 != seen.min(found as u64) {
            return Err(DecodeError::Inconsistent);
        }
        self.restore(seen, samples);
        Ok(())
    }
}

/// Reads one decaying bin, or `None` when it cannot come from recorded samples with
/// this `next_weight`: a negative or non-finite number, more hit or score weight than
/// weight, weight in a bin without samples, or more weight than its samples can have.
/// A sample weighs at most the next sample's weight (it weighed less when recorded, and
/// rescaling scales both alike), so a bin of n samples weighs at most n·next_weight and
/// its squared weights sum to at most n·next_weight² (with a factor 2 for rounding).
/// (A bin with samples may have weight 0: old weights underflow.)
fn decayed_bin(unit: &[u8; DECAYED_BIN_BYTES], next_weight: f64) -> Option<DecayedBin> {
    let mut fields = Reader(unit);
    let bin = DecayedBin {
        count: fields.u64().ok()?,
        weight: fields.f64().ok()?,
        hit_weight: fields.f64().ok()?,
        score_weight: fields.f64().ok()?,
        weight_squared: fields.f64().ok()?,
    };
    let weights = [
        bin.weight,
        bin.hit_weight,
        bin.score_weight,
        bin.weight_squared,
    ];
    let bound = bin.weight * (1.0 + WEIGHT_SLACK);
    // In f64: n ≤ 2^64 and next_weight ≤ 2^200, so neither bound overflows.
    let heaviest = 2.0 * bin.count as f64 * next_weight;
    let possible = weights.iter().all(|w| w.is_finite() && *w >= 0.0)
        && bin.hit_weight <= bound
        && bin.score_weight <= bound
        && bin.weight <= heaviest
        && bin.weight_squared <= heaviest * next_weight
        && (bin.count > 0 || weights.iter().all(|&w| w == 0.0));
    possible.then_some(bin)
}

impl<S: AsRef<[DecayedBin]> + ?Sized> DecayingHistogram<S> {
    /// The number of bytes [`DecayingHistogram::encode`] writes: 40 + 40 per bin. For
    /// a histogram too large for the format (a payload above `u32::MAX` bytes),
    /// `usize::MAX`: it has no encoding, and `encode` refuses it with
    /// [`EncodeError::FrameTooLarge`].
    pub fn encoded_len(&self) -> usize {
        or_unencodable(self.frame_len())
    }

    /// The frame's length, or why there is none.
    pub(crate) fn frame_len(&self) -> Result<usize, EncodeError> {
        frame_len(DECAYING_HEADER, DECAYED_BIN_BYTES, self.bin_count())
    }

    /// Writes the histogram (closure, decay factor, next weight and every bin's weights,
    /// bit for bit) into `out` and returns the number of bytes written.
    ///
    /// Errors: [`EncodeError::FrameTooLarge`] (see [`Self::encoded_len`]),
    /// [`EncodeError::BufferTooSmall`]; nothing is written then.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let payload_len = payload_of(self.frame_len()?);
        write_frame(out, KIND_DECAYING, payload_len, |payload| {
            payload.put([closure_byte(self.closure()), 0, 0, 0]);
            // The bin count fits: the payload, longer than it, fits 32 bits.
            payload.u32(self.bin_count() as u32);
            payload.f64(self.retain);
            payload.f64(self.next_weight);
            for bin in self.bins() {
                payload.u64(bin.count);
                payload.f64(bin.weight);
                payload.f64(bin.hit_weight);
                payload.f64(bin.score_weight);
                payload.f64(bin.weight_squared);
            }
        })
    }
}

impl<S: AsRef<[DecayedBin]> + AsMut<[DecayedBin]> + ?Sized> DecayingHistogram<S> {
    /// Replaces this histogram's state (closure, half-life, next weight and bins) with the
    /// one in `bytes`, which must have as many bins: it then goes on exactly as the
    /// encoded one would. On error nothing changes.
    ///
    /// The frame carries λ, not the half-life (many half-lives round to one λ, and format
    /// version 1 has no field for it). So [`DecayingHistogram::half_life`] reports
    /// afterwards the destination's own half-life if it already had this λ (a histogram
    /// configured like the encoder's reads back its half-life exactly), and otherwise
    /// −1/log2 λ, a half-life that decays at the same rate (equal to the encoder's up to
    /// rounding).
    ///
    /// Refused as [`DecodeError::Inconsistent`], besides malformed frames: a λ outside
    /// the accepted range (see [`crate::decay`]), weights no recorded samples can have
    /// (see `decayed_bin`), and samples without any weight (the newest sample always
    /// weighs λ times the next one, so some bin weighs at least that).
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut fields = Reader(read_frame(bytes, KIND_DECAYING)?);
        let closure = fields.closure()?;
        let found = fields.len()?;
        let (retain, next_weight) = (fields.f64()?, fields.f64()?);
        let body = fields.rest();
        // No state has more bins than MAX_BINS, so no encoder writes such a frame.
        if found > crate::MAX_BINS || !holds(body, 0, DECAYED_BIN_BYTES, found) {
            return Err(DecodeError::Inconsistent);
        }
        if found != self.bin_count() {
            return Err(DecodeError::BinCountMismatch {
                expected: self.bin_count(),
                found,
            });
        }
        // λ = 2^(−1/half_life) is in [2^−510, 1) for every accepted half-life; the next
        // weight grows from 1 by 1/λ per push and is brought back to 1 once above 2^200.
        let possible =
            (MIN_RETAIN..1.0).contains(&retain) && (1.0..=RESCALE_ABOVE).contains(&next_weight);
        if !possible {
            return Err(DecodeError::Inconsistent);
        }
        let bins = units::<DECAYED_BIN_BYTES>(body);
        let mut samples = 0u64;
        let mut heaviest = 0.0f64;
        for (k, chunk) in bins.clone().enumerate() {
            let bin = decayed_bin(chunk, next_weight).ok_or(DecodeError::Inconsistent)?;
            // The weighted mean score of bin k lies within the bin's edges (up to the
            // rounding of the weighted sums).
            let (lo, hi) = equal_width_score_bounds(k, found);
            let slack = DECAYED_SCORE_SLACK * bin.weight;
            if bin.score_weight < lo * bin.weight - slack
                || bin.score_weight > hi * bin.weight + slack
            {
                return Err(DecodeError::Inconsistent);
            }
            // No state counts more than MAX_COUNT samples, in a bin or in all.
            samples = add_counts(samples, bin.count).map_err(|_| DecodeError::Inconsistent)?;
            heaviest = heaviest.max(bin.weight);
        }
        // The newest sample weighs λ·next_weight (up to rounding): samples whose weights
        // are all 0, or all far lighter, were not recorded by this histogram.
        if samples > 0 && heaviest < retain * next_weight * (1.0 - WEIGHT_SLACK) {
            return Err(DecodeError::Inconsistent);
        }
        for (bin, chunk) in self.bins.as_mut().iter_mut().zip(bins) {
            *bin = decayed_bin(chunk, next_weight).unwrap_or(DecayedBin::EMPTY);
        }
        if retain != self.retain {
            self.half_life = decay::half_life_of(retain);
        }
        self.closure = closure;
        self.retain = retain;
        self.next_weight = next_weight;
        self.samples = samples;
        Ok(())
    }
}

/// How far (relative) a decoded CUSUM or information sum may pass the most its samples
/// can add: they are sums of rounded terms. Far above rounding, far below a real excess.
const ALARM_SLACK: f64 = 1e-9;

impl<S: AsRef<[AlarmBin]> + ?Sized> CalibrationAlarm<S> {
    /// The number of bytes [`CalibrationAlarm::encode`] writes: 64 + 24 per bin. For an
    /// alarm too large for the format (a payload above `u32::MAX` bytes) `usize::MAX`:
    /// `encode` refuses it with [`EncodeError::FrameTooLarge`].
    pub fn encoded_len(&self) -> usize {
        or_unencodable(self.frame_len())
    }

    /// The frame's length, or why there is none.
    pub(crate) fn frame_len(&self) -> Result<usize, EncodeError> {
        frame_len(ALARM_HEADER, ALARM_BIN_BYTES, self.bin_count())
    }

    /// Writes the alarm (settings, samples, alarm sample, information and every bin's
    /// CUSUMs, bit for bit) into `out` and returns the number of bytes written.
    ///
    /// Errors: [`EncodeError::FrameTooLarge`] (see [`Self::encoded_len`]),
    /// [`EncodeError::BufferTooSmall`]; nothing is written then.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let payload_len = payload_of(self.frame_len()?);
        write_frame(out, KIND_ALARM, payload_len, |payload| {
            payload.put([closure_byte(self.closure()), 0, 0, 0]);
            // The bin count fits: the payload, longer than it, fits 32 bits.
            payload.u32(self.bin_count() as u32);
            payload.f64(self.shift);
            payload.f64(self.threshold);
            payload.u64(self.samples);
            payload.u64(self.alarm_at);
            payload.f64(self.information);
            for bin in self.bins() {
                payload.f64(bin.up);
                payload.f64(bin.down);
                payload.u64(bin.samples);
            }
        })
    }
}

/// Reads one alarm bin, or `None` when no samples of shift θ can have left it: a CUSUM
/// negative, not finite, or above θ per sample (an increment l± is at most θ), or a
/// CUSUM without samples.
fn alarm_bin(unit: &[u8; ALARM_BIN_BYTES], shift: f64) -> Option<AlarmBin> {
    let mut fields = Reader(unit);
    let bin = AlarmBin {
        up: fields.f64().ok()?,
        down: fields.f64().ok()?,
        samples: fields.u64().ok()?,
    };
    // In f64: samples ≤ 2^64 and θ ≤ 10, no overflow.
    let most = shift * bin.samples as f64 * (1.0 + ALARM_SLACK);
    let possible = [bin.up, bin.down]
        .iter()
        .all(|w| w.is_finite() && *w >= 0.0 && *w <= most);
    possible.then_some(bin)
}

impl<S: AsRef<[AlarmBin]> + AsMut<[AlarmBin]> + ?Sized> CalibrationAlarm<S> {
    /// Replaces this alarm's state (closure, shift, threshold, samples, alarm and bins)
    /// with the one in `bytes`, which must have as many bins: it then goes on exactly as
    /// the encoded one would. On error nothing changes.
    ///
    /// Refused as [`DecodeError::Inconsistent`], besides malformed frames: a shift or
    /// threshold the constructors refuse, bins whose samples do not add up to the
    /// samples, a CUSUM no samples can reach (see `alarm_bin`), an alarm sample after the
    /// last sample, no alarm although a CUSUM is at the threshold (the alarm is raised
    /// as soon as one reaches it), or an information sum negative, not finite or above
    /// what the samples carry (θ/2 each at most).
    pub fn decode(&mut self, bytes: &[u8]) -> Result<(), DecodeError> {
        let mut fields = Reader(read_frame(bytes, KIND_ALARM)?);
        let closure = fields.closure()?;
        let found = fields.len()?;
        let (shift, threshold) = (fields.f64()?, fields.f64()?);
        let (samples, alarm_at) = (fields.u64()?, fields.u64()?);
        let information = fields.f64()?;
        let body = fields.rest();
        // No state has more bins than MAX_BINS, so no encoder writes such a frame.
        if found > crate::MAX_BINS || !holds(body, 0, ALARM_BIN_BYTES, found) {
            return Err(DecodeError::Inconsistent);
        }
        if found != self.bin_count() {
            return Err(DecodeError::BinCountMismatch {
                expected: self.bin_count(),
                found,
            });
        }
        let settings = alarm::check_shift(shift).and(alarm::check_threshold(threshold));
        let most_information = 0.5 * shift * samples as f64 * (1.0 + ALARM_SLACK);
        let possible = settings.is_ok()
            && samples <= MAX_COUNT
            && alarm_at <= samples
            && information.is_finite()
            && (0.0..=most_information).contains(&information);
        if !possible {
            return Err(DecodeError::Inconsistent);
        }
        let bins = units::<ALARM_BIN_BYTES>(body);
        let mut total = 0u64;
        for chunk in bins.clone() {
            let bin = alarm_bin(chunk, shift).ok_or(DecodeError::Inconsistent)?;
            if alarm_at == 0 && (bin.up >= threshold || bin.down >= threshold) {
                return Err(DecodeError::Inconsistent);
            }
            total = add_counts(total, bin.samples).map_err(|_| DecodeError::Inconsistent)?;
        }
        if total != samples {
            return Err(DecodeError::Inconsistent);
        }
        for (bin, chunk) in self.bins.as_mut().iter_mut().zip(bins) {
            *bin = alarm_bin(chunk, shift).unwrap_or(AlarmBin::EMPTY);
        }
        self.closure = closure;
        self.shift = shift;
        self.threshold = threshold;
        self.up_factor = libm::expm1(shift);
        self.down_factor = libm::expm1(-shift);
        self.samples = samples;
        self.alarm_at = alarm_at;
        self.information = information;
        Ok(())
    }
}

// Payload lengths above 32 bits: a 64-bit host.
#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// The largest payload the 32-bit length field describes.
    const MAX_PAYLOAD: usize = u32::MAX as usize;

    #[test]
    fn frame_length_is_refused_once_the_payload_passes_32_bits() {
        assert_eq!(frame_len(0, 1, MAX_PAYLOAD), Ok(MAX_PAYLOAD + 16));
        assert_eq!(
            frame_len(1, 1, MAX_PAYLOAD),
            Err(EncodeError::FrameTooLarge {
                payload: MAX_PAYLOAD + 1
            })
        );
        // Defect 10: a histogram of 2^27 bins has a payload of 8 + 2^32 bytes.
        assert_eq!(
            frame_len(8, BIN_BYTES, 1 << 27),
            Err(EncodeError::FrameTooLarge {
                payload: (1 << 32) + 8
            })
        );
        // The largest histogram that fits: (2^32 − 1 − 8) / 32 bins.
        let most = (MAX_PAYLOAD - 8) / BIN_BYTES;
        assert_eq!(frame_len(8, BIN_BYTES, most), Ok(8 + BIN_BYTES * most + 16));
        assert!(frame_len(8, BIN_BYTES, most + 1).is_err());
        // MAX_BINS bins fit, of either histogram.
        assert!(frame_len(8, BIN_BYTES, crate::MAX_BINS).is_ok());
        assert!(frame_len(DECAYING_HEADER, DECAYED_BIN_BYTES, crate::MAX_BINS).is_ok());
        // Lengths that overflow usize are refused, not wrapped.
        for (head, unit, count) in [(8, BIN_BYTES, usize::MAX), (usize::MAX, 1, 1)] {
            assert_eq!(
                frame_len(head, unit, count),
                Err(EncodeError::FrameTooLarge {
                    payload: usize::MAX
                })
            );
        }
        assert_eq!(or_unencodable(frame_len(8, BIN_BYTES, 1 << 27)), usize::MAX);
        assert_eq!(or_unencodable(frame_len(8, BIN_BYTES, 15)), 24 + 32 * 15);
    }

    #[test]
    fn a_frame_too_large_is_refused_before_anything_is_written() {
        // The payload length is checked first: even an output too small for it stays
        // untouched, and the payload is never filled.
        for payload_len in [MAX_PAYLOAD + 1, 1 << 40, usize::MAX] {
            let mut out = [0xa5u8; 64];
            let result = write_frame(&mut out, KIND_HISTOGRAM, payload_len, |_| {
                panic!("the payload must not be written")
            });
            assert_eq!(
                result,
                Err(EncodeError::FrameTooLarge {
                    payload: payload_len
                })
            );
            assert!(out.iter().all(|&b| b == 0xa5));
        }
        // The largest payload is accepted by the length check (then refused for the
        // output's size).
        let mut out = [0xa5u8; 64];
        assert_eq!(
            write_frame(&mut out, KIND_HISTOGRAM, MAX_PAYLOAD, |_| ()),
            Err(EncodeError::BufferTooSmall {
                needed: MAX_PAYLOAD + 16
            })
        );
        assert!(out.iter().all(|&b| b == 0xa5));
    }
}
