//! The `tce` binary, end to end: published values on the bundled data, malformed input,
//! stdin, the sweep options and the human table.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{json, refused, stdout, tce, tce_stdin, write, TempDir, DATA};

/// The row of `estimator` over `binning`: (bins, value).
fn row(report: &Value, estimator: &str, binning: &str) -> (u64, f64) {
    let rows = report["estimates"].as_array().unwrap();
    let r = rows
        .iter()
        .find(|r| r["estimator"] == estimator && r["binning"] == binning)
        .unwrap_or_else(|| panic!("no {estimator}/{binning} row in {report}"));
    (r["bins"].as_u64().unwrap(), r["value"].as_f64().unwrap())
}

#[test]
fn bundled_data_reproduces_the_published_values() {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(DATA).join("manifest.json")).unwrap(),
    )
    .unwrap();
    let files = manifest["files"].as_array().unwrap();
    let mut csvs: Vec<String> = std::fs::read_dir(DATA)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| name.ends_with(".csv"))
        .collect();
    csvs.sort();
    assert!(!csvs.is_empty());
    for name in &csvs {
        let entry = files
            .iter()
            .find(|f| f["file"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} is not in manifest.json"));
        let path = Path::new(DATA).join(name);
        for (norm, key) in [("1", "ece15_l1"), ("2", "ece15_l2")] {
            let report = json(&tce(&[
                "estimate",
                path.to_str().unwrap(),
                "--json",
                "--norm",
                norm,
            ]));
            let (bins, value) = row(&report, "ece_bin", "equal_width");
            let expected = entry[key].as_f64().unwrap();
            assert_eq!(bins, 15, "{name}");
            assert!(
                (value - expected).abs() < 1e-6,
                "{name} {key}: {value} vs {expected}"
            );
            assert_eq!(report["n"], entry["rows"], "{name}");
            for k in ["accuracy", "mean_confidence"] {
                let (got, want) = (report[k].as_f64().unwrap(), entry[k].as_f64().unwrap());
                assert!((got - want).abs() < 1e-9, "{name} {k}: {got} vs {want}");
            }
            assert_eq!(report["norm"].as_f64(), Some(norm.parse().unwrap()));
            assert_eq!(report["estimates"].as_array().unwrap().len(), 9);
        }
    }
}

/// Runs `tce estimate` on `contents` and checks exit code 2 and that stderr names
/// `line` and contains `problem`.
fn assert_rejected(contents: &str, line: u64, problem: &str) {
    let dir = TempDir::new("rejected");
    let file = write(dir.path(), "input.csv", contents);
    let stderr = refused(&tce(&["estimate", &file]), &format!("{contents:?}"));
    assert!(
        stderr.contains(&format!("line {line}: ")),
        "{contents:?}: expected line {line}: {stderr}"
    );
    assert!(
        stderr.contains(problem),
        "{contents:?}: expected {problem:?}: {stderr}"
    );
}

#[test]
fn malformed_input_names_the_line_and_exits_2() {
    let good = "confidence,correct\n0.9,1\n0.8,0\n";
    assert_rejected(&format!("{good}NaN,1\n"), 4, "is NaN");
    assert_rejected(&format!("{good}1.5,1\n"), 4, "1.5 is out of range");
    assert_rejected(
        &format!("{good}0.7,1\n-0.25,0\n"),
        5,
        "-0.25 is out of range",
    );
    assert_rejected(&format!("{good}0.5,2\n"), 4, "2 is not a label");
    assert_rejected("confidence,label\n0.9,1\n", 1, "missing column `correct`");
    assert_rejected("score,correct\n0.9,1\n", 1, "missing column `confidence`");
    assert_rejected(&format!("{good}0.7\n"), 4, "missing field `correct`");
    assert_rejected(&format!("{good}0.x,1\n"), 4, "cannot parse `0.x`");
    assert_rejected(&format!("{good}0.5,yes\n"), 4, "cannot parse `yes`");
    assert_rejected(
        "confidence,correct\r\n0.9,1\r\n0.8,0\r\n1.5,1\r\n",
        4,
        "1.5 is out of range",
    );
    assert_rejected("", 1, "empty file");
    assert_rejected("confidence,correct\n", 2, "no data rows");
}

#[test]
fn a_column_name_the_header_repeats_is_ambiguous() {
    // The first `correct` was read and the second ignored, without a word.
    assert_rejected(
        "confidence,correct,correct\n0.9,1,0\n0.8,0,1\n",
        1,
        "ambiguous column `correct`: 2 columns have that name (fields 2, 3)",
    );
    assert_rejected(
        "confidence,id,confidence,correct\n0.9,a,0.1,1\n",
        1,
        "ambiguous column `confidence`: 2 columns have that name (fields 1, 3)",
    );
    // Named by an option too, and in class columns.
    let stderr = refused(
        &tce_stdin(
            &["estimate", "-", "--label-col", "y"],
            b"confidence,y,y\n0.9,1,0\n",
        ),
        "--label-col y",
    );
    assert!(
        stderr.contains("line 1: ambiguous column `y`")
            && stderr.contains("name another column with --label-col NAME"),
        "{stderr}"
    );
    let stderr = refused(
        &tce_stdin(
            &["estimate", "-", "--prob-cols", "p0,p1"],
            b"p0,p1,p1,label\n0.5,0.5,0.5,0\n",
        ),
        "--prob-cols p0,p1",
    );
    assert!(
        stderr.contains("line 1: ambiguous column `p1`: 2 columns have that name (fields 2, 3)"),
        "{stderr}"
    );
    // A repeated name that is not read is no concern of the reader's.
    let output = tce_stdin(
        &["estimate", "-", "--json"],
        b"note,confidence,note,correct\na,0.9,b,1\nc,0.8,d,0\n",
    );
    assert_eq!(json(&output)["n"], 2);
}

