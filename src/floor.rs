//! The float-to-integer conversion of the hot paths (bin indices, fixed-point scores).
//!
//! Rust's `as` casts saturate and send NaN to 0. On x86-64 that costs a compare and a
//! select for each bound and one for NaN around every conversion — more than the rest of
//! a bin index — and the optimiser may turn those selects into branches. Every value
//! converted here is already known to lie in [0, 2^63) (a validated score times a
//! constant), so the bare truncating instruction is enough. On x86-64 it is reached
//! through the SSE2 intrinsic, which is defined for every input (out-of-range values give
//! 2^63); elsewhere `as` is used (one instruction on AArch64, whose conversion saturates
//! like Rust's cast).

/// floor(x) for x in [0, 2^63). Outside that range the result is meaningless but
/// defined: callers validate their inputs before trusting it.
#[inline(always)]
pub(crate) fn floor_nonnegative(x: f64) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    {
        use core::arch::x86_64::{_mm_cvttsd_si64, _mm_set_sd};
        // SAFETY: the intrinsics only require SSE2, which this cfg guarantees (it is part
        // of the x86-64 baseline); they read and write no memory.
        unsafe { _mm_cvttsd_si64(_mm_set_sd(x)) as u64 }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
    {
        floor_portable(x)
    }
}

/// The conversion on other targets: Rust's saturating cast, exact for x in [0, 2^64).
/// Compiled everywhere so that x86-64 tests check the intrinsic against it.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "sse2"), allow(dead_code))]
#[inline(always)]
fn floor_portable(x: f64) -> u64 {
    x as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floors_values_in_range() {
        for (x, floor) in [
            (0.0, 0),
            (-0.0, 0),
            (0.999_999, 0),
            (13.999_999, 13),
            (14.0, 14),
            (2.5e18, 2_500_000_000_000_000_000),
            (4.611_686_018_427_388e18, 1 << 62),
        ] {
            assert_eq!(floor_nonnegative(x), floor, "{x}");
            assert_eq!(floor_portable(x), floor, "{x}");
        }
        // Every quantized score and bin index agrees across the two conversions.
        let mut x = 0.0f64;
        while x <= 1.0 {
            for scale in [15.0, 63.0, 4_611_686_018_427_387_904.0] {
                assert_eq!(floor_nonnegative(x * scale), floor_portable(x * scale));
            }
            x = f64::from_bits(x.to_bits() + 0x0000_1234_5678_9abd);
        }
    }
}
