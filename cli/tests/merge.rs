//! `tce merge`, end to end: state files written by the library (and by the C library, the
//! committed frames of python/tests/c_frames/) merged and estimated, against
//! `tce estimate` over the raw data concatenated; kinds that do not mix, bad files named
//! in an exit-2 error or skipped and reported under `--skip-bad`.

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;
use tce::{
    BinStats, Closure, DecayedBin, DecayingHistogram, Histogram, Reservoir, SlidingWindow, Slot,
    SortedBuffer,
};

mod common;
use common::{bounded_sh, exits, json, load, tce, tce_bounded, TempDir, DATA};

const C_FRAMES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../python/tests/c_frames");

/// The stderr of a merge refused as bad input (exit 2).
fn failure(output: &Output) -> String {
    exits(output, 2, "merge")
}

fn histogram_bytes(scores: &[f64], labels: &[u8], bins: usize) -> Vec<u8> {
    let mut h =
        Histogram::with_boxed_storage(vec![BinStats::EMPTY; bins].into(), Closure::Left).unwrap();
    h.push_batch(scores, labels).unwrap();
    let mut out = vec![0; h.encoded_len()];
    h.encode(&mut out).unwrap();
    out
}

fn reservoir_bytes(scores: &[f64], labels: &[u8], capacity: usize, seed: u64) -> Vec<u8> {
    let mut r = Reservoir::with_boxed_storage(vec![Slot::EMPTY; capacity].into(), seed).unwrap();
    r.push_batch(scores, labels).unwrap();
    let mut out = vec![0; r.encoded_len()];
    r.encode(&mut out).unwrap();
    out
}

fn buffer_bytes(scores: &[f64], labels: &[u8]) -> Vec<u8> {
    let mut b = SortedBuffer::with_boxed_storage(vec![Slot::EMPTY; scores.len()].into()).unwrap();
    b.push_batch(scores, labels).unwrap();
    let mut out = vec![0; b.encoded_len()];
    b.encode(&mut out).unwrap();
    out
}

fn window_bytes(scores: &[f64], labels: &[u8], size: usize) -> Vec<u8> {
    let mut w =
        SlidingWindow::with_boxed_storage(vec![Slot::EMPTY; size].into(), vec![0.0; size].into())
            .unwrap();
    w.push_batch(scores, labels).unwrap();
    let mut out = vec![0; w.encoded_len()];
    w.encode(&mut out).unwrap();
    out
}

/// The data split in three unequal parts, one state file each.
fn split_files(
    dir: &TempDir,
    prefix: &str,
    scores: &[f64],
    labels: &[u8],
    encode: impl Fn(&[f64], &[u8], usize) -> Vec<u8>,
) -> Vec<PathBuf> {
    let cuts = [0, scores.len() / 5, scores.len() / 2, scores.len()];
    (0..3)
        .map(|i| {
            let (a, b) = (cuts[i], cuts[i + 1]);
            dir.file(
                &format!("{prefix}{i}.tce"),
                encode(&scores[a..b], &labels[a..b], i),
            )
        })
        .collect()
}

