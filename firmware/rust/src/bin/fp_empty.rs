//! Footprint baseline (docs/embedded.md): the runtime, semihosting output, the data set and
//! the probes, and no tce state. Its one measurement is the probe's own cost (an empty
//! call), which every other measurement includes.
#![no_std]
#![no_main]

use cortex_m_rt::entry;
use tce_firmware::{data_line, exit_success, measure, Out};

#[entry]
fn main() -> ! {
    let mut out = Out::new();
    data_line(&mut out);
    measure(&mut out, "empty call", 1, 1, || {});
    exit_success()
}
