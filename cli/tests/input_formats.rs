//! `tce estimate` on every input form of the input layer (cli/src/input/): class
//! probabilities and logits in CSV (columns by list and by glob, from a file and from
//! stdin) and in `.npy` arrays (float32/float64, C and Fortran order, every integer
//! label dtype, both byte orders), top-label and classwise, each checked against the
//! (confidence, correct) CSV that the reduction should produce; and every bad input,
//! each refused with exit 2 and a message naming the line or index.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{json, refused, scratch, tce, tce_stdin, write};

/// A `.npy` file (format 1.0) of `data`, already in the byte order `descr` says.
fn npy(descr: &str, shape: &[usize], fortran: bool, data: &[u8]) -> Vec<u8> {
    let shape = match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(usize::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let order = if fortran { "True" } else { "False" };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': {order}, 'shape': {shape}, }}");
    // NumPy pads the header with spaces and a newline to a multiple of 64 bytes.
    let pad = (64 - (10 + header.len() + 1) % 64) % 64;
    header.push_str(&" ".repeat(pad));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

fn f64_bytes(values: &[f64], big: bool) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| {
            if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            }
        })
        .collect()
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Integers as `size`-byte two's complement, little- or big-endian.
fn int_bytes(values: &[i64], size: usize, big: bool) -> Vec<u8> {
    values
        .iter()
        .flat_map(|v| {
            let le = v.to_le_bytes();
            let mut b = le[..size].to_vec();
            if big {
                b.reverse();
            }
            b
        })
        .collect()
}

/// A deterministic table of `n` rows of `k` probabilities (each row normalised in
/// f64), true classes, and logits whose softmax is close to the probabilities.
struct Table {
    k: usize,
    probs: Vec<f64>,
    logits: Vec<f64>,
    labels: Vec<i64>,
}

fn table(n: usize, k: usize) -> Table {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut probs, mut logits, mut labels) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        let row: Vec<f64> = (0..k)
            .map(|j| 0.05 + next() * if j == 0 { 3.0 } else { 1.0 })
            .collect();
        let sum: f64 = row.iter().sum();
        probs.extend(row.iter().map(|p| p / sum));
        logits.extend(row.iter().map(|p| (p / sum).ln() * 1.5));
        // The true class is mostly the first (the likeliest).
        let u = next();
        labels.push(if u < 0.6 {
            0
        } else {
            ((u * 1000.0) as i64) % k as i64
        });
    }
    Table {
        k,
        probs,
        logits,
        labels,
    }
}

impl Table {
    fn rows(&self) -> usize {
        self.labels.len()
    }

    fn row(&self, i: usize, logits: bool) -> &[f64] {
        let values = if logits { &self.logits } else { &self.probs };
        &values[i * self.k..(i + 1) * self.k]
    }

    /// The CSV of class columns `p0..`, an `id` column and `label`.
    fn class_csv(&self, logits: bool) -> String {
        let mut out = String::from("id,");
        for j in 0..self.k {
            out += &format!("p{j},");
        }
        out += "label\n";
        for i in 0..self.rows() {
            out += &format!("r{i},");
            for v in self.row(i, logits) {
                out += &format!("{v},");
            }
            out += &format!("{}\n", self.labels[i]);
        }
        out
    }

    /// The (confidence, correct) CSV of the top-label reduction (SPEC §1): the first
    /// largest probability, softmax in f64 with the maximum subtracted for logits.
    fn top_label_csv(&self, logits: bool) -> String {
        let mut out = String::from("confidence,correct\n");
        for i in 0..self.rows() {
            let row = self.row(i, logits);
            let mut best = 0;
            for j in 1..self.k {
                if row[j] > row[best] {
                    best = j;
                }
            }
            let score = if logits {
                1.0 / row.iter().map(|z| (z - row[best]).exp()).sum::<f64>()
            } else {
                row[best]
            };
            out += &format!("{score},{}\n", u8::from(best as i64 == self.labels[i]));
        }
        out
    }

    /// The one-vs-rest (confidence, correct) CSV of class `class`.
    fn class_column_csv(&self, class: usize) -> String {
        let mut out = String::from("confidence,correct\n");
        for i in 0..self.rows() {
            let p = self.row(i, false)[class];
            out += &format!("{p},{}\n", u8::from(self.labels[i] == class as i64));
        }
        out
    }
}

