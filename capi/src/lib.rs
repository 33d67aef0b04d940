//! The C libraries of tce: `libtce.a` and `libtce.so` (`cargo build --release -p tce-capi`),
//! declared by `include/tce.h`.
//!
//! The ABI itself is the `ffi` module of the `tce` crate (`src/ffi/`, feature `ffi`), so
//! that it is written and tested next to the internals it wraps and builds without `std`.
//! This crate only gives it the crate types and file names of a C library: its
//! `#[no_mangle] extern "C"` functions are exported by both, whatever module they live in.
#![no_std]

// Linking the core is all it takes (a dependency nothing names would not be linked).
extern crate tce_core;
