//! What every `tce` subcommand has in common: exit 2 for bad input and 1 for I/O errors,
//! columns matched without regard to case (with a note) or a hint naming the option,
//! bounded lines and bounded error messages, JSON that carries its version and every
//! setting (enough to reproduce the run), pictures that draw every estimator, and the
//! maps `tce recalibrate` fits.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;
use common::{birds, c10, exits, json, scratch, stdout, tce, tce_stdin, write, DATA, VERSION};

#[test]
fn help_lists_the_exit_codes() {
    let help = stdout(&tce(&["--help"]));
    for line in [
        "Exit codes:",
        "0  success",
        "1  I/O or internal error",
        "2  bad input",
    ] {
        assert!(help.contains(line), "{line:?} missing from\n{help}");
    }
}

#[test]
fn bad_input_exits_2_in_every_subcommand() {
    let dir = scratch("exit2");
    let one_row = write(&dir, "one.csv", "confidence,correct\n0.9,1\n");
    let all_hits = write(
        &dir,
        "hits.csv",
        "confidence,correct\n0.9,1\n0.8,1\n0.7,1\n",
    );
    let inf = write(&dir, "inf.csv", "confidence,correct\n0.9,1\ninf,0\n");
    let out = dir.join("out.csv");
    let out = out.to_str().unwrap();
    let good = birds();
    let missing_data = dir.join("no-such-dir");
    let paper_out = dir.join("paper");
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("estimate inf", vec!["estimate", &inf]),
        ("estimate --bins 0", vec!["estimate", &good, "--bins", "0"]),
        (
            "estimate --bins > MAX_BINS",
            vec!["estimate", &good, "--bins", "16777217"],
        ),
        ("merge a CSV, not a state", vec!["merge", &good]),
        ("merge --bins 0", vec!["merge", &good, "--bins", "0"]),
        ("fit one row", vec!["fit", &one_row]),
        ("fit one row --json", vec!["fit", &one_row, "--json"]),
        ("fit all labels 1", vec!["fit", &all_hits]),
        ("fit inf", vec!["fit", &inf]),
        ("fit --epsilon 0.7", vec!["fit", &good, "--epsilon", "0.7"]),
        (
            "fit-check one row",
            vec!["fit-check", &one_row, "--reps", "2"],
        ),
        (
            "fit-check --reps 1",
            vec!["fit-check", &good, "--reps", "1"],
        ),
        (
            "recalibrate platt one row",
            vec![
                "recalibrate",
                "--method",
                "platt",
                "--fit",
                &one_row,
                "--apply",
                &good,
                "--out",
                out,
            ],
        ),
        (
            "recalibrate top-label-temperature all labels 1",
            vec![
                "recalibrate",
                "--method",
                "top-label-temperature",
                "--fit",
                &all_hits,
                "--apply",
                &good,
                "--out",
                out,
            ],
        ),
        (
            "recalibrate --json without --out",
            vec![
                "recalibrate",
                "--method",
                "isotonic",
                "--fit",
                &good,
                "--apply",
                &good,
                "--json",
            ],
        ),
        ("table1 one row", vec!["table1", &one_row, "--reps", "1"]),
        ("table1 --reps 0", vec!["table1", "--reps", "0"]),
        (
            "simulate alpha 0",
            vec![
                "simulate", "--alpha", "0", "--beta", "1", "--n", "10", "--reps", "2",
            ],
        ),
        (
            "simulate bad curve",
            vec![
                "simulate", "--alpha", "1", "--beta", "1", "--curve", "wiggly", "--n", "10",
            ],
        ),
        (
            "paper --reps 0",
            vec!["paper", "--out", paper_out.to_str().unwrap(), "--reps", "0"],
        ),
        (
            "paper --figure5-resamples 0",
            vec![
                "paper",
                "--out",
                paper_out.to_str().unwrap(),
                "--reps",
                "1",
                "--figure5-resamples",
                "0",
            ],
        ),
        (
            "paper --data missing",
            vec![
                "paper",
                "--out",
                paper_out.to_str().unwrap(),
                "--reps",
                "1",
                "--data",
                missing_data.to_str().unwrap(),
            ],
        ),
    ];
    for (what, args) in &cases {
        let output = tce(args);
        let stderr = exits(&output, 2, what);
        assert!(!stderr.is_empty(), "{what}: no message");
        assert!(output.stdout.is_empty(), "{what}: printed before failing");
    }
    // The --data directory is checked before any figure is computed.
    assert!(
        !paper_out.exists(),
        "paper wrote files before refusing --data"
    );
}

