//! `tce fit`, `tce fit-check`, `tce recalibrate` and `tce table1`, end to end: the fitted
//! GLMs and their AIC, the best model, the SVG, recalibrated files (row for row, each
//! method's shape of map), small Table 1 and Fig. 3c runs cross-checked against `tce fit`
//! and `tce estimate`, and exit 2 on bad input.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;

mod common;
use common::{
    birds, c10, csv_samples as samples, exits, json, path_str, scratch, stdout, tce, tce_command,
    tce_stdin, DATA,
};

/// The rows of a CSV as fields (no quoting in these files), header first.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.split(',').map(|f| f.trim().to_string()).collect())
        .collect()
}

fn accuracy(labels: &[u8]) -> f64 {
    labels.iter().map(|&l| f64::from(l)).sum::<f64>() / labels.len() as f64
}

fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len() as f64
}

fn logit(x: f64) -> f64 {
    (x / (1.0 - x)).ln()
}

/// `tce fit FILE --json` with `extra` options.
fn fit_json_with(file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["fit", file, "--json"];
    args.extend_from_slice(extra);
    json(&tce(&args))
}

fn fit_json(file: &str) -> Value {
    fit_json_with(file, &[])
}

fn glm<'a>(fit: &'a Value, name: &str) -> &'a Value {
    fit["glms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no GLM {name} in {fit}"))
}

/// Eligible as the best model: a valid maximum with a simulator curve (no note).
fn usable(g: &Value) -> bool {
    g["valid"] == true && g.get("note").is_none()
}

// ---------------------------------------------------------------- tce fit

