//! `tce compare A B` end to end: the JSON and the summary are the library's on the same
//! rows, each file with its own labels (the CLI only reads); two real classifiers on
//! CIFAR-10, whose CE and Δ are each file's own estimate; class outputs, each model's
//! correctness its own argmax against the true class; rows joined by --id give the same
//! comparison as rows in the same order; and bad input (rows that differ in number or
//! in true class, a missing or repeated id, a test as the statistic, bad options) is
//! refused as a named error with exit 2.

mod common;
use common::{c10, data as bundled, json, refused, scratch, stdout, tce};

use tce::decision::compare::paired::PairedModel;
use tce::decision::compare::{compare, CompareSettings, Model, Outputs, Paired};
use tce::sim::{Beta, Curve};

const FAST: [&str; 2] = ["--resamples", "99"];

/// A JSON number against a double: serde_json reads back within an ulp or two of what
/// `tce` wrote (without its float_roundtrip feature), so within 4 ulps of the larger
/// of the value and 0.1 (a difference of two estimates near 0.1 carries their ulps).
fn close(json: &serde_json::Value, x: f64) {
    let y = json.as_f64().expect("a number");
    assert!(
        (y - x).abs() <= 4.0 * f64::EPSILON * x.abs().max(0.1),
        "{y} vs {x}"
    );
}

/// Two models right on different rows (labels drawn apart, ρ = 0.5).
fn data() -> Paired {
    PairedModel::new(
        Beta::new(2.0, 5.0).unwrap(),
        Curve::logistic_log_odds(0.0, 2.0).unwrap(),
        Curve::logistic_log_odds(0.3, 1.2).unwrap(),
    )
    .unwrap()
    .with_label_correlation(0.5)
    .unwrap()
    .dataset(3, 0, 500)
}

/// (id, confidence, correct) rows in the order of `rows`.
fn csv(scores: &[f64], labels: &[u8], rows: impl Iterator<Item = usize>) -> String {
    let mut text = String::from("id,confidence,correct\n");
    for i in rows {
        text += &format!("row{i},{:?},{}\n", scores[i], labels[i]);
    }
    text
}

#[test]
fn the_cli_prints_the_library_comparison() {
    let dir = scratch("compare_library");
    let d = data();
    let n = d.len();
    assert_ne!(d.labels(Model::A), d.labels(Model::B));
    let file = |name, m| dir.file(name, csv(d.scores(m), d.labels(m), 0..n));
    let (a, b) = (file("a.csv", Model::A), file("b.csv", Model::B));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let settings = CompareSettings {
        resamples: 99,
        seed: 4,
        ..CompareSettings::default()
    };
    let expected = compare(&d, &settings).unwrap();
    let v = json(&tce(&[
        "compare",
        a,
        b,
        "--json",
        "--seed",
        "4",
        "--resamples",
        "99",
    ]));
    assert_eq!(v["command"], "compare");
    assert_eq!(v["n"], 500);
    assert_eq!(v["settings"]["statistic"], "ece_sweep:equal_mass");
    close(&v["a"]["estimate"], expected.a.value);
    close(&v["b"]["estimate"], expected.b.value);
    close(&v["delta"], expected.delta);
    close(&v["interval"]["lower"], expected.interval.lower);
    close(&v["decision"]["p_value"], expected.p_value);
    assert_eq!(v["decision"]["reject"], expected.reject());
    let text = stdout(&tce(&["compare", a, b, "--seed", "4", "--resamples", "99"]));
    assert_eq!(text, tce::decision::compare::text::summary(a, b, &expected));
    assert!(text.contains("Delta = A - B"), "{text}");

    // B's rows in reverse order, joined back by id: the same comparison.
    let shuffled = dir.file(
        "b_reversed.csv",
        csv(d.scores(Model::B), d.labels(Model::B), (0..n).rev()),
    );
    let joined = json(&tce(&[
        "compare",
        a,
        shuffled.to_str().unwrap(),
        "--id",
        "id",
        "--json",
        "--seed",
        "4",
        "--resamples",
        "99",
    ]));
    assert_eq!(joined["delta"], v["delta"]);
    assert_eq!(joined["decision"], v["decision"]);
    // Without --id, row i of A is row i of the reversed file: the library's comparison
    // of those rows (confidence files carry nothing that could tell).
    let misaligned = json(&tce(&[
        "compare",
        a,
        shuffled.to_str().unwrap(),
        "--json",
        "--seed",
        "4",
        "--resamples",
        "99",
    ]));
    let reversed = |v: &[f64]| v.iter().rev().copied().collect::<Vec<_>>();
    let labels_reversed: Vec<u8> = d.labels(Model::B).iter().rev().copied().collect();
    let expected = compare(
        &Paired::by_order(
            Outputs::new(d.scores(Model::A), d.labels(Model::A)),
            Outputs::new(&reversed(d.scores(Model::B)), &labels_reversed),
        )
        .unwrap(),
        &settings,
    )
    .unwrap();
    // Each model's CE is a function of its own (score, label) pairs, whatever their
    // order, so Δ is the same; what the misalignment changes is the pairing, so the
    // interval.
    close(&misaligned["delta"], expected.delta);
    close(&misaligned["interval"]["lower"], expected.interval.lower);
    close(&misaligned["interval"]["upper"], expected.interval.upper);
    assert_ne!(misaligned["interval"], v["interval"]);
}