#[test]
fn io_errors_exit_1() {
    let dir = scratch("exit1");
    let good = birds();
    let unwritable = dir.join("no-such-dir").join("x");
    let unwritable = unwritable.to_str().unwrap();
    let cases: Vec<(&str, Vec<&str>)> = vec![
        // A directory opens but cannot be read.
        ("estimate a directory", vec!["estimate", DATA]),
        (
            "fit --svg unwritable",
            vec!["fit", &good, "--svg", unwritable],
        ),
        (
            "simulate --csv unwritable",
            vec![
                "simulate", "--alpha", "1", "--beta", "1", "--d", "1", "--n", "10", "--reps", "2",
                "--csv", unwritable,
            ],
        ),
        (
            "recalibrate --out unwritable",
            vec![
                "recalibrate",
                "--method",
                "isotonic",
                "--fit",
                &good,
                "--apply",
                &good,
                "--out",
                unwritable,
            ],
        ),
    ];
    for (what, args) in &cases {
        let stderr = exits(&tce(args), 1, what);
        assert!(!stderr.is_empty(), "{what}: no message");
    }
}

#[test]
fn infinite_scores_are_non_finite_not_out_of_range() {
    for (text, shown) in [("inf", "inf"), ("-inf", "-inf"), ("+Infinity", "+Infinity")] {
        let csv = format!("confidence,correct\n0.9,1\n{text},0\n");
        let output = tce_stdin(&["estimate", "-"], csv.as_bytes());
        let stderr = exits(&output, 2, text);
        assert!(
            stderr.contains(&format!(
                "line 3: `confidence` {shown} is a non-finite score"
            )),
            "{stderr}"
        );
        assert!(!stderr.contains("out of range"), "{stderr}");
    }
    let output = tce_stdin(&["estimate", "-"], b"confidence,correct\n1.5,0\n");
    assert!(exits(&output, 2, "1.5").contains("1.5 is out of range"));
}

#[test]
fn columns_match_without_regard_to_case_and_say_so() {
    let csv = b"Correct,Confidence\n1,0.9\n0,0.3\n1,0.8\n";
    let exact = b"correct,confidence\n1,0.9\n0,0.3\n1,0.8\n";
    let output = tce_stdin(&["estimate", "-", "--json"], csv);
    let report = json(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("using column `Confidence` (matched without regard to case)")
            && stderr.contains("using column `Correct`"),
        "{stderr}"
    );
    assert_eq!(report["settings"]["columns"]["score"], "Confidence");
    assert_eq!(report["settings"]["columns"]["label"], "Correct");
    let exact_output = tce_stdin(&["estimate", "-", "--json"], exact);
    assert!(
        exact_output.stderr.is_empty(),
        "an exact match needs no note"
    );
    assert_eq!(report["estimates"], json(&exact_output)["estimates"]);

    // No match: the header's columns and the option to use.
    for (args, option) in [
        (vec!["estimate", "-"], "--score-col NAME"),
        (vec!["fit", "-"], "--score-col NAME"),
        (
            vec!["estimate", "-", "--score-col", "p"],
            "--label-col NAME",
        ),
    ] {
        let output = tce_stdin(&args, b"p,y\n0.9,1\n0.3,0\n");
        let stderr = exits(&output, 2, option);
        assert!(
            stderr.contains("(the header has: `p`, `y`)") && stderr.contains(option),
            "{args:?}: {stderr}"
        );
    }
    // Every file-reading subcommand takes the column options.
    let dir = scratch("columns");
    let renamed =
        std::fs::read_to_string(birds())
            .unwrap()
            .replacen("confidence,correct", "p,y", 1);
    let renamed = write(&dir, "renamed.csv", &renamed);
    let columns = ["--score-col", "p", "--label-col", "y"];
    let mut fit = vec!["fit", &renamed, "--json"];
    fit.extend(columns);
    let fitted = json(&tce(&fit));
    assert_eq!(fitted["n"], 2897);
    assert_eq!(fitted["settings"]["columns"]["score"], "p");
    let out = dir.join("out.csv");
    let mut recalibrate = vec![
        "recalibrate",
        "--method",
        "isotonic",
        "--fit",
        &renamed,
        "--apply",
        &renamed,
        "--out",
        out.to_str().unwrap(),
    ];
    recalibrate.extend(columns);
    stdout(&tce(&recalibrate));
    let written = std::fs::read_to_string(&out).unwrap();
    assert!(
        written.starts_with("p,y,predicted,label\n"),
        "{}",
        &written[..40]
    );
}