#[test]
fn fit_json_has_twelve_glms_their_aic_and_the_best_usable_one() {
    let fit = fit_json(&birds());
    let (scores, labels) = samples(&std::fs::read_to_string(birds()).unwrap());
    assert_eq!(fit["n"], 2897);
    assert_eq!(scores.len(), 2897);

    // Beta density: positive, finite, and its mean near the mean confidence (0.733).
    let alpha = fit["beta"]["alpha"].as_f64().unwrap();
    let beta = fit["beta"]["beta"].as_f64().unwrap();
    assert!(alpha.is_finite() && alpha > 0.0, "alpha {alpha}");
    assert!(beta.is_finite() && beta > 0.0, "beta {beta}");
    let beta_mean = alpha / (alpha + beta);
    assert!(
        (beta_mean - mean(&scores)).abs() < 0.02,
        "Beta mean {beta_mean} vs mean confidence {}",
        mean(&scores)
    );

    // Twelve GLMs: 4 (link, transform) pairs × 3 predictors, each named once.
    let glms = fit["glms"].as_array().unwrap();
    assert_eq!(glms.len(), 12);
    let expected: BTreeSet<String> = ["log_log", "logflip_logflip", "logit_logit", "logit_logflip"]
        .iter()
        .flat_map(|pair| ["b1", "b0", "b0_b1"].map(|p| format!("{pair}_{p}")))
        .collect();
    let names: BTreeSet<String> = glms
        .iter()
        .map(|g| g["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, expected);

    for g in glms {
        let name = g["name"].as_str().unwrap();
        let (b0, b1) = (g["b0"].as_f64().unwrap(), g["b1"].as_f64().unwrap());
        let (nll, aic) = (g["nll"].as_f64().unwrap(), g["aic"].as_f64().unwrap());
        assert!(nll.is_finite() && nll > 0.0, "{name}: nll {nll}");
        // AIC = 2k + 2·NLL with k the free coefficients; the fixed one is exactly 0.
        let k = if name.ends_with("_b0_b1") {
            2.0
        } else if name.ends_with("_b0") {
            assert_eq!(b1, 0.0, "{name}: slope is fixed");
            1.0
        } else {
            assert!(name.ends_with("_b1"), "{name}");
            assert_eq!(b0, 0.0, "{name}: intercept is fixed");
            1.0
        };
        assert!(
            (aic - (2.0 * k + 2.0 * nll)).abs() < 1e-9 * aic.abs(),
            "{name}: aic {aic}, nll {nll}, k {k}"
        );
        if g["valid"] == false {
            assert!(g.get("note").is_some(), "{name}: invalid without a note");
        }
    }

    // Intercept-only models fit the accuracy whatever the link, with the Bernoulli NLL.
    let acc = accuracy(&labels);
    let nll_acc = -(labels.len() as f64) * (acc * acc.ln() + (1.0 - acc) * (1.0 - acc).ln());
    for (name, mu) in [
        ("log_log_b0", (|b: f64| b.exp()) as fn(f64) -> f64),
        ("logflip_logflip_b0", |b: f64| -b.exp_m1()),
        ("logit_logit_b0", |b: f64| 1.0 / (1.0 + (-b).exp())),
        ("logit_logflip_b0", |b: f64| 1.0 / (1.0 + (-b).exp())),
    ] {
        let g = glm(&fit, name);
        let fitted = mu(g["b0"].as_f64().unwrap());
        assert!(
            (fitted - acc).abs() < 1e-6,
            "{name}: mean {fitted} vs accuracy {acc}"
        );
        let nll = g["nll"].as_f64().unwrap();
        assert!(
            (nll - nll_acc).abs() < 1e-6 * nll_acc,
            "{name}: {nll} vs {nll_acc}"
        );
    }

    // `best` is usable and has the lowest AIC among the usable fits.
    let best = fit["best"].as_str().unwrap();
    let best_glm = glm(&fit, best);
    assert!(usable(best_glm), "best {best} is not usable: {best_glm}");
    let best_aic = best_glm["aic"].as_f64().unwrap();
    for g in glms.iter().filter(|g| usable(g)) {
        assert!(
            best_aic <= g["aic"].as_f64().unwrap(),
            "{} has a lower AIC than best {best}",
            g["name"]
        );
    }

    // TCE as a fraction: l1 <= l2 (Jensen), both in [0, 1]; this file is nearly calibrated.
    let l1 = fit["tce"]["l1"].as_f64().unwrap();
    let l2 = fit["tce"]["l2"].as_f64().unwrap();
    assert!(
        (0.0..=1.0).contains(&l1) && (0.0..=1.0).contains(&l2),
        "{l1}, {l2}"
    );
    assert!(l1 <= l2, "TCE l1 {l1} > l2 {l2}");
    assert!(l2 > 0.0 && l2 < 0.05, "TCE_2 {l2} is not a small fraction");
    assert!(fit.get("bootstrap").is_none());
}

#[test]
fn fit_table_marks_the_best_model() {
    let fit = fit_json(&birds());
    let best = fit["best"].as_str().unwrap();
    let table = stdout(&tce(&["fit", &birds()]));
    assert!(table.starts_with("n = 2897\n"), "{table}");
    let marked: Vec<&str> = table.lines().filter(|l| l.starts_with('*')).collect();
    assert_eq!(marked.len(), 1, "{table}");
    assert_eq!(marked[0].split_whitespace().nth(1), Some(best), "{table}");
    // Every GLM has its row, AIC to three decimals.
    for g in fit["glms"].as_array().unwrap() {
        let name = g["name"].as_str().unwrap();
        let row = table
            .lines()
            .find(|l| l.get(2..).and_then(|r| r.split_whitespace().next()) == Some(name))
            .unwrap_or_else(|| panic!("no row {name} in {table}"));
        let aic = format!("{:.3}", g["aic"].as_f64().unwrap());
        assert!(row.contains(&aic), "{row} lacks AIC {aic}");
    }
    assert!(
        table.contains(&format!("best (lowest AIC, marked *): {best} = ")),
        "{table}"
    );
    let l2 = format!("l2 = {:.6}", fit["tce"]["l2"].as_f64().unwrap());
    assert!(table.contains(&l2), "{table} lacks {l2}");
}

#[test]
fn fit_svg_writes_a_nonempty_svg() {
    let dir = scratch("svg");
    let svg = dir.join("fit.svg");
    let _ = std::fs::remove_file(&svg);
    let table = stdout(&tce(&["fit", &birds(), "--svg", path_str(&svg)]));
    assert!(
        table.contains("marked *"),
        "the table is still printed: {table}"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.len() > 1000, "{} bytes", text.len());
    assert!(
        text.starts_with("<svg") || text.starts_with("<?xml"),
        "{}",
        &text[..text.len().min(200)]
    );
    assert!(text.trim_end().ends_with("</svg>"));
}

#[test]
fn fit_reads_stdin_like_the_file() {
    let file = stdout(&tce(&["fit", &birds(), "--json"]));
    let stdin = stdout(&tce_stdin(
        &["fit", "-", "--json"],
        &std::fs::read(birds()).unwrap(),
    ));
    // The same JSON but for the file setting.
    let (mut file, mut stdin): (Value, Value) = (
        serde_json::from_str(&file).unwrap(),
        serde_json::from_str(&stdin).unwrap(),
    );
    assert_eq!(stdin["settings"]["file"], "-");
    assert_eq!(file["settings"]["file"], birds());
    file["settings"]["file"] = Value::Null;
    stdin["settings"]["file"] = Value::Null;
    assert_eq!(stdin, file);
}

#[test]
fn fit_bootstrap_is_seeded_and_spreads_the_free_coefficients() {
    let run = |seed: &str| {
        let out = stdout(&tce(&[
            "fit",
            &birds(),
            "--json",
            "--bootstrap",
            "4",
            "--seed",
            seed,
        ]));
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let (a, again, other) = (run("7"), run("7"), run("8"));
    assert_eq!(a, again, "same seed, same replicates");
    assert_ne!(
        a["bootstrap"], other["bootstrap"],
        "another seed, other replicates"
    );
    assert_eq!(a["bootstrap"]["replicates"], 4);
    // The point estimates do not depend on the bootstrap.
    assert_eq!(a["glms"][0]["b1"], fit_json(&birds())["glms"][0]["b1"]);
    for spread in [&a["bootstrap"]["alpha"], &a["bootstrap"]["beta"]] {
        let (se, lo, hi) = (
            spread["se"].as_f64().unwrap(),
            spread["lower"].as_f64().unwrap(),
            spread["upper"].as_f64().unwrap(),
        );
        assert!(se > 0.0 && se.is_finite() && lo <= hi, "{spread}");
    }
    for g in a["glms"].as_array().unwrap() {
        let name = g["name"].as_str().unwrap();
        let b = &g["bootstrap"];
        for coefficient in ["b0", "b1"] {
            let se = b[coefficient]["se"].as_f64().unwrap();
            let fixed = (coefficient == "b0" && name.ends_with("_b1") && !name.ends_with("_b0_b1"))
                || (coefficient == "b1" && name.ends_with("_b0"));
            if fixed {
                assert_eq!(se, 0.0, "{name} {coefficient} is fixed");
            } else {
                assert!(se >= 0.0 && se.is_finite(), "{name} {coefficient}: {b}");
            }
            assert!(
                b[coefficient]["lower"].as_f64().unwrap()
                    <= b[coefficient]["upper"].as_f64().unwrap()
            );
        }
        assert!(b["invalid_replicates"].as_u64().unwrap() <= 4);
    }
}

// ---------------------------------------------------------------- tce recalibrate

/// The birds file split in two (rows 1..=1500 and the rest), all columns kept.
fn split_birds(dir: &Path) -> (PathBuf, PathBuf) {
    let text = std::fs::read_to_string(birds()).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap();
    let rows: Vec<&str> = lines.collect();
    let (a, b) = (dir.join("a.csv"), dir.join("b.csv"));
    for (path, part) in [(&a, &rows[..1500]), (&b, &rows[1500..])] {
        let mut body = String::from(header);
        body.push('\n');
        for row in part {
            body.push_str(row);
            body.push('\n');
        }
        std::fs::write(path, body).unwrap();
    }
    (a, b)
}

/// Runs `tce recalibrate --method method --fit a --apply b --out out`, checks that the
/// output is `b` row for row with only the confidences changed (and in [0, 1]) and that
/// stdout describes the fitted map, and returns the (original, recalibrated) confidence
/// pairs.
fn recalibrate(method: &str, a: &Path, b: &Path, out: &Path) -> Vec<(f64, f64)> {
    let _ = std::fs::remove_file(out);
    let stdout = stdout(&tce(&[
        "recalibrate",
        "--method",
        method,
        "--fit",
        path_str(a),
        "--apply",
        path_str(b),
        "--out",
        path_str(out),
    ]));
    let words = match method {
        "histogram" => "histogram binning: 15 equal-width bins",
        "isotonic" => "isotonic regression: ",
        "platt" => "Platt scaling: ",
        _ => "top-label temperature scaling: ",
    };
    assert!(
        stdout.starts_with(words),
        "with --out, stdout describes the map: {stdout}"
    );
    let input = csv_rows(&std::fs::read_to_string(b).unwrap());
    let output = csv_rows(&std::fs::read_to_string(out).unwrap());
    assert_eq!(output[0], input[0], "{method}: header");
    assert_eq!(output.len(), input.len(), "{method}: row count");
    let c = input[0].iter().position(|h| h == "confidence").unwrap();
    input[1..]
        .iter()
        .zip(&output[1..])
        .map(|(i, o)| {
            assert_eq!(i.len(), o.len());
            for k in (0..i.len()).filter(|&k| k != c) {
                assert_eq!(i[k], o[k], "{method}: column {k} must be copied");
            }
            let (x, y) = (i[c].parse::<f64>().unwrap(), o[c].parse::<f64>().unwrap());
            assert!((0.0..=1.0).contains(&y), "{method}: {x} -> {y}");
            (x, y)
        })
        .collect()
}

/// Pairs sorted by original confidence; asserts the map is non-decreasing, and with
/// `strict`, that different inputs keep their strict order.
fn assert_monotone(method: &str, pairs: &[(f64, f64)], strict: bool) {
    let mut sorted = pairs.to_vec();
    sorted.sort_by(|p, q| p.0.total_cmp(&q.0));
    for w in sorted.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if x0 == x1 {
            assert_eq!(y0, y1, "{method}: equal inputs {x0} map to {y0} and {y1}");
        } else if strict {
            assert!(y0 < y1, "{method}: {x0} -> {y0} but {x1} -> {y1}");
        } else {
            assert!(y0 <= y1, "{method}: {x0} -> {y0} but {x1} -> {y1}");
        }
    }
}

fn distinct(pairs: &[(f64, f64)]) -> usize {
    pairs
        .iter()
        .map(|p| p.1.to_bits())
        .collect::<BTreeSet<_>>()
        .len()
}

#[test]
fn recalibrate_isotonic_is_a_monotone_step_function_preserving_the_mean() {
    let dir = scratch("isotonic");
    let (a, b) = split_birds(&dir);
    let pairs = recalibrate("isotonic", &a, &b, &dir.join("out.csv"));
    assert_eq!(pairs.len(), 2897 - 1500);
    assert_monotone("isotonic", &pairs, false);
    let steps = distinct(&pairs);
    assert!((2..100).contains(&steps), "{steps} values: a step function");
    // On its own calibration file, PAV keeps the mean: the mean output is the accuracy.
    let own = recalibrate("isotonic", &a, &a, &dir.join("own.csv"));
    let (_, labels) = samples(&std::fs::read_to_string(&a).unwrap());
    let outputs: Vec<f64> = own.iter().map(|p| p.1).collect();
    assert!((mean(&outputs) - accuracy(&labels)).abs() < 1e-12);
}

#[test]
fn recalibrate_histogram_maps_each_of_15_bins_to_its_mean_label() {
    let dir = scratch("histogram");
    let (a, b) = split_birds(&dir);
    let pairs = recalibrate("histogram", &a, &b, &dir.join("out.csv"));
    assert_eq!(pairs.len(), 2897 - 1500);
    assert!(distinct(&pairs) <= 15, "{} values", distinct(&pairs));
    // Bin k = [k/15, (k+1)/15) (1.0 in the last) of the calibration file; an empty bin
    // maps to its centre. (Histogram binning need not be monotone: bins are independent.)
    let (scores, labels) = samples(&std::fs::read_to_string(&a).unwrap());
    let bin = |x: f64| ((x * 15.0).min(14.0)) as usize;
    let mut counts = [(0u64, 0u64); 15];
    for (&x, &y) in scores.iter().zip(&labels) {
        counts[bin(x)].0 += 1;
        counts[bin(x)].1 += u64::from(y);
    }
    let value = |k: usize| match counts[k] {
        (0, _) => 0.5 * (k as f64 / 15.0 + (k + 1) as f64 / 15.0),
        (n, hits) => hits as f64 / n as f64,
    };
    let mut used = BTreeMap::new();
    for &(x, y) in &pairs {
        assert_eq!(y, value(bin(x)), "{x} in bin {}", bin(x));
        used.insert(bin(x), y);
    }
    assert!(used.len() >= 10, "the split covers most bins: {used:?}");
    // On its own calibration file, the mean output is the accuracy.
    let own = recalibrate("histogram", &a, &a, &dir.join("own.csv"));
    let outputs: Vec<f64> = own.iter().map(|p| p.1).collect();
    assert!((mean(&outputs) - accuracy(&labels)).abs() < 1e-12);
}

/// The least-squares line through (logit x, logit y) and its largest residual.
fn logit_line(pairs: &[(f64, f64)]) -> (f64, f64, f64) {
    let points: Vec<(f64, f64)> = pairs.iter().map(|&(x, y)| (logit(x), logit(y))).collect();
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let worst = points
        .iter()
        .map(|p| (p.1 - (intercept + slope * p.0)).abs())
        .fold(0.0, f64::max);
    (intercept, slope, worst)
}

#[test]
fn recalibrate_platt_and_temperature_are_the_logit_glms_of_tce_fit() {
    let dir = scratch("logistic");
    let (a, b) = split_birds(&dir);
    let fit = fit_json(path_str(&a));
    for (method, glm_name) in [
        ("platt", "logit_logit_b0_b1"),
        ("top-label-temperature", "logit_logit_b1"),
    ] {
        let pairs = recalibrate(method, &a, &b, &dir.join(format!("{method}.csv")));
        assert_eq!(pairs.len(), 2897 - 1500);
        assert_monotone(method, &pairs, true);
        // σ(a + b·logit c) with (a, b) the coefficients `tce fit` reports for the GLM.
        let g = glm(&fit, glm_name);
        let (b0, b1) = (g["b0"].as_f64().unwrap(), g["b1"].as_f64().unwrap());
        let (intercept, slope, worst) = logit_line(&pairs);
        assert!(
            worst < 1e-6,
            "{method}: not linear in logit (residual {worst})"
        );
        assert!(
            (intercept - b0).abs() < 1e-6,
            "{method}: a {intercept} vs {b0}"
        );
        assert!((slope - b1).abs() < 1e-6, "{method}: b {slope} vs {b1}");
        assert!(slope > 0.0);
    }
    // Platt scaling has an intercept: on its own file the mean output is the accuracy.
    let own = recalibrate("platt", &a, &a, &dir.join("own.csv"));
    let (_, labels) = samples(&std::fs::read_to_string(&a).unwrap());
    let outputs: Vec<f64> = own.iter().map(|p| p.1).collect();
    assert!((mean(&outputs) - accuracy(&labels)).abs() < 1e-6);
}

#[test]
fn recalibrate_writes_stdout_without_out() {
    let dir = scratch("stdout");
    let (a, b) = split_birds(&dir);
    let out = dir.join("out.csv");
    recalibrate("top-label-temperature", &a, &b, &out);
    let stdout = stdout(&tce(&[
        "recalibrate",
        "--method",
        "top-label-temperature",
        "--fit",
        path_str(&a),
        "--apply",
        path_str(&b),
    ]));
    assert_eq!(stdout, std::fs::read_to_string(&out).unwrap());
}

#[test]
fn recalibrate_into_a_closed_pipe_is_not_an_error() {
    // 50 000 rows: far more than a pipe holds, so the writer meets the closed pipe.
    let imagenet = format!("{DATA}/torchvision_densenet161_imgnet_test.csv");
    let mut child = tce_command()
        .args([
            "recalibrate",
            "--method",
            "isotonic",
            "--fit",
            &birds(),
            "--apply",
        ])
        .arg(&imagenet)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first.trim_end(), "confidence,correct,predicted,label");
    // The reader is dropped here: the pipe is closed like `| head -1`.
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}: {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

// ---------------------------------------------------------------- bad input

#[test]
fn bad_input_exits_2_naming_the_problem() {
    let dir = scratch("bad");
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "confidence,correct\n0.9,1\n1.5,0\n0.4,0\n").unwrap();
    let bad = path_str(&bad);
    let missing_path = dir.join("missing.csv");
    let missing = path_str(&missing_path);
    let good = birds();
    let out = dir.join("out.csv");
    let recal = |fit: &str, apply: &str| {
        tce(&[
            "recalibrate",
            "--method",
            "isotonic",
            "--fit",
            fit,
            "--apply",
            apply,
            "--out",
            path_str(&out),
        ])
    };
    let cases: Vec<(Output, &str)> = vec![
        (tce(&["fit", bad]), bad),
        (tce(&["fit", bad, "--json"]), bad),
        (tce(&["fit-check", &good, bad, "--reps", "2"]), bad),
        (tce(&["table1", bad, "--reps", "1"]), bad),
        (recal(bad, &good), bad),
        (recal(&good, bad), bad),
    ];
    for (output, file) in &cases {
        let stderr = exits(output, 2, file);
        for part in [*file, "line 3", "1.5", "out of range"] {
            assert!(stderr.contains(part), "{stderr} lacks {part}");
        }
        assert!(output.stdout.is_empty(), "nothing printed before the error");
    }
    for output in [
        tce(&["fit", missing]),
        tce(&["fit-check", missing, "--reps", "2"]),
        tce(&["table1", missing, "--reps", "1"]),
        recal(missing, &good),
        recal(&good, missing),
    ] {
        let stderr = exits(&output, 2, missing);
        assert!(
            stderr.contains(missing) && stderr.contains("cannot open"),
            "{stderr}"
        );
    }
    assert!(!out.exists(), "a bad --apply file writes no output file");

    let unknown = tce(&[
        "recalibrate",
        "--method",
        "bogus",
        "--fit",
        &good,
        "--apply",
        &good,
    ]);
    let stderr = exits(&unknown, 2, "--method bogus");
    assert!(
        stderr.contains("bogus") && stderr.contains("isotonic"),
        "{stderr}"
    );
}

#[test]
fn zero_repetitions_or_sizes_exit_2() {
    let good = birds();
    for (args, message) in [
        (vec!["fit-check", &good, "--reps", "0"], "repetitions"),
        (vec!["fit-check", &good, "--reps", "1"], "at least 2"),
        (vec!["table1", "--reps", "0"], "repetitions"),
        (
            vec!["table1", "--reps", "1", "--calibration", "0"],
            "calibration",
        ),
        (vec!["table1", "--reps", "1", "--test", "0"], "test"),
    ] {
        let output = tce(&args);
        let stderr = exits(&output, 2, message);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_file_that_cannot_be_fitted_is_bad_input_and_exits_2() {
    let dir = scratch("unfit");
    let same = dir.join("same.csv");
    std::fs::write(&same, "confidence,correct\n0.9,1\n0.8,1\n0.7,1\n").unwrap();
    let stderr = exits(&tce(&["fit", path_str(&same)]), 2, "fit");
    assert!(stderr.contains("all labels are equal"), "{stderr}");
    let platt = tce(&[
        "recalibrate",
        "--method",
        "platt",
        "--fit",
        path_str(&same),
        "--apply",
        &birds(),
    ]);
    let stderr = exits(&platt, 2, "platt");
    assert!(stderr.contains("all labels are equal"), "{stderr}");
}

// ---------------------------------------------------------------- tce fit-check

/// The cells of the markdown rows that start with `| ` (header and data, no rule).
fn markdown_rows(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .filter(|l| l.starts_with("| "))
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_string())
                .collect()
        })
        .collect()
}