fn rows(report: &Value) -> Vec<(String, String, u64, f64)> {
    report["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["binning"].is_string())
        .map(|r| {
            (
                r["estimator"].as_str().unwrap().to_owned(),
                r["binning"].as_str().unwrap().to_owned(),
                r["bins"].as_u64().unwrap(),
                r["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn merged_histograms_equal_the_estimate_over_the_concatenated_data() {
    let dir = TempDir::new("hist");
    let file = "resnet110_c10_test.csv";
    let (scores, labels) = load(file);
    let files = split_files(&dir, "h", &scores, &labels, |s, l, _| {
        histogram_bytes(s, l, 15)
    });
    for norm in ["1", "2"] {
        let mut args: Vec<String> = vec!["merge".into(), "--json".into(), "--norm".into()];
        args.push(norm.into());
        args.extend(files.iter().map(|p| p.display().to_string()));
        let merged = json(&tce(&args));
        let whole = json(&tce(&[
            "estimate",
            "--json",
            "--norm",
            norm,
            &format!("{DATA}/{file}"),
        ]));
        assert_eq!(merged["command"], "merge");
        assert_eq!(merged["kind"], "histogram");
        assert_eq!(merged["states"], 3);
        assert_eq!(merged["n"], whole["n"]);
        assert_eq!(merged["seen"], whole["n"]);
        assert_eq!(merged["accuracy"], whole["accuracy"]);
        assert_eq!(merged["histogram_bins"], 15);
        let got = rows(&merged);
        assert_eq!(got.len(), 3, "{merged}");
        let want = rows(&whole);
        for row in &got {
            assert_eq!(row.1, "equal_width");
            // Bit for bit: the same bins, so the same f64.
            assert!(want.contains(row), "{row:?} not in {want:?}");
        }
    }
    // The table says what was merged.
    let mut args = vec!["merge".to_owned()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    let table = String::from_utf8(tce(&args).stdout).unwrap();
    assert!(
        table.starts_with("merged           3 histogram states\n"),
        "{table}"
    );
    assert!(table.contains("ece_bin     equal_width     15"), "{table}");
}

#[test]
fn merged_sample_states_equal_the_estimate_over_the_concatenated_data() {
    let dir = TempDir::new("samples");
    let file = "resnet50_birds_test.csv";
    let (scores, labels) = load(file);
    let whole = json(&tce(&["estimate", "--json", &format!("{DATA}/{file}")]));
    let n = scores.len();
    // Buffers append; reservoirs large enough to hold every sample keep them all.
    for (kind, files) in [
        (
            "buffer",
            split_files(&dir, "b", &scores, &labels, |s, l, _| buffer_bytes(s, l)),
        ),
        (
            "reservoir",
            split_files(&dir, "r", &scores, &labels, |s, l, i| {
                reservoir_bytes(s, l, n, i as u64)
            }),
        ),
    ] {
        let mut args = vec!["merge".to_owned(), "--json".to_owned()];
        args.extend(files.iter().map(|p| p.display().to_string()));
        let merged = json(&tce(&args));
        assert_eq!(merged["kind"], kind);
        assert_eq!(merged["n"], whole["n"]);
        assert_eq!(merged["seen"], whole["n"]);
        assert_eq!(rows(&merged), rows(&whole), "{kind}");
    }
    // A bounded reservoir: a sample of `capacity` of the n seen.
    let files = split_files(&dir, "small", &scores, &labels, |s, l, i| {
        reservoir_bytes(s, l, 500, i as u64)
    });
    let mut args = vec!["merge".to_owned(), "--json".to_owned()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    let merged = json(&tce(&args));
    assert_eq!(merged["n"], 500);
    assert_eq!(merged["seen"], n);
    let mut args = vec!["merge".to_owned()];
    args.extend(files.iter().map(|p| p.display().to_string()));
    let table = String::from_utf8(tce(&args).stdout).unwrap();
    assert!(
        table.contains(&format!(
            "seen             {n} (the estimates are over the n held)"
        )),
        "{table}"
    );
}

#[test]
fn kinds_and_shapes_that_do_not_merge_are_named() {
    let dir = TempDir::new("mixed");
    let (scores, labels) = load("resnet50_birds_test.csv");
    let (s, l) = (&scores[..100], &labels[..100]);
    let h15 = dir.file("h15.tce", histogram_bytes(s, l, 15));
    let h10 = dir.file("h10.tce", histogram_bytes(s, l, 10));
    let r = dir.file("r.tce", reservoir_bytes(s, l, 50, 1));
    let r2 = dir.file("r2.tce", reservoir_bytes(s, l, 60, 1));
    let w = dir.file("w.tce", window_bytes(s, l, 40));
    let error = failure(&tce(&["merge".as_ref(), h15.as_os_str(), r.as_os_str()]));
    assert!(
        error.contains(&format!(
            "{}: cannot merge into {}: a reservoir state, and {} holds a histogram state",
            r.display(),
            h15.display(),
            h15.display()
        )),
        "{error}"
    );
    let error = failure(&tce(&["merge".as_ref(), h15.as_os_str(), h10.as_os_str()]));
    assert!(
        error.contains(&h10.display().to_string()) && error.contains("bin"),
        "{error}"
    );
    let error = failure(&tce(&["merge".as_ref(), r.as_os_str(), r2.as_os_str()]));
    assert!(
        error.contains(&r2.display().to_string()) && error.contains("capacit"),
        "{error}"
    );
    // Mismatches are errors under --skip-bad too: they are not corrupted transfers.
    let error = failure(&tce(&[
        "merge".as_ref(),
        "--skip-bad".as_ref(),
        h15.as_os_str(),
        r.as_os_str(),
    ]));
    assert!(error.contains("do not merge"), "{error}");
    // One window is estimated alone.
    let one = json(&tce(&["merge".as_ref(), "--json".as_ref(), w.as_os_str()]));
    assert_eq!(
        (one["kind"].as_str(), one["n"].as_u64()),
        (Some("window"), Some(40))
    );
    assert_eq!(one["seen"], 100);
    // Decaying histograms of other half-lives do not merge.
    let d1 = dir.file("d1.tce", decaying_bytes(s, l, 50.0));
    let d2 = dir.file("d2.tce", decaying_bytes(s, l, 80.0));
    let error = failure(&tce(&["merge".as_ref(), d1.as_os_str(), d2.as_os_str()]));
    assert!(
        error.contains(&d2.display().to_string()) && error.contains("different half-lives"),
        "{error}"
    );
    // A calibration alarm's CUSUMs depend on the order of its samples: no merge, even of
    // one file, and the message says why.
    let mut alarm =
        tce::InlineAlarm::<10>::new(Closure::Left, core::f64::consts::LN_2, 5.0).unwrap();
    alarm.push_batch(s, l).unwrap();
    let mut alarm_frame = vec![0; alarm.encoded_len()];
    alarm.encode(&mut alarm_frame).unwrap();
    let a = dir.file("a.tce", alarm_frame);
    let error = failure(&tce(&["merge".as_ref(), a.as_os_str()]));
    assert!(
        error.contains(&a.display().to_string())
            && error.contains("calibration alarms do not merge"),
        "{error}"
    );
}

fn decaying_bytes(scores: &[f64], labels: &[u8], half_life: f64) -> Vec<u8> {
    let mut d = decaying(half_life);
    d.push_batch(scores, labels).unwrap();
    let mut out = vec![0; d.encoded_len()];
    d.encode(&mut out).unwrap();
    out
}

fn decaying(half_life: f64) -> tce::BoxedDecayingHistogram {
    DecayingHistogram::with_boxed_storage(
        vec![DecayedBin::EMPTY; 15].into(),
        Closure::Left,
        half_life,
    )
    .unwrap()
}

/// The merged JSON without what names the inputs (the files and how many there were).
fn estimates_of(mut merged: Value) -> Value {
    let object = merged.as_object_mut().unwrap();
    object.remove("settings");
    object.remove("states");
    merged
}

#[test]
fn windows_merge_as_the_later_files_pushed_after_the_earlier() {
    let dir = TempDir::new("windows");
    let (scores, labels) = load("resnet50_birds_test.csv");
    // The first window holds samples 30..70, the second 70..90 (not full): merged, the
    // window of 40 holds 50..90, as one window that saw 0..90.
    let first = dir.file("a.tce", window_bytes(&scores[..70], &labels[..70], 40));
    let second = dir.file("b.tce", window_bytes(&scores[70..90], &labels[70..90], 40));
    let whole = dir.file("all.tce", window_bytes(&scores[..90], &labels[..90], 40));
    let merged = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        first.as_os_str(),
        second.as_os_str(),
    ]));
    let alone = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        whole.as_os_str(),
    ]));
    assert_eq!(
        (merged["n"].as_u64(), merged["seen"].as_u64()),
        (Some(40), Some(90))
    );
    assert_eq!(estimates_of(merged), estimates_of(alone));
    // The order of the files matters: the other way round, the window holds 10 of the
    // second file's samples and the first file's 30 after them.
    let reversed = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        second.as_os_str(),
        first.as_os_str(),
    ]));
    let mut expected =
        SlidingWindow::with_boxed_storage(vec![Slot::EMPTY; 40].into(), vec![0.0; 40].into())
            .unwrap();
    expected
        .push_batch(&scores[70..90], &labels[70..90])
        .unwrap();
    expected
        .push_batch(&scores[30..70], &labels[30..70])
        .unwrap();
    let mut bytes = vec![0; expected.encoded_len()];
    expected.encode(&mut bytes).unwrap();
    let expected = dir.file("expected.tce", bytes);
    let expected = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        expected.as_os_str(),
    ]));
    assert_eq!(estimates_of(reversed), estimates_of(expected));
}