#[test]
fn long_lines_are_refused_with_a_bounded_message() {
    const MIB: usize = 1 << 20;
    // A 4 MiB header without a newline, as a file and on stdin.
    let header = "c".repeat(4 * MIB);
    let dir = scratch("long");
    let file = write(&dir, "long.csv", &header);
    for output in [
        tce(&["estimate", &file]),
        tce(&["fit", &file]),
        tce_stdin(&["estimate", "-"], header.as_bytes()),
    ] {
        let stderr = exits(&output, 2, "4 MiB header");
        assert!(
            stderr.contains("line 1: the line is longer than the limit of 1048576 bytes"),
            "{}",
            &stderr[..stderr.len().min(300)]
        );
        assert!(stderr.len() < 400, "{} bytes of stderr", stderr.len());
    }
    // A long line further down is named by its number.
    let long_row = format!(
        "confidence,correct\n0.5,1\n0.5,0\n{},1\n",
        "0".repeat(4 * MIB)
    );
    let stderr = exits(
        &tce_stdin(&["estimate", "-"], long_row.as_bytes()),
        2,
        "row",
    );
    assert!(stderr.contains("line 4: the line is longer"), "{stderr}");
    assert!(stderr.len() < 400);
    // A long field under the limit is quoted as a bounded excerpt.
    let long_field = format!("confidence,correct\n0.5,1\n{},1\n", "x".repeat(MIB / 2));
    let stderr = exits(
        &tce_stdin(&["estimate", "-"], long_field.as_bytes()),
        2,
        "field",
    );
    assert!(
        stderr.contains(&format!("cannot parse `{}…`", "x".repeat(80))) && stderr.len() < 400,
        "{} bytes: {}",
        stderr.len(),
        &stderr[..stderr.len().min(300)]
    );
    // A header of many columns lists a bounded number of them.
    let many: Vec<String> = (0..50_000).map(|i| format!("column{i}")).collect();
    let wide = format!("{}\n1\n", many.join(","));
    let stderr = exits(&tce_stdin(&["estimate", "-"], wide.as_bytes()), 2, "wide");
    assert!(
        stderr.contains("(49980 more)") && stderr.len() < 800,
        "{stderr}"
    );
}

/// `tce estimate` with the settings of a JSON's `settings` object.
fn estimate_args(settings: &Value) -> Vec<String> {
    let mut args = vec![
        "estimate".to_owned(),
        settings["file"].as_str().unwrap().to_owned(),
        "--json".to_owned(),
        "--score-col".to_owned(),
        settings["columns"]["score"].as_str().unwrap().to_owned(),
        "--label-col".to_owned(),
        settings["columns"]["label"].as_str().unwrap().to_owned(),
        "--bins".to_owned(),
        settings["bins"].to_string(),
        "--norm".to_owned(),
        settings["norm"].to_string(),
        "--closure".to_owned(),
        settings["closure"].as_str().unwrap().to_owned(),
        "--ties".to_owned(),
        settings["ties"].as_str().unwrap().to_owned(),
    ];
    if let Some(max) = settings["max_bins"].as_u64() {
        args.extend(["--max-bins".to_owned(), max.to_string()]);
    }
    if settings["paper_limit"] == true {
        args.push("--paper-limit".to_owned());
    }
    args
}

#[test]
fn estimate_json_carries_every_setting_and_reproduces_from_it() {
    let file = c10();
    let args = [
        "estimate",
        &file,
        "--json",
        "--bins",
        "10",
        "--norm",
        "1",
        "--closure",
        "right",
        "--ties",
        "keep",
        "--max-bins",
        "7",
        "--paper-limit",
    ];
    let report = json(&tce(&args));
    assert_eq!(report["tce_version"], VERSION);
    assert_eq!(report["command"], "estimate");
    let settings = &report["settings"];
    assert_eq!(settings["file"], file.as_str());
    assert_eq!(settings["columns"]["score"], "confidence");
    assert_eq!(settings["columns"]["label"], "correct");
    assert_eq!(settings["bins"], 10);
    assert_eq!(settings["norm"], 1.0);
    assert_eq!(settings["closure"], "right");
    assert_eq!(settings["ties"], "keep");
    assert_eq!(settings["max_bins"], 7);
    assert_eq!(settings["paper_limit"], true);
    // The defaults are spelled out too.
    let defaults = json(&tce(&["estimate", &file, "--json"]));
    let d = &defaults["settings"];
    assert_eq!(
        (
            d["bins"].as_u64(),
            d["norm"].as_f64(),
            d["closure"].as_str(),
            d["ties"].as_str()
        ),
        (Some(15), Some(2.0), Some("left"), Some("split"))
    );
    assert_eq!(
        (d["max_bins"].is_null(), d["paper_limit"].as_bool()),
        (true, Some(false))
    );
    // Each JSON reproduces itself from its settings.
    for original in [&report, &defaults] {
        let rerun = estimate_args(&original["settings"]);
        let rerun: Vec<&str> = rerun.iter().map(String::as_str).collect();
        assert_eq!(&json(&tce(&rerun)), original, "{rerun:?}");
    }
}

