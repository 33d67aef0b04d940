//! Footprint row (docs/embedded.md): a sorted buffer of 1000 samples (the data set's
//! first 1000 rows, one push at a time), sorted, and its equal-mass ECE_sweep.
#![no_std]
#![no_main]

use core::ptr::addr_of_mut;

use cortex_m_rt::entry;
use tce::{Binning, InlineBuffer, Norm, SweepOptions};
use tce_firmware::{data, data_line, exit_success, measure, Out};

const CAPACITY: usize = 1000;
/// Estimates are measured over this many calls (a SysTick tick is several instructions).
const REPS: u32 = 10;
static mut BUFFER: InlineBuffer<CAPACITY> = InlineBuffer::new();

#[entry]
fn main() -> ! {
    let mut out = Out::new();
    data_line(&mut out);
    // SAFETY: main runs once and alone; the only borrow.
    let buffer = unsafe { &mut *addr_of_mut!(BUFFER) };
    measure(&mut out, "buffer push", CAPACITY, 1, || {
        for (&s, &l) in data::SCORES[..CAPACITY].iter().zip(&data::LABELS) {
            buffer.push(s, l).unwrap();
        }
    });
    // The first estimate sorts (a full buffer sorts in place); later ones reuse the order,
    // so the sort is measured once, on its own.
    measure(&mut out, "buffer sort", 1, 1, || {
        buffer.sorted();
    });
    let estimate = measure(&mut out, "buffer ece_sweep", 1, REPS, || {
        buffer
            .sorted()
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
            .unwrap()
    });
    out.estimate("buffer.em.ece_sweep.p2", estimate);
    exit_success()
}
