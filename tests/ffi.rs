//! The C ABI from C, C++ and Python (feature `ffi`; `cargo test --workspace --all-features`).
//!
//! Builds the static and shared libraries (the workspace member capi/) with a nested
//! `cargo build` into a target directory of their own (`$CARGO_TARGET_DIR/ffi`, else
//! `target/ffi`: no lock contention with the outer build), compiles the programs of `ffi-tests/` and `examples/` with gcc
//! and g++ (`-Wall -Wextra -Wpedantic -Werror`), and runs them under AddressSanitizer +
//! UndefinedBehaviorSanitizer and under valgrind. A missing tool (gcc, g++, valgrind,
//! python3, cmake, pkg-config) fails the test loudly: `scripts/test` installs them. No test
//! here downloads anything.
#![cfg(feature = "ffi")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use tce::{BinStats, Binning, Closure, Histogram, Norm, Slot, SortedBuffer, SweepOptions, Ties};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Where the nested build and the compiled programs go.
fn ffi_target() -> PathBuf {
    let base =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from);
    let base = if base.is_absolute() {
        base
    } else {
        root().join(base)
    };
    base.join("ffi")
}

fn bin_dir() -> PathBuf {
    let dir = ffi_target().join("bin").join(profile());
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Fails loudly if a tool is missing.
fn require(tool: &str) {
    let found = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(tool).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "`{tool}` is not installed, and the C ABI tests need it (they fail rather than skip). \
         Run the suite with `scripts/test`, which installs what is missing."
    );
}

/// The Python that runs the examples: `TCE_TEST_PYTHON` (scripts/test exports its venv's),
/// else `python3` from PATH.
fn python() -> std::ffi::OsString {
    std::env::var_os("TCE_TEST_PYTHON").unwrap_or_else(|| {
        require("python3");
        "python3".into()
    })
}

fn run(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    if !output.status.success() {
        panic!(
            "{command:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    output
}

/// The profile the C programs link against: the one these tests were built with, so that
/// `cargo test --test ffi` runs the C tests against a debug library (overflow checks on:
/// an overflow would come back as `TCE_STATUS_PANIC`) and `cargo test --release --test
/// ffi` against a release one (overflow checks off: an unchecked overflow would wrap
/// silently). `scripts/test` runs both, since a count bound must hold in each.
fn profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// A nested build, with [`profile`], of the workspace packages `packages` into
/// `ffi_target()`.
fn cargo_build(packages: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut command = Command::new(cargo);
    command.current_dir(root()).arg("build");
    if profile() == "release" {
        command.arg("--release");
    }
    for package in packages {
        command.args(["-p", package]);
    }
    run(command
        .arg("--target-dir")
        .arg(ffi_target())
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS"));
}

/// The directory with libtce.a, libtce.so and the `tce` command: one nested build (with
/// [`profile`]) of tce-capi (the core with features std + ffi) and tce-cli, once. (One
/// build, not one for each: a second build while other tests link against libtce.a
/// could replace the file under them.)
fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        cargo_build(&["tce-capi", "tce-cli"]);
        let dir = ffi_target().join(profile());
        for file in ["libtce.a", "libtce.so", "tce"] {
            assert!(dir.join(file).is_file(), "{file} not built");
        }
        dir
    })
}

/// The `tce` command (package tce-cli), built next to the libraries.
fn tce_cli() -> PathBuf {
    lib_dir().join("tce")
}

/// The names of the functions `include/tce.h` declares.
fn header_functions() -> Vec<String> {
    let header = std::fs::read_to_string(root().join("include/tce.h")).unwrap();
    let mut functions = Vec::new();
    for line in header
        .lines()
        .filter(|l| !l.starts_with(' ') && !l.starts_with('#'))
    {
        if let Some(open) = line.find('(') {
            if let Some(name) = line[..open]
                .split([' ', '*'])
                .next_back()
                .filter(|n| n.starts_with("tce_"))
            {
                functions.push(name.to_string());
            }
        }
    }
    assert!(functions.len() > 40, "parsed only {functions:?}");
    functions
}

/// The global function symbols `nm` lists as defined in `file` (`-D`: the dynamic ones).
fn defined_functions(file: &Path, dynamic: bool) -> std::collections::BTreeSet<String> {
    require("nm");
    let mut command = Command::new("nm");
    if dynamic {
        command.arg("-D");
    }
    let out = stdout(&run(command.arg("--defined-only").arg(file)));
    out.lines()
        .filter_map(
            |line| match line.split_whitespace().collect::<Vec<_>>()[..] {
                [_, "T", name] => Some(name.to_string()),
                _ => None,
            },
        )
        .collect()
}

const WARNINGS: [&str; 4] = ["-Wall", "-Wextra", "-Wpedantic", "-Werror"];
const SANITIZERS: [&str; 3] = [
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
];

#[derive(Clone, Copy)]
enum Lang {
    C,
    Cpp,
}