#[test]
fn decaying_histograms_merge_as_the_core_merges_them() {
    let dir = TempDir::new("decaying");
    let (scores, labels) = load("resnet50_birds_test.csv");
    let (a, b) = (&scores[..300], &scores[300..500]);
    let (la, lb) = (&labels[..300], &labels[300..500]);
    let first = dir.file("a.tce", decaying_bytes(a, la, 100.0));
    let second = dir.file("b.tce", decaying_bytes(b, lb, 100.0));
    let merged = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        first.as_os_str(),
        second.as_os_str(),
    ]));
    // The core's merge, encoded: the CLI computes nothing of its own.
    let mut expected = decaying(100.0);
    expected.push_batch(a, la).unwrap();
    let mut other = decaying(100.0);
    other.push_batch(b, lb).unwrap();
    expected.merge(&other).unwrap();
    let mut bytes = vec![0; expected.encoded_len()];
    expected.encode(&mut bytes).unwrap();
    let expected = dir.file("expected.tce", bytes);
    let expected = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        expected.as_os_str(),
    ]));
    assert_eq!(merged["kind"], "decaying_histogram");
    assert_eq!(estimates_of(merged.clone()), estimates_of(expected));
    // Commutative: the same estimates either way round.
    let swapped = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        second.as_os_str(),
        first.as_os_str(),
    ]));
    assert_eq!(
        estimates_of(swapped)["estimates"],
        estimates_of(merged)["estimates"]
    );
}