#[test]
fn a_utf8_byte_order_mark_before_the_header_is_skipped() {
    // Excel's "CSV UTF-8" starts with one; it was read as part of the first name
    // (`\u{feff}confidence`), and the message named a column that seemed to be there.
    let plain = "confidence,correct\n0.9,1\n0.8,0\n0.55,1\n";
    let expected = json(&tce_stdin(&["estimate", "-", "--json"], plain.as_bytes()));
    let dir = TempDir::new("bom");
    for (what, text) in [
        ("plain", format!("\u{feff}{plain}")),
        (
            "quoted header",
            "\u{feff}\"confidence\",correct\n0.9,1\n0.8,0\n0.55,1\n".to_string(),
        ),
        ("blank lines first", format!("\u{feff}\n\n{plain}")),
        ("crlf", format!("\u{feff}{}", plain.replace('\n', "\r\n"))),
    ] {
        let file = write(dir.path(), "bom.csv", &text);
        for output in [
            tce(&["estimate", &file, "--json"]),
            tce_stdin(&["estimate", "-", "--json"], text.as_bytes()),
        ] {
            let report = json(&output);
            assert_eq!(report["estimates"], expected["estimates"], "{what}");
            assert_eq!(
                report["settings"]["columns"]["score"], "confidence",
                "{what}"
            );
        }
    }
    // Class columns too.
    let output = tce_stdin(
        &["estimate", "-", "--prob-cols", "p*", "--json"],
        "\u{feff}p0,p1,label\n0.2,0.8,1\n0.7,0.3,1\n".as_bytes(),
    );
    assert_eq!(json(&output)["n"], 2);
    // Only at the start: a mark anywhere else is part of the data.
    assert_rejected("confidence,correct\n\u{feff}0.9,1\n", 2, "cannot parse");
    // A mark and nothing else is an empty file.
    assert_rejected("\u{feff}", 1, "empty file");
}