/// Compiles `sources` into `name`, linked against the static library.
fn compile(name: &str, sources: &[&str], lang: Lang, extra: &[&str]) -> PathBuf {
    let (compiler, std) = match lang {
        Lang::C => ("gcc", "-std=c11"),
        Lang::Cpp => ("g++", "-std=c++17"),
    };
    require(compiler);
    let out = bin_dir().join(name);
    let mut command = Command::new(compiler);
    command.current_dir(root()).arg(std).args(WARNINGS).args([
        "-g",
        "-O1",
        "-Iinclude",
        "-Iexamples",
    ]);
    if let Lang::Cpp = lang {
        command.args(["-x", "c++"]);
    }
    command.args(sources);
    if let Lang::Cpp = lang {
        command.args(["-x", "none"]);
    }
    command
        .args(extra)
        .arg(lib_dir().join("libtce.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out);
    run(&mut command);
    out
}

fn asan(program: &Path, args: &[&str]) -> Output {
    run(Command::new(program)
        .current_dir(root())
        .args(args)
        // The 1 PiB allocation of the ALLOCATION_FAILED test must return NULL.
        .env(
            "ASAN_OPTIONS",
            "allocator_may_return_null=1:detect_leaks=1:abort_on_error=1",
        )
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1"))
}

fn valgrind(program: &Path, args: &[&str]) -> Output {
    require("valgrind");
    run(Command::new("valgrind")
        .current_dir(root())
        .args([
            "--error-exitcode=1",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite,indirect,possible",
            "-q",
        ])
        .arg(program)
        .args(args))
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn header_compiles_alone_and_twice_as_c_and_cpp() {
    let c = compile("header_only_c", &["ffi-tests/header_only.c"], Lang::C, &[]);
    let cpp = compile(
        "header_only_cpp",
        &["ffi-tests/header_only.c"],
        Lang::Cpp,
        &[],
    );
    run(&mut Command::new(c));
    run(&mut Command::new(cpp));
    // And in older dialects a C user may still compile with.
    run(Command::new("gcc")
        .current_dir(root())
        .args(["-std=c99", "-fsyntax-only", "-Iinclude"])
        .args(WARNINGS)
        .arg("ffi-tests/header_only.c"));
    run(Command::new("g++")
        .current_dir(root())
        .args(["-std=c++11", "-fsyntax-only", "-x", "c++", "-Iinclude"])
        .args(WARNINGS)
        .arg("ffi-tests/header_only.c"));
}

fn check_api_output(output: &Output) {
    let out = stdout(output);
    assert!(out.trim_end().ends_with(" passed, 0 failed"), "{out}");
}

#[test]
fn api_c11_under_asan_and_ubsan() {
    let program = compile(
        "api_c_asan",
        &["ffi-tests/test_api.c"],
        Lang::C,
        &SANITIZERS,
    );
    check_api_output(&asan(&program, &[]));
}

#[test]
fn api_cpp17_under_asan_and_ubsan() {
    let program = compile(
        "api_cpp_asan",
        &["ffi-tests/test_api.c"],
        Lang::Cpp,
        &SANITIZERS,
    );
    check_api_output(&asan(&program, &[]));
}

#[test]
fn api_c11_under_valgrind() {
    let program = compile("api_c", &["ffi-tests/test_api.c"], Lang::C, &[]);
    check_api_output(&valgrind(&program, &[]));
}

#[test]
fn api_cpp17_under_valgrind() {
    let program = compile("api_cpp", &["ffi-tests/test_api.c"], Lang::Cpp, &[]);
    check_api_output(&valgrind(&program, &[]));
}

/// Every function the header declares is called by ffi-tests/test_api.c.
#[test]
fn api_test_calls_every_exported_function() {
    let test = std::fs::read_to_string(root().join("ffi-tests/test_api.c")).unwrap();
    let functions = header_functions();
    let missing: Vec<_> = functions
        .iter()
        .filter(|f| !test.contains(&format!("{f}(")))
        .collect();
    assert!(
        missing.is_empty(),
        "not exercised by ffi-tests/test_api.c: {missing:?}"
    );
}

/// What `cargo build -p tce-capi` gives: libtce.so exports exactly the header's functions
/// (none missing, no Rust internals), and libtce.a defines every one of them.
#[test]
fn libraries_export_the_header_functions() {
    let declared: std::collections::BTreeSet<String> = header_functions().into_iter().collect();
    let shared = defined_functions(&lib_dir().join("libtce.so"), true);
    assert_eq!(
        shared.difference(&declared).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "exported by libtce.so, not declared"
    );
    assert_eq!(
        declared.difference(&shared).collect::<Vec<_>>(),
        Vec::<&String>::new(),
        "declared, not exported by libtce.so"
    );
    let archive = defined_functions(&lib_dir().join("libtce.a"), false);
    let missing: Vec<_> = declared.difference(&archive).collect();
    assert!(missing.is_empty(), "not defined in libtce.a: {missing:?}");
}

/// Reads (confidence, correct) from a bundled CSV, as the C program does (strtod and
/// Rust's parser are both correctly rounded).
fn read_csv(path: &Path) -> (Vec<f64>, Vec<u8>) {
    let text = std::fs::read_to_string(path).unwrap();
    let (mut scores, mut labels) = (Vec::new(), Vec::new());
    for line in text.lines().skip(1) {
        let mut fields = line.split(',');
        let (Some(score), Some(label)) = (fields.next(), fields.next()) else {
            continue;
        };
        scores.push(score.trim().parse::<f64>().unwrap());
        labels.push(label.trim().parse::<u8>().unwrap());
    }
    (scores, labels)
}

/// What ffi-tests/csv_estimates.c prints, computed with the Rust API: key → (bits, bins,
/// samples).
fn rust_estimates(scores: &[f64], labels: &[u8]) -> BTreeMap<String, (u64, usize, u64)> {
    let mut out = BTreeMap::new();
    let mut put = |key: String, e: tce::Estimate| {
        out.insert(key, (e.value.to_bits(), e.bins, e.samples));
    };
    let mut h = Histogram::<[BinStats; 15]>::new(Closure::Left);
    h.push_batch(scores, labels).unwrap();
    put("histogram.ece_bin.p2".into(), h.ece_bin(Norm::L2).unwrap());
    put("histogram.ece_bin.p1".into(), h.ece_bin(Norm::L1).unwrap());
    put("histogram.mce".into(), h.mce().unwrap());
    put(
        "histogram.ece_debias.p2".into(),
        h.ece_debias(Norm::L2).unwrap(),
    );
    let mut storage = vec![Slot::EMPTY; scores.len()];
    let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
    for (&s, &l) in scores.iter().zip(labels) {
        buffer.push(s, l).unwrap();
    }
    let sorted = buffer.sorted();
    let binnings = [
        ("ew", Binning::EqualWidth(Closure::Left)),
        ("em", Binning::EqualMass(Ties::Split)),
        ("em_keep", Binning::EqualMass(Ties::Keep)),
    ];
    for (name, binning) in binnings {
        // The one-call equal-mass estimators (by selection in C) against the sorted
        // buffer too.
        let callers: &[&str] = match binning {
            Binning::EqualMass(_) => &["buffer", "oneshot"],
            Binning::EqualWidth(_) => &["buffer"],
        };
        for p in 1..=3 {
            let norm = Norm::new(f64::from(p)).unwrap();
            for caller in callers {
                put(
                    format!("{caller}.{name}.ece_bin.p{p}"),
                    sorted.ece_bin(binning, 15, norm).unwrap(),
                );
                put(
                    format!("{caller}.{name}.ece_debias.p{p}"),
                    sorted.ece_debias(binning, 15, norm).unwrap(),
                );
            }
            put(
                format!("buffer.{name}.ece_sweep.p{p}"),
                sorted
                    .ece_sweep(binning, norm, SweepOptions::default())
                    .unwrap(),
            );
        }
        for caller in callers {
            put(
                format!("{caller}.{name}.mce"),
                sorted.mce(binning, 15).unwrap(),
            );
        }
    }
    put(
        "oneshot.em.ece_sweep.p2".into(),
        sorted
            .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
            .unwrap(),
    );
    // The rows repeated past 2^17 samples, which C sorts ahead on two threads
    // (`tce_sorted_buffer_sort_parallel`), sorted here on one.
    let copies = (1 << 17) / scores.len() + 1;
    let mut storage = vec![Slot::EMPTY; 2 * copies * scores.len()];
    let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
    for _ in 0..copies {
        buffer.push_batch(scores, labels).unwrap();
    }
    let sorted = buffer.sorted();
    for (name, binning) in binnings {
        put(
            format!("parallel.{name}.ece_bin.p2"),
            sorted.ece_bin(binning, 15, Norm::L2).unwrap(),
        );
        put(
            format!("parallel.{name}.ece_debias.p2"),
            sorted.ece_debias(binning, 15, Norm::L2).unwrap(),
        );
        put(
            format!("parallel.{name}.ece_sweep.p2"),
            sorted
                .ece_sweep(binning, Norm::L2, SweepOptions::default())
                .unwrap(),
        );
        put(
            format!("parallel.{name}.mce"),
            sorted.mce(binning, 15).unwrap(),
        );
    }
    out
}

#[test]
fn c_results_equal_rust_results_to_the_last_bit() {
    let program = compile(
        "csv_estimates",
        &["ffi-tests/csv_estimates.c"],
        Lang::C,
        &[],
    );
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("data"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "csv"))
        .collect();
    files.sort();
    assert!(files.len() >= 6, "bundled data files: {files:?}");
    for file in files {
        let output = run(Command::new(&program).arg(&file));
        let mut from_c = BTreeMap::new();
        for line in stdout(&output).lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            assert_eq!(fields.len(), 5, "{line}");
            let bits = u64::from_str_radix(fields[2].trim_start_matches("0x"), 16).unwrap();
            from_c.insert(
                fields[0].to_string(),
                (bits, fields[3].parse().unwrap(), fields[4].parse().unwrap()),
            );
        }
        let (scores, labels) = read_csv(&file);
        let from_rust = rust_estimates(&scores, &labels);
        assert_eq!(from_c.len(), from_rust.len(), "{}", file.display());
        for (key, rust) in &from_rust {
            let c = from_c
                .get(key)
                .unwrap_or_else(|| panic!("{key} missing from the C output"));
            assert_eq!(
                c,
                rust,
                "{} {key}: C {} vs Rust {}",
                file.display(),
                f64::from_bits(c.0),
                f64::from_bits(rust.0)
            );
        }
    }
}

#[test]
fn monitor_example_under_asan_ubsan_and_tsan() {
    let asan_build = compile(
        "monitor_asan",
        &["examples/monitor.c"],
        Lang::C,
        &SANITIZERS,
    );
    let out = stdout(&asan(&asan_build, &[]));
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("ECE_bin") && l.contains("ECE_sweep"))
            .count(),
        5,
        "{out}"
    );
    let tsan_build = compile(
        "monitor_tsan",
        &["examples/monitor.c"],
        Lang::C,
        &["-fsanitize=thread"],
    );
    let output = tsan(&tsan_build);
    let out = stdout(&output);
    assert!(
        output.status.success() && out.contains("report 5"),
        "{}: {out}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs a ThreadSanitizer build. With address-space randomisation off (`setarch -R`):
/// TSan's fixed shadow mapping fails ("unexpected memory mapping") on kernels with
/// many ASLR bits (`vm.mmap_rnd_bits` above 28).
fn tsan(program: &Path) -> Output {
    require("setarch");
    Command::new("setarch")
        .arg(std::env::consts::ARCH)
        .arg("-R")
        .arg(program)
        .current_dir(root())
        .env("TSAN_OPTIONS", "halt_on_error=1:exitcode=66")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()))
}

