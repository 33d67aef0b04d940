//! Footprint row (docs/embedded.md): a calibration alarm of 10 bins (shift ln 2, the
//! threshold of a guaranteed ARL0 of 10^4 samples, computed here), fed the data set one
//! push at a time with its check (raised yet?) after each, and its statistic.
#![no_std]
#![no_main]

use core::hint::black_box;

use cortex_m_rt::entry;
use tce::{Closure, InlineAlarm};
use tce_firmware::{data, data_line, exit_success, measure, Out};

/// Reads are measured over this many calls (a SysTick tick is several instructions).
const REPS: u32 = 100;

#[entry]
fn main() -> ! {
    let mut out = Out::new();
    data_line(&mut out);
    // The alarm's constructor is not const (it computes e^±θ − 1): the state, 304 bytes,
    // lives in main's frame rather than in .bss.
    let threshold = tce::alarm::threshold_for_guaranteed_arl0(black_box(1e4)).unwrap();
    let mut alarm =
        InlineAlarm::<10>::new(Closure::Left, core::f64::consts::LN_2, threshold).unwrap();
    let first_seen = measure(&mut out, "alarm push + check", data::ROWS, 1, || {
        let mut first_seen = 0u64;
        for (i, (&s, &l)) in data::SCORES.iter().zip(&data::LABELS).enumerate() {
            alarm.push(s, l).unwrap();
            if first_seen == 0 && alarm.alarm() {
                first_seen = i as u64 + 1;
            }
        }
        first_seen
    });
    let statistic = measure(&mut out, "alarm statistic", 1, REPS, || alarm.statistic());
    out.alarm(
        "alarm.ew10",
        statistic,
        alarm.threshold(),
        alarm.alarm(),
        alarm.alarm_at().unwrap_or(0),
        first_seen,
        alarm.samples(),
    );
    exit_success()
}
