//! `tce estimate --weight-col` / `--weights FILE.npy` and `tce report --weight-col`:
//! integer weights print what the rows repeated print, class outputs' weights give what
//! the library gives for their top labels (and, classwise, for each class's one-vs-rest
//! samples), and bad weights are refused with a message naming the file and the row.

mod common;

use common::{json, refused, scratch, tce};
use serde_json::Value;
use tce::{Binning, Closure, Norm, Ties};

/// The weighted rows, and the same rows repeated by their (integer) weights.
fn files(dir: &common::TempDir) -> (String, String) {
    let rows = [
        (0.2, 0, 1),
        (0.4, 1, 3),
        (0.8, 1, 2),
        (0.9, 0, 0),
        (0.55, 0, 2),
        (0.55, 1, 1),
        (1.0, 1, 4),
    ];
    let mut weighted = String::from("confidence,correct,w\n");
    let mut repeated = String::from("confidence,correct\n");
    for (f, y, w) in rows {
        weighted.push_str(&format!("{f},{y},{w}\n"));
        for _ in 0..w {
            repeated.push_str(&format!("{f},{y}\n"));
        }
    }
    (
        dir.file("weighted.csv", weighted).display().to_string(),
        dir.file("repeated.csv", repeated).display().to_string(),
    )
}