/// Four threads push into one concurrent histogram and into windows and reservoirs of
/// their own: no race reported, and every result equals its single-threaded twin.
#[test]
fn threads_under_tsan() {
    let program = compile(
        "threads_tsan",
        &["ffi-tests/test_threads.c"],
        Lang::C,
        &["-fsanitize=thread"],
    );
    let output = tsan(&program);
    let (out, err) = (stdout(&output), String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success() && out.contains(": ok") && !err.contains("ThreadSanitizer"),
        "{}\n--- stdout\n{out}\n--- stderr\n{err}",
        output.status
    );
    // And ThreadSanitizer is really watching: a deliberate race is reported.
    let racy = compile(
        "threads_tsan_race",
        &["ffi-tests/test_threads.c"],
        Lang::C,
        &["-fsanitize=thread", "-DRACE_SELF_TEST"],
    );
    let output = tsan(&racy);
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success() && err.contains("WARNING: ThreadSanitizer: data race"),
        "the deliberate race went unreported ({}):\n{err}",
        output.status
    );
}

/// One sample line of the Prometheus text exposition format.
#[derive(Debug)]
struct PromSample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// A strict parser of the Prometheus text exposition format (version 0.0.4), as
/// node-exporter's textfile collector reads it, restricted to what an exporter of
/// gauges and counters should write: every line is `# HELP name text`, `# TYPE name
/// type` or a sample `name{label="value",...} value`; each family has one HELP and one
/// TYPE (gauge or counter) before its samples, which are contiguous; counters end in
/// `_total`; no series twice; the text ends with a newline. Returns the families' types
/// and the samples.
fn parse_exposition(text: &str) -> (BTreeMap<String, String>, Vec<PromSample>) {
    fn is_name(s: &str, colon: bool) -> bool {
        let mut chars = s.chars();
        let ok_first = |c: char| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':');
        chars.next().is_some_and(ok_first)
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
    }
    fn value(s: &str) -> f64 {
        match s {
            "NaN" => f64::NAN,
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            _ => {
                assert!(
                    s.bytes()
                        .all(|b| b.is_ascii_digit() || b".eE+-".contains(&b)),
                    "bad value {s:?}"
                );
                s.parse().unwrap_or_else(|_| panic!("bad value {s:?}"))
            }
        }
    }
    assert!(
        text.ends_with('\n'),
        "the exposition must end with a newline"
    );
    let (mut types, mut helps) = (BTreeMap::new(), BTreeMap::<String, String>::new());
    let (mut samples, mut series) = (Vec::new(), std::collections::BTreeSet::new());
    let mut current: Option<String> = None;
    for line in text.lines() {
        assert!(!line.is_empty(), "empty line");
        if let Some(rest) = line.strip_prefix("# ") {
            let (keyword, rest) = rest.split_once(' ').expect("comment keyword");
            let (name, arg) = rest.split_once(' ').expect("metric name and argument");
            assert!(is_name(name, true), "bad metric name {name:?}");
            assert!(
                !samples.iter().any(|s: &PromSample| s.name == name),
                "{keyword} of {name} after its samples"
            );
            match keyword {
                "HELP" => {
                    assert!(!arg.is_empty(), "empty HELP for {name}");
                    let mut escaped = arg.chars();
                    while let Some(c) = escaped.next() {
                        if c == '\\' {
                            assert!(matches!(escaped.next(), Some('\\' | 'n')), "bad escape");
                        }
                    }
                    assert!(
                        helps.insert(name.into(), arg.into()).is_none(),
                        "two HELP for {name}"
                    );
                }
                "TYPE" => {
                    assert!(matches!(arg, "gauge" | "counter"), "type {arg:?} of {name}");
                    if arg == "counter" {
                        assert!(name.ends_with("_total"), "counter {name} without _total");
                    }
                    assert!(
                        types.insert(name.into(), arg.into()).is_none(),
                        "two TYPE for {name}"
                    );
                }
                _ => panic!("unexpected comment {line:?}"),
            }
            // HELP and TYPE come once per family, so samples following the latest are
            // contiguous.
            current = Some(name.into());
            continue;
        }
        assert!(!line.starts_with('#'), "bad comment {line:?}");
        let name_end = line.find(['{', ' ']).expect("sample without value");
        let name = &line[..name_end];
        assert!(is_name(name, true), "bad metric name {name:?}");
        assert!(types.contains_key(name), "sample of {name} without TYPE");
        assert!(helps.contains_key(name), "sample of {name} without HELP");
        assert_eq!(
            current.as_deref(),
            Some(name),
            "samples of {name} not contiguous"
        );
        let mut rest = &line[name_end..];
        let mut labels = BTreeMap::new();
        if let Some(body) = rest.strip_prefix('{') {
            let mut chars = body.char_indices().peekable();
            let close = loop {
                let (start, c) = chars.next().expect("unterminated labels");
                if c == '}' {
                    break start;
                }
                let mut key = String::from(c);
                for (_, c) in chars.by_ref() {
                    if c == '=' {
                        break;
                    }
                    key.push(c);
                }
                assert!(
                    is_name(&key, false) && !key.starts_with("__"),
                    "bad label {key:?}"
                );
                assert_eq!(
                    chars.next().map(|(_, c)| c),
                    Some('"'),
                    "label value not quoted"
                );
                let mut val = String::new();
                loop {
                    match chars.next().expect("unterminated label value").1 {
                        '"' => break,
                        '\\' => match chars.next().expect("escape").1 {
                            '\\' => val.push('\\'),
                            '"' => val.push('"'),
                            'n' => val.push('\n'),
                            other => panic!("bad escape \\{other}"),
                        },
                        c => val.push(c),
                    }
                }
                assert!(
                    labels.insert(key.clone(), val).is_none(),
                    "label {key} twice"
                );
                match chars.next().expect("unterminated labels") {
                    (_, ',') => {}
                    (at, '}') => break at,
                    (_, c) => panic!("unexpected {c:?} in labels"),
                }
            };
            rest = &body[close + 1..];
        }
        let value_text = rest.strip_prefix(' ').expect("one space before the value");
        assert!(
            !value_text.contains(' '),
            "timestamps are not expected: {line:?}"
        );
        let sample = PromSample {
            name: name.into(),
            labels,
            value: value(value_text),
        };
        assert!(
            series.insert(format!("{}{:?}", sample.name, sample.labels)),
            "series twice: {line:?}"
        );
        samples.push(sample);
    }
    (types, samples)
}