/// (estimator, binning, bins, value) of every row; smooth ECE has neither binning nor
/// bins ("-" and 0 here).
fn estimates(report: &Value) -> Vec<(String, String, u64, f64)> {
    report["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["estimator"].as_str().unwrap().to_owned(),
                r["binning"].as_str().unwrap_or("-").to_owned(),
                r["bins"].as_u64().unwrap_or(0),
                r["value"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The estimates agree: the same bins, values within `tolerance`.
fn assert_same(a: &Value, b: &Value, tolerance: f64, what: &str) {
    let (a, b) = (estimates(a), estimates(b));
    assert_eq!(a.len(), 9, "{what}"); // eight binned estimates and smooth ECE
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((&x.0, &x.1, x.2), (&y.0, &y.1, y.2), "{what}");
        assert!((x.3 - y.3).abs() <= tolerance, "{what}: {x:?} vs {y:?}");
    }
}

#[test]
fn class_csv_reduces_like_the_top_label_csv() {
    let dir = scratch("class-csv");
    let t = table(300, 4);
    let reference = write(&dir, "top.csv", t.top_label_csv(false).as_bytes());
    let reference = json(&tce(&["estimate", &reference, "--json"]));
    let classes = write(&dir, "classes.csv", t.class_csv(false).as_bytes());
    for cols in ["p0,p1,p2,p3", "p*", "p?"] {
        let report = json(&tce(&["estimate", &classes, "--prob-cols", cols, "--json"]));
        assert_same(&report, &reference, 0.0, cols);
        assert_eq!(report["n"], 300);
        let input = &report["settings"]["input"];
        assert_eq!(input["format"], "csv");
        assert_eq!(input["values"], "probabilities");
        assert_eq!(input["reduction"], "top_label");
        assert_eq!(input["classes"], 4);
        assert_eq!(input["prob_cols"], cols);
        assert_eq!(
            report["settings"]["columns"]["probs"],
            serde_json::json!(["p0", "p1", "p2", "p3"])
        );
        assert_eq!(report["settings"]["columns"]["label"], "label");
    }
    // From stdin, the same.
    let from_stdin = json(&tce_stdin(
        &["estimate", "-", "--prob-cols", "p*", "--json"],
        t.class_csv(false).as_bytes(),
    ));
    assert_same(&from_stdin, &reference, 0.0, "stdin");
    // A label column of another name, matched without regard to case (with a note).
    let renamed = t.class_csv(false).replacen(",label\n", ",Truth\n", 1);
    let output = tce_stdin(
        &[
            "estimate",
            "-",
            "--prob-cols",
            "p*",
            "--label-col",
            "truth",
            "--json",
        ],
        renamed.as_bytes(),
    );
    assert!(String::from_utf8_lossy(&output.stderr).contains("using column `Truth`"));
    assert_same(&json(&output), &reference, 0.0, "renamed label");

    // Logits: the softmax in f64 (the test's `exp` may differ from the library's in the
    // last bit).
    let reference = write(&dir, "top-logits.csv", t.top_label_csv(true).as_bytes());
    let reference = json(&tce(&["estimate", &reference, "--json"]));
    let logits = write(&dir, "logits.csv", t.class_csv(true).as_bytes());
    let report = json(&tce(&[
        "estimate",
        &logits,
        "--prob-cols",
        "p*",
        "--logits",
        "--json",
    ]));
    assert_same(&report, &reference, 1e-12, "logits");
    assert_eq!(report["settings"]["input"]["values"], "logits");
}

#[test]
fn class_csv_json_reproduces_from_its_settings() {
    let dir = scratch("reproduce");
    let t = table(50, 3);
    let classes = write(&dir, "classes.csv", t.class_csv(true).as_bytes());
    let args = [
        "estimate",
        &classes,
        "--prob-cols",
        "p*",
        "--logits",
        "--classwise",
        "--json",
    ];
    let report = json(&tce(&args));
    let s = &report["settings"];
    let mut rerun = vec![
        "estimate".to_owned(),
        s["file"].as_str().unwrap().to_owned(),
        "--prob-cols".to_owned(),
        s["input"]["prob_cols"].as_str().unwrap().to_owned(),
        "--label-col".to_owned(),
        s["columns"]["label"].as_str().unwrap().to_owned(),
        "--json".to_owned(),
    ];
    if s["input"]["values"] == "logits" {
        rerun.push("--logits".to_owned());
    }
    if s["input"]["reduction"] == "classwise" {
        rerun.push("--classwise".to_owned());
    }
    let rerun: Vec<&str> = rerun.iter().map(String::as_str).collect();
    assert_eq!(json(&tce(&rerun)), report);
}

#[test]
fn npy_arrays_reduce_like_the_top_label_csv() {
    let dir = scratch("npy");
    let t = table(200, 3);
    let n = t.rows();
    let reference = write(&dir, "top.csv", t.top_label_csv(false).as_bytes());
    let reference = json(&tce(&["estimate", &reference, "--json"]));
    let labels = write(
        &dir,
        "labels.npy",
        npy("<i8", &[n], false, &int_bytes(&t.labels, 8, false)),
    );
    // float64, C order, both byte orders.
    for (descr, big) in [("<f8", false), (">f8", true)] {
        let probs = write(
            &dir,
            "probs.npy",
            npy(descr, &[n, 3], false, &f64_bytes(&t.probs, big)),
        );
        let report = json(&tce(&["estimate", &probs, "--labels", &labels, "--json"]));
        assert_same(&report, &reference, 0.0, descr);
        let input = &report["settings"]["input"];
        assert_eq!(input["format"], "npy");
        assert_eq!(input["dtypes"]["scores"], descr);
        assert_eq!(input["dtypes"]["labels"], "<i8");
        assert_eq!(input["dtypes"]["shape"], serde_json::json!([200, 3]));
        assert_eq!(input["labels_file"], labels.as_str());
        assert_eq!(report["settings"]["file"], probs.as_str());
    }
    // Fortran order: column-major data.
    let mut transposed = Vec::new();
    for j in 0..3 {
        transposed.extend((0..n).map(|i| t.probs[i * 3 + j]));
    }
    let probs = write(
        &dir,
        "fortran.npy",
        npy("<f8", &[n, 3], true, &f64_bytes(&transposed, false)),
    );
    assert_same(
        &json(&tce(&["estimate", &probs, "--labels", &labels, "--json"])),
        &reference,
        0.0,
        "fortran",
    );
    // Every integer label dtype.
    let probs = write(
        &dir,
        "probs.npy",
        npy("<f8", &[n, 3], false, &f64_bytes(&t.probs, false)),
    );
    for (descr, size, big) in [
        ("|i1", 1, false),
        ("|u1", 1, false),
        ("<i2", 2, false),
        (">u2", 2, true),
        ("<i4", 4, false),
        (">i4", 4, true),
        ("<u4", 4, false),
        ("<u8", 8, false),
        (">i8", 8, true),
    ] {
        let labels = write(
            &dir,
            "l.npy",
            npy(descr, &[n], false, &int_bytes(&t.labels, size, big)),
        );
        let report = json(&tce(&["estimate", &probs, "--labels", &labels, "--json"]));
        assert_same(&report, &reference, 0.0, descr);
    }
    // float32: the same as a CSV of the float32 values widened to f64.
    let narrow: Vec<f32> = t.probs.iter().map(|&p| p as f32).collect();
    let wide = Table {
        k: 3,
        probs: narrow.iter().map(|&p| f64::from(p)).collect(),
        logits: Vec::new(),
        labels: t.labels.clone(),
    };
    let reference32 = write(&dir, "top32.csv", wide.top_label_csv(false).as_bytes());
    let reference32 = json(&tce(&["estimate", &reference32, "--json"]));
    let probs = write(
        &dir,
        "probs32.npy",
        npy("<f4", &[n, 3], false, &f32_bytes(&narrow)),
    );
    assert_same(
        &json(&tce(&["estimate", &probs, "--labels", &labels, "--json"])),
        &reference32,
        0.0,
        "f32",
    );
    // Logits.
    let reference = write(&dir, "top-logits.csv", t.top_label_csv(true).as_bytes());
    let reference = json(&tce(&["estimate", &reference, "--json"]));
    let logits = write(
        &dir,
        "logits.npy",
        npy("<f8", &[n, 3], false, &f64_bytes(&t.logits, false)),
    );
    assert_same(
        &json(&tce(&[
            "estimate", &logits, "--labels", &labels, "--logits", "--json",
        ])),
        &reference,
        1e-12,
        "npy logits",
    );
    // N confidences and 0/1 labels (also bool).
    let csv = t.top_label_csv(false);
    let (mut scores, mut correct) = (Vec::new(), Vec::new());
    for line in csv.lines().skip(1) {
        let (s, c) = line.split_once(',').unwrap();
        scores.push(s.parse::<f64>().unwrap());
        correct.push(c.parse::<i64>().unwrap());
    }
    let confidences = write(
        &dir,
        "conf.npy",
        npy("<f8", &[n], false, &f64_bytes(&scores, false)),
    );
    for descr in ["|u1", "|b1"] {
        let correct = write(
            &dir,
            "correct.npy",
            npy(descr, &[n], false, &int_bytes(&correct, 1, false)),
        );
        let report = json(&tce(&[
            "estimate",
            &confidences,
            "--labels",
            &correct,
            "--json",
        ]));
        assert_same(&report, &reference_of(&dir, &csv), 0.0, descr);
        assert_eq!(report["settings"]["input"]["values"], "confidences");
    }
}

fn reference_of(dir: &Path, csv: &str) -> Value {
    let path = write(dir, "reference.csv", csv.as_bytes());
    json(&tce(&["estimate", &path, "--json"]))
}

#[test]
fn classwise_is_every_class_one_vs_rest_and_their_lp_mean() {
    let dir = scratch("classwise");
    let t = table(250, 3);
    let classes = write(&dir, "classes.csv", t.class_csv(false).as_bytes());
    for norm in ["1", "2", "3"] {
        let report = json(&tce(&[
            "estimate",
            &classes,
            "--prob-cols",
            "p*",
            "--classwise",
            "--norm",
            norm,
            "--json",
        ]));
        assert_eq!(report["settings"]["input"]["reduction"], "classwise");
        let per_class: Vec<Value> = (0..3)
            .map(|k| {
                let path = write(&dir, &format!("c{k}.csv"), t.class_column_csv(k).as_bytes());
                json(&tce(&["estimate", &path, "--norm", norm, "--json"]))
            })
            .collect();
        let classes = report["classes"].as_array().unwrap();
        assert_eq!(classes.len(), 3);
        for (k, (class, reference)) in classes.iter().zip(&per_class).enumerate() {
            assert_eq!(class["class"], k);
            assert_eq!(class["name"], format!("p{k}"));
            assert_same(class, reference, 0.0, &format!("class {k}"));
            assert_eq!(class["frequency"], reference["accuracy"]);
        }
        let p: f64 = norm.parse().unwrap();
        for (i, row) in report["marginal"].as_array().unwrap().iter().enumerate() {
            let values: Vec<f64> = per_class.iter().map(|r| estimates(r)[i].3).collect();
            let expected = if row["estimator"] == "mce" {
                values.iter().cloned().fold(0.0, f64::max)
            } else if row["estimator"] == "smece" {
                // An l1 quantity whatever the norm: the plain mean.
                values.iter().sum::<f64>() / 3.0
            } else {
                (values.iter().map(|v| v.powf(p)).sum::<f64>() / 3.0).powf(1.0 / p)
            };
            assert!(
                (row["value"].as_f64().unwrap() - expected).abs() < 1e-15,
                "{row}"
            );
            assert_eq!(
                row["bins"].is_null(),
                row["estimator"] == "ece_sweep" || row["estimator"] == "smece",
                "{row}"
            );
        }
    }
    // The same from .npy, and the human table has both parts.
    let n = t.rows();
    let probs = write(
        &dir,
        "p.npy",
        npy("<f8", &[n, 3], false, &f64_bytes(&t.probs, false)),
    );
    let labels = write(
        &dir,
        "l.npy",
        npy("<i4", &[n], false, &int_bytes(&t.labels, 4, false)),
    );
    let from_npy = json(&tce(&[
        "estimate",
        &probs,
        "--labels",
        &labels,
        "--classwise",
        "--json",
    ]));
    let from_csv = json(&tce(&[
        "estimate",
        &classes,
        "--prob-cols",
        "p*",
        "--classwise",
        "--json",
    ]));
    assert_eq!(from_npy["marginal"], from_csv["marginal"]);
    assert_eq!(from_npy["classes"][1]["name"], "class 1");
    let table = tce(&["estimate", &probs, "--labels", &labels, "--classwise"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        text.contains("marginal calibration error") && text.contains("per class"),
        "{text}"
    );
}

#[test]
fn bad_class_csv_rows_name_their_line() {
    let header = "p0,p1,p2,label\n";
    let good = "0.2,0.3,0.5,2\n";
    let cases = [
        (
            "0.2,0.3,0.5\n",
            "line 3: missing field `label` (the row has 3 of 4 fields)",
        ),
        (
            "0.2,0.3,0.5,1,7\n",
            "line 3: a ragged row: it has 5 fields where the header has 4",
        ),
        (
            "0.2,0.3,0.6,1\n",
            "line 3: the probabilities sum to 1.1, not to 1 within the tolerance 0.001",
        ),
        ("0.2,NaN,0.8,1\n", "line 3: `p1` is NaN, a non-finite value"),
        ("0.2,0.3,inf,1\n", "line 3: `p2` inf is a non-finite value"),
        ("-0.2,0.7,0.5,1\n", "line 3: `p0` -0.2 is outside [0, 1]"),
        (
            "0.2,0.3,0.5,3\n",
            "line 3: `label` 3 is not a class id: labels must be whole numbers in 0..3",
        ),
        ("0.2,0.3,0.5,-1\n", "line 3: `label` -1 is not a class id"),
        (
            "0.2,0.3,0.5,one\n",
            "line 3: cannot parse `one` in column `label` as a class id",
        ),
        (
            "0.2,0.3,x,1\n",
            "line 3: cannot parse `x` in column `p2` as a number",
        ),
    ];
    for (row, expected) in cases {
        let input = format!("{header}{good}{row}");
        let stderr = refused(
            &tce_stdin(&["estimate", "-", "--prob-cols", "p*"], input.as_bytes()),
            row,
        );
        assert!(
            stderr.contains(&format!("tce: error: -: {expected}")),
            "{row:?}: {stderr}"
        );
    }
    // The sum's tolerance is stated, with the hint for logits.
    let stderr = refused(
        &tce_stdin(
            &["estimate", "-", "--prob-cols", "p*"],
            b"p0,p1,label\n0.9,0.8,0\n",
        ),
        "logits",
    );
    assert!(
        stderr.contains("(tce::toplabel::PROBABILITY_SUM_TOLERANCE); pass --logits"),
        "{stderr}"
    );
    // Within the tolerance is accepted.
    let output = tce_stdin(
        &["estimate", "-", "--prob-cols", "p*", "--json"],
        b"p0,p1,label\n0.4,0.6009,1\n0.5,0.4991,0\n",
    );
    assert_eq!(json(&output)["n"], 2);
    // Column choices.
    for (cols, expected) in [
        ("q*", "--prob-cols `q*` picks 0 class column(s)"),
        ("p0", "--prob-cols `p0` picks 1 class column(s)"),
        ("p0,p9", "missing column `p9`"),
        (
            "p0,label",
            "is both a class column (--prob-cols) and the label column",
        ),
    ] {
        let stderr = refused(
            &tce_stdin(
                &["estimate", "-", "--prob-cols", cols],
                b"p0,p1,label\n0.5,0.5,0\n",
            ),
            cols,
        );
        assert!(
            stderr.contains("line 1: ") && stderr.contains(expected),
            "{cols}: {stderr}"
        );
    }
    // Empty input.
    let stderr = refused(
        &tce_stdin(&["estimate", "-", "--prob-cols", "p*"], b"p0,p1,label\n"),
        "empty",
    );
    assert!(stderr.contains("line 2: no data rows"), "{stderr}");
}

#[test]
fn bad_npy_input_names_the_index() {
    let dir = scratch("bad-npy");
    let probs = [0.2, 0.8, 0.6, 0.4, 0.5, 0.5];
    let good = write(
        &dir,
        "p.npy",
        npy("<f8", &[3, 2], false, &f64_bytes(&probs, false)),
    );
    let labels = write(
        &dir,
        "l.npy",
        npy("<i8", &[3], false, &int_bytes(&[1, 0, 1], 8, false)),
    );
    assert_eq!(
        json(&tce(&["estimate", &good, "--labels", &labels, "--json"]))["n"],
        3
    );
    let run = |p: &str, l: &str| tce(&["estimate", p, "--labels", l]);
    let bad = |name: &str, bytes: Vec<u8>| write(&dir, name, &bytes);
    let cases: Vec<(String, String, String)> = vec![
        (bad("nan.npy", npy("<f8", &[3, 2], false, &f64_bytes(&[0.2, 0.8, f64::NAN, 0.4, 0.5, 0.5], false))), labels.clone(),
            "nan.npy: index 1: `class 0` is NaN".into()),
        (bad("inf.npy", npy("<f8", &[3, 2], false, &f64_bytes(&[0.2, 0.8, 0.6, 0.4, 0.5, f64::INFINITY], false))), labels.clone(),
            "inf.npy: index 2: `class 1` inf is a non-finite value".into()),
        (bad("sum.npy", npy("<f8", &[3, 2], false, &f64_bytes(&[0.2, 0.8, 0.6, 0.5, 0.5, 0.5], false))), labels.clone(),
            "sum.npy: index 1: the probabilities sum to 1.1, not to 1 within the tolerance 0.001".into()),
        (good.clone(), bad("l-range.npy", npy("<i8", &[3], false, &int_bytes(&[1, 0, 2], 8, false))),
            "l-range.npy: index 2: `label` 2 is not a class id: labels must be whole numbers in 0..2".into()),
        (good.clone(), bad("l-neg.npy", npy("|i1", &[3], false, &int_bytes(&[-1, 0, 1], 1, false))),
            "l-neg.npy: index 0: `label` -1 is not a class id".into()),
        (good.clone(), bad("l-short.npy", npy("<i8", &[2], false, &int_bytes(&[1, 0], 8, false))),
            "has 3 rows but".into()),
        (bad("3d.npy", npy("<f8", &[3, 1, 2], false, &f64_bytes(&probs, false))), labels.clone(),
            "scores of shape (3, 1, 2): expected (N, K) class probabilities or logits with K ≥ 2, or (N,) confidences".into()),
        (bad("k1.npy", npy("<f8", &[3, 1], false, &f64_bytes(&probs[..3], false))), labels.clone(),
            "scores of shape (3, 1)".into()),
        (good.clone(), bad("l-2d.npy", npy("<i8", &[3, 1], false, &int_bytes(&[1, 0, 1], 8, false))),
            "labels of shape (3, 1): expected (N,)".into()),
        (bad("int.npy", npy("<i8", &[3, 2], false, &int_bytes(&[0, 1, 1, 0, 1, 0], 8, false))), labels.clone(),
            "dtype '<i8' is not a float dtype; scores must be float32 or float64".into()),
        (bad("f16.npy", npy("<f2", &[3, 2], false, &[0; 12])), labels.clone(),
            "dtype '<f2' is not supported".into()),
        (good.clone(), bad("l-float.npy", npy("<f8", &[3], false, &f64_bytes(&[1.0, 0.0, 1.0], false))),
            "dtype '<f8' is a float dtype; labels must be integers".into()),
        (good.clone(), bad("l-bool.npy", npy("|b1", &[3], false, &[1, 0, 1])),
            "class outputs need integer class ids".into()),
        (bad("short.npy", npy("<f8", &[3, 2], false, &f64_bytes(&probs[..5], false))), labels.clone(),
            "the data do not fit the header: shape (3, 2) of '<f8'".into()),
        (bad("long.npy", npy("<f8", &[3, 2], false, &f64_bytes(&[probs.as_slice(), &[0.0]].concat(), false))), labels.clone(),
            "the data do not fit the header".into()),
        (bad("huge.npy", npy("<f8", &[1 << 40, 1 << 30], false, &[])), labels.clone(),
            "the data do not fit the header".into()),
        (bad("csv.npy", b"p0,p1,label\n0.5,0.5,0\n".to_vec()), labels.clone(),
            "csv.npy: not a .npy file".into()),
        (bad("v9.npy", [b"\x93NUMPY\x09\x00".as_slice(), &[0; 8]].concat()), labels.clone(),
            ".npy version 9.0 is not supported".into()),
        (bad("dict.npy", {
            let mut b = npy("<f8", &[3, 2], false, &f64_bytes(&probs, false));
            let at = b.windows(5).position(|w| w == b"shape").unwrap();
            b[at..at + 5].copy_from_slice(b"shope");
            b
        }), labels.clone(), "bad .npy header".into()),
        (bad("conf.npy", npy("<f8", &[3], false, &f64_bytes(&[0.5, 1.5, 0.2], false))), bad("c-l.npy", npy("|u1", &[3], false, &[1, 0, 1])),
            "conf.npy: index 1: score 1.5 is out of range".into()),
        (bad("conf2.npy", npy("<f8", &[3], false, &f64_bytes(&[0.5, 0.5, 0.2], false))), bad("c-l2.npy", npy("|u1", &[3], false, &[1, 0, 2])),
            "c-l2.npy: index 2: label 2 is not a label; labels must be 0 or 1".into()),
    ];
    for (p, l, expected) in &cases {
        let stderr = refused(&run(p, l), expected);
        assert!(
            stderr.contains(expected.as_str()),
            "expected {expected:?}: {stderr}"
        );
    }
    // Options that do not fit the input.
    let conf = write(
        &dir,
        "c.npy",
        npy("<f8", &[3], false, &f64_bytes(&[0.5, 0.5, 0.2], false)),
    );
    let c_labels = write(&dir, "cl.npy", npy("|u1", &[3], false, &[1, 0, 1]));
    let csv = write(&dir, "c.csv", b"confidence,correct\n0.5,1\n");
    let option_cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["estimate", &good], "needs --labels FILE"),
        (
            vec!["estimate", &good, "--labels", &labels, "--prob-cols", "p*"],
            "a .npy input has none",
        ),
        (
            vec!["estimate", &csv, "--labels", &labels],
            "--labels names the labels of a .npy",
        ),
        (vec!["estimate", &csv, "--logits"], "need class outputs"),
        (vec!["estimate", &csv, "--classwise"], "need class outputs"),
        (
            vec!["estimate", &csv, "--prob-cols", "p*", "--score-col", "x"],
            "--score-col names the confidence column",
        ),
        (
            vec!["estimate", &conf, "--labels", &c_labels, "--logits"],
            "are confidences: --logits and --classwise need",
        ),
        (
            vec!["estimate", &conf, "--labels", &c_labels, "--classwise"],
            "are confidences",
        ),
        (
            vec!["estimate", "/nonexistent/p.npy", "--labels", &labels],
            "cannot open",
        ),
    ];
    for (args, expected) in &option_cases {
        let stderr = refused(&tce(args), expected);
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
}

#[test]
fn quoted_csv_switches_parsers_and_keeps_line_numbers() {
    // Unquoted lines, then a quoted field with a comma and a newline, then more rows:
    // the same samples as without quotes, and errors after the switch keep their line.
    let plain = "confidence,correct,note\n0.9,1,a\n0.8,0,b\n0.7,1,c\n0.6,1,d\n";
    let quoted = "confidence,correct,note\n0.9,1,a\n0.8,0,\"b, and\nmore\"\n\"0.7\",1,c\n0.6,1,d\n";
    let a = json(&tce_stdin(&["estimate", "-", "--json"], plain.as_bytes()));
    let b = json(&tce_stdin(&["estimate", "-", "--json"], quoted.as_bytes()));
    assert_eq!(a["estimates"], b["estimates"]);
    let bad = format!("{quoted}1.5,1,e\n");
    let stderr = refused(&tce_stdin(&["estimate", "-"], bad.as_bytes()), "quoted");
    assert!(
        stderr.contains("line 7: `confidence` 1.5 is out of range"),
        "{stderr}"
    );
    // A quoted header.
    let header = "\"confidence\",\"correct\"\n0.9,1\n2,1\n";
    let stderr = refused(&tce_stdin(&["estimate", "-"], header.as_bytes()), "header");
    assert!(
        stderr.contains("line 3: `confidence` 2 is out of range"),
        "{stderr}"
    );
    // Blank lines after the switch count (the csv parser's own count leaves them out).
    let blank = "\"confidence\",correct\n0.9,1\n\n\n1.5,1";
    let stderr = refused(&tce_stdin(&["estimate", "-"], blank.as_bytes()), "blank");
    assert!(
        stderr.contains("line 5: `confidence` 1.5 is out of range"),
        "{stderr}"
    );
}

/// A (confidence, correct, note) CSV of `rows` rows, over 1 MiB from 60 000 rows on, so
/// that a file of it is read in two halves (cli/src/input/halves.rs).
fn big_csv(rows: usize, eol: &str) -> String {
    let mut text = format!("confidence,correct,note{eol}");
    for i in 0..rows {
        let score = (i * 7919) % 1_000_003;
        text += &format!("0.{score:07},{},row {i}{eol}", (score % 3 != 0) as u8);
    }
    text
}

/// `text` read from a file (in two halves when large) and from stdin (on one thread):
/// the two runs' outputs, estimates or errors, must agree.
fn file_and_stdin(text: &str, what: &str) -> (std::process::Output, std::process::Output) {
    let dir = common::TempDir::new("halves");
    let path = dir.file("big.csv", text);
    let file = tce(&["estimate", "--json", path.to_str().unwrap()]);
    let stdin = tce_stdin(&["estimate", "--json", "-"], text.as_bytes());
    assert_eq!(file.status.code(), stdin.status.code(), "{what}");
    if file.status.success() {
        assert_eq!(
            json(&file)["estimates"],
            json(&stdin)["estimates"],
            "{what}"
        );
        assert_eq!(json(&file)["n"], json(&stdin)["n"], "{what}");
    }
    (file, stdin)
}

/// The error of a refused run without its file name: `line N: problem`.
fn located(output: &std::process::Output, what: &str) -> String {
    let stderr = refused(output, what);
    let at = stderr
        .find("line ")
        .unwrap_or_else(|| panic!("{what}: {stderr}"));
    stderr[at..].trim_end().to_owned()
}

#[test]
fn large_files_read_in_two_halves_as_in_one() {
    let text = big_csv(70_000, "\n");
    assert!(text.len() > 1 << 20);
    let (file, _) = file_and_stdin(&text, "plain");
    assert_eq!(json(&file)["n"], 70_000);
    // CRLF line ends, no line end at the end.
    let crlf = big_csv(70_000, "\r\n");
    let (file, _) = file_and_stdin(crlf.trim_end(), "crlf");
    assert_eq!(json(&file)["n"], 70_000);
    // The only quoted field holds the middle of the file, newlines and all.
    let note: String = (0..2000).map(|i| format!("a note, line {i}\n")).collect();
    let at = text[..text.len() / 2 - note.len() / 2].rfind('\n').unwrap() + 1;
    let quoted = format!("{}0.5,1,\"{note}\"\n{}", &text[..at], &text[at..]);
    let middle = quoted.len() / 2;
    assert!(quoted.find('"').unwrap() < middle && middle < quoted.rfind('"').unwrap());
    let (file, _) = file_and_stdin(&quoted, "quoted");
    assert_eq!(json(&file)["n"], 70_001);
}

#[test]
fn large_files_name_the_first_bad_line_in_either_half() {
    let text = big_csv(70_000, "\n");
    let lines: Vec<&str> = text.lines().collect();
    let with = |bad: &[(usize, &str)]| {
        let mut lines = lines.clone();
        for &(at, row) in bad.iter().rev() {
            lines.insert(at, row);
        }
        lines.join("\n") + "\n"
    };
    // An error in the second half: its line in the file.
    let (file, stdin) = file_and_stdin(&with(&[(60_000, "0.5,2,bad")]), "second half");
    let error = located(&file, "second half");
    assert_eq!(error, located(&stdin, "second half"));
    assert_eq!(
        error,
        "line 60001: `correct` 2 is not a label; labels must be 0 or 1"
    );
    // One in each half: the first wins.
    let both = with(&[(1_000, "nan,1,x"), (60_000, "0.5,2,bad")]);
    let (file, stdin) = file_and_stdin(&both, "both halves");
    let error = located(&file, "both halves");
    assert_eq!(error, located(&stdin, "both halves"));
    assert!(
        error.starts_with("line 1001: `confidence` is NaN"),
        "{error}"
    );
    // A ragged row just after the middle, in a CRLF file.
    let crlf = big_csv(70_000, "\r\n");
    let middle = crlf.len() / 2;
    let cut = middle + crlf[middle..].find('\n').unwrap() + 1;
    let ragged = format!("{}0.5,1\r\n{}", &crlf[..cut], &crlf[cut..]);
    let (file, stdin) = file_and_stdin(&ragged, "ragged");
    let error = located(&file, "ragged");
    assert_eq!(error, located(&stdin, "ragged"));
    let line = crlf[..cut].matches('\n').count() + 1;
    assert_eq!(
        error,
        format!("line {line}: a ragged row: it has 2 fields where the header has 3")
    );
}