#[test]
fn integer_weights_print_the_repeated_rows_estimates() {
    let dir = scratch("weights_repeat");
    let (weighted, repeated) = files(&dir);
    for extra in [
        &["--ties", "keep"][..],
        &["--ties", "split", "--bins", "3"][..],
    ] {
        let mut args = vec!["estimate", weighted.as_str(), "--weight-col", "w", "--json"];
        args.extend_from_slice(extra);
        let w = json(&tce(&args));
        let mut args = vec!["estimate", repeated.as_str(), "--json"];
        args.extend_from_slice(extra);
        let r = json(&tce(&args));
        assert_eq!(w["settings"]["weight_col"], "w");
        let rows = w["estimates"].as_array().unwrap();
        assert_eq!(
            rows.len(),
            9,
            "ECE_bin, ECE_sweep, ECE_debias, MCE × EW, EM; smooth ECE"
        );
        assert_eq!(rows[8]["estimator"], "smece");
        assert!(rows[8]["value"].as_f64().unwrap() > 0.01, "{}", rows[8]);
        for row in rows {
            let same = r["estimates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|o| o["estimator"] == row["estimator"] && o["binning"] == row["binning"])
                .unwrap();
            let (a, b) = (
                row["value"].as_f64().unwrap(),
                same["value"].as_f64().unwrap(),
            );
            assert!((a - b).abs() < 1e-12, "{row} vs {same}");
            assert_eq!(row["bins"], same["bins"]);
            assert_eq!(row["bandwidth"], same["bandwidth"]);
        }
        let (a, b) = (
            w["accuracy"].as_f64().unwrap(),
            r["accuracy"].as_f64().unwrap(),
        );
        assert!((a - b).abs() < 1e-12);
    }
}

#[test]
fn bad_weights_are_refused() {
    let dir = scratch("weights_bad");
    let (weighted, _) = files(&dir);
    let message = refused(
        &tce(&["estimate", weighted.as_str(), "--weight-col", "nope"]),
        "missing column",
    );
    assert!(
        message.contains("weighted.csv: line 1: missing column `nope`")
            && message.contains("--weight-col NAME"),
        "{message}"
    );
    for (body, expected) in [
        (
            "0.2,0,-1\n",
            "bad.csv: line 2: `w` -1 is negative; weights must be finite numbers ≥ 0",
        ),
        ("0.2,0,1\n0.3,1,nan\n", "bad.csv: line 3: `w` is NaN"),
        (
            "0.2,0,1\n\n0.3,1,inf\n",
            "bad.csv: line 4: `w` inf is infinite",
        ),
        (
            "0.2,0,0\n0.3,1,0\n",
            "bad.csv: every weight in `w` (--weight-col) is 0",
        ),
        (
            "0.2,0,x\n",
            "bad.csv: line 2: cannot parse `x` in column `w` as a weight",
        ),
        (
            "0.2,0,\n",
            "bad.csv: line 2: cannot parse `` in column `w` as a weight",
        ),
    ] {
        let file = dir.file("bad.csv", format!("confidence,correct,w\n{body}"));
        let message = refused(
            &tce(&["estimate", &file.display().to_string(), "--weight-col", "w"]),
            body,
        );
        assert!(message.contains(expected), "{body}: {message}");
    }
}

#[test]
fn the_note_says_how_rows_are_weighted() {
    let dir = scratch("weights_note");
    let (weighted, _) = files(&dir);
    let table = tce(&["estimate", weighted.as_str(), "--weight-col", "w"]);
    let out = String::from_utf8_lossy(&table.stdout);
    assert!(out.contains("frequency weights"), "{out}");
    assert!(out.contains("smooth ECE smooths"), "{out}");
    assert!(!out.contains("left out"), "{out}");
}

/// A `.npy` file (format 1.0, C order, little-endian) of `data`.
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let pad = (64 - (10 + header.len() + 1) % 64) % 64;
    header.push_str(&" ".repeat(pad));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

fn f8(values: &[f64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn i8s(values: &[i64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Rows of class probabilities (3 classes), their true classes and integer weights: ties
/// in the top scores, a zero weight, a weight over the bins' share.
const ROWS: [([f64; 3], usize, u32); 9] = [
    ([0.7, 0.2, 0.1], 0, 2),
    ([0.2, 0.5, 0.3], 1, 1),
    ([0.1, 0.1, 0.8], 2, 3),
    ([0.3, 0.3, 0.4], 0, 0),
    ([0.25, 0.25, 0.5], 2, 4),
    ([0.6, 0.3, 0.1], 1, 1),
    ([0.05, 0.9, 0.05], 1, 2),
    ([0.5, 0.25, 0.25], 2, 1),
    ([0.2, 0.7, 0.1], 1, 2),
];

/// The class CSV of `rows` with a weight column `w` (weights as written by `weight`).
fn class_csv(rows: &[([f64; 3], usize, u32)], weight: impl Fn(u32) -> String) -> String {
    let mut text = String::from("p0,p1,p2,label,w\n");
    for (p, y, w) in rows {
        text += &format!("{:?},{:?},{:?},{y},{}\n", p[0], p[1], p[2], weight(*w));
    }
    text
}

/// The estimates of a `tce estimate --json` report (or a classwise report's class `k`),
/// by (estimator, binning).
fn value(report: &Value, estimator: &str, binning: &str) -> f64 {
    report["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["estimator"] == estimator && r["binning"] == binning)
        .unwrap_or_else(|| panic!("no {estimator}/{binning} in {report}"))["value"]
        .as_f64()
        .unwrap()
}

/// The library's weighted estimates of (scores, labels, weights) with the CLI's
/// defaults (15 bins, p = 2, left-closed bins, ties split), as (estimator, binning, value).
fn library(
    scores: &[f64],
    labels: &[u8],
    weights: &[f64],
) -> Vec<(&'static str, &'static str, f64)> {
    let (ew, em) = (
        Binning::EqualWidth(Closure::Left),
        Binning::EqualMass(Ties::Split),
    );
    let norm = Norm::L2;
    let mut out = Vec::new();
    for (binning, name) in [(ew, "equal_width"), (em, "equal_mass")] {
        let w = |e: Result<tce::Estimate, tce::weights::WeightError>| e.unwrap().value;
        out.push((
            "ece_bin",
            name,
            w(tce::weights::ece_bin(
                scores, labels, weights, binning, 15, norm,
            )),
        ));
        out.push((
            "ece_debias",
            name,
            w(tce::weights::ece_debias(
                scores, labels, weights, binning, 15, norm,
            )),
        ));
        out.push((
            "mce",
            name,
            w(tce::weights::mce(scores, labels, weights, binning, 15)),
        ));
        out.push((
            "ece_sweep",
            name,
            w(tce::weights::ece_sweep(
                scores,
                labels,
                weights,
                binning,
                norm,
                tce::SweepOptions::default(),
            )),
        ));
    }
    out
}

/// Class outputs in a CSV (`--weight-col`) and in `.npy` arrays (`--weights`) give the
/// library's weighted estimates of their top labels, and the estimates of the rows
/// repeated by their weights.
#[test]
fn class_outputs_take_weights_from_a_column_or_a_npy_file() {
    let dir = scratch("weights_classes");
    let csv = dir.file("classes.csv", class_csv(&ROWS, |w| w.to_string()));
    let repeated: Vec<_> = ROWS
        .iter()
        .flat_map(|&row| std::iter::repeat_n(row, row.2 as usize))
        .collect();
    let repeated = dir.file("repeated.csv", class_csv(&repeated, |_| "1".into()));
    let table: Vec<f64> = ROWS.iter().flat_map(|r| r.0).collect();
    let ids: Vec<i64> = ROWS.iter().map(|r| r.1 as i64).collect();
    let weights: Vec<f64> = ROWS.iter().map(|r| f64::from(r.2)).collect();
    let scores = dir.file("scores.npy", npy("<f8", "(9, 3)", &f8(&table)));
    let labels = dir.file("labels.npy", npy("<i8", "(9,)", &i8s(&ids)));
    let weights_f8 = dir.file("w.npy", npy("<f8", "(9,)", &f8(&weights)));
    let weights_i8 = dir.file(
        "wi.npy",
        npy("<i8", "(9,)", &i8s(&ROWS.map(|r| i64::from(r.2)))),
    );
    let (csv, repeated, scores, labels) = (
        csv.display().to_string(),
        repeated.display().to_string(),
        scores.display().to_string(),
        labels.display().to_string(),
    );
    let (top_scores, top_labels): (Vec<f64>, Vec<u8>) = ROWS
        .iter()
        .map(|(p, y, _)| {
            let top = tce::toplabel::from_probabilities(p, *y).unwrap();
            (top.score, top.label)
        })
        .unzip();
    let want = library(&top_scores, &top_labels, &weights);
    let unweighted = json(&tce(&[
        "estimate",
        &repeated,
        "--prob-cols",
        "p*",
        "--json",
    ]));
    let runs = [
        json(&tce(&[
            "estimate",
            &csv,
            "--prob-cols",
            "p*",
            "--weight-col",
            "w",
            "--json",
        ])),
        json(&tce(&[
            "estimate",
            &csv,
            "--prob-cols",
            "p0,p1,p2",
            "--weights",
            &weights_f8.display().to_string(),
            "--json",
        ])),
        json(&tce(&[
            "estimate",
            &scores,
            "--labels",
            &labels,
            "--weights",
            &weights_f8.display().to_string(),
            "--json",
        ])),
        json(&tce(&[
            "estimate",
            &scores,
            "--labels",
            &labels,
            "--weights",
            &weights_i8.display().to_string(),
            "--json",
        ])),
    ];
    for got in &runs {
        // ECE_bin, ECE_sweep, ECE_debias, MCE × EW, EM, and smooth ECE.
        assert_eq!(got["estimates"].as_array().unwrap().len(), 9, "{got}");
        let smooth = |report: &Value| {
            report["estimates"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["estimator"] == "smece")
                .unwrap()["value"]
                .as_f64()
                .unwrap()
        };
        let (a, b) = (smooth(got), smooth(&unweighted));
        assert!((a - b).abs() < 1e-9, "smooth ECE {a} vs repeated {b}");
        for &(estimator, binning, v) in &want {
            // Within the last digit a JSON number keeps (serde_json's reading of it).
            let g = value(got, estimator, binning);
            assert!(
                (g - v).abs() < 1e-15,
                "{estimator}/{binning}: {g} vs the library's {v}"
            );
            let r = value(&unweighted, estimator, binning);
            assert!(
                (v - r).abs() < 1e-12,
                "{estimator}/{binning}: {v} vs repeated {r}"
            );
        }
        // Σw = 16 units: accuracy Σw·y / Σw of the top labels.
        let hits: f64 = top_labels
            .iter()
            .zip(&weights)
            .map(|(&y, w)| f64::from(y) * w)
            .sum();
        assert_eq!(got["accuracy"].as_f64().unwrap(), hits / 16.0);
        assert_eq!(got["n"], 9);
    }
    assert_eq!(runs[0]["settings"]["weight_col"], "w");
    assert_eq!(
        runs[2]["settings"]["weights"],
        weights_f8.display().to_string()
    );
    // A real value, not just agreement: ECE_bin with 15 equal-width bins, by hand. The
    // top labels (score, hit, weight): (0.7,1,2) (0.5,1,1) (0.8,1,3) (0.4,0,0) (0.5,1,4)
    // (0.6,0,1) (0.9,1,2) (0.5,0,1) (0.7,1,2); bins of 1/15: 0.4 → 6, 0.5 → 7, 0.6 → 9,
    // 0.7 → 10, 0.8 → 12, 0.9 → 13 (floor(15·f)).
    let bins = [
        (6.0, 3.0, 5.0),
        (1.0, 0.6, 0.0),
        (4.0, 2.8, 4.0),
        (3.0, 2.4, 3.0),
        (2.0, 1.8, 2.0),
    ];
    let sq: f64 = bins
        .iter()
        .map(|&(w, wf, wy): &(f64, f64, f64)| w / 16.0 * ((wf - wy) / w).powi(2))
        .sum();
    let ece_ew = value(&runs[0], "ece_bin", "equal_width");
    assert!(
        (ece_ew - sq.sqrt()).abs() < 1e-12,
        "{ece_ew} vs {}",
        sq.sqrt()
    );
}

/// `--classwise` with weights: each class's one-vs-rest samples carry the rows' weights
/// (the library's weighted estimates of them), and integer weights equal repeated rows.
#[test]
fn classwise_estimates_are_weighted() {
    let dir = scratch("weights_classwise");
    let csv = dir.file("classes.csv", class_csv(&ROWS, |w| format!("{w}.0")));
    let repeated: Vec<_> = ROWS
        .iter()
        .flat_map(|&row| std::iter::repeat_n(row, row.2 as usize))
        .collect();
    let repeated = dir.file("repeated.csv", class_csv(&repeated, |_| "1".into()));
    let csv = csv.display().to_string();
    let weighted = tce(&[
        "estimate",
        &csv,
        "--prob-cols",
        "p*",
        "--weight-col",
        "w",
        "--classwise",
        "--json",
    ]);
    let got = json(&weighted);
    let unweighted = json(&tce(&[
        "estimate",
        &repeated.display().to_string(),
        "--prob-cols",
        "p*",
        "--classwise",
        "--json",
    ]));
    assert_eq!(got["weighted"], true);
    let weights: Vec<f64> = ROWS.iter().map(|r| f64::from(r.2)).collect();
    for k in 0..3 {
        let class = &got["classes"][k];
        let scores: Vec<f64> = ROWS.iter().map(|r| r.0[k]).collect();
        let labels: Vec<u8> = ROWS.iter().map(|r| u8::from(r.1 == k)).collect();
        for (estimator, binning, v) in library(&scores, &labels, &weights) {
            let g = value(class, estimator, binning);
            assert!(
                (g - v).abs() < 1e-15,
                "class {k} {estimator}/{binning}: {g} vs {v}"
            );
            let r = value(&unweighted["classes"][k], estimator, binning);
            assert!(
                (v - r).abs() < 1e-12,
                "class {k} {estimator}/{binning}: {v} vs {r}"
            );
        }
        let frequency: f64 = labels
            .iter()
            .zip(&weights)
            .map(|(&y, w)| f64::from(y) * w)
            .sum::<f64>()
            / 16.0;
        assert_eq!(class["frequency"].as_f64().unwrap(), frequency);
    }
    for (a, b) in got["marginal"]
        .as_array()
        .unwrap()
        .iter()
        .zip(unweighted["marginal"].as_array().unwrap())
    {
        let (a, b) = (a["value"].as_f64().unwrap(), b["value"].as_f64().unwrap());
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    let table = tce(&[
        "estimate",
        &csv,
        "--prob-cols",
        "p*",
        "--weight-col",
        "w",
        "--classwise",
    ]);
    assert!(common::stdout(&table).contains("weights          frequency weights"));
}

/// `--weights` with (confidence, correct) CSV rows is `--weight-col` of the same numbers.
#[test]
fn a_npy_file_weighs_csv_rows() {
    let dir = scratch("weights_npy_csv");
    let (weighted, _) = files(&dir);
    let w = dir.file(
        "w.npy",
        npy(
            "<f4",
            "(7,)",
            &[1f32, 3., 2., 0., 2., 1., 4.]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>(),
        ),
    );
    let a = json(&tce(&[
        "estimate",
        weighted.as_str(),
        "--weight-col",
        "w",
        "--json",
    ]));
    let b = json(&tce(&[
        "estimate",
        weighted.as_str(),
        "--weights",
        &w.display().to_string(),
        "--json",
    ]));
    assert_eq!(a["estimates"], b["estimates"]);
    assert_eq!(a["accuracy"], b["accuracy"]);
}

/// Bad weights of class outputs and `.npy` files: named with the file and the row.
#[test]
fn bad_weights_of_class_outputs_and_npy_files_are_refused() {
    let dir = scratch("weights_bad_classes");
    let scores = dir.file(
        "s.npy",
        npy("<f8", "(3, 2)", &f8(&[0.6, 0.4, 0.3, 0.7, 0.5, 0.5])),
    );
    let labels = dir.file("l.npy", npy("<i8", "(3,)", &i8s(&[0, 1, 1])));
    let (scores, labels) = (scores.display().to_string(), labels.display().to_string());
    let cases: [(&str, Vec<u8>, String); 8] = [
        (
            "neg.npy",
            npy("<f8", "(3,)", &f8(&[1.0, 2.0, -0.5])),
            "neg.npy: index 2: the weight -0.5 is negative; weights must be finite numbers ≥ 0"
                .into(),
        ),
        (
            "nan.npy",
            npy("<f8", "(3,)", &f8(&[1.0, f64::NAN, 1.0])),
            "nan.npy: index 1: the weight is NaN".into(),
        ),
        (
            "inf.npy",
            npy("<f8", "(3,)", &f8(&[f64::INFINITY, 1.0, 1.0])),
            "inf.npy: index 0: the weight inf is infinite".into(),
        ),
        (
            "negint.npy",
            npy("<i8", "(3,)", &i8s(&[1, -2, 1])),
            "negint.npy: index 1: the weight -2 is negative".into(),
        ),
        (
            "zero.npy",
            npy("<f8", "(3,)", &f8(&[0.0, 0.0, 0.0])),
            "zero.npy: every weight (--weights) is 0".into(),
        ),
        (
            "short.npy",
            npy("<f8", "(2,)", &f8(&[1.0, 1.0])),
            format!("short.npy has 2 weights (--weights) but {scores} has 3 rows"),
        ),
        (
            "bool.npy",
            npy("|b1", "(3,)", &[1, 0, 1]),
            "bool.npy: dtype '|b1' is not a weight dtype".into(),
        ),
        (
            "2d.npy",
            npy("<f8", "(3, 1)", &f8(&[1.0, 1.0, 1.0])),
            "2d.npy: weights of shape (3, 1): expected (N,)".into(),
        ),
    ];
    for (name, bytes, expected) in cases {
        let file = dir.file(name, bytes).display().to_string();
        let message = refused(
            &tce(&["estimate", &scores, "--labels", &labels, "--weights", &file]),
            name,
        );
        assert!(message.contains(&expected), "{name}: {message}");
    }
    let message = refused(
        &tce(&[
            "estimate",
            &scores,
            "--labels",
            &labels,
            "--weight-col",
            "w",
        ]),
        "a column of a .npy input",
    );
    assert!(
        message.contains("--weight-col names a CSV column"),
        "{message}"
    );
    let classes = dir
        .file("c.csv", "p0,p1,label,w\n0.6,0.4,0,1\n0.3,0.7,1,-3\n")
        .display()
        .to_string();
    for (extra, expected) in [
        (&["--prob-cols", "p*", "--weight-col", "w"][..], "c.csv: line 3: `w` -3 is negative"),
        (&["--prob-cols", "p0,w", "--weight-col", "w"][..], "c.csv: line 1: column `w` is both a class column (--prob-cols) and the weight column"),
        (&["--prob-cols", "p0,p1", "--weight-col", "label"][..], "c.csv: line 1: column `label` is both the weight column (--weight-col) and read by --label-col"),
        (&["--prob-cols", "p*", "--weight-col", "v"][..], "c.csv: line 1: missing column `v`"),
        (&["--prob-cols", "p*", "--classwise", "--weight-col", "w"][..], "c.csv: line 3: `w` -3 is negative"),
    ] {
        let mut args = vec!["estimate", classes.as_str()];
        args.extend_from_slice(extra);
        let message = refused(&tce(&args), expected);
        assert!(message.contains(expected), "{extra:?}: {message}");
    }
    // A glob that also matches the weight column leaves it out, with a note.
    let glob = dir
        .file("g.csv", "c0,c1,cw,label\n0.6,0.4,2,0\n0.3,0.7,1,1\n")
        .display()
        .to_string();
    let out = tce(&[
        "estimate",
        &glob,
        "--prob-cols",
        "c*",
        "--weight-col",
        "cw",
        "--json",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("also matches the weight column `cw`"));
    assert_eq!(json(&out)["settings"]["input"]["classes"], 2);
}

/// `tce report --weight-col`: whole weights give the repeated rows' estimates and b*;
/// the JSON says the rows are weighted (the weights object, the weight column, no fit),
/// and the text and the page say so too.
#[test]
fn weighted_report_estimates_are_the_repeated_rows() {
    let dir = scratch("weights_report");
    let (weighted, repeated) = files(&dir);
    let page = dir.path().join("page.html");
    let page_arg = page.display().to_string();
    let w = json(&tce(&[
        "report",
        weighted.as_str(),
        "--weight-col",
        "w",
        "--json",
        "--quiet",
        "--resamples",
        "50",
        "--bins",
        "3",
        "--html",
        page_arg.as_str(),
    ]));
    let r = json(&tce(&[
        "report",
        repeated.as_str(),
        "--json",
        "--quiet",
        "--resamples",
        "50",
        "--bins",
        "3",
        "--no-test",
        "--simulations",
        "2",
    ]));
    assert_eq!(w["settings"]["input"]["weight_col"], "w");
    let weights = &w["weights"];
    assert_eq!(weights["rows"], 7);
    assert_eq!(weights["zero_rows"], 1);
    assert_eq!(weights["total"], 13.0);
    assert_eq!(weights["integer"], true);
    // Kish: 13² / (1 + 9 + 4 + 4 + 1 + 16).
    assert!((weights["effective_n"].as_f64().unwrap() - 169.0 / 35.0).abs() < 1e-12);
    assert_eq!(w["n"], 6);
    assert!(w["fit"].is_null());
    assert!(w["fit_error"].as_str().unwrap().contains("weighted"));
    assert!(w["calibration_test"].is_null());
    assert_eq!(w["recommendation"]["basis"], "no_fit");
    let rows = w["estimators"].as_array().unwrap();
    assert_eq!(rows.len(), 8);
    for row in rows {
        let same = r["estimators"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["name"] == row["name"])
            .unwrap();
        let (a, b) = (
            row["value"].as_f64().unwrap(),
            same["value"].as_f64().unwrap(),
        );
        assert!((a - b).abs() < 1e-12, "{row} vs {same}");
        assert_eq!(row["bins"], same["bins"]);
        assert!(row["bootstrap"]["percentile"].is_object(), "{row}");
    }
    for (rel_w, rel_r) in w["reliability"]
        .as_array()
        .unwrap()
        .iter()
        .zip(r["reliability"].as_array().unwrap())
    {
        for (a, b) in rel_w["bins"]
            .as_array()
            .unwrap()
            .iter()
            .zip(rel_r["bins"].as_array().unwrap())
        {
            assert_eq!(a["weight"].as_f64().unwrap(), b["count"].as_f64().unwrap());
            assert_eq!(
                a["weighted_hits"].as_f64().unwrap(),
                b["hits"].as_f64().unwrap()
            );
        }
    }
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("Rows weighted (frequency weights): 7 rows, 1 of weight 0"),
        "page"
    );
    let text = common::stdout(&tce(&[
        "report",
        weighted.as_str(),
        "--weight-col",
        "w",
        "--quiet",
        "--resamples",
        "20",
    ]));
    assert!(text.contains("Rows weighted (frequency weights)"), "{text}");
    assert!(text.contains("Not tested: the rows are weighted"), "{text}");
}

#[test]
fn weighted_report_refuses_bad_weights_with_file_and_row() {
    let dir = scratch("weights_report_bad");
    let (weighted, _) = files(&dir);
    let message = refused(
        &tce(&[
            "report",
            weighted.as_str(),
            "--weight-col",
            "nope",
            "--quiet",
        ]),
        "missing column",
    );
    assert!(
        message.contains("weighted.csv: line 1: missing column `nope`"),
        "{message}"
    );
    // The input layer reads the weights for both commands: the same messages.
    for (body, expected) in [
        ("0.2,0,1\n0.2,0,-1\n", "bad.csv: line 3: `w` -1 is negative"),
        ("0.2,0,1\n0.3,1,nan\n", "bad.csv: line 3: `w` is NaN"),
        (
            "0.2,0,0\n0.3,1,0\n",
            "bad.csv: every weight in `w` (--weight-col) is 0",
        ),
        (
            "0.2,0,x\n",
            "bad.csv: line 2: cannot parse `x` in column `w` as a weight",
        ),
        (
            "0.2,0,\n",
            "bad.csv: line 2: cannot parse `` in column `w` as a weight",
        ),
    ] {
        let file = dir.file("bad.csv", format!("confidence,correct,w\n{body}"));
        let message = refused(
            &tce(&[
                "report",
                &file.display().to_string(),
                "--weight-col",
                "w",
                "--quiet",
            ]),
            body,
        );
        assert!(message.contains(expected), "{body}: {message}");
    }
    // Settings of the parts a weighted report does not make are refused, not ignored.
    let message = refused(
        &tce(&[
            "report",
            weighted.as_str(),
            "--weight-col",
            "w",
            "--simulations",
            "5",
        ]),
        "--simulations",
    );
    assert!(message.contains("cannot be used with"), "{message}");
}

/// `tce report --weights FILE.npy` reads the weights as `tce estimate --weights` does: the
/// same report as the weight column gives (the JSON naming the file instead), and
/// `--classwise` with weights is refused.
#[test]
fn weighted_report_takes_a_npy_file_of_weights() {
    let dir = scratch("weights_report_npy");
    let (weighted, _) = files(&dir);
    let unweighted = dir
        .file(
            "rows.csv",
            "confidence,correct\n0.2,0\n0.4,1\n0.8,1\n0.9,0\n0.55,0\n0.55,1\n1.0,1\n",
        )
        .display()
        .to_string();
    let w = dir.path().join("w.npy");
    std::fs::write(
        &w,
        npy("<f8", "(7,)", &f8(&[1.0, 3.0, 2.0, 0.0, 2.0, 1.0, 4.0])),
    )
    .unwrap();
    let w = w.display().to_string();
    let common = ["--json", "--quiet", "--resamples", "50", "--bins", "3"];
    let by_column = json(&tce(&[
        &["report", weighted.as_str(), "--weight-col", "w"][..],
        &common,
    ]
    .concat()));
    let by_file = json(&tce(&[
        &["report", unweighted.as_str(), "--weights", w.as_str()][..],
        &common,
    ]
    .concat()));
    assert_eq!(by_file["settings"]["input"]["weights"], w.as_str());
    assert!(by_file["settings"]["input"]["weight_col"].is_null());
    assert_eq!(by_file["weights"], by_column["weights"]);
    assert_eq!(by_file["estimators"], by_column["estimators"]);
    let message = refused(
        &tce(&[
            "report",
            unweighted.as_str(),
            "--weights",
            w.as_str(),
            "--classwise",
        ]),
        "--classwise",
    );
    assert!(message.contains("cannot be used with"), "{message}");
}