#[test]
fn invalid_options_exit_2() {
    let dir = TempDir::new("options");
    let file = write(dir.path(), "input.csv", "confidence,correct\n0.9,1\n");
    for args in [
        ["--bins", "0"],
        ["--norm", "0.5"],
        ["--max-bins", "0"],
        ["--closure", "middle"],
    ] {
        let output = tce(&["estimate", &file, args[0], args[1]]);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(!output.stderr.is_empty());
    }
    let output = tce(&["estimate", "/nonexistent/tce-cli-test.csv"]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn stdin_is_read_with_a_dash() {
    let path = Path::new(DATA).join("resnet50_birds_test.csv");
    let bytes = std::fs::read(&path).unwrap();
    let mut from_stdin = json(&tce_stdin(&["estimate", "-", "--json"], &bytes));
    let mut from_file = json(&tce(&["estimate", path.to_str().unwrap(), "--json"]));
    // Only the file setting differs.
    assert_eq!(from_stdin["settings"]["file"], "-");
    assert_eq!(from_file["settings"]["file"], path.to_str().unwrap());
    from_stdin["settings"]["file"] = Value::Null;
    from_file["settings"]["file"] = Value::Null;
    assert_eq!(from_stdin, from_file);
    assert_eq!(from_stdin["n"], 2897);

    let small = json(&tce_stdin(
        &[
            "estimate",
            "-",
            "--json",
            "--score-col",
            "p",
            "--label-col",
            "y",
        ],
        b"y,p\n1,0.9\n0,0.3\n1,0.8\n",
    ));
    assert_eq!(small["n"], 3);
    assert!((small["accuracy"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-15);
}

#[test]
fn sweep_options() {
    let path = Path::new(DATA).join("resnet110_c100_test.csv");
    let path = path.to_str().unwrap();
    let free = json(&tce(&["estimate", path, "--json"]));
    let capped = json(&tce(&["estimate", path, "--json", "--max-bins", "5"]));
    for binning in ["equal_width", "equal_mass"] {
        let (b_free, _) = row(&free, "ece_sweep", binning);
        let (b_capped, _) = row(&capped, "ece_sweep", binning);
        assert!(b_capped <= 5, "{binning}: b* = {b_capped}");
        assert_eq!(b_capped, b_free.min(5), "{binning}");
    }
    let paper = json(&tce(&["estimate", path, "--json", "--paper-limit"]));
    assert!(row(&paper, "ece_sweep", "equal_mass").0 >= 1);

    // Separable data is monotone for every b: b* reaches the limit, n or n − 1.
    let separable = "confidence,correct\n0.1,0\n0.2,0\n0.7,1\n0.8,1\n0.9,1\n";
    let b_star = |extra: &[&str]| {
        let mut args = vec!["estimate", "-", "--json"];
        args.extend_from_slice(extra);
        row(
            &json(&tce_stdin(&args, separable.as_bytes())),
            "ece_sweep",
            "equal_mass",
        )
        .0
    };
    assert_eq!(b_star(&[]), 5);
    assert_eq!(b_star(&["--paper-limit"]), 4);
    assert_eq!(b_star(&["--max-bins", "3"]), 3);
}

#[test]
fn human_table_has_every_estimator_row() {
    let path = Path::new(DATA).join("resnet110_c10_test.csv");
    let table = stdout(&tce(&["estimate", path.to_str().unwrap()]));
    for line in [
        "n                10000",
        "accuracy         0.935600",
        "mean confidence  0.983104",
        "norm             2",
    ] {
        assert!(table.contains(line), "{line:?} missing from\n{table}");
    }
    // The table ends at the first empty line (notes on ties may follow it).
    let rows: Vec<Vec<&str>> = table
        .lines()
        .skip_while(|l| !l.starts_with("estimator"))
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["estimator", "binning", "bins", "value"]);
    let mut seen = Vec::new();
    for r in &rows[1..] {
        assert_eq!(r.len(), 4, "{r:?}");
        let value: f64 = r[3].parse().unwrap();
        assert!(
            (0.0..=1.0).contains(&value) && r[3].split('.').nth(1).unwrap().len() == 6,
            "{r:?}"
        );
        seen.push((r[0], r[1]));
    }
    for estimator in ["ece_bin", "ece_sweep", "ece_debias", "mce"] {
        for binning in ["equal_width", "equal_mass"] {
            assert!(
                seen.contains(&(estimator, binning)),
                "{estimator}/{binning} missing from\n{table}"
            );
        }
    }
    assert!(
        table.contains("ece_bin     equal_width     15  0.066510"),
        "{table}"
    );
}

#[test]
fn closure_and_ties_change_the_bins() {
    let ece = |csv: &str, args: &[&str], binning: &str| {
        let mut all = vec!["estimate", "-", "--json", "--norm", "1"];
        all.extend_from_slice(args);
        row(&json(&tce_stdin(&all, csv.as_bytes())), "ece_bin", binning).1
    };
    // 0.6 on a bin edge of 5 bins: closed left it shares bin 3 with 0.7 (gap 0.15),
    // closed right it is alone in bin 2 (gaps 0.4 and 0.7, mean 0.55).
    let edge = "confidence,correct\n0.6,1\n0.7,0\n";
    assert!((ece(edge, &["--bins", "5"], "equal_width") - 0.15).abs() < 1e-12);
    assert!(
        (ece(edge, &["--bins", "5", "--closure", "right"], "equal_width") - 0.55).abs() < 1e-12
    );
    // Three tied 0.5 scores, 2 equal-mass bins: split gives {0.5, 0.5} {0.5, 0.9} (gaps
    // 0.5 and 0.3), keep gives {0.5, 0.5, 0.5} {0.9} (gaps 1/6 with weight 3/4 and 0.1).
    let ties = "confidence,correct\n0.5,0\n0.5,0\n0.5,1\n0.9,1\n";
    assert!((ece(ties, &["--bins", "2"], "equal_mass") - 0.4).abs() < 1e-12);
    assert!((ece(ties, &["--bins", "2", "--ties", "keep"], "equal_mass") - 0.15).abs() < 1e-12);
}

/// The `smece` row of `tce estimate` is relplot 1.0.3's smECE (tests/fixtures/smece_relplot.csv
/// of the library), at any norm, with its bandwidth; the table shows both.
#[test]
fn estimate_reports_smooth_ece_as_relplot_computes_it() {
    let path = Path::new(DATA).join("resnet110_c10_test.csv");
    for norm in ["1", "2"] {
        let report = json(&tce(&[
            "estimate",
            path.to_str().unwrap(),
            "--json",
            "--norm",
            norm,
        ]));
        let rows = report["estimates"].as_array().unwrap();
        let smooth = rows.iter().find(|r| r["estimator"] == "smece").unwrap();
        assert!(smooth.get("binning").is_none() && smooth.get("bins").is_none());
        let value = smooth["value"].as_f64().unwrap();
        assert!((value - 0.07068728946051091).abs() < 1e-12, "{value}");
        assert_eq!(smooth["bandwidth"].as_f64(), Some(0.0712890625));
    }
    let table = String::from_utf8(tce(&["estimate", path.to_str().unwrap()]).stdout).unwrap();
    assert!(table.contains("smece bandwidth  0.071289"), "{table}");
    assert!(
        table.contains("smece       -                -  0.070687"),
        "{table}"
    );
}
