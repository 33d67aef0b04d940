//! Arbitrary bytes into every decoder (see `tce_fuzz::decoders` for the properties), as
//! they are and re-signed: the last four bytes replaced by the CRC-32 of the others, so
//! that mutations of the seed frames (fuzz/corpus/decode/) reach the content checks
//! behind the checksum.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tce_fuzz::{decoders, frames};

fuzz_target!(|bytes: &[u8]| {
    // The outcomes matter to the property test; here only the assertions do.
    let _ = decoders::check(bytes);
    if let Some(signed) = frames::resign(bytes) {
        let _ = decoders::check(&signed);
    }
});