fn cell(row: &[String], k: usize) -> f64 {
    row[k]
        .parse()
        .unwrap_or_else(|_| panic!("cell {k} of {row:?}"))
}

#[test]
fn fit_check_rows_agree_with_fit_and_estimate() {
    let c10 = c10();
    let args = ["fit-check", &birds(), &c10, "--reps", "3", "--seed", "5"];
    let table = stdout(&tce(&args));
    assert_eq!(table, stdout(&tce(&args)), "seeded");
    // The paper's model first; then, after a blank line and a sentence, the report's
    // flexible model checked as the report checks it.
    let (paper, flexible) = table.split_once("\n\n").unwrap();
    let flexible_rows = markdown_rows(flexible);
    assert_eq!(flexible_rows.len(), 3, "{table}");
    assert_eq!(flexible_rows[0][0], "file");
    for (row, name) in flexible_rows[1..]
        .iter()
        .zip(["resnet50_birds_test.csv", "resnet110_c10_test.csv"])
    {
        assert_eq!(row.len(), 10, "{row:?}");
        assert_eq!(row[0], name);
        assert!(["yes", "**no**"].contains(&row[9].as_str()), "{row:?}");
    }
    let rows = markdown_rows(paper);
    assert_eq!(rows.len(), 3, "{table}");
    assert_eq!(rows[0][0], "file");
    assert_eq!(rows[0].len(), 10);
    for (row, file, name, n) in [
        (&rows[1], birds(), "resnet50_birds_test.csv", 2897),
        (&rows[2], c10, "resnet110_c10_test.csv", 10000),
    ] {
        assert_eq!(row.len(), 10, "{row:?}");
        assert_eq!(row[0], name);
        assert_eq!(row[1], n.to_string());
        let fit = fit_json(&file);
        assert_eq!(row[2], fit["best"].as_str().unwrap());
        assert_eq!(
            row[3],
            format!("{:.4}", fit["beta"]["alpha"].as_f64().unwrap())
        );
        // TCE_2 % is the fit's fraction in percent.
        assert_eq!(
            row[5],
            format!("{:.3}", 100.0 * fit["tce"]["l2"].as_f64().unwrap())
        );
        // The real ECE_bin is `tce estimate`'s equal-width, 15 bins, p = 2, in percent.
        let estimate: Value =
            serde_json::from_str(&stdout(&tce(&["estimate", &file, "--json"]))).unwrap();
        let ece = estimate["estimates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["estimator"] == "ece_bin" && r["binning"] == "equal_width")
            .unwrap();
        assert_eq!(ece["bins"], 15);
        assert_eq!(
            row[6],
            format!("{:.3}", 100.0 * ece["value"].as_f64().unwrap())
        );
        let (real, sim, sd, z) = (cell(row, 6), cell(row, 7), cell(row, 8), cell(row, 9));
        assert!(sim > 0.0 && sim < 100.0 && sd > 0.0, "{row:?}");
        // z from the rounded cells, within their rounding (±0.0005 each, z to ±0.005).
        let z_cells = (real - sim).abs() / sd;
        let tolerance = 0.006 + (0.001 + 0.0005 * z_cells) / sd;
        assert!((z - z_cells).abs() < tolerance, "{row:?}");
    }
    let other = stdout(&tce(&["fit-check", &birds(), "--reps", "3", "--seed", "6"]));
    assert_ne!(
        markdown_rows(&other)[1][7],
        rows[1][7],
        "another seed simulates other data"
    );
}

// ---------------------------------------------------------------- tce table1

#[test]
fn table1_paper_sizes_are_chosen_by_data_set() {
    let args = ["table1", &birds(), "--reps", "1", "--paper-sizes"];
    let text = stdout(&tce(&args));
    let rows = markdown_rows(text.split("### ").nth(1).unwrap());
    // Simulator settings and Birds get the CIFAR sizes.
    for row in &rows[1..] {
        assert_eq!(row[1], "5000/10000", "{row:?}");
    }
    let clash = tce(&["table1", "--reps", "1", "--paper-sizes", "--test", "10"]);
    assert!(!clash.status.success());
}

#[test]
fn table1_on_real_splits_counts_as_the_library_does() {
    let args = [
        "table1",
        &birds(),
        "--mode",
        "real",
        "--splits",
        "6",
        "--seed",
        "1",
        "--calibration",
        "300",
        "--test",
        "300",
    ];
    let text = stdout(&tce(&args));
    let sections: Vec<&str> = text.split("### ").skip(1).collect();
    let titles: Vec<&str> = sections.iter().map(|s| s.lines().next().unwrap()).collect();
    assert_eq!(titles.len(), 6, "{titles:?}");
    assert!(titles[0].starts_with("Random halves, truth (a)"));
    assert!(titles[1].starts_with("Random halves, truth (b)"));
    assert!(titles[2].starts_with("300/300, truth (a)"));
    assert!(titles[3].starts_with("300/300, truth (b)"));
    assert!(titles[4].starts_with("Signed error, Random halves"));
    // The 300/300 split under truth (b): the counts of
    // `table1_real::tests::a_small_run_on_birds_counts_exactly` (temperature scaling best
    // in all 6 splits; the estimators pick it 2, 3, 4, 4, 2 and 5 times), as shares.
    let rows = markdown_rows(sections[3]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[1][0], "resnet50_birds_test");
    assert_eq!(rows[1][1], "300/300");
    assert!(
        rows[1][5].ends_with("(100.0 [61.0, 100.0])"),
        "{:?}",
        rows[1]
    );
    let picks: Vec<&str> = rows[1][6..12]
        .iter()
        .map(|c| c.split(' ').next().unwrap())
        .collect();
    assert_eq!(picks, ["33.3", "50.0", "66.7", "66.7", "33.3", "83.3"]);
    assert!(
        sections[3].contains("Pooled over all 1 files (6 splits): EW ECE_bin 33.3 [9.7, 70.0] %;")
    );
    // Under truth (a), 3 splits have a tied best (the test part's fit is calibrated
    // after more than one method).
    assert_eq!(
        markdown_rows(sections[2])[1][0],
        "resnet50_birds_test (3 with a tied best)"
    );
}

#[test]
fn table1_on_real_splits_refuses_bad_counts_and_notes_small_files() {
    let file = birds();
    let stderr = exits(
        &tce(&["table1", &file, "--mode", "real", "--splits", "0"]),
        2,
        "--splits 0",
    );
    assert!(stderr.contains("--splits: 0 repetitions"), "{stderr}");
    let stderr = exits(&tce(&["table1", "--mode", "real"]), 2, "no files");
    assert!(stderr.contains("at least one"), "{stderr}");
    // Birds' 2897 rows hold no paper-size split (5000 + 10000): that table notes it and
    // the halves stand.
    let text = stdout(&tce(&[
        "table1",
        &file,
        "--mode",
        "real",
        "--splits",
        "1",
        "--paper-sizes",
    ]));
    assert!(
        text.contains(
            "resnet50_birds_test is left out: 2897 rows cannot be split into 5000 \
             calibration and 10000 test rows"
        ),
        "{text}"
    );
    assert!(text.contains("### Random halves, truth (b)"));
    // Both tables: by construction first.
    let both = stdout(&tce(&[
        "table1", &file, "--mode", "both", "--splits", "1", "--reps", "1",
    ]));
    let construction = both.find("### The paper's methods").unwrap();
    let real = both.find("## Table 1 on real splits").unwrap();
    assert!(construction < real);
}

#[test]
fn fit_check_with_point_masses_reports_the_atom() {
    let file = c10();
    let text = stdout(&tce(&[
        "fit-check",
        &file,
        "--reps",
        "2",
        "--point-mass",
        "aic",
    ]));
    let rows = markdown_rows(&text);
    assert_eq!(rows[0][5], "pi_1");
    // 29 % of ResNet-110's CIFAR-10 confidences are exactly 1.0.
    assert_eq!(rows[1][5], "0.2885");
    assert_eq!(rows[1][7], "fitted");
    // The TCE_2 cell is that of `tce fit --point-mass aic`.
    let fit = fit_json_with(&file, &["--point-mass", "aic"]);
    let tce_cell = rows[0].iter().position(|h| h == "TCE_2 %").unwrap();
    assert_eq!(
        rows[1][tce_cell],
        format!("{:.3}", 100.0 * fit["tce"]["l2"].as_f64().unwrap())
    );
}

#[test]
fn table1_runs_paper_and_file_settings() {
    let fit = fit_json(&birds());
    let best = fit["best"].as_str().unwrap();
    let args = [
        "table1",
        &birds(),
        "--reps",
        "4",
        "--calibration",
        "200",
        "--test",
        "300",
        "--seed",
        "1",
    ];
    let output = tce(&args);
    let text = stdout(&output);
    assert_eq!(text, stdout(&tce(&args)), "seeded");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches(" done").count(), 3, "{stderr}");

    let sections: Vec<&str> = text.split("### ").filter(|s| !s.is_empty()).collect();
    assert_eq!(sections.len(), 3, "{text}");
    assert!(sections[0].starts_with("The paper's methods"));
    assert!(sections[1].starts_with("All four methods"));
    assert!(sections[2].starts_with("Signed error"));
    let estimators = [
        "EW ECE_bin",
        "EM ECE_bin",
        "EM ECE_sweep",
        "EM ECE_sweep (ties kept)",
        "EM ECE_debias",
        "KDE",
    ];
    let all_methods = ["histogram", "isotonic", "platt", "temperature"];
    let paper_methods = ["histogram", "isotonic", "temperature"];
    let mut mean_tce = Vec::new();
    for (s, section) in sections[..2].iter().enumerate() {
        // Only the candidates have columns: no Platt among the paper's methods.
        let methods: &[&str] = if s == 0 { &paper_methods } else { &all_methods };
        let m = methods.len();
        let rows = markdown_rows(section);
        assert_eq!(rows.len(), 4, "header + 3 settings: {section}");
        let header = &rows[0];
        assert_eq!(header.len(), 3 + m + 6, "{header:?}");
        for (k, method) in methods.iter().enumerate() {
            assert_eq!(header[3 + k], format!("mean TCE % {method} (best in %)"));
        }
        assert_eq!(
            header.iter().any(|h| h.contains("platt")),
            s == 1,
            "{header:?}"
        );
        for (k, e) in estimators.iter().enumerate() {
            assert_eq!(header[3 + m + k], format!("{e} picks best %"));
        }
        let names: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
        assert_eq!(
            names,
            [
                "Beta(1.1, 0.1), T = c^2".to_string(),
                "Beta(2.8, 0.05), T = c^2".to_string(),
                format!("fit of resnet50_birds_test ({best})"),
            ]
        );
        let before: Vec<&str> = rows[1..].iter().map(|r| r[2].as_str()).collect();
        let fit_before = format!("{:.2}", 100.0 * fit["tce"]["l2"].as_f64().unwrap());
        assert_eq!(before, ["8.46", "4.24", fit_before.as_str()]);
        let mut means = Vec::new();
        for row in &rows[1..] {
            assert_eq!(row[1], "200/300");
            // "mean (best)": exactly one best method per repetition, so 4 repetitions
            // give multiples of 25 adding up to 100.
            assert_eq!(row.len(), 3 + m + 6, "{row:?}");
            let mut best_total = 0.0;
            let mut row_means = BTreeMap::new();
            for k in 0..m {
                let (mean, best_share) = row[3 + k]
                    .trim_end_matches(')')
                    .split_once(" (")
                    .unwrap_or_else(|| panic!("{row:?}"));
                let mean: f64 = mean.parse().unwrap();
                // "share [lo, hi]": the 95 % Wilson interval contains the share.
                let (best_share, interval) = best_share.split_once(" [").unwrap();
                let best_share: f64 = best_share.parse().unwrap();
                let (lo, hi) = interval.trim_end_matches(']').split_once(", ").unwrap();
                let (lo, hi): (f64, f64) = (lo.parse().unwrap(), hi.parse().unwrap());
                assert!(lo <= best_share && best_share <= hi, "{row:?}");
                assert!(mean > 0.0 && mean < 100.0, "{row:?}");
                assert_eq!(best_share % 25.0, 0.0, "{row:?}");
                best_total += best_share;
                row_means.insert(methods[k], mean);
            }
            assert_eq!(best_total, 100.0, "{row:?}");
            means.push(row_means);
            for k in 3 + m..3 + m + 6 {
                let share: f64 = row[k]
                    .split(" (")
                    .next()
                    .unwrap()
                    .split(" [")
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap_or_else(|_| panic!("{row:?}"));
                assert_eq!(share % 25.0, 0.0, "{row:?}");
            }
        }
        mean_tce.push(means);
        assert!(
            section.contains("Pooled over all 3 settings (12 repetitions):")
                && section.contains(" %;"),
            "{section}"
        );
        // The paper's own 7 and 3 of 10 beside the paper's methods only.
        let paper_line =
            "EM ECE_sweep picks best 70.0 [39.7, 89.2] %, EW ECE_bin 30.0 [10.8, 60.3] %";
        assert_eq!(
            section.contains(paper_line),
            section.starts_with("The paper's methods"),
            "{section}"
        );
        for e in estimators {
            assert!(section.contains(&format!(" {e} ")), "{section} lacks {e}");
        }
    }
    // Both tables summarize the same repetitions: the same mean TCE per shared method.
    for (paper, all) in mean_tce[0].iter().zip(&mean_tce[1]) {
        for (method, mean) in paper {
            assert_eq!(all[method], *mean, "{method}");
        }
    }

    // Signed errors: "histogram / isotonic / temperature" per estimator, in percent of
    // TCE_2 with an explicit sign; then the two sweeps' mean b*, between 1 and n = 300.
    let rows = markdown_rows(sections[2]);
    assert_eq!(
        rows.len(),
        5,
        "header + 3 settings + pooled: {}",
        sections[2]
    );
    assert_eq!(rows[0][1..7], estimators);
    assert_eq!(
        rows[0][7..],
        ["EM ECE_sweep mean b*", "EM ECE_sweep (ties kept) mean b*"]
    );
    assert_eq!(rows[4][0], "pooled (12 repetitions)");
    let per_method = |cell: &str| -> Vec<f64> {
        cell.split(" / ")
            .map(|v| v.parse().unwrap_or_else(|_| panic!("{cell}")))
            .collect()
    };
    for row in &rows[1..] {
        assert_eq!(row.len(), 9, "{row:?}");
        for cell in &row[1..7] {
            assert!(cell.starts_with(['+', '-']), "{row:?}");
            let errors = per_method(cell);
            assert_eq!(errors.len(), 3, "{row:?}");
            assert!(errors.iter().all(|e| e.abs() < 100.0), "{row:?}");
        }
        for cell in &row[7..] {
            let b_star = per_method(cell);
            assert_eq!(b_star.len(), 3, "{row:?}");
            assert!(
                b_star.iter().all(|&b| (1.0..=300.0).contains(&b)),
                "{row:?}"
            );
        }
    }
}

