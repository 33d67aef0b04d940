//! The bounds every state enforces, in one place.
//!
//! A count that could wrap is a state that lies: after 2^64 samples a `u64` counter reads
//! 0 and every estimate built on it is wrong. So counts are bounded well below the
//! integer's range, and every operation that grows one (push, batch push, merge, decay,
//! the bookkeeping of reservoirs and windows, decoding) checks the bound first and, when
//! it would be crossed, refuses with a named error and changes nothing.

/// The largest number of samples a state may count: its total count, a bin's count, and
/// a reservoir's or window's `seen`. 2^63 − 1, so the sum of two valid counts never
/// overflows a `u64`, and a bin's `u128` score sum (at most 2^64 per sample) cannot
/// overflow either.
pub const MAX_COUNT: u64 = (1 << 63) - 1;

/// The largest number of bins a binning may have: 2^24. More bins than that describe no
/// real reliability diagram, and the bound makes a bin count from an untrusted caller (a
/// C `options.bins` of `SIZE_MAX`, a decoded frame) fail fast instead of looping for
/// minutes. At 32 bytes a bin, a histogram of `MAX_BINS` bins is 512 MiB and its encoding
/// fits the format's 32-bit payload length.
pub const MAX_BINS: usize = 1 << 24;
