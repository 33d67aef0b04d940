//! The firmware of tests/firmware.rs: pushes the bundled data set through every no_std
//! state (histogram, decaying histogram, sorted buffer, sliding window, reservoir),
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
    smooth_ece, Binning, Closure, DecayedBin, DecayingHistogram, InlineBuffer, InlineHistogram,
    InlineReservoir, InlineWindow, Norm, SweepOptions, Ties,
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

    // ALARM: the calibration alarm (a no_std state being added in parallel) goes here:
    // push the data set through it, print its estimates with `out.estimate` and its frame
    // with `out.frame`, in firmware/c/main.c too, and add the expected lines to
    // tests/firmware.rs (`expected`).

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