#[test]
fn bad_files_fail_naming_them_or_are_skipped_and_reported() {
    let dir = TempDir::new("bad");
    let (scores, labels) = load("resnet50_birds_test.csv");
    let good = histogram_bytes(&scores[..1000], &labels[..1000], 15);
    let other = histogram_bytes(&scores[1000..], &labels[1000..], 15);
    let mut corrupted = other.clone();
    corrupted[40] ^= 0x10;
    let a = dir.file("a.tce", &good);
    let b = dir.file("b.tce", &corrupted);
    let c = dir.file("c.tce", b"not a state at all");
    let d = dir.file("d.tce", &good[..good.len() - 1]);
    let missing = dir.path().join("missing.tce");
    for (bad, why) in [
        (&b, "checksum"),
        (&c, "bad magic"),
        (&d, "truncated"),
        (&missing, "cannot read it"),
    ] {
        let error = failure(&tce(&["merge".as_ref(), a.as_os_str(), bad.as_os_str()]));
        assert!(
            error.contains(&format!("tce: error: {}: ", bad.display())) && error.contains(why),
            "{error}"
        );
        assert!(error.contains("--skip-bad"), "{error}");
    }
    let out = tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        "--skip-bad".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
        c.as_os_str(),
        missing.as_os_str(),
    ]);
    let merged = json(&out);
    assert_eq!(merged["states"], 1);
    let skipped = merged["skipped"].as_array().unwrap();
    let names: Vec<&str> = skipped
        .iter()
        .map(|s| s["file"].as_str().unwrap())
        .collect();
    let expected = [&b, &c, &missing].map(|p| p.display().to_string());
    assert_eq!(
        names,
        expected.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert!(skipped[0]["error"]
        .as_str()
        .unwrap()
        .contains("checksum mismatch"));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("tce: skipping {}: ", b.display())),
        "{stderr}"
    );
    // The estimates are those of the one good file.
    let alone = json(&tce(&["merge".as_ref(), "--json".as_ref(), a.as_os_str()]));
    assert_eq!(merged["estimates"], alone["estimates"]);
    // Nothing valid at all is an error.
    let error = failure(&tce(&[
        "merge".as_ref(),
        "--skip-bad".as_ref(),
        b.as_os_str(),
        c.as_os_str(),
    ]));
    assert!(
        error.contains("none of the 2 files holds a valid state"),
        "{error}"
    );
}

