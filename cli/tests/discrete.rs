//! Issue 35: discrete confidences and large norms at the command line. With a handful of
//! distinct confidences (LLMs stating confidence in words) or a constant one, no binning
//! is ever non-monotone and the equal-width sweep used to walk every b up to n, O(n²):
//! 9.9 s for `tce estimate` on 20 000 rows of six values, minutes for `tce report` on
//! 2000 rows. Now b* is the smallest bin count that gives the final grouping, both
//! commands finish at once, and both say what few distinct confidences mean. A large
//! finite `--norm` used to give 0 (|gap|^p underflowed).

mod common;
use common::{json, scratch, stdout, tce_bounded, write};

/// `rows` rows cycling through `values`, hits drawn with probability the confidence
/// from a fixed sequence (a calibrated model), as CSV.
fn csv(values: &[f64], rows: usize) -> String {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut text = String::from("confidence,correct\n");
    for i in 0..rows {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let u = (state >> 11) as f64 / (1u64 << 53) as f64;
        let score = values[i % values.len()];
        text.push_str(&format!("{score},{}\n", u8::from(u < score)));
    }
    text
}

/// The b* the JSON of `tce estimate` reports for the sweep with `binning`.
fn sweep_bins(report: &serde_json::Value, binning: &str) -> u64 {
    report["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["estimator"] == "ece_sweep" && e["binning"] == binning)
        .and_then(|e| e["bins"].as_u64())
        .unwrap()
}

#[test]
fn estimate_on_few_distinct_confidences_finishes_at_once_and_says_so() {
    let dir = scratch("estimate_few_distinct");
    let six = write(
        dir.path(),
        "six.csv",
        csv(&[0.5, 0.6, 0.7, 0.8, 0.9, 0.95], 20_000),
    );
    // Generous bounds: the old sweep took 9.9 s here, and O(n²) at 10^5 rows.
    let report = json(&tce_bounded(&["estimate", &six, "--json"], 2048, 60));
    assert_eq!(report["distinct_scores"], 6);
    // Equal width: 11 bins is the fewest that give 0.9 and 0.95 bins of their own.
    assert_eq!(sweep_bins(&report, "equal_width"), 11);
    let notes = report["notes"].as_array().unwrap();
    assert!(
        notes[0]
            .as_str()
            .unwrap()
            .starts_with("only 6 distinct confidences among 20000 samples"),
        "{notes:?}"
    );
    // Ties kept: the equal-mass sweep also stops at a grouping of the six values.
    let kept = json(&tce_bounded(
        &["estimate", &six, "--json", "--ties", "keep"],
        2048,
        60,
    ));
    assert!(sweep_bins(&kept, "equal_mass") <= 20_000);
    assert_eq!(
        kept["notes"].as_array().unwrap().len(),
        1,
        "no split-ties note"
    );

    let constant = write(dir.path(), "constant.csv", csv(&[0.8], 100_000));
    let report = json(&tce_bounded(&["estimate", &constant, "--json"], 2048, 60));
    assert_eq!(report["distinct_scores"], 1);
    assert_eq!(sweep_bins(&report, "equal_width"), 1);
    let text = stdout(&tce_bounded(&["estimate", &constant], 2048, 60));
    assert!(
        text.contains("note: only 1 distinct confidence among 100000 samples"),
        "{text}"
    );
    assert!(
        text.contains("note: 100.0% of the samples have the confidence 0.8"),
        "{text}"
    );
}

#[test]
fn report_on_few_distinct_confidences_finishes_and_says_so() {
    let dir = scratch("report_few_distinct");
    let words = write(
        dir.path(),
        "words.csv",
        csv(&[0.6, 0.7, 0.8, 0.9, 0.95, 0.99], 2000),
    );
    let args = [
        "report",
        &words,
        "--no-test",
        "--json",
        "--resamples",
        "50",
        "--simulations",
        "20",
    ];
    let report = json(&tce_bounded(&args, 4096, 120));
    assert_eq!(report["distinct_scores"], 6, "{report}");
    let notes = report["notes"].as_array().unwrap();
    assert!(notes[0]
        .as_str()
        .unwrap()
        .starts_with("only 6 distinct confidences among 2000 samples"));
    let text = stdout(&tce_bounded(&args[..3], 4096, 120));
    assert!(text.contains("note: only 6 distinct confidences"), "{text}");
}

#[test]
fn a_large_finite_norm_is_not_zero() {
    let dir = scratch("large_norm");
    let file = write(dir.path(), "words.csv", csv(&[0.6, 0.9, 0.99], 3000));
    let at = |p: &str| {
        json(&tce_bounded(
            &["estimate", &file, "--json", "--norm", p],
            2048,
            60,
        ))
    };
    let (l2, large) = (at("2"), at("5000"));
    for (i, row) in large["estimates"].as_array().unwrap().iter().enumerate() {
        let value = row["value"].as_f64().unwrap();
        // l_p means never decrease with p, and tend to the largest bin gap (MCE).
        let smaller = l2["estimates"][i]["value"].as_f64().unwrap();
        if row["estimator"] == "ece_bin" {
            assert!(value > 0.0 && value >= smaller, "{row}");
        }
    }
    let report = json(&tce_bounded(
        &[
            "report",
            "--no-test",
            &file,
            "--json",
            "--norm",
            "5000",
            "--resamples",
            "30",
            "--simulations",
            "10",
        ],
        4096,
        120,
    ));
    let first = &report["estimators"][0];
    assert!(first["value"].as_f64().unwrap() > 0.0, "{first}");
}
