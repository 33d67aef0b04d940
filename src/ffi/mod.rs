//! The C ABI (feature `ffi`): the functions, types and statuses declared in
//! `include/tce.h`. The rules every function follows are in the README's "C API" section; in short:
//!
//! * one prefix `tce_`, names `tce_<type>_<verb>`;
//! * every fallible function returns a [`tce_status`]; other outputs go through
//!   out-parameters, written only on success;
//! * a pointer is followed by its length; a `const T*` is never written through;
//! * no panic crosses the boundary (`boundary.rs`); NULL pointers, NaN, bad labels, short or
//!   misaligned buffers, full buffers, handles of the wrong kind and enum values out of
//!   range are named statuses, not undefined behaviour.
//!
//! States (the equal-width, decaying and concurrent histograms, the sorted buffer, the
//! sliding window, the reservoir, the calibration alarm) live in memory the C program provides (`tce_*_layout`
//! then `tce_*_init`) or, with `std`, on the heap (`tce_*_new` / `tce_*_free`). A state is
//! a small header (a magic number naming its kind, its size) followed by the core's view
//! of it: the unsized `Histogram<[BinStats]>`, `SortedBuffer<[Slot]>`,
//! `DecayingHistogram<[DecayedBin]>`, `CalibrationAlarm<[AlarmBin]>` and
//! `ConcurrentHistogram<[AtomicBin]>`, which the
//! core lays out `#[repr(C)]` with their storage last for exactly this purpose, or the
//! bookkeeping of a `SlidingWindow` / `Reservoir` with their storage after it (see
//! `state.rs`).
//!
//! All `unsafe` code of the crate is in this module.

// C names: `tce_status`, `tce_estimate`, ...
#![allow(non_camel_case_types)]
// Every `unsafe` block states why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

// Internals.
mod boundary;
#[cfg(all(feature = "panic-handler", not(feature = "std")))]
mod panic_handler;
mod raw;
mod sorted;
mod state;

// The exported API, in the order the header presents it (cbindgen follows these).
mod status;

mod types;

mod histogram;

mod buffer;

mod window;

mod reservoir;

mod decay;

mod alarm;

#[cfg(target_has_atomic = "64")]
mod concurrent;

mod portable;

mod oneshot;

// Weighted one-call estimators: the std layer's `crate::weights` (they allocate).
#[cfg(feature = "std")]
mod weights;

mod smece;

mod toplabel;

pub use alarm::*;
pub use buffer::*;
#[cfg(target_has_atomic = "64")]
pub use concurrent::*;
pub use decay::*;
pub use histogram::*;
pub use oneshot::*;
pub use portable::*;
pub use reservoir::*;
pub use smece::*;
pub use status::*;
pub use toplabel::*;
pub use types::*;
#[cfg(feature = "std")]
pub use weights::*;
pub use window::*;

/// The library version, `MAJOR.MINOR.PATCH` as in Cargo.toml (and in the header's
/// `TCE_VERSION_MAJOR`, `TCE_VERSION_MINOR` and `TCE_VERSION_PATCH` macros), as a static
/// NUL-terminated string. Never NULL; never free it.
#[no_mangle]
pub extern "C" fn tce_version() -> *const core::ffi::c_char {
    static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// The largest sample count a state may reach (`tce::MAX_COUNT`, 2^63 − 1): a call that
/// would pass it returns `TCE_STATUS_COUNT_OVERFLOW` and changes nothing.
pub const TCE_MAX_COUNT: u64 = 9_223_372_036_854_775_807;
/// The largest number of bins (`tce::MAX_BINS`, 2^24): more give
/// `TCE_STATUS_TOO_MANY_BINS`.
pub const TCE_MAX_BINS: usize = 16_777_216;
const _: () = assert!(TCE_MAX_COUNT == crate::MAX_COUNT && TCE_MAX_BINS == crate::MAX_BINS);