#[test]
fn frames_written_by_the_c_library_decode() {
    for (file, kind) in [
        ("histogram.bin", "histogram"),
        ("buffer.bin", "buffer"),
        ("reservoir.bin", "reservoir"),
        ("window.bin", "window"),
        ("decaying.bin", "decaying_histogram"),
    ] {
        let path = format!("{C_FRAMES}/{file}");
        let merged = json(&tce(&["merge", "--json", &path]));
        assert_eq!(merged["kind"], kind, "{file}");
        assert!(merged["n"].as_u64().unwrap() > 0, "{file}: {merged}");
        assert!(!rows(&merged).is_empty());
    }
    // Two C histograms merge (the same frame twice: every count doubles).
    let path = format!("{C_FRAMES}/histogram.bin");
    let one = json(&tce(&["merge", "--json", &path]));
    let two = json(&tce(&["merge", "--json", &path, &path]));
    assert_eq!(two["n"].as_u64(), one["n"].as_u64().map(|n| 2 * n));
    assert_eq!(two["estimates"][0]["value"], one["estimates"][0]["value"]);
}

/// What a merge may use of memory and time on input that is not a state: far below what
/// reading `/dev/zero` to its end, or an endless stream after a frame, would take.
const MEMORY_MIB: u64 = 512;
const SECONDS: u64 = 20;

#[test]
fn bytes_that_are_not_a_state_are_refused_at_their_header() {
    // /dev/zero never ends: a merge that reads a whole file first never gets to its
    // header (it grew to 9 GB), under --skip-bad too.
    let error = failure(&tce_bounded(&["merge", "/dev/zero"], MEMORY_MIB, SECONDS));
    assert!(
        error.contains("tce: error: /dev/zero: not a tce state (bad magic number)"),
        "{error}"
    );
    let output = tce_bounded(
        &["merge", "--skip-bad", "/dev/zero", "/dev/zero"],
        MEMORY_MIB,
        SECONDS,
    );
    let error = failure(&output);
    assert_eq!(
        error
            .matches("tce: skipping /dev/zero: not a tce state (bad magic number)")
            .count(),
        2,
        "{error}"
    );
    assert!(
        error.contains("none of the 2 files holds a valid state"),
        "{error}"
    );
}

#[test]
fn a_frame_is_read_no_further_than_its_header_declares() {
    // A valid frame's header and payload (3.2 MB: 100 000 bins) without its checksum,
    // then endless zeros: the read stops once the declared length is there, and the
    // frame is refused (the zeros after the payload are no checksum of it, and bytes
    // after the trailer are not part of a state).
    let dir = TempDir::new("endless");
    let (scores, labels) = load("resnet50_birds_test.csv");
    let frame = histogram_bytes(&scores, &labels, 100_000);
    let start = dir.file("start.bin", &frame[..frame.len() - 4]);
    let start = start.to_str().unwrap();
    let output = bounded_sh(
        r#"cat "$1" /dev/zero | "$TCE" merge /dev/stdin"#,
        &[start],
        MEMORY_MIB,
        SECONDS,
    )
    .expect("tce merge stops reading after the declared length");
    let error = failure(&output);
    assert!(
        error.contains("tce: error: /dev/stdin: state checksum mismatch")
            || error.contains("tce: error: /dev/stdin: state contents are inconsistent"),
        "{error}"
    );
    // The same bytes with their own checksum and nothing after them merge.
    let whole = dir.file("whole.tce", &frame);
    let merged = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        whole.as_os_str(),
    ]));
    assert_eq!(merged["n"], scores.len());
    assert_eq!(merged["histogram_bins"], 100_000);
}

fn empty_frames() -> Vec<(&'static str, Vec<u8>)> {
    let none: (&[f64], &[u8]) = (&[], &[]);
    vec![
        ("histogram", histogram_bytes(none.0, none.1, 15)),
        ("buffer", {
            let mut b = SortedBuffer::with_boxed_storage(vec![Slot::EMPTY; 8].into()).unwrap();
            let mut out = vec![0; b.encoded_len()];
            b.encode(&mut out).unwrap();
            out
        }),
        ("reservoir", reservoir_bytes(none.0, none.1, 50, 1)),
        ("window", window_bytes(none.0, none.1, 50)),
        ("decaying_histogram", decaying_bytes(none.0, none.1, 100.0)),
    ]
}