// ---------------------------------------------------------------- point masses

/// (rows, hits) of the rows whose confidence is exactly `at`, read from the file itself.
fn saturated(file: &str, at: f64) -> (usize, usize) {
    let (scores, labels) = samples(&std::fs::read_to_string(file).unwrap());
    scores
        .iter()
        .zip(&labels)
        .filter(|(&s, _)| s == at)
        .fold((0, 0), |(n, hits), (_, &y)| (n + 1, hits + usize::from(y)))
}

#[test]
fn fit_with_point_masses_reports_the_atoms_and_their_tce() {
    // ResNet-110 / CIFAR-10: 2885 of 10000 confidences are exactly 1.0 (float32
    // softmax), none exactly 0.
    let file = c10();
    let (ones, hits) = saturated(&file, 1.0);
    assert_eq!((ones, hits, saturated(&file, 0.0).0), (2885, 2882, 0));
    let plain = fit_json(&file);
    assert!(plain.get("point_masses").is_none(), "{plain}");
    assert_eq!(plain["settings"]["point_mass"], "none");

    let fit: Value = fit_json_with(&file, &["--point-mass", "aic"]);
    assert_eq!(fit["settings"]["point_mass"], "aic");
    let atoms = &fit["point_masses"];
    assert_eq!(
        (atoms["count_0"].as_u64(), atoms["count_1"].as_u64()),
        (Some(0), Some(2885))
    );
    assert_eq!(atoms["pi_0"].as_f64(), Some(0.0));
    assert_eq!(atoms["pi_1"].as_f64(), Some(ones as f64 / 10000.0));
    assert!(atoms["accuracy_0"].is_null() && atoms["from_curve"]["accuracy_0"].is_null());
    // Fitted separately, the atom's accuracy is its rows' mean label; it wins by AIC.
    assert_eq!(atoms["chosen"], "fitted");
    let fitted = &atoms["fitted"];
    assert_eq!(
        fitted["accuracy_1"].as_f64(),
        Some(hits as f64 / ones as f64)
    );
    assert_eq!(atoms["accuracy_1"], fitted["accuracy_1"]);
    // Its AIC is the best GLM's on the other rows (the GLMs reported, as the model uses
    // them) plus 2 for the atom's accuracy and twice its Bernoulli NLL.
    let a = hits as f64 / ones as f64;
    let atom_nll = -(hits as f64) * a.ln() - ((ones - hits) as f64) * (1.0 - a).ln();
    assert_eq!(fitted["best"], fit["best"]);
    let glm_aic = glm(&fit, fit["best"].as_str().unwrap())["aic"]
        .as_f64()
        .unwrap();
    let expected = glm_aic + 2.0 + 2.0 * atom_nll;
    assert!(
        (fitted["aic"].as_f64().unwrap() - expected).abs() < 1e-9,
        "{atoms}"
    );
    // From the curve: the GLMs of the plain fit (all rows), the best one at the held
    // end point; its AIC has no extra coefficient.
    let curve = &atoms["from_curve"];
    assert_eq!(curve["best"], plain["best"]);
    let plain_aic = glm(&plain, plain["best"].as_str().unwrap())["aic"]
        .as_f64()
        .unwrap();
    assert_eq!(curve["aic"].as_f64(), Some(plain_aic));
    assert!(curve["aic"].as_f64().unwrap() > fitted["aic"].as_f64().unwrap());
    assert!(curve["accuracy_1"].as_f64().unwrap() > 0.99999, "{curve}");
    // Pinned: the Beta on the 7115 other scores and the exact TCE of the model with its
    // atom (the pure-Beta fit's is another number).
    assert_eq!(fit["best"], "logit_logflip_b0_b1");
    for (part, key, pinned) in [
        ("beta", "alpha", 4.413690),
        ("beta", "beta", 0.114965),
        ("tce", "l1", 0.082406),
        ("tce", "l2", 0.135704),
    ] {
        let value = fit[part][key].as_f64().unwrap();
        assert!((value - pinned).abs() < 5e-7, "{part}.{key} = {value}");
    }
    assert_ne!(fit["tce"], plain["tce"]);

    // The table says the same.
    let table = stdout(&tce(&["fit", &file, "--point-mass", "aic"]));
    assert!(
        table.contains("2885 of exactly 1 (pi_1 = 0.288500)")
            && table.contains("fitted on the other 7115 scores")
            && table.contains("atom accuracy used (marked *): fitted")
            && table.contains("with its point masses): l1 = 0.082406, l2 = 0.135704"),
        "{table}"
    );

    // Forced from the curve: the plain fit's GLMs and the curve's accuracy.
    let forced: Value = fit_json_with(&file, &["--point-mass", "curve"]);
    assert_eq!(forced["point_masses"]["chosen"], "curve");
    assert_eq!(forced["best"], plain["best"]);
    assert_eq!(
        forced["point_masses"]["accuracy_1"],
        forced["point_masses"]["from_curve"]["accuracy_1"]
    );
}