#[test]
fn every_other_json_carries_its_version_and_settings() {
    let simulate = json(&tce(&[
        "simulate",
        "--alpha",
        "1.1",
        "--beta",
        "0.1",
        "--curve",
        "two_param_polynomial",
        "--a",
        "-0.1",
        "--b",
        "2",
        "--n",
        "50,100",
        "--bins",
        "5,10",
        "--reps",
        "3",
        "--seed",
        "9",
        "--norm",
        "1",
        "--estimators",
        "ece_bin:equal_width,kde",
        "--json",
    ]));
    assert_eq!(simulate["tce_version"], VERSION);
    assert_eq!(simulate["command"], "simulate");
    let s = &simulate["settings"];
    assert_eq!(
        (s["alpha"].as_f64(), s["beta"].as_f64()),
        (Some(1.1), Some(0.1))
    );
    assert_eq!(s["curve"], "two_param_polynomial");
    assert_eq!(
        (s["a"].as_f64(), s["b"].as_f64(), s["d"].is_null()),
        (Some(-0.1), Some(2.0), true)
    );
    assert_eq!(s["n"], serde_json::json!([50, 100]));
    assert_eq!(s["bins"], serde_json::json!([5, 10]));
    assert_eq!(
        s["estimators"],
        serde_json::json!(["ece_bin:equal_width", "kde"])
    );
    assert_eq!(
        (s["reps"].as_u64(), s["seed"].as_u64(), s["norm"].as_f64()),
        (Some(3), Some(9), Some(1.0))
    );

    let fit = json(&tce(&[
        "fit",
        &birds(),
        "--json",
        "--bootstrap",
        "2",
        "--seed",
        "4",
        "--epsilon",
        "1e-9",
    ]));
    assert_eq!(fit["tce_version"], VERSION);
    assert_eq!(fit["command"], "fit");
    let s = &fit["settings"];
    assert_eq!(s["file"], birds().as_str());
    assert_eq!(
        s["columns"],
        serde_json::json!({"score": "confidence", "label": "correct"})
    );
    assert_eq!(
        (
            s["epsilon"].as_f64(),
            s["bootstrap"].as_u64(),
            s["seed"].as_u64()
        ),
        (Some(1e-9), Some(2), Some(4))
    );
    assert!(s["svg"].is_null());
    assert_eq!(s["point_mass"], "none");
}

/// The text of every `<text>` element of an SVG.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_owned())
        })
        .collect()
}

#[test]
fn simulate_svg_draws_every_estimator_of_the_csv() {
    let dir = scratch("simsvg");
    let estimators = "ece_bin:equal_width,ece_bin:equal_mass,ece_sweep:equal_width,ece_sweep:equal_mass,ece_debias:equal_mass,kde";
    for bins in ["5,15", "15"] {
        let (svg, csv) = (
            dir.join(format!("{bins}.svg")),
            dir.join(format!("{bins}.csv")),
        );
        stdout(&tce(&[
            "simulate",
            "--alpha",
            "1.1",
            "--beta",
            "0.1",
            "--d",
            "2",
            "--n",
            "50,100",
            "--bins",
            bins,
            "--reps",
            "3",
            "--estimators",
            estimators,
            "--svg",
            svg.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
        ]));
        let texts = svg_texts(&std::fs::read_to_string(&svg).unwrap());
        let csv = std::fs::read_to_string(&csv).unwrap();
        let specs: std::collections::BTreeSet<&str> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').nth(4).unwrap())
            .collect();
        assert_eq!(specs.len(), 6, "{csv}");
        for spec in specs {
            assert!(
                texts.iter().any(|t| t.starts_with(spec)),
                "bins {bins}: {spec} is not drawn; texts: {texts:?}"
            );
        }
    }
}

