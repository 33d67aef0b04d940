//! The firmware of tests/firmware.rs: pushes the bundled data set through every no_std
//! state (histogram, decaying histogram, sorted buffer, sliding window, reservoir,
//! calibration alarm),
//! computes every estimator the core has without std (ECE_bin, MCE, ECE_debias,
//! ECE_sweep for both binnings, smooth ECE), encodes each state in the portable format,
//! and prints all of it over semihosting. The C firmware (firmware/c/main.c)
//! prints the same lines through the C ABI; the host test checks both against the host
//! library bit for bit. The line format is `Out`'s (src/lib.rs).
#![no_std]
#![no_main]

use core::fmt::Write;
use core::ptr::addr_of_mut;

use cortex_m_rt::entry;
use tce::{
    smooth_ece, Binning, Closure, DecayedBin, DecayingHistogram, InlineAlarm, InlineBuffer,
    InlineHistogram, InlineReservoir, InlineWindow, Norm, SweepOptions, Ties,
};
use tce_firmware::{data, exit_success, Out};

/// Bins of the histograms and of the fixed-B estimators.
const BINS: usize = 15;
/// The decaying histogram's half-life, in samples.
const HALF_LIFE: f64 = 1000.0;
/// The sliding window's size.
const WINDOW: usize = 1000;
/// The reservoir's capacity and seed.
const RESERVOIR: usize = 500;
const SEED: u64 = 42;
/// The calibration alarms' bins (shift ln 2, as examples/prometheus_exporter.c).
const ALARM_BINS: usize = 10;
/// The alarms (key and frame kind, the guaranteed ARL0 their threshold is chosen for):
/// h = ln(2 · 10^4) ≈ 9.9, which this data set does not reach (its statistic ends near
/// 3.6), and a sensitive h = ln 20 ≈ 3.0, which it does (so a raised alarm is checked).
const ALARMS: [(&str, f64); 2] = [("alarm.arl0_1e4", 1e4), ("alarm.arl0_10", 10.0)];

// The larger states live in statics (.bss), as on a device, not on the stack.
static mut BUFFER: InlineBuffer<{ data::ROWS }> = InlineBuffer::new();
static mut WINDOW_STATE: InlineWindow<WINDOW> = InlineWindow::new();
static mut SCRATCH: [f64; tce::smece::SCRATCH_LEN] = [0.0; tce::smece::SCRATCH_LEN];
/// Room for the largest frame, the buffer's (12 + 4 + 9 n + 4 bytes).
static mut FRAME: [u8; 32 * 1024] = [0; 32 * 1024];