fn prom_value(samples: &[PromSample], name: &str, labels: &[(&str, &str)]) -> f64 {
    let wanted: BTreeMap<String, String> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    samples
        .iter()
        .find(|s| s.name == name && s.labels == wanted)
        .unwrap_or_else(|| panic!("no {name}{wanted:?}"))
        .value
}

#[test]
fn prometheus_exporter_writes_exact_metrics_atomically() {
    let program = compile(
        "prometheus_exporter_asan",
        &["examples/prometheus_exporter.c"],
        Lang::C,
        &SANITIZERS,
    );
    let data = root().join("data/resnet110_c10_test.csv");
    let dir = bin_dir().join("exporter");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let target = dir.join("tce.prom");
    std::fs::write(&target, "stale\n").unwrap();
    asan(
        &program,
        &["-o", target.to_str().unwrap(), data.to_str().unwrap()],
    );
    let text = std::fs::read_to_string(&target).unwrap();
    assert!(
        !dir.join("tce.prom.tmp").exists(),
        "temporary file left behind"
    );
    // The same bytes from stdin to stdout.
    let piped = run(Command::new(&program)
        .stdin(std::fs::File::open(&data).unwrap())
        .env("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1"));
    assert_eq!(stdout(&piped), text);

    let (types, samples) = parse_exposition(&text);
    assert_eq!(types["tce_samples_total"], "counter");
    assert_eq!(types["tce_ece_sweep"], "gauge");

    // The Rust API on the same rows: all of them in a histogram, the last 4096 in a window.
    let (scores, labels) = read_csv(&data);
    let n = scores.len();
    assert_eq!(prom_value(&samples, "tce_samples_total", &[]), n as f64);
    assert_eq!(prom_value(&samples, "tce_rejected_samples_total", &[]), 0.0);
    let mut h = Histogram::<[BinStats; 15]>::new(Closure::Left);
    h.push_batch(&scores, &labels).unwrap();
    let mut window = Box::new(tce::InlineWindow::<4096>::new());
    window.push_batch(&scores, &labels).unwrap();
    assert_eq!(prom_value(&samples, "tce_window_samples", &[]), 4096.0);
    let sorted = window.samples();
    let all = [("scope", "all"), ("binning", "equal_width"), ("bins", "15")];
    let win = [
        ("scope", "window"),
        ("binning", "equal_mass"),
        ("bins", "15"),
    ];
    let sweep = sorted
        .ece_sweep(Binning::EQUAL_MASS, Norm::L2, SweepOptions::default())
        .unwrap();
    let expected = [
        ("tce_ece_bin", &all[..], h.ece_bin(Norm::L2).unwrap().value),
        (
            "tce_ece_debias",
            &all[..],
            h.ece_debias(Norm::L2).unwrap().value,
        ),
        ("tce_mce", &all[..], h.mce().unwrap().value),
        (
            "tce_ece_bin",
            &win[..],
            sorted
                .ece_bin(Binning::EQUAL_MASS, 15, Norm::L2)
                .unwrap()
                .value,
        ),
        (
            "tce_ece_debias",
            &win[..],
            sorted
                .ece_debias(Binning::EQUAL_MASS, 15, Norm::L2)
                .unwrap()
                .value,
        ),
        ("tce_ece_sweep", &win[..2], sweep.value),
        ("tce_sweep_bins", &win[..2], sweep.bins as f64),
    ];
    for (name, labels, rust) in expected {
        let exported = prom_value(&samples, name, labels);
        assert!(
            (exported - rust).abs() <= 1e-12,
            "{name}{labels:?}: exported {exported}, Rust {rust}"
        );
    }
    for (k, bin) in h.bins().iter().enumerate() {
        let k_text = k.to_string();
        let labels = [("bin", k_text.as_str()), ("upper", &format_g(h.edges(k).1))];
        assert_eq!(
            prom_value(&samples, "tce_bin_samples", &labels),
            bin.count() as f64
        );
        let accuracy = prom_value(&samples, "tce_bin_accuracy", &labels);
        match bin.accuracy() {
            Some(a) => assert!((accuracy - a).abs() <= 1e-12),
            None => assert!(accuracy.is_nan()),
        }
    }
    let total: f64 = samples
        .iter()
        .filter(|s| s.name == "tce_bin_samples")
        .map(|s| s.value)
        .sum();
    assert_eq!(total, n as f64);

    // The alarm: 10 bins, shift ln 2, threshold 10, every row, never reset.
    let mut alarm =
        tce::InlineAlarm::<10>::new(Closure::Left, core::f64::consts::LN_2, 10.0).unwrap();
    alarm.push_batch(&scores, &labels).unwrap();
    assert_eq!(types["tce_alarm_raised"], "gauge");
    let alarm_expected = [
        ("tce_alarm_statistic", &[][..], alarm.statistic()),
        ("tce_alarm_threshold", &[][..], 10.0),
        (
            "tce_alarm_raised",
            &[][..],
            f64::from(u8::from(alarm.alarm())),
        ),
        ("tce_alarm_samples", &[][..], n as f64),
        (
            "tce_alarm_stated_arl0",
            &[("bound", "guaranteed")][..],
            alarm.guaranteed_arl0(),
        ),
        (
            "tce_alarm_stated_arl0",
            &[("bound", "approximate")][..],
            alarm.approximate_arl0(),
        ),
    ];
    for (name, labels, rust) in alarm_expected {
        let exported = prom_value(&samples, name, labels);
        assert!(
            (exported - rust).abs() <= 1e-12 * rust.abs().max(1.0),
            "{name}{labels:?}: exported {exported}, Rust {rust}"
        );
    }
    // ResNet-110 on CIFAR-10 is over-confident (ECE about 6.6 %): the alarm is raised.
    assert!(alarm.alarm() && alarm.statistic() > 10.0);

    // And the real tool agrees the exposition is valid: promtool (Debian package
    // `prometheus`, installed by scripts/test) reads it from stdin. Missing, it fails
    // the test rather than skipping it.
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect(
            "promtool (Debian package `prometheus`) must be installed: scripts/test installs it",
        );
    std::io::Write::write_all(promtool.stdin.as_mut().unwrap(), text.as_bytes()).unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );

    // The parser is strict: it refuses what a scraper would.
    for bad in [
        "tce_x 1\n",                                                                // no TYPE
        "# TYPE tce_x gauge\n# HELP tce_x h\ntce_x{a=\"1\"} 1\ntce_x{a=\"1\"} 2\n", // series twice
        "# HELP tce_x h\n# TYPE tce_x counter\ntce_x 1\n", // counter without _total
        "# HELP tce_x h\n# TYPE tce_x gauge\ntce_x{a=1} 1\n", // unquoted label
        "# HELP tce_x h\n# TYPE tce_x gauge\ntce_x 1",     // no final newline
    ] {
        let outcome = std::panic::catch_unwind(|| parse_exposition(bad));
        assert!(outcome.is_err(), "accepted {bad:?}");
    }
}