#[test]
fn fit_svg_names_the_curve_in_words_and_shows_counts() {
    let dir = scratch("fitsvg");
    let svg = dir.join("fit.svg");
    let fit = json(&tce(&[
        "fit",
        &c10(),
        "--json",
        "--svg",
        svg.to_str().unwrap(),
    ]));
    let text = std::fs::read_to_string(&svg).unwrap();
    let texts = svg_texts(&text);
    let best = fit["best"].as_str().unwrap();
    assert!(!text.contains(best), "internal name {best} in the SVG");
    let title = texts
        .iter()
        .find(|t| t.contains("best calibration curve (lowest AIC)"))
        .unwrap_or_else(|| panic!("no title in {texts:?}"));
    assert!(title.starts_with("n = 10000"), "{title}");
    // This file's best GLM is the logistic in log-odds with both coefficients.
    assert_eq!(best, "logit_logit_b0_b1");
    assert!(
        title.contains("logistic in log-odds: σ(b0 + b1·logit c)"),
        "{title}"
    );
    let b0 = format!(
        "b0 = {:.4}",
        fit["glms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == best)
            .unwrap()["b0"]
            .as_f64()
            .unwrap()
    );
    assert!(title.contains(&b0), "{title} lacks {b0}");
    // The scores that are exactly 1.0 have their own bar, with their count.
    let ones = std::fs::read_to_string(c10())
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| l.split(',').next().unwrap().parse::<f64>().unwrap() == 1.0)
        .count();
    assert!(ones > 0);
    assert!(texts.contains(&format!("c = 1: {ones} rows")), "{texts:?}");
    for needle in [
        "rows per bin (log scale)",
        "log-odds ln(c / (1 − c))",
        "data (label: rows in the bin)",
    ] {
        assert!(
            texts.iter().any(|t| t.contains(needle)),
            "{needle} missing: {texts:?}"
        );
    }
}