#[entry]
fn main() -> ! {
    let mut out = Out::new();
    let (scores, labels) = (&data::SCORES[..], &data::LABELS[..]);
    let half = scores.len() / 2;
    // SAFETY: main runs once and alone (no interrupts); each static is borrowed once.
    let (buffer, window, scratch, frame) = unsafe {
        (
            &mut *addr_of_mut!(BUFFER),
            &mut *addr_of_mut!(WINDOW_STATE),
            &mut *addr_of_mut!(SCRATCH),
            &mut *addr_of_mut!(FRAME),
        )
    };
    writeln!(out, "tce-firmware rust begin {} rows", data::ROWS).unwrap();

    // Equal-width histogram: the first half one push at a time, the rest as one batch.
    let mut histogram = InlineHistogram::<BINS>::new(Closure::Left);
    for (&s, &l) in scores[..half].iter().zip(&labels[..half]) {
        histogram.push(s, l).unwrap();
    }
    histogram
        .push_batch(&scores[half..], &labels[half..])
        .unwrap();
    out.estimate("histogram.ece_bin.p1", histogram.ece_bin(Norm::L1).unwrap());
    out.estimate("histogram.ece_bin.p2", histogram.ece_bin(Norm::L2).unwrap());
    out.estimate("histogram.mce", histogram.mce().unwrap());
    out.estimate(
        "histogram.ece_debias.p2",
        histogram.ece_debias(Norm::L2).unwrap(),
    );
    let n = histogram.encode(frame).unwrap();
    out.frame("histogram", &frame[..n]);

    // Decaying histogram.
    let mut decaying =
        DecayingHistogram::<[DecayedBin; BINS]>::new(Closure::Left, HALF_LIFE).unwrap();
    decaying.push_batch(scores, labels).unwrap();
    out.estimate("decaying.ece_bin.p2", decaying.ece_bin(Norm::L2).unwrap());
    out.estimate("decaying.mce", decaying.mce().unwrap());
    out.estimate(
        "decaying.ece_debias.p2",
        decaying.ece_debias(Norm::L2).unwrap(),
    );
    let n = decaying.encode(frame).unwrap();
    out.frame("decaying", &frame[..n]);

    // Sorted buffer of every sample: every binning, the sweep.
    buffer.push_batch(scores, labels).unwrap();
    {
        let sorted = buffer.sorted();
        for (name, binning) in [
            ("ew", Binning::EqualWidth(Closure::Left)),
            ("em", Binning::EqualMass(Ties::Split)),
            ("em_keep", Binning::EqualMass(Ties::Keep)),
        ] {
            let mut key = Key::new("buffer.", name);
            out.estimate(
                key.with(".ece_bin.p2"),
                sorted.ece_bin(binning, BINS, Norm::L2).unwrap(),
            );
            out.estimate(
                key.with(".ece_debias.p2"),
                sorted.ece_debias(binning, BINS, Norm::L2).unwrap(),
            );
            out.estimate(key.with(".mce"), sorted.mce(binning, BINS).unwrap());
            out.estimate(
                key.with(".ece_sweep.p2"),
                sorted
                    .ece_sweep(binning, Norm::L2, SweepOptions::default())
                    .unwrap(),
            );
        }
    }
    let n = buffer.encode(frame).unwrap();
    out.frame("buffer", &frame[..n]);

    // Sliding window of the last WINDOW samples, one push at a time (so it evicts).
    for (&s, &l) in scores.iter().zip(labels) {
        window.push(s, l).unwrap();
    }
    {
        let held = window.samples();
        out.estimate(
            "window.em.ece_bin.p2",
            held.ece_bin(Binning::EQUAL_MASS, BINS, Norm::L2).unwrap(),
        );
        out.estimate(
            "window.em.ece_debias.p2",
            held.ece_debias(Binning::EQUAL_MASS, BINS, Norm::L2)
                .unwrap(),
        );
        out.estimate(
            "window.em.mce",
            held.mce(Binning::EQUAL_MASS, BINS).unwrap(),
        );
        out.estimate(
            "window.em.ece_sweep.p2",
            held.ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
                .unwrap(),
        );
        out.estimate(
            "window.ew.ece_sweep.p2",
            held.ece_sweep(Binning::EQUAL_WIDTH, Norm::L2, SweepOptions::default())
                .unwrap(),
        );
    }
    let n = window.encode(frame).unwrap();
    out.frame("window", &frame[..n]);

    // Reservoir: a seeded uniform sample of RESERVOIR of the stream.
    let mut reservoir = InlineReservoir::<RESERVOIR>::new(SEED);
    reservoir.push_batch(scores, labels).unwrap();
    {
        let held = reservoir.samples();
        out.estimate(
            "reservoir.em.ece_bin.p2",
            held.ece_bin(Binning::EQUAL_MASS, BINS, Norm::L2).unwrap(),
        );
        out.estimate(
            "reservoir.em.ece_sweep.p2",
            held.ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
                .unwrap(),
        );
    }
    let n = reservoir.encode(frame).unwrap();
    out.frame("reservoir", &frame[..n]);

    // Smooth ECE (relplot's), over the raw arrays.
    let smooth = smooth_ece(scores, labels, scratch).unwrap();
    out.smooth("all", smooth.value, smooth.bandwidth);

    // Calibration alarms: the exporter's settings (ALARM_BINS bins, shift ln 2) at the
    // thresholds of the guaranteed ARL0s of ALARMS, computed here by the core; one push at
    // a time, checking after each for the first sample that raised it.
    for (key, arl0) in ALARMS {
        let threshold = tce::alarm::threshold_for_guaranteed_arl0(arl0).unwrap();
        let mut alarm =
            InlineAlarm::<ALARM_BINS>::new(Closure::Left, core::f64::consts::LN_2, threshold)
                .unwrap();
        let mut first_seen = 0u64;
        for (i, (&s, &l)) in scores.iter().zip(labels).enumerate() {
            alarm.push(s, l).unwrap();
            if first_seen == 0 && alarm.alarm() {
                first_seen = i as u64 + 1;
            }
        }
        out.alarm(
            key,
            alarm.statistic(),
            alarm.threshold(),
            alarm.alarm(),
            alarm.alarm_at().unwrap_or(0),
            first_seen,
            alarm.samples(),
        );
        let n = alarm.encode(frame).unwrap();
        out.frame(key, &frame[..n]);
    }

    writeln!(out, "tce-firmware end").unwrap();
    exit_success()
}

/// A key `PREFIX NAME SUFFIX` built without allocating.
struct Key {
    text: [u8; 64],
    stem: usize,
    len: usize,
}

impl Key {
    fn new(prefix: &str, name: &str) -> Key {
        let mut key = Key {
            text: [0; 64],
            stem: 0,
            len: 0,
        };
        for part in [prefix, name] {
            key.text[key.len..key.len + part.len()].copy_from_slice(part.as_bytes());
            key.len += part.len();
        }
        key.stem = key.len;
        key
    }

    fn with(&mut self, suffix: &str) -> &str {
        self.len = self.stem + suffix.len();
        self.text[self.stem..self.len].copy_from_slice(suffix.as_bytes());
        core::str::from_utf8(&self.text[..self.len]).unwrap()
    }
}
