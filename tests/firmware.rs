//! The core on an emulated microcontroller (`cargo test --test firmware`; part of
//! `cargo test --workspace --all-features`).
//!
//! Builds two firmwares for a Cortex-M4F and runs each under QEMU (`qemu-system-arm
//! -machine mps2-an386`, output over semihosting), then checks what they print against
//! this host's library:
//!
//! * `firmware/rust`: the `no_std` core from Rust (cortex-m-rt, cortex-m-semihosting),
//!   built with cargo for `thumbv7em-none-eabihf` (`--offline`: scripts/test fetches its
//!   crates);
//! * `firmware/c`: the same computation through the C ABI, compiled with
//!   `arm-none-eabi-gcc` (hard float, newlib's rdimon for semihosting) against the
//!   bare-metal `libtce.a` (the nested build tests/ffi.rs makes too, in the same target
//!   directory, so one build serves both).
//!
//! Both push `data/resnet50_birds_test.csv` (compiled in) through every `no_std` state and
//! estimator and print each estimate's bits and each state's portable frame. Every
//! estimate must equal the host's bit for bit, every frame the host's encoding byte for
//! byte, and each frame, decoded here, must merge with a host state of another data set
//! into what the host computes from both streams (the calibration alarm, which does not
//! merge, must decode to the host's state and go on as it does). A missing tool (qemu-system-arm,
//! arm-none-eabi-gcc, newlib, the Rust target) fails the test: `scripts/test` installs
//! them. Nothing here downloads anything.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tce::{
    smooth_ece, Binning, Closure, DecayedBin, DecayingHistogram, Estimate, InlineAlarm,
    InlineHistogram, InlineReservoir, InlineWindow, Norm, Slot, SortedBuffer, SweepOptions, Ties,
};

/// What the firmwares push (firmware/rust/build.rs compiles the same file in).
const DATA: &str = "data/resnet50_birds_test.csv";
/// The host's other stream, merged with the firmwares' states.
const OTHER: &str = "data/densenet40_c10_test.csv";
/// The firmwares' parameters (firmware/rust/src/bin/firmware.rs, firmware/c/main.c).
const BINS: usize = 15;
const HALF_LIFE: f64 = 1000.0;
const WINDOW: usize = 1000;
const RESERVOIR: usize = 500;
const SEED: u64 = 42;
/// The calibration alarms' bins and shift (examples/prometheus_exporter.c's), and each
/// one's key (and frame kind) and the guaranteed ARL0 whose threshold the firmwares
/// compute: one this data set does not raise, one it does.
const ALARM_BINS: usize = 10;
const ALARM_SHIFT: f64 = std::f64::consts::LN_2;
const ALARMS: [(&str, f64); 2] = [("alarm.arl0_1e4", 1e4), ("alarm.arl0_10", 10.0)];
const TARGET: &str = "thumbv7em-none-eabihf";
/// A run takes a few seconds; a firmware that hangs (a fault loop, a lost exit) fails.
const QEMU_TIMEOUT: Duration = Duration::from_secs(120);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `$CARGO_TARGET_DIR` (else `target/`), absolute.
fn target_base() -> PathBuf {
    let base =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    if base.is_absolute() {
        base
    } else {
        root().join(base)
    }
}

