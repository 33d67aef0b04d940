//! The panic boundary around the body of every exported function.
//!
//! With `std`, [`run`] catches any unwinding panic and returns `TCE_STATUS_PANIC`, so no
//! panic crosses into C (which would abort the process: Rust ≥ 1.81 aborts on unwinding
//! out of an `extern "C"` function). Without `std` nothing can be caught; the core has no
//! panicking path we know of on validated input (every index is in range by
//! construction, every arithmetic operation is bounded: counts by the capacity, fixed-point
//! sums by 2^63 samples), and this module validates every input before the core sees it.
//! A panic there would reach the `#[panic_handler]` of the final binary (with feature
//! `panic-handler`: a halt loop).

use super::status::tce_status;

/// The result of a function body: `Err` carries the failure status.
pub(crate) type Outcome = Result<(), tce_status>;

/// Runs `body` and turns its outcome (or a panic, with `std`) into a status.
#[inline]
pub(crate) fn run<F: FnOnce() -> Outcome>(body: F) -> tce_status {
    #[cfg(feature = "std")]
    let outcome = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)) {
        Ok(outcome) => outcome,
        Err(_) => Err(tce_status::Panic),
    };
    #[cfg(not(feature = "std"))]
    let outcome = body();
    match outcome {
        Ok(()) => tce_status::Ok,
        Err(status) => status,
    }
}

/// Wraps a function body: `ffi_boundary!({ ...; Ok(()) })`.
macro_rules! ffi_boundary {
    ($body:block) => {
        $crate::ffi::boundary::run(|| $body)
    };
}
pub(crate) use ffi_boundary;

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_a_status() {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let status = run(|| panic!("boom"));
        std::panic::set_hook(previous);
        assert_eq!(status, tce_status::Panic);
        assert_eq!(run(|| Ok(())), tce_status::Ok);
        assert_eq!(run(|| Err(tce_status::ZeroBins)), tce_status::ZeroBins);
    }
}