/// C's `%g` for the bin edges (6 significant digits, trailing zeros removed).
fn format_g(x: f64) -> String {
    let digits = 6 - 1 - x.abs().log10().floor() as i32;
    let text = format!("{:.*}", digits.max(0) as usize, x);
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

#[test]
fn cpp_wrapper_example_under_asan_and_valgrind() {
    let file = root().join("data/resnet50_birds_test.csv");
    let file = file.to_str().unwrap();
    let sanitized = compile(
        "estimate_cpp_asan",
        &["examples/estimate.cpp"],
        Lang::Cpp,
        &SANITIZERS,
    );
    let out = stdout(&asan(&sanitized, &[file]));
    assert!(
        out.contains("ece_sweep") && out.contains("refused NaN"),
        "{out}"
    );
    let plain = compile("estimate_cpp", &["examples/estimate.cpp"], Lang::Cpp, &[]);
    valgrind(&plain, &[file]);
}

/// The JSON document of `tce estimate --json`, computed with the Rust API (the shape
/// examples/estimate.py prints).
fn rust_estimate_json(scores: &[f64], labels: &[u8], bins: usize) -> String {
    let n = scores.len();
    let mut storage = vec![Slot::EMPTY; n];
    let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
    buffer.push_batch(scores, labels).unwrap();
    let sorted = buffer.sorted();
    let mut entries = Vec::new();
    for (name, binning) in [
        ("equal_width", Binning::EQUAL_WIDTH),
        ("equal_mass", Binning::EQUAL_MASS),
    ] {
        let estimates = [
            ("ece_bin", sorted.ece_bin(binning, bins, Norm::L2).unwrap()),
            (
                "ece_sweep",
                sorted
                    .ece_sweep(binning, Norm::L2, SweepOptions::default())
                    .unwrap(),
            ),
            (
                "ece_debias",
                sorted.ece_debias(binning, bins, Norm::L2).unwrap(),
            ),
            ("mce", sorted.mce(binning, bins).unwrap()),
        ];
        for (estimator, e) in estimates {
            entries.push(format!(
                r#"{{"estimator": "{estimator}", "binning": "{name}", "bins": {}, "value": {:?}}}"#,
                e.bins, e.value
            ));
        }
    }
    let mut scratch = vec![0.0; tce::smece::SCRATCH_LEN];
    let smooth = tce::smooth_ece(scores, labels, &mut scratch).unwrap();
    entries.push(format!(
        r#"{{"estimator": "smece", "value": {:?}, "bandwidth": {:?}}}"#,
        smooth.value, smooth.bandwidth
    ));
    let hits: u64 = labels.iter().map(|&l| u64::from(l)).sum();
    let confidence_sum: f64 = scores.iter().fold(0.0, |sum, &s| sum + s);
    format!(
        r#"{{"n": {n}, "accuracy": {:?}, "mean_confidence": {:?}, "norm": 2.0, "estimates": [{}]}}"#,
        hits as f64 / n as f64,
        confidence_sum / n as f64,
        entries.join(", ")
    )
}

#[test]
fn python_ctypes_example_matches_rust() {
    let python = python();
    let file = root().join("data/resnet110_c10_test.csv");
    let output = run(Command::new(&python)
        .current_dir(root())
        .arg("examples/estimate.py")
        .arg("--lib")
        .arg(lib_dir().join("libtce.so"))
        .arg(&file));
    let dir = bin_dir();
    let from_python = dir.join("estimate_python.json");
    let from_rust = dir.join("estimate_rust.json");
    std::fs::write(&from_python, &output.stdout).unwrap();
    let (scores, labels) = read_csv(&file);
    std::fs::write(&from_rust, rust_estimate_json(&scores, &labels, 15)).unwrap();
    // Bit for bit (--rel 0): the same library computes both.
    run(Command::new(&python)
        .current_dir(root())
        .arg("examples/compare_estimates.py")
        .args([&from_rust, &from_python])
        .args(["--rel", "0"]));
    // The same numbers as the CLI's `tce estimate --json` (the mean confidence is summed
    // in another order there: exact fixed point vs Python's float sum, hence 1e-12).
    let from_cli = dir.join("estimate_cli.json");
    let cli = run(Command::new(tce_cli())
        .args(["estimate", "--json"])
        .arg(&file));
    std::fs::write(&from_cli, &cli.stdout).unwrap();
    run(Command::new(&python)
        .current_dir(root())
        .arg("examples/compare_estimates.py")
        .args([&from_cli, &from_python])
        .args(["--rel", "1e-12"]));
    // And the comparer does see a difference.
    let mut altered = rust_estimate_json(&scores, &labels, 15);
    altered = altered.replacen("\"bins\": 15", "\"bins\": 14", 1);
    std::fs::write(&from_rust, altered).unwrap();
    let status = Command::new(&python)
        .current_dir(root())
        .arg("examples/compare_estimates.py")
        .args([&from_rust, &from_python])
        .output()
        .unwrap();
    assert!(
        !status.status.success(),
        "compare_estimates.py missed a difference"
    );
}

/// `readelf -d`: the dynamic section of `file`.
fn dynamic_section(file: &Path) -> String {
    require("readelf");
    stdout(&run(Command::new("readelf").arg("-d").arg(file)))
}

#[test]
fn install_then_build_examples_with_cmake_and_pkg_config() {
    require("cmake");
    require("pkg-config");
    require("gcc");
    let work = ffi_target().join("install-test");
    let _ = std::fs::remove_dir_all(&work);
    let prefix = work.join("prefix");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    run(Command::new("sh")
        .current_dir(root())
        .arg("scripts/install.sh")
        .arg(&prefix)
        .env("CARGO", cargo)
        .env("CARGO_TARGET_DIR", ffi_target())
        .env_remove("RUSTFLAGS"));
    let version = env!("CARGO_PKG_VERSION");
    let lib = prefix.join("lib");
    for file in [
        "include/tce.h".to_string(),
        "lib/libtce.a".to_string(),
        format!("lib/libtce.so.{version}"),
        "lib/pkgconfig/tce.pc".to_string(),
        "lib/cmake/tce/tceConfig.cmake".to_string(),
    ] {
        assert!(prefix.join(&file).is_file(), "{file} not installed");
    }
    // The versioned file, named by its SONAME and by what `-ltce` finds.
    assert_eq!(
        std::fs::read_link(lib.join("libtce.so.0")).unwrap(),
        Path::new(&format!("libtce.so.{version}"))
    );
    assert_eq!(
        std::fs::read_link(lib.join("libtce.so")).unwrap(),
        Path::new("libtce.so.0")
    );
    let section = dynamic_section(&lib.join(format!("libtce.so.{version}")));
    assert!(
        section.contains("Library soname: [libtce.so.0]"),
        "{section}"
    );
    // Built without debug info (profile dist, the archive's debug sections stripped): about
    // 3 MB and 0.4 MB with Rust 1.95 on x86_64, where the release profile's line tables
    // made them about 30 MB and 8 MB.
    let size = |file: &str| std::fs::metadata(lib.join(file)).unwrap().len();
    assert!(
        size("libtce.a") < 6 << 20,
        "libtce.a: {} bytes",
        size("libtce.a")
    );
    let shared_size = size(&format!("libtce.so.{version}"));
    assert!(shared_size < 1 << 20, "libtce.so: {shared_size} bytes");

    // CMake: find_package(tce) and the imported targets.
    let build = work.join("cmake-build");
    run(Command::new("cmake")
        .current_dir(root())
        .args(["-S", "examples/cmake", "-B"])
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .arg("-DCMAKE_C_FLAGS=-Wall -Wextra -Wpedantic -Werror")
        .arg("-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror"));
    run(Command::new("cmake").arg("--build").arg(&build));
    let data = root().join("data/resnet110_c10_test.csv");
    let out = stdout(&run(Command::new(build.join("estimate")).arg(&data)));
    assert!(out.contains("ece_sweep"), "{out}");
    assert!(stdout(&run(&mut Command::new(build.join("monitor")))).contains("report 5"));
    assert!(stdout(&run(&mut Command::new(build.join("monitor_shared")))).contains("report 5"));

    // pkg-config, and every program runs without LD_LIBRARY_PATH.
    let pc_path = prefix.join("lib/pkgconfig");
    let flags = |args: &[&str]| -> Vec<String> {
        let out = run(Command::new("pkg-config")
            .args(args)
            .arg("tce")
            .env("PKG_CONFIG_PATH", &pc_path));
        stdout(&out).split_whitespace().map(String::from).collect()
    };
    assert_eq!(flags(&["--modversion"]), [version]);
    let link_and_run = |name: &str, before: &[String], after: &[String]| -> String {
        let program = work.join(name);
        run(Command::new("gcc")
            .current_dir(root())
            .args(before)
            .args(["-std=c11", "examples/monitor.c", "-o"])
            .arg(&program)
            .args(after));
        let out = stdout(&run(Command::new(&program).env_remove("LD_LIBRARY_PATH")));
        assert!(out.contains("report 5"), "{name}: {out}");
        dynamic_section(&program)
    };
    // Shared, with the rpath the docs show for a prefix outside the loader's paths.
    let mut shared_flags = flags(&["--cflags", "--libs"]);
    shared_flags.push(format!("-Wl,-rpath,{}", lib.display()));
    shared_flags.push("-pthread".into());
    let section = link_and_run("monitor_pkg_config", &[], &shared_flags);
    assert!(
        section.contains("Shared library: [libtce.so.0]"),
        "{section}"
    );
    assert!(
        section.contains(&format!("runpath: [{}]", lib.display())),
        "{section}"
    );
    // Static: `pkg-config --static` with `-static` links the archive (and the C library).
    let section = link_and_run(
        "monitor_pkg_config_static",
        &["-static".into()],
        &flags(&["--static", "--cflags", "--libs"]),
    );
    assert!(!section.contains("libtce"), "{section}");
    // The archive in a program that links the C library dynamically: the archive by
    // name, then Libs.private.
    let mut archive_flags = vec![lib.join("libtce.a").display().to_string()];
    archive_flags.extend(
        flags(&["--static", "--cflags", "--libs"])
            .into_iter()
            .filter(|f| f != "-ltce"),
    );
    let section = link_and_run("monitor_archive", &[], &archive_flags);
    assert!(!section.contains("libtce"), "{section}");
}

/// The bare-metal build of the C ABI: no `std`, a halting panic handler, a staticlib for
/// a Cortex-M4F (the target must be installed: `rustup target add thumbv7em-none-eabihf`).
/// `--crate-type staticlib` only drops the cdylib, which the target cannot have (`cargo
/// build` would drop it too, with a warning).
#[test]
fn bare_metal_staticlib_builds_without_std() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target_dir = ffi_target().join("bare-metal");
    run(Command::new(cargo)
        .current_dir(root())
        .args([
            "rustc",
            "-p",
            "tce-capi",
            "--no-default-features",
            "--features",
            "panic-handler",
        ])
        .args([
            "--target",
            "thumbv7em-none-eabihf",
            "--crate-type",
            "staticlib",
            "--target-dir",
        ])
        .arg(&target_dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS"));
    let lib = target_dir.join("thumbv7em-none-eabihf/debug/libtce.a");
    assert!(lib.is_file(), "{} not built", lib.display());
    // Every function but the heap's (`_new`, `_free`), the threads' (`_parallel`), the
    // weighted one-call functions (`_weighted`: std's `tce::weights`) and the concurrent
    // histogram's (the target has no 64-bit atomics).
    let defined = defined_functions(&lib, false);
    let missing: Vec<_> = header_functions()
        .into_iter()
        .filter(|f| !f.ends_with("_new") && !f.ends_with("_free"))
        .filter(|f| !f.ends_with("_parallel") && !f.ends_with("_weighted"))
        .filter(|f| !f.starts_with("tce_concurrent_"))
        .filter(|f| !defined.contains(f))
        .collect();
    assert!(
        missing.is_empty(),
        "not in the bare-metal libtce.a: {missing:?}"
    );
    assert!(!defined.contains("tce_ew_histogram_new"));
    assert!(!defined.contains("tce_ece_bin_weighted"));
}
