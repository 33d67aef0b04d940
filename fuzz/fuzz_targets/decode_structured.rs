//! Structure-aware frames (`tce_fuzz::frames`: a header and a payload of every state
//! kind, signed with a valid CRC-32) into every decoder (see `tce_fuzz::decoders` for the
//! properties).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tce_fuzz::{decoders, frames::Frame};

fuzz_target!(|frame: Frame| {
    let _ = decoders::check(&frame.to_bytes());
});
