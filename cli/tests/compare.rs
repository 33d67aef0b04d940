//! `tce compare A B` end to end: the JSON and the summary are the library's on the same
//! rows (the CLI only reads), rows joined by --id give the same comparison as rows in
//! the same order, and bad input (rows that differ, a missing or repeated id, a test as
//! the statistic, bad options) is refused as a named error with exit 2.

mod common;
use common::{json, refused, scratch, stdout, tce};

use tce::decision::compare::paired::PairedModel;
use tce::decision::compare::{compare, CompareSettings, Paired};
use tce::sim::{Beta, Curve};

const FAST: [&str; 2] = ["--resamples", "99"];

fn data() -> Paired {
    PairedModel::new(
        Beta::new(2.0, 5.0).unwrap(),
        Curve::logistic_log_odds(0.0, 2.0).unwrap(),
        Curve::logistic_log_odds(0.3, 1.2).unwrap(),
    )
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
    let n = d.labels.len();
    let a = dir.file("a.csv", csv(&d.scores_a, &d.labels, 0..n));
    let b = dir.file("b.csv", csv(&d.scores_b, &d.labels, 0..n));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let settings = CompareSettings {
        resamples: 99,
        seed: 4,
        ..CompareSettings::default()
    };
    let expected = compare(&d.scores_a, &d.scores_b, &d.labels, &settings).unwrap();
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
    assert_eq!(v["a"]["estimate"].as_f64().unwrap(), expected.a.value);
    assert_eq!(v["b"]["estimate"].as_f64().unwrap(), expected.b.value);
    assert_eq!(v["delta"].as_f64().unwrap(), expected.delta);
    assert_eq!(
        v["interval"]["lower"].as_f64().unwrap(),
        expected.interval.lower
    );
    assert_eq!(v["decision"]["p_value"].as_f64().unwrap(), expected.p_value);
    assert_eq!(v["decision"]["reject"], expected.reject());
    let text = stdout(&tce(&["compare", a, b, "--seed", "4", "--resamples", "99"]));
    assert_eq!(text, tce::decision::compare::text::summary(a, b, &expected));
    assert!(text.contains("Delta = A - B"), "{text}");

    // B's rows in reverse order, joined back by id: the same comparison.
    let shuffled = dir.file("b_reversed.csv", csv(&d.scores_b, &d.labels, (0..n).rev()));
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
    // Without --id the reversed rows do not pair: their labels differ somewhere.
    let stderr = refused(
        &tce(&["compare", a, shuffled.to_str().unwrap()]),
        "rows in another order",
    );
    assert!(stderr.contains("model A's input has label"), "{stderr}");
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