#[test]
fn fit_without_saturated_scores_is_the_plain_fit() {
    // Birds has no score of exactly 0 or 1.
    assert_eq!(
        (saturated(&birds(), 0.0).0, saturated(&birds(), 1.0).0),
        (0, 0)
    );
    let plain = fit_json(&birds());
    let fit: Value = fit_json_with(&birds(), &["--point-mass", "aic"]);
    assert_eq!(fit["tce"], plain["tce"]);
    assert_eq!(fit["beta"], plain["beta"]);
    assert_eq!(fit["point_masses"]["pi_1"].as_f64(), Some(0.0));
    assert!(fit["point_masses"]["accuracy_1"].is_null());
    let table = stdout(&tce(&["fit", &birds(), "--point-mass", "aic"]));
    assert!(table.contains("Point masses: none"), "{table}");
}

#[test]
fn point_masses_refuse_the_pure_beta_views() {
    for extra in [["--bootstrap", "2"], ["--svg", "x.svg"]] {
        let output = tce(&["fit", &birds(), "--point-mass", "aic", extra[0], extra[1]]);
        let stderr = exits(&output, 2, extra[0]);
        assert!(
            stderr.contains(extra[0]) && stderr.contains("--point-mass"),
            "{stderr}"
        );
    }
    let stderr = exits(&tce(&["fit", &birds(), "--point-mass", "both"]), 2, "both");
    assert!(stderr.contains("both"), "{stderr}");
}

#[test]
fn table1_with_point_masses_changes_only_the_fits_of_files() {
    let file = c10();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "table1",
            &file,
            "--reps",
            "2",
            "--calibration",
            "200",
            "--test",
            "200",
        ];
        args.extend_from_slice(extra);
        markdown_rows(stdout(&tce(&args)).split("### ").nth(1).unwrap())
    };
    let plain = run(&[]);
    let atoms = run(&["--point-mass", "aic"]);
    // The paper's two simulator settings have no atoms: the same rows.
    assert_eq!(plain[1..3], atoms[1..3]);
    // The file's setting is the point-mass fit: its name says so, and its TCE before
    // recalibration is that fit's.
    let fit: Value = fit_json_with(&file, &["--point-mass", "aic"]);
    assert_eq!(
        atoms[3][0],
        "fit of resnet110_c10_test (logit_logflip_b0_b1; pi_0 = 0.0000, pi_1 = 0.2885, atom accuracy fitted)"
    );
    assert_eq!(
        atoms[3][2],
        format!("{:.2}", 100.0 * fit["tce"]["l2"].as_f64().unwrap())
    );
    assert_ne!(atoms[3][2], plain[3][2]);
}