/// The `estimate` of `tce estimate --json` for `estimator` and `binning`.
fn estimate(v: &serde_json::Value, estimator: &str, binning: &str) -> f64 {
    v["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["estimator"] == estimator && e["binning"] == binning)
        .unwrap()["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn two_classifiers_on_cifar10_each_with_its_own_correctness() {
    // ResNet-110 and DenseNet-40 on the 10000 CIFAR-10 test images, in the same order
    // (the same true class on every row): each file's `correct` column is its own, and
    // they differ on 646 rows. CE_A, CE_B are `tce estimate` of each file alone, and Δ
    // their difference.
    let (a, b) = (c10(), bundled("densenet40_c10_test.csv"));
    let v = json(&tce(&["compare", &a, &b, "--json", "--resamples", "99"]));
    assert_eq!(v["n"], 10_000);
    for (file, side) in [(&a, "a"), (&b, "b")] {
        let alone = json(&tce(&["estimate", file, "--json"]));
        close(
            &v[side]["estimate"],
            estimate(&alone, "ece_sweep", "equal_mass"),
        );
        assert_eq!(v[side]["sweep_bins"], alone["estimates"][3]["bins"]);
    }
    close(
        &v["delta"],
        v["a"]["estimate"].as_f64().unwrap() - v["b"]["estimate"].as_f64().unwrap(),
    );
    // The same with ECE_bin (equal width, 15 bins).
    let v = json(&tce(&[
        "compare",
        &a,
        &b,
        "--json",
        "--resamples",
        "99",
        "--statistic",
        "ece_bin:equal_width",
    ]));
    let alone = |file: &str| {
        estimate(
            &json(&tce(&["estimate", file, "--json"])),
            "ece_bin",
            "equal_width",
        )
    };
    close(&v["delta"], alone(&a) - alone(&b));
}

/// A `.npy` file (format 1.0, C order) of `data`, already in the byte order `descr` says.
fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
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

/// Class probabilities of `rows` (p0, p1, p2) with the true class, as CSV.
fn class_csv(rows: &[([f64; 3], usize)]) -> String {
    let mut text = String::from("p0,p1,p2,label\n");
    for (p, y) in rows {
        text += &format!("{:?},{:?},{:?},{y}\n", p[0], p[1], p[2]);
    }
    text
}

#[test]
fn class_outputs_each_models_argmax_against_the_true_class() {
    // 60 rows of 3 classes; A and B put their largest probability on different classes,
    // so each is right on its own rows. The expected comparison is the library's on the
    // top labels written out here: the largest probability, and 1 where its class is
    // the true one.
    let n = 60;
    let true_class = |i: usize| i % 3;
    let probs = |i: usize, shift: usize, top: f64| {
        let mut p = [(1.0 - top) / 2.0; 3];
        p[(i * 7 / 5 + shift) % 3] = top;
        p
    };
    let rows_a: Vec<([f64; 3], usize)> = (0..n)
        .map(|i| {
            (
                probs(i, 0, 0.5 + 0.4 * (i as f64 / n as f64)),
                true_class(i),
            )
        })
        .collect();
    let rows_b: Vec<([f64; 3], usize)> = (0..n)
        .map(|i| {
            (
                probs(i, i % 2, 0.9 - 0.3 * (i as f64 / n as f64)),
                true_class(i),
            )
        })
        .collect();
    let top = |rows: &[([f64; 3], usize)]| -> (Vec<f64>, Vec<u8>) {
        rows.iter()
            .map(|(p, y)| {
                let k = (0..3).fold(0, |k, j| if p[j] > p[k] { j } else { k });
                (p[k], u8::from(k == *y))
            })
            .unzip()
    };
    let ((sa, ya), (sb, yb)) = (top(&rows_a), top(&rows_b));
    assert_ne!(ya, yb);
    let dir = scratch("compare_classes");
    let a = dir.file("a.csv", class_csv(&rows_a));
    let b = dir.file("b.csv", class_csv(&rows_b));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let settings = CompareSettings {
        resamples: 99,
        ..CompareSettings::default()
    };
    let expected = compare(
        &Paired::by_order(Outputs::new(&sa, &ya), Outputs::new(&sb, &yb)).unwrap(),
        &settings,
    )
    .unwrap();
    let args = ["compare", a, b, "--prob-cols", "p*", "--resamples", "99"];
    let v = json(&tce(&[&args[..], &["--json"]].concat()));
    close(&v["delta"], expected.delta);
    close(&v["a"]["estimate"], expected.a.value);
    close(&v["b"]["estimate"], expected.b.value);
    close(&v["decision"]["p_value"], expected.p_value);
    assert_eq!(v["a"]["input"]["values"], "probabilities");
    // The same tables as .npy arrays (N×K float64, class ids int64): the same numbers.
    let table = |rows: &[([f64; 3], usize)]| -> Vec<u8> {
        let values: Vec<u8> = rows
            .iter()
            .flat_map(|(p, _)| p.iter().flat_map(|v| v.to_le_bytes()))
            .collect();
        npy("<f8", &format!("({n}, 3)"), &values)
    };
    let ids = |rows: &[([f64; 3], usize)]| -> Vec<u8> {
        let values: Vec<u8> = rows
            .iter()
            .flat_map(|(_, y)| (*y as i64).to_le_bytes())
            .collect();
        npy("<i8", &format!("({n},)"), &values)
    };
    let (pa, pb, y) = (
        dir.file("a.npy", table(&rows_a)),
        dir.file("b.npy", table(&rows_b)),
        dir.file("y.npy", ids(&rows_a)),
    );
    let path = |p: &std::path::PathBuf| p.to_str().unwrap().to_owned();
    let (pa, pb, y) = (path(&pa), path(&pb), path(&y));
    let npy_args = [
        "compare",
        &pa,
        &pb,
        "--labels-a",
        &y,
        "--labels-b",
        &y,
        "--resamples",
        "99",
        "--json",
    ];
    let from_npy = json(&tce(&npy_args));
    close(&from_npy["delta"], expected.delta);
    close(&from_npy["decision"]["p_value"], expected.p_value);
    assert_eq!(from_npy["interval"], v["interval"]);
    // B's file with another true class on row 7: not the same examples.
    let mut wrong = rows_b.clone();
    wrong[7].1 = (wrong[7].1 + 1) % 3;
    let wrong = dir.file("wrong.csv", class_csv(&wrong));
    let stderr = refused(
        &tce(&["compare", a, wrong.to_str().unwrap(), "--prob-cols", "p*"]),
        "a true class that differs",
    );
    assert!(
        stderr.contains("row 7: model A's input has true class 1, model B's has 2"),
        "{stderr}"
    );
    let mut other = rows_a.clone();
    other[7].1 = 2;
    let other = path(&dir.file("other.npy", ids(&other)));
    let stderr = refused(
        &tce(&["compare", &pa, &pb, "--labels-a", &y, "--labels-b", &other]),
        "a .npy true class that differs",
    );
    assert!(
        stderr.contains("row 7: model A's input has true class 1, model B's has 2"),
        "{stderr}"
    );
}

#[test]
fn bad_input_is_refused_with_its_name() {
    let dir = scratch("compare_refused");
    let a = dir.file(
        "a.csv",
        "id,confidence,correct\nx,0.2,0\ny,0.7,1\nz,0.9,1\n",
    );
    let short = dir.file("short.csv", "id,confidence,correct\nx,0.3,0\ny,0.6,1\n");
    let missing = dir.file(
        "missing.csv",
        "id,confidence,correct\nx,0.3,0\ny,0.6,1\nw,0.8,1\n",
    );
    let twice = dir.file(
        "twice.csv",
        "id,confidence,correct\nx,0.3,0\ny,0.6,1\ny,0.8,1\n",
    );
    let bad = dir.file(
        "bad.csv",
        "id,confidence,correct\nx,0.3,0\ny,1.6,1\nz,0.8,1\n",
    );
    let p = |path: &std::path::PathBuf| path.to_str().unwrap().to_owned();
    let (a, short, missing, twice, bad) = (p(&a), p(&short), p(&missing), p(&twice), p(&bad));
    let cases: [(Vec<&str>, &str); 8] = [
        (vec![&a, &short], "differ in length"),
        (
            vec![&a, &missing, "--id", "id"],
            "id \"z\" is missing from model B's input",
        ),
        (
            vec![&a, &twice, "--id", "id"],
            "occurs more than once in model B's input",
        ),
        (vec![&a, &a, "--id", "nope"], "no id column \"nope\""),
        (vec![&a, &bad], "bad.csv: line 3"),
        (
            vec![&a, &a, "--statistic", "spiegelhalter"],
            "not a calibration error",
        ),
        (vec![&a, &a, "--resamples", "0"], "--resamples"),
        (vec![&a, &a, "--alpha", "1.5"], "--alpha"),
    ];
    for (args, message) in cases {
        let mut all = vec!["compare"];
        all.extend(&args);
        all.extend(FAST.iter().filter(|_| !args.contains(&"--resamples")));
        let stderr = refused(&tce(&all), message);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}