#[test]
fn states_without_samples_merge_to_n_0_without_estimates() {
    // A fleet at start-up: every device's state is valid and empty.
    let dir = TempDir::new("empty");
    for (kind, bytes) in empty_frames() {
        let a = dir.file(&format!("{kind}-a.tce"), &bytes);
        let b = dir.file(&format!("{kind}-b.tce"), &bytes);
        let args = ["merge".as_ref(), a.as_os_str(), b.as_os_str()];
        let merged = json(&tce(&[&args[..], &["--json".as_ref()]].concat()));
        assert_eq!(merged["kind"], kind, "{merged}");
        assert_eq!(merged["states"], 2, "{kind}");
        assert_eq!(merged["n"], 0, "{kind}");
        assert_eq!(merged["seen"], 0, "{kind}");
        assert_eq!(merged["accuracy"], Value::Null, "{kind}");
        assert_eq!(merged["mean_confidence"], Value::Null, "{kind}");
        assert_eq!(merged["estimates"], serde_json::json!([]), "{kind}");
        assert_eq!(
            merged["estimates_unavailable"], "the merged state holds no samples",
            "{kind}"
        );
        let text = common::stdout(&tce(&args));
        assert!(
            text.starts_with(&format!("merged           2 {kind} states\n")),
            "{text}"
        );
        assert!(text.contains("\nn                0\n"), "{text}");
        assert!(
            text.ends_with("\nno estimates: the merged state holds no samples\n"),
            "{text}"
        );
    }
    // An empty state merged with one that holds samples changes nothing.
    let (scores, labels) = load("resnet50_birds_test.csv");
    let full = dir.file("full.tce", histogram_bytes(&scores, &labels, 15));
    let empty = dir.path().join("histogram-a.tce");
    let alone = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        full.as_os_str(),
    ]));
    let with_empty = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        empty.as_os_str(),
        full.as_os_str(),
    ]));
    assert_eq!(with_empty["n"], scores.len());
    assert_eq!(with_empty["estimates"], alone["estimates"]);
    assert!(with_empty.get("estimates_unavailable").is_none());
}

/// Issue 35: a histogram frame whose contents cannot come from samples, re-signed so
/// that its checksum holds (bin 0 of 2, [0, 0.5), with a mean score of 0.9), is refused
/// as impossible, named, and skipped under `--skip-bad`; the merge never uses it.
#[test]
fn a_resigned_frame_with_a_mean_score_outside_its_bin_is_refused() {
    let dir = TempDir::new("impossible_bin");
    let good = histogram_bytes(&[0.1, 0.3, 0.7], &[0, 1, 1], 2);
    let mut forged = good.clone();
    // Bin 0 (2 samples) after the 12-byte header and 8 bytes of closure and bin count:
    // count, hits, then the score sum in units of 2^-64 (low word, high word).
    let sum = (1.8 * 2f64.powi(64)) as u128;
    forged[36..44].copy_from_slice(&(sum as u64).to_le_bytes());
    forged[44..52].copy_from_slice(&((sum >> 64) as u64).to_le_bytes());
    let body = forged.len() - 4;
    let crc = tce::portable::crc32(&forged[..body]);
    forged[body..].copy_from_slice(&crc.to_le_bytes());
    let (a, b) = (dir.file("a.tce", &good), dir.file("b.tce", &forged));
    let error = failure(&tce(&["merge".as_ref(), a.as_os_str(), b.as_os_str()]));
    assert!(
        error.contains(&format!("{}: ", b.display())) && error.contains("inconsistent"),
        "{error}"
    );
    let merged = json(&tce(&[
        "merge".as_ref(),
        "--json".as_ref(),
        "--skip-bad".as_ref(),
        a.as_os_str(),
        b.as_os_str(),
    ]));
    assert_eq!(
        (merged["states"].as_u64(), merged["n"].as_u64()),
        (Some(1), Some(3))
    );
}
