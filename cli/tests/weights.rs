//! `tce estimate --weight-col`: integer weights print what the rows repeated print, and
//! bad weights are refused with a message naming them.

mod common;

use common::{json, refused, scratch, tce};

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
    assert!(message.contains("no column `nope`"), "{message}");

    for (body, expected) in [
        ("0.2,0,-1\n", "weight 0 is negative"),
        ("0.2,0,1\n0.3,1,nan\n", "weight 1 is negative, NaN"),
        ("0.2,0,0\n", "sum to 0"),
        ("0.2,0,x\n", "data row 1: weight `x` is not a number"),
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
