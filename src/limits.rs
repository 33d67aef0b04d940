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

/// A count would pass [`MAX_COUNT`]: what [`add_counts`] refuses with. Converts into the
/// named error of each operation family ([`crate::PushError::CountOverflow`],
/// [`crate::MergeError::CountOverflow`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CountOverflow;

/// `a + b`, if it stays within [`MAX_COUNT`]: the one addition every count that grows
/// goes through (pushes, batches, merges, `seen`). Checked, so it never wraps or panics,
/// in debug, release and `no_std` alike; the caller refuses before it changes anything.
#[inline]
pub(crate) const fn add_counts(a: u64, b: u64) -> Result<u64, CountOverflow> {
    match a.checked_add(b) {
        Some(sum) if sum <= MAX_COUNT => Ok(sum),
        _ => Err(CountOverflow),
    }
}

/// A batch's length as a count (a `usize` always fits a `u64` on the targets Rust
/// supports; the conversion is checked anyway, so a wider `usize` could not wrap it).
#[inline]
pub(crate) fn batch_count(len: usize) -> Result<u64, CountOverflow> {
    u64::try_from(len).map_err(|_| CountOverflow)
}

impl From<CountOverflow> for crate::PushError {
    fn from(_: CountOverflow) -> Self {
        crate::PushError::CountOverflow
    }
}

impl From<CountOverflow> for crate::MergeError {
    fn from(_: CountOverflow) -> Self {
        crate::MergeError::CountOverflow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_to_the_bound_and_no_further() {
        assert_eq!(add_counts(MAX_COUNT - 1, 1), Ok(MAX_COUNT));
        assert_eq!(add_counts(MAX_COUNT, 0), Ok(MAX_COUNT));
        assert_eq!(add_counts(MAX_COUNT, 1), Err(CountOverflow));
        assert_eq!(add_counts(u64::MAX, 1), Err(CountOverflow));
        assert_eq!(add_counts(u64::MAX, u64::MAX), Err(CountOverflow));
        assert_eq!(add_counts(1 << 62, 1 << 62), Err(CountOverflow));
        assert_eq!(add_counts(0, 0), Ok(0));
    }
}
