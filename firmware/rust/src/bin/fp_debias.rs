//! Footprint row (docs/embedded.md): the histogram row plus ECE_debias.
#![no_std]
#![no_main]

use core::ptr::addr_of_mut;

use cortex_m_rt::entry;
use tce::{Closure, InlineHistogram, Norm};
use tce_firmware::{data, data_line, exit_success, measure, Out};

/// Estimates are measured over this many calls (a SysTick tick is several instructions).
const REPS: u32 = 100;
static mut HISTOGRAM: InlineHistogram<15> = InlineHistogram::new(Closure::Left);

#[entry]
fn main() -> ! {
    let mut out = Out::new();
    data_line(&mut out);
    // SAFETY: main runs once and alone; the only borrow.
    let histogram = unsafe { &mut *addr_of_mut!(HISTOGRAM) };
    measure(&mut out, "histogram push", data::ROWS, 1, || {
        for (&s, &l) in data::SCORES.iter().zip(&data::LABELS) {
            histogram.push(s, l).unwrap();
        }
    });
    let estimate = measure(&mut out, "histogram ece_bin", 1, REPS, || {
        histogram.ece_bin(Norm::L2).unwrap()
    });
    out.estimate("histogram.ece_bin.p2", estimate);
    let estimate = measure(&mut out, "histogram ece_debias", 1, REPS, || {
        histogram.ece_debias(Norm::L2).unwrap()
    });
    out.estimate("histogram.ece_debias.p2", estimate);
    exit_success()
}