/// Fails loudly if a tool is missing.
fn require(tool: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{tool}` (Debian package {package}) is not installed, and the firmware tests need \
         it (they fail rather than skip). Run the suite with `scripts/test`, which installs \
         what is missing."
    );
}

fn run(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(root())
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS");
    command
}

/// The Rust target's standard library, which `rustup target add` installs.
fn require_target() {
    let sysroot = run(Command::new("rustc").args(["--print", "sysroot"]));
    let sysroot = String::from_utf8(sysroot.stdout).unwrap();
    let lib = Path::new(sysroot.trim()).join("lib/rustlib").join(TARGET);
    assert!(
        lib.is_dir(),
        "the Rust target {TARGET} is not installed ({} is missing); run the suite with \
         `scripts/test`, which installs it",
        lib.display()
    );
}

/// (confidence, correct) of a bundled CSV, parsed as firmware/rust/build.rs parses it.
fn read_csv(path: &str) -> (Vec<f64>, Vec<u8>) {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let (mut scores, mut labels) = (Vec::new(), Vec::new());
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let mut fields = line.split(',');
        scores.push(fields.next().unwrap().trim().parse::<f64>().unwrap());
        labels.push(fields.next().unwrap().trim().parse::<u8>().unwrap());
    }
    (scores, labels)
}

/// The Rust firmware's ELF: a release build of firmware/rust (its own cargo project)
/// into `$CARGO_TARGET_DIR/firmware`.
fn build_rust_firmware() -> PathBuf {
    require_target();
    let target_dir = target_base().join("firmware");
    run(cargo()
        .args([
            "build",
            "--release",
            "--locked",
            "--offline",
            "--bin",
            "firmware",
        ])
        .args(["--target", TARGET, "--manifest-path"])
        .arg(root().join("firmware/rust/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir));
    target_dir.join(TARGET).join("release/firmware")
}

/// The C firmware's ELF: the bare-metal libtce.a (tests/ffi.rs's build, same command and
/// directory), the data set as a generated header, firmware/c compiled and linked.
fn build_c_firmware(scores: &[f64], labels: &[u8]) -> PathBuf {
    require_target();
    require("arm-none-eabi-gcc", "gcc-arm-none-eabi");
    let lib_dir = target_base().join("ffi").join("bare-metal");
    run(cargo()
        .args(["rustc", "-p", "tce-capi", "--no-default-features"])
        .args(["--features", "panic-handler", "--target", TARGET])
        .args(["--crate-type", "staticlib", "--target-dir"])
        .arg(&lib_dir));
    let lib = lib_dir.join(TARGET).join("debug/libtce.a");
    assert!(lib.is_file(), "{} not built", lib.display());

    let out = target_base().join("firmware").join("c");
    std::fs::create_dir_all(&out).unwrap();
    // The scores as their bits (the C firmware copies them into doubles): exactly the
    // doubles this test parsed.
    let mut header = format!(
        "/* Generated by tests/firmware.rs from {DATA}. */\n#include <stdint.h>\n\
         #define TCE_FW_ROWS {}\nstatic const uint64_t tce_fw_score_bits[TCE_FW_ROWS] = {{\n",
        scores.len()
    );
    for s in scores {
        header.push_str(&format!("0x{:016x}u,\n", s.to_bits()));
    }
    header.push_str("};\nstatic const uint8_t tce_fw_labels[TCE_FW_ROWS] = {\n");
    for l in labels {
        header.push_str(&format!("{l},"));
    }
    header.push_str("\n};\n");
    std::fs::write(out.join("firmware_data.h"), header).unwrap();

    // Newlib's rdimon for the C library over semihosting (printf), without its crt0: the
    // firmware's startup.c has the vector table and reset handler crt0 lacks.
    let probe = run(Command::new("arm-none-eabi-gcc")
        .args([
            "-mcpu=cortex-m4",
            "-mthumb",
            "-mfloat-abi=hard",
            "-mfpu=fpv4-sp-d16",
        ])
        .arg("-print-file-name=librdimon.a"));
    assert!(
        Path::new(String::from_utf8_lossy(&probe.stdout).trim()).is_absolute(),
        "newlib for arm-none-eabi (Debian package libnewlib-arm-none-eabi) is not \
         installed: no librdimon.a. Run the suite with `scripts/test`, which installs it."
    );
    let elf = out.join("firmware.elf");
    run(Command::new("arm-none-eabi-gcc")
        .current_dir(root())
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-O2",
            "-g",
        ])
        .args([
            "-mcpu=cortex-m4",
            "-mthumb",
            "-mfloat-abi=hard",
            "-mfpu=fpv4-sp-d16",
        ])
        .args(["--specs=rdimon.specs", "-nostartfiles", "-Iinclude"])
        .arg(format!("-I{}", out.display()))
        .args(["-T", "firmware/c/mps2-an386.ld", "-Wl,--gc-sections"])
        // newlib's objects carry no .note.GNU-stack; a Cortex-M has no executable-stack
        // setting for the note to control.
        .arg("-Wl,--no-warn-execstack")
        .args(["firmware/c/startup.c", "firmware/c/main.c"])
        .arg(&lib)
        .args(["-lm", "-o"])
        .arg(&elf));
    elf
}

/// Runs a firmware under QEMU and returns what it printed; fails on a non-zero exit
/// status (a panic, a failed call, a fault) or after [`QEMU_TIMEOUT`].
fn run_in_qemu(elf: &Path) -> String {
    require("qemu-system-arm", "qemu-system-arm");
    let mut child = Command::new("qemu-system-arm")
        .args(["-machine", "mps2-an386", "-cpu", "cortex-m4", "-nographic"])
        .args(["-monitor", "none", "-serial", "none"])
        .args(["-semihosting-config", "enable=on,target=native", "-kernel"])
        .arg(elf)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run qemu-system-arm: {e}"));
    // Read stdout on a thread: the frames are larger than a pipe's buffer.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > QEMU_TIMEOUT {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!(
                "{} did not finish within {QEMU_TIMEOUT:?} under qemu-system-arm",
                elf.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = reader.join().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(
        status.success() && text.ends_with("tce-firmware end\n"),
        "{} under qemu-system-arm: {status}\n--- stdout\n{text}\n--- stderr\n{stderr}",
        elf.display()
    );
    text
}

/// A firmware's output: `est`/`smece`/`alarm` lines by key, frames by kind.
#[derive(Debug, Default)]
struct Printed {
    values: BTreeMap<String, String>,
    frames: BTreeMap<String, Vec<u8>>,
}

fn parse(text: &str) -> Printed {
    let mut printed = Printed::default();
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        match words[..] {
            ["est" | "smece" | "alarm", key, ..] => {
                let old = printed.values.insert(key.to_owned(), line.to_owned());
                assert!(old.is_none(), "{key} printed twice");
            }
            ["frame", kind, hex] => {
                assert!(hex.len() % 2 == 0, "odd hex in frame {kind}");
                let bytes = (0..hex.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
                    .collect();
                printed.frames.insert(kind.to_owned(), bytes);
            }
            ["tce-firmware", ..] => {}
            _ => panic!("unexpected line from the firmware: {line:?}"),
        }
    }
    printed
}

fn est_line(key: &str, e: Estimate) -> (String, String) {
    (
        key.to_owned(),
        format!(
            "est {key} {:016x} {} {}",
            e.value.to_bits(),
            e.bins,
            e.samples
        ),
    )
}

/// The host's states after the firmwares' pushes, for the merges that are not a replay
/// of one stream.
struct HostStates {
    decaying: DecayingHistogram<[DecayedBin; BINS]>,
    reservoir: Box<InlineReservoir<RESERVOIR>>,
    /// The alarms of `ALARMS`, in order.
    alarms: Vec<InlineAlarm<ALARM_BINS>>,
}

/// What the firmwares must print, computed here with the same states, pushes and calls
/// (firmware/rust/src/bin/firmware.rs).
fn expected(scores: &[f64], labels: &[u8]) -> (Printed, HostStates) {
    let mut values = BTreeMap::new();
    let mut frames = BTreeMap::new();
    let half = scores.len() / 2;

    let mut histogram = InlineHistogram::<BINS>::new(Closure::Left);
    for (&s, &l) in scores[..half].iter().zip(&labels[..half]) {
        histogram.push(s, l).unwrap();
    }
    histogram
        .push_batch(&scores[half..], &labels[half..])
        .unwrap();
    values.extend([
        est_line("histogram.ece_bin.p1", histogram.ece_bin(Norm::L1).unwrap()),
        est_line("histogram.ece_bin.p2", histogram.ece_bin(Norm::L2).unwrap()),
        est_line("histogram.mce", histogram.mce().unwrap()),
        est_line(
            "histogram.ece_debias.p2",
            histogram.ece_debias(Norm::L2).unwrap(),
        ),
    ]);
    let mut frame = vec![0; histogram.encoded_len()];
    histogram.encode(&mut frame).unwrap();
    frames.insert("histogram".to_owned(), frame);

    let mut decaying =
        DecayingHistogram::<[DecayedBin; BINS]>::new(Closure::Left, HALF_LIFE).unwrap();
    decaying.push_batch(scores, labels).unwrap();
    values.extend([
        est_line("decaying.ece_bin.p2", decaying.ece_bin(Norm::L2).unwrap()),
        est_line("decaying.mce", decaying.mce().unwrap()),
        est_line(
            "decaying.ece_debias.p2",
            decaying.ece_debias(Norm::L2).unwrap(),
        ),
    ]);
    let mut frame = vec![0; decaying.encoded_len()];
    decaying.encode(&mut frame).unwrap();
    frames.insert("decaying".to_owned(), frame);

    let mut storage = vec![Slot::EMPTY; scores.len()];
    let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
    buffer.push_batch(scores, labels).unwrap();
    {
        let sorted = buffer.sorted();
        for (name, binning) in [
            ("ew", Binning::EqualWidth(Closure::Left)),
            ("em", Binning::EqualMass(Ties::Split)),
            ("em_keep", Binning::EqualMass(Ties::Keep)),
        ] {
            values.extend([
                est_line(
                    &format!("buffer.{name}.ece_bin.p2"),
                    sorted.ece_bin(binning, BINS, Norm::L2).unwrap(),
                ),
                est_line(
                    &format!("buffer.{name}.ece_debias.p2"),
                    sorted.ece_debias(binning, BINS, Norm::L2).unwrap(),
                ),
                est_line(
                    &format!("buffer.{name}.mce"),
                    sorted.mce(binning, BINS).unwrap(),
                ),
                est_line(
                    &format!("buffer.{name}.ece_sweep.p2"),
                    sorted
                        .ece_sweep(binning, Norm::L2, SweepOptions::default())
                        .unwrap(),
                ),
            ]);
        }
    }
    let mut frame = vec![0; buffer.encoded_len()];
    buffer.encode(&mut frame).unwrap();
    frames.insert("buffer".to_owned(), frame);

    let mut window = Box::new(InlineWindow::<WINDOW>::new());
    for (&s, &l) in scores.iter().zip(labels) {
        window.push(s, l).unwrap();
    }
    {
        let held = window.samples();
        let em = Binning::EQUAL_MASS;
        values.extend([
            est_line(
                "window.em.ece_bin.p2",
                held.ece_bin(em, BINS, Norm::L2).unwrap(),
            ),
            est_line(
                "window.em.ece_debias.p2",
                held.ece_debias(em, BINS, Norm::L2).unwrap(),
            ),
            est_line("window.em.mce", held.mce(em, BINS).unwrap()),
            est_line(
                "window.em.ece_sweep.p2",
                held.ece_sweep(em, Norm::L2, SweepOptions::default())
                    .unwrap(),
            ),
            est_line(
                "window.ew.ece_sweep.p2",
                held.ece_sweep(Binning::EQUAL_WIDTH, Norm::L2, SweepOptions::default())
                    .unwrap(),
            ),
        ]);
    }
    let mut frame = vec![0; window.encoded_len()];
    window.encode(&mut frame).unwrap();
    frames.insert("window".to_owned(), frame);

    let mut reservoir = Box::new(InlineReservoir::<RESERVOIR>::new(SEED));
    reservoir.push_batch(scores, labels).unwrap();
    {
        let held = reservoir.samples();
        values.extend([
            est_line(
                "reservoir.em.ece_bin.p2",
                held.ece_bin(Binning::EQUAL_MASS, BINS, Norm::L2).unwrap(),
            ),
            est_line(
                "reservoir.em.ece_sweep.p2",
                held.ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
                    .unwrap(),
            ),
        ]);
    }
    let mut frame = vec![0; reservoir.encoded_len()];
    reservoir.encode(&mut frame).unwrap();
    frames.insert("reservoir".to_owned(), frame);

    let mut scratch = vec![0.0; tce::smece::SCRATCH_LEN];
    let smooth = smooth_ece(scores, labels, &mut scratch).unwrap();
    values.insert(
        "all".to_owned(),
        format!(
            "smece all {:016x} {:016x}",
            smooth.value.to_bits(),
            smooth.bandwidth.to_bits()
        ),
    );

    // Calibration alarms, one push at a time, checked after each for the first alarm.
    let mut alarms = Vec::new();
    for (key, arl0) in ALARMS {
        let mut alarm = new_alarm(arl0);
        let mut first_seen = 0u64;
        for (i, (&s, &l)) in scores.iter().zip(labels).enumerate() {
            alarm.push(s, l).unwrap();
            if first_seen == 0 && alarm.alarm() {
                first_seen = i as u64 + 1;
            }
        }
        values.insert(
            key.to_owned(),
            format!(
                "alarm {key} {:016x} {:016x} {} {} {first_seen} {}",
                alarm.statistic().to_bits(),
                alarm.threshold().to_bits(),
                u8::from(alarm.alarm()),
                alarm.alarm_at().unwrap_or(0),
                alarm.samples()
            ),
        );
        assert_eq!(
            first_seen,
            alarm.alarm_at().unwrap_or(0),
            "{key}: the alarm's record"
        );
        frames.insert(key.to_owned(), encoded_alarm(&alarm));
        alarms.push(alarm);
    }

    let states = HostStates {
        decaying,
        reservoir,
        alarms,
    };
    (Printed { values, frames }, states)
}

/// A firmwares' alarm, empty: its threshold from the guaranteed ARL0, as they compute it.
fn new_alarm(arl0: f64) -> InlineAlarm<ALARM_BINS> {
    let threshold = tce::alarm::threshold_for_guaranteed_arl0(arl0).unwrap();
    InlineAlarm::new(Closure::Left, ALARM_SHIFT, threshold).unwrap()
}

fn encoded_alarm(a: &InlineAlarm<ALARM_BINS>) -> Vec<u8> {
    let mut bytes = vec![0; a.encoded_len()];
    a.encode(&mut bytes).unwrap();
    bytes
}

fn encoded_histogram(h: &InlineHistogram<BINS>) -> Vec<u8> {
    let mut bytes = vec![0; h.encoded_len()];
    h.encode(&mut bytes).unwrap();
    bytes
}

fn encoded_decaying(h: &DecayingHistogram<[DecayedBin; BINS]>) -> Vec<u8> {
    let mut bytes = vec![0; h.encoded_len()];
    h.encode(&mut bytes).unwrap();
    bytes
}

fn encoded_window(w: &mut InlineWindow<WINDOW>) -> Vec<u8> {
    let mut bytes = vec![0; w.encoded_len()];
    w.encode(&mut bytes).unwrap();
    bytes
}

fn encoded_reservoir(r: &mut InlineReservoir<RESERVOIR>) -> Vec<u8> {
    let mut bytes = vec![0; r.encoded_len()];
    r.encode(&mut bytes).unwrap();
    bytes
}

/// Every frame a firmware printed, decoded on the host and merged with a state of the
/// other data set, equals the host's own computation over both streams.
fn check_merges(
    name: &str,
    printed: &Printed,
    ours: &HostStates,
    data: (&[f64], &[u8]),
    other: (&[f64], &[u8]),
) {
    let frame = |kind: &str| {
        printed
            .frames
            .get(kind)
            .unwrap_or_else(|| panic!("{name}: no {kind} frame"))
    };

    // Histogram: merging is exact, so decoded + other = one histogram fed both streams.
    let mut decoded = InlineHistogram::<BINS>::new(Closure::Left);
    decoded.decode(frame("histogram")).unwrap();
    let mut theirs = InlineHistogram::<BINS>::new(Closure::Left);
    theirs.push_batch(other.0, other.1).unwrap();
    decoded.merge(&theirs).unwrap();
    let mut both = InlineHistogram::<BINS>::new(Closure::Left);
    both.push_batch(data.0, data.1).unwrap();
    both.push_batch(other.0, other.1).unwrap();
    assert_eq!(
        encoded_histogram(&decoded),
        encoded_histogram(&both),
        "{name}: histogram merge"
    );
    assert_eq!(
        decoded.ece_bin(Norm::L2).unwrap().value.to_bits(),
        both.ece_bin(Norm::L2).unwrap().value.to_bits(),
        "{name}: merged histogram's ECE_bin"
    );

    // Sorted buffer: a merge appends, so decoded + other = one buffer fed both streams.
    let total = data.0.len() + other.0.len();
    let mut storage = vec![Slot::EMPTY; total];
    let mut decoded = SortedBuffer::with_storage(&mut storage).unwrap();
    decoded.decode(frame("buffer")).unwrap();
    let mut theirs_storage = vec![Slot::EMPTY; other.0.len()];
    let mut theirs = SortedBuffer::with_storage(&mut theirs_storage).unwrap();
    theirs.push_batch(other.0, other.1).unwrap();
    decoded.merge(&theirs).unwrap();
    let mut both_storage = vec![Slot::EMPTY; total];
    let mut both = SortedBuffer::with_storage(&mut both_storage).unwrap();
    both.push_batch(data.0, data.1).unwrap();
    both.push_batch(other.0, other.1).unwrap();
    let sweep = |b: &mut SortedBuffer<&mut [Slot]>| {
        let e = b
            .sorted()
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
            .unwrap();
        (e.value.to_bits(), e.bins, e.samples)
    };
    assert_eq!(
        sweep(&mut decoded),
        sweep(&mut both),
        "{name}: merged buffer's sweep"
    );
    let mut a = vec![0; decoded.encoded_len()];
    decoded.encode(&mut a).unwrap();
    let mut b = vec![0; both.encoded_len()];
    both.encode(&mut b).unwrap();
    assert_eq!(a, b, "{name}: buffer merge");

    // Window: a merge pushes the other's held samples (its last WINDOW), oldest first.
    let mut decoded = Box::new(InlineWindow::<WINDOW>::new());
    decoded.decode(frame("window")).unwrap();
    let mut theirs = Box::new(InlineWindow::<WINDOW>::new());
    theirs.push_batch(other.0, other.1).unwrap();
    decoded.merge(&*theirs).unwrap();
    let mut both = Box::new(InlineWindow::<WINDOW>::new());
    both.push_batch(data.0, data.1).unwrap();
    let tail = other.0.len().saturating_sub(WINDOW);
    both.push_batch(&other.0[tail..], &other.1[tail..]).unwrap();
    assert_eq!(
        encoded_window(&mut decoded),
        encoded_window(&mut both),
        "{name}: window merge"
    );

    // Decaying histogram and reservoir: their merges are not a replay of one stream (as
    // if both streams had ended together; a random uniform sample of both), so the
    // decoded state must merge exactly as the host's own state does.
    let mut decoded =
        DecayingHistogram::<[DecayedBin; BINS]>::new(Closure::Left, HALF_LIFE).unwrap();
    decoded.decode(frame("decaying")).unwrap();
    let mut theirs =
        DecayingHistogram::<[DecayedBin; BINS]>::new(Closure::Left, HALF_LIFE).unwrap();
    theirs.push_batch(other.0, other.1).unwrap();
    decoded.merge(&theirs).unwrap();
    let mut host = ours.decaying.clone();
    host.merge(&theirs).unwrap();
    assert_eq!(
        encoded_decaying(&decoded),
        encoded_decaying(&host),
        "{name}: decaying merge"
    );

    let mut decoded = Box::new(InlineReservoir::<RESERVOIR>::new(0));
    decoded.decode(frame("reservoir")).unwrap();
    let mut theirs = Box::new(InlineReservoir::<RESERVOIR>::new(SEED + 1));
    theirs.push_batch(other.0, other.1).unwrap();
    decoded.merge(&*theirs).unwrap();
    let mut host = ours.reservoir.clone();
    host.merge(&*theirs).unwrap();
    assert_eq!(
        encoded_reservoir(&mut decoded),
        encoded_reservoir(&mut host),
        "{name}: reservoir merge"
    );
    assert_eq!(decoded.seen(), total as u64);

    // Alarms: alarms do not merge (a CUSUM depends on the order of its samples), so each
    // decoded state must equal the host's and go on as it does: the other data set pushed
    // into both, one sample at a time, leaves them equal after every push.
    for (&(key, _), host) in ALARMS.iter().zip(&ours.alarms) {
        // Settings other than the firmwares': the frame carries them.
        let mut decoded = InlineAlarm::<ALARM_BINS>::new(Closure::Right, 1.0, 5.0).unwrap();
        decoded.decode(frame(key)).unwrap();
        assert_eq!(decoded, *host, "{name}: decoded {key}");
        let mut host = host.clone();
        for (&s, &l) in other.0.iter().zip(other.1) {
            decoded.push(s, l).unwrap();
            host.push(s, l).unwrap();
            assert_eq!(decoded, host, "{name}: decoded {key}, pushed on");
        }
        assert_eq!(encoded_alarm(&decoded), encoded_alarm(&host));
        assert_eq!(decoded.samples(), total as u64);
    }
}

/// The two maps equal, with the differing keys named.
fn assert_same(name: &str, got: &Printed, want: &Printed) {
    let keys: std::collections::BTreeSet<_> = got.values.keys().chain(want.values.keys()).collect();
    let differing: Vec<String> = keys
        .into_iter()
        .filter(|k| got.values.get(*k) != want.values.get(*k))
        .map(|k| {
            format!(
                "  {k}: firmware {:?}, host {:?}",
                got.values.get(k),
                want.values.get(k)
            )
        })
        .collect();
    assert!(
        differing.is_empty(),
        "{name}: estimates differ from the host's:\n{}",
        differing.join("\n")
    );
    assert_eq!(
        got.frames.keys().collect::<Vec<_>>(),
        want.frames.keys().collect::<Vec<_>>(),
        "{name}: frames printed"
    );
    for (kind, bytes) in &want.frames {
        assert!(
            got.frames[kind] == *bytes,
            "{name}: the {kind} frame differs from the host's encoding ({} bytes, host {})",
            got.frames[kind].len(),
            bytes.len()
        );
    }
}

fn check_firmware(name: &str, elf: &Path) {
    let (scores, labels) = read_csv(DATA);
    let (other_scores, other_labels) = read_csv(OTHER);
    let (want, states) = expected(&scores, &labels);
    // Guards the comparison: every state and estimator is there.
    assert_eq!(want.values.len(), 29);
    assert_eq!(want.frames.len(), 7);
    // ... and the alarms check both a quiet and a raised alarm's output and frame.
    assert!(!states.alarms[0].alarm() && states.alarms[1].alarm());
    let printed = parse(&run_in_qemu(elf));
    assert_same(name, &printed, &want);
    check_merges(
        name,
        &printed,
        &states,
        (&scores, &labels),
        (&other_scores, &other_labels),
    );
}

#[test]
fn rust_firmware_on_a_cortex_m4f_equals_the_host() {
    require("qemu-system-arm", "qemu-system-arm");
    let elf = build_rust_firmware();
    check_firmware("the Rust firmware", &elf);
}

#[test]
fn c_firmware_on_a_cortex_m4f_equals_the_host() {
    require("qemu-system-arm", "qemu-system-arm");
    let (scores, labels) = read_csv(DATA);
    let elf = build_c_firmware(&scores, &labels);
    check_firmware("the C firmware", &elf);
}

/// Guards the guard: the comparison catches one flipped bit of an estimate and one
/// changed byte of a frame (a comparison that cannot fail is a defect).
#[test]
fn the_comparison_catches_one_bit() {
    let (scores, labels) = read_csv(DATA);
    let (want, _) = expected(&scores[..300], &labels[..300]);
    let same = Printed {
        values: want.values.clone(),
        frames: want.frames.clone(),
    };
    assert_same("a copy", &same, &want);

    let mut flipped = Printed {
        values: want.values.clone(),
        frames: want.frames.clone(),
    };
    let line = flipped.values.get_mut("histogram.ece_bin.p2").unwrap();
    let mut words: Vec<String> = line.split(' ').map(str::to_owned).collect();
    let bits = u64::from_str_radix(&words[2], 16).unwrap() ^ 1;
    words[2] = format!("{bits:016x}");
    *line = words.join(" ");
    let caught = std::panic::catch_unwind(|| assert_same("flipped", &flipped, &want));
    assert!(caught.is_err(), "a flipped bit passed");

    let mut changed = Printed {
        values: want.values.clone(),
        frames: want.frames.clone(),
    };
    *changed
        .frames
        .get_mut("reservoir")
        .unwrap()
        .last_mut()
        .unwrap() ^= 0x80;
    let caught = std::panic::catch_unwind(|| assert_same("changed", &changed, &want));
    assert!(caught.is_err(), "a changed frame byte passed");
}