/// The fitted map of `tce recalibrate --json`.
fn recalibrate_map(dir: &Path, method: &str) -> (Value, String) {
    let out = dir.join(format!("{method}.csv"));
    let report = json(&tce(&[
        "recalibrate",
        "--method",
        method,
        "--fit",
        &birds(),
        "--apply",
        &c10(),
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(report["tce_version"], VERSION);
    assert_eq!(report["command"], "recalibrate");
    let s = &report["settings"];
    assert_eq!(
        (s["method"].as_str(), s["fit"].as_str(), s["apply"].as_str()),
        (Some(method), Some(birds().as_str()), Some(c10().as_str()))
    );
    assert_eq!(report["n_fit"], 2897);
    assert_eq!(report["n_apply"], 10000);
    assert_eq!(report["map"]["method"], method);
    (report["map"].clone(), std::fs::read_to_string(out).unwrap())
}

/// Whether `x` is one of `values` (to the last bit or so: serde_json's float parsing is
/// not always correctly rounded).
fn is_one_of(x: f64, values: &[f64]) -> bool {
    values
        .iter()
        .any(|v| (v - x).abs() <= 4.0 * f64::EPSILON * v.abs())
}

/// The recalibrated confidences of a written CSV.
fn confidences(csv: &str) -> Vec<f64> {
    csv.lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect()
}

#[test]
fn recalibrate_prints_and_reports_its_map() {
    let dir = scratch("map");
    let fit = json(&tce(&["fit", &birds(), "--json"]));
    let glm = |name: &str| {
        fit["glms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["name"] == name)
            .unwrap()
            .clone()
    };
    let originals = confidences(&std::fs::read_to_string(c10()).unwrap());
    let sigma = |x: f64| 1.0 / (1.0 + (-x).exp());
    let logit = |c: f64| (c / (1.0 - c)).ln();

    // Temperature: T = 1/b1 of the slope-only logistic GLM, and g(c) = σ(logit(c)/T).
    let (map, csv) = recalibrate_map(&dir, "top-label-temperature");
    let b1 = glm("logit_logit_b1")["b1"].as_f64().unwrap();
    let t = map["temperature"].as_f64().unwrap();
    assert!(
        (t - 1.0 / b1).abs() < 1e-9 * t,
        "T {t} vs 1/b1 {}",
        1.0 / b1
    );
    for (&c, &g) in originals.iter().zip(&confidences(&csv)).take(50) {
        if c > 0.0 && c < 1.0 {
            assert!((g - sigma(logit(c) / t)).abs() < 1e-9, "{c} -> {g}");
        }
    }
    // Platt: a, b of the full logistic GLM.
    let (map, _) = recalibrate_map(&dir, "platt");
    let full = glm("logit_logit_b0_b1");
    for (key, coefficient) in [("a", "b0"), ("b", "b1")] {
        let (got, want) = (
            map[key].as_f64().unwrap(),
            full[coefficient].as_f64().unwrap(),
        );
        assert!(
            (got - want).abs() < 1e-9 * want.abs().max(1.0),
            "{key}: {got} vs {want}"
        );
    }
    // Histogram: 15 bins, each the mean label of the fit file's rows in it (or its centre).
    let (map, csv) = recalibrate_map(&dir, "histogram");
    assert_eq!(map["bins"], 15);
    let edges: Vec<f64> = map["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap())
        .collect();
    let values: Vec<f64> = map["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap())
        .collect();
    assert_eq!(
        (edges.len(), values.len(), edges[0], edges[15]),
        (16, 15, 0.0, 1.0)
    );
    let text = std::fs::read_to_string(birds()).unwrap();
    let rows: Vec<(f64, f64)> = text
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0].parse().unwrap(), f[1].parse().unwrap())
        })
        .collect();
    for (k, &value) in values.iter().enumerate() {
        let in_bin: Vec<f64> = rows
            .iter()
            .filter(|(c, _)| ((c * 15.0) as usize).min(14) == k)
            .map(|&(_, y)| y)
            .collect();
        let want = if in_bin.is_empty() {
            (k as f64 + 0.5) / 15.0
        } else {
            in_bin.iter().sum::<f64>() / in_bin.len() as f64
        };
        assert!((value - want).abs() < 1e-12, "bin {k}: {value} vs {want}");
    }
    assert!(confidences(&csv).iter().all(|&g| is_one_of(g, &values)));
    // Isotonic: non-decreasing steps from 0; every output is one of the step values.
    let (map, csv) = recalibrate_map(&dir, "isotonic");
    let starts: Vec<f64> = map["starts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap())
        .collect();
    let values: Vec<f64> = map["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_f64().unwrap())
        .collect();
    assert_eq!(starts.len(), values.len());
    assert_eq!(starts[0], 0.0);
    assert!(starts.windows(2).all(|w| w[0] < w[1]) && values.windows(2).all(|w| w[0] <= w[1]));
    assert!(confidences(&csv).iter().all(|&g| is_one_of(g, &values)));

    // Without --json the map is printed in words: on stdout with --out...
    let out = dir.join("words.csv");
    let words = stdout(&tce(&[
        "recalibrate",
        "--method",
        "platt",
        "--fit",
        &birds(),
        "--apply",
        &c10(),
        "--out",
        out.to_str().unwrap(),
    ]));
    let a = format!("a = {:.6}", full["b0"].as_f64().unwrap());
    assert!(
        words.starts_with("Platt scaling: g(c) = σ(a + b·logit c), ") && words.contains(&a),
        "{words}"
    );
    let histogram = stdout(&tce(&[
        "recalibrate",
        "--method",
        "histogram",
        "--fit",
        &birds(),
        "--apply",
        &c10(),
        "--out",
        out.to_str().unwrap(),
    ]));
    assert_eq!(histogram.lines().count(), 16, "{histogram}");
    assert!(histogram
        .lines()
        .nth(15)
        .unwrap()
        .starts_with("  [0.933333, 1.000000]  ->  "));
    // ... and on stderr when the CSV goes to stdout.
    let output = tce(&[
        "recalibrate",
        "--method",
        "top-label-temperature",
        "--fit",
        &birds(),
        "--apply",
        &birds(),
    ]);
    let csv = stdout(&output);
    assert!(csv.starts_with("confidence,correct,predicted,label\n"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("top-label temperature scaling: g(c) = σ(logit(c) / T), T = "),
        "{stderr}"
    );
}

#[test]
fn estimate_py_refuses_a_named_library_that_does_not_exist() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("python3 not found: skipped");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/estimate.py");
    let output = Command::new("python3")
        .args([script, "--lib", "/nonexistent/libtce-test.so", &birds()])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("/nonexistent/libtce-test.so") && stderr.contains("no such library"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty(), "fell back to another library");
    let output = Command::new("python3")
        .args([script, &birds()])
        .env("TCE_LIB", "/nonexistent/env-libtce.so")
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("TCE_LIB /nonexistent/env-libtce.so"));
}
