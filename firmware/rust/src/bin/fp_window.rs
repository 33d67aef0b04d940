//! Footprint row (docs/embedded.md): a sliding window of the last 1000 samples, fed the
//! whole data set one push at a time (so most pushes evict), and its equal-mass
//! ECE_sweep.
#![no_std]
#![no_main]

use core::ptr::addr_of_mut;

use cortex_m_rt::entry;
use tce::{Binning, InlineWindow, Norm, SweepOptions};
use tce_firmware::{data, data_line, exit_success, measure, Out};

static mut WINDOW: InlineWindow<1000> = InlineWindow::new();

#[entry]
fn main() -> ! {
    let mut out = Out::new();
    data_line(&mut out);
    // SAFETY: main runs once and alone; the only borrow.
    let window = unsafe { &mut *addr_of_mut!(WINDOW) };
    measure(&mut out, "window push", data::ROWS, 1, || {
        for (&s, &l) in data::SCORES.iter().zip(&data::LABELS) {
            window.push(s, l).unwrap();
        }
    });
    // The first read after pushes records the running hit counts (once); the sweep then
    // reads them.
    measure(&mut out, "window samples", 1, 1, || {
        window.samples();
    });
    let estimate = measure(&mut out, "window ece_sweep", 1, 1, || {
        window
            .samples()
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
            .unwrap()
    });
    out.estimate("window.em.ece_sweep.p2", estimate);
    exit_success()
}
