//! `tce simulate` and `tce paper`, end to end with few repetitions: output formats in
//! percent, common random numbers across cells, files written, and exit 2 on bad options.

use std::process::Output;

use serde_json::Value;

mod common;
use common::{scratch, stdout, tce, tce_bounded};

const MODEL: [&str; 6] = ["simulate", "--alpha", "1.1", "--beta", "0.1", "--d"];

fn simulate(d: &str, rest: &[&str]) -> Output {
    let args: Vec<&str> = MODEL
        .iter()
        .copied()
        .chain([d])
        .chain(rest.iter().copied())
        .collect();
    tce(&args)
}

#[test]
fn json_reports_percent_and_every_cell() {
    let out = stdout(&simulate(
        "2",
        &[
            "--n",
            "100,200",
            "--bins",
            "2,4",
            "--reps",
            "20",
            "--json",
            "--estimators",
            "ece_bin:equal_width,ece_sweep:equal_mass,kde",
        ],
    ));
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["unit"], "percent");
    // SPEC §7: Beta(1.1, 0.1), d = 2 → 8.4625400048 %.
    assert!((json["tce"].as_f64().unwrap() - 8.4625400048).abs() < 1e-8);
    let cells = json["cells"].as_array().unwrap();
    // Per n: 2 EW cells, one sweep, one KDE.
    assert_eq!(cells.len(), 2 * 4);
    assert_eq!(cells[0]["n"], 100);
    assert_eq!(cells[0]["bins"], 2);
    assert_eq!(cells[0]["estimator"], "ece_bin");
    assert_eq!(cells[0]["binning"], "equal_width");
    assert_eq!(cells[2]["bins"], Value::Null);
    assert_eq!(cells[2]["estimator"], "ece_sweep");
    assert_eq!(cells[3]["binning"], Value::Null);
    for cell in cells {
        let get = |k: &str| cell[k].as_f64().unwrap();
        assert!((get("bias") - (get("mean") - 8.4625400048)).abs() < 1e-9);
        assert!((get("se") - get("sd") / 20f64.sqrt()).abs() < 1e-12);
        assert!(get("mean") > 1.0, "percent, not a fraction: {cell}");
    }
}

#[test]
fn calibrated_model_table_and_common_random_numbers() {
    // With one bin, equal width and equal mass are the same binning: identical cells only
    // if both saw the same data sets.
    let out = stdout(&simulate(
        "1",
        &[
            "--n",
            "150",
            "--bins",
            "1",
            "--reps",
            "30",
            "--json",
            "--estimators",
            "ece_bin:equal_width,ece_bin:equal_mass",
        ],
    ));
    let json: Value = serde_json::from_str(&out).unwrap();
    let cells = json["cells"].as_array().unwrap();
    assert_eq!(json["tce"], 0.0);
    for key in ["mean", "sd", "rmse"] {
        assert_eq!(cells[0][key], cells[1][key]);
    }
    let table = stdout(&simulate("1", &["--n", "150", "--reps", "10"]));
    assert!(table.contains("TCE = 0.0000 %"), "{table}");
    assert!(
        table.contains("mean %") && table.contains("bias %"),
        "{table}"
    );
    assert!(
        table.contains("ece_debias:equal_mass") && table.contains("kde"),
        "{table}"
    );
}

#[test]
fn same_seed_same_numbers_other_seed_other_numbers() {
    let run = |seed: &str| {
        stdout(&simulate(
            "2",
            &["--n", "80", "--reps", "8", "--json", "--seed", seed],
        ))
    };
    assert_eq!(run("3"), run("3"));
    assert_ne!(run("3"), run("4"));
}

#[test]
fn csv_and_svg_files() {
    let dir = scratch("files");
    let (csv, svg, curves) = (
        dir.join("cells.csv"),
        dir.join("heat.svg"),
        dir.join("curves.svg"),
    );
    stdout(&simulate(
        "2",
        &[
            "--n",
            "100,200",
            "--bins",
            "2,4",
            "--reps",
            "5",
            "--estimators",
            "ece_bin:equal_width,ece_bin:equal_mass",
            "--csv",
            csv.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ],
    ));
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("n,bins,estimator,binning,spec,mean_percent,bias_percent"));
    assert_eq!(lines.count(), 8);
    let heat = std::fs::read_to_string(&svg).unwrap();
    assert!(heat.starts_with("<svg") && heat.contains("ece_bin:equal_mass bias"));
    stdout(&simulate(
        "2",
        &[
            "--n",
            "100,200",
            "--reps",
            "5",
            "--svg",
            curves.to_str().unwrap(),
        ],
    ));
    let lines = std::fs::read_to_string(&curves).unwrap();
    assert!(lines.contains("<polyline") && lines.contains("kde"));
}

#[test]
fn bad_options_exit_2_with_a_clear_message() {
    let cases: [(&[&str], &str); 7] = [
        (&["--d", "-1", "--n", "10"], "exponent"),
        (&["--n", "0"], "at least 1"),
        (&["--n", "10", "--reps", "0"], "repetitions"),
        (
            &["--n", "10", "--estimators", "ece_bin:quantile"],
            "unknown binning",
        ),
        (&["--n", "10", "--estimators", "foo"], "unknown estimator"),
        (&["--n", "10", "--bins", "0"], "bins"),
        (&["--d", "2", "--a", "1", "--n", "10"], "does not take"),
    ];
    for (args, message) in cases {
        let full: Vec<&str> = ["simulate", "--alpha", "1", "--beta", "1"]
            .into_iter()
            .chain(if args.contains(&"--d") {
                vec![]
            } else {
                vec!["--d", "2"]
            })
            .chain(args.iter().copied())
            .collect();
        let output = tce(&full);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{full:?}: {stderr}");
        assert!(stderr.contains(message), "{full:?}: {stderr}");
    }
    let output = tce(&[
        "simulate", "--alpha", "0", "--beta", "1", "--d", "2", "--n", "10",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("alpha"));
}

#[test]
fn huge_counts_are_named_errors_at_once() {
    // 2^64 − 1 repetitions overflowed the results' capacity (a panic, exit 101), and
    // n = 2^34 asked the allocator for 2^34 samples' sort storage (a panic).
    for (args, message) in [
        (
            ["--n", "100", "--reps", "18446744073709551615"],
            "18446744073709551615 repetitions: a simulation takes at most 100000 (tce::sim::runner::MAX_REPETITIONS)",
        ),
        (
            ["--n", "100", "--reps", "100001"],
            "100001 repetitions: a simulation takes at most 100000",
        ),
        (
            ["--n", "17179869184", "--reps", "1"],
            "sample size 17179869184 is above the largest the simulator takes, 2147483647",
        ),
    ] {
        let full: Vec<&str> = MODEL.iter().copied().chain(["2"]).chain(args).collect();
        let output = tce_bounded(&full, 512, 20);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{full:?}: {stderr}");
        assert!(stderr.contains(message), "{full:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{full:?}: {stderr}");
    }
}

#[test]
fn paper_writes_every_figure_and_the_findings() {
    let dir = scratch("paper");
    let out = tce(&[
        "paper",
        "--out",
        dir.to_str().unwrap(),
        "--reps",
        "3",
        "--table1-reps",
        "2",
        "--figure5-datasets",
        "0",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in [
        "figure1.svg",
        "figure1.csv",
        "figure1_histogram.csv",
        "figure2b.svg",
        "figure2b.csv",
        "figure3.svg",
        "figure3.csv",
        "figure4.svg",
        "figure4.csv",
        "findings.md",
        "table1.md",
    ] {
        let size = std::fs::metadata(dir.join(name))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(size > 100, "{name}: {size} bytes");
    }
    let findings = std::fs::read_to_string(dir.join("findings.md")).unwrap();
    for heading in ["## (a)", "## (b)", "## (c)", "## (d)"] {
        assert!(findings.contains(heading), "{findings}");
    }
    // --figure5-datasets 0 skips Figure 5.
    assert!(!dir.join("figure5.csv").exists() && !dir.join("figure5.svg").exists());
    assert!(!findings.contains("## (e)"), "{findings}");
    let table1 = std::fs::read_to_string(dir.join("table1.md")).unwrap();
    for row in [
        "Beta(1.1, 0.1), T = c^2",
        "fit of resnet110_c10_test",
        "EM ECE_sweep",
    ] {
        assert!(table1.contains(row), "{table1}");
    }
}

#[test]
fn paper_draws_figure5_the_tests_detection_rates() {
    let dir = scratch("paper_figure5");
    let out = tce(&[
        "paper",
        "--out",
        dir.to_str().unwrap(),
        "--reps",
        "1",
        "--table1-reps",
        "0",
        "--figure5-datasets",
        "1",
        "--figure5-resamples",
        "1",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(dir.join("figure5.svg")).unwrap();
    for text in [
        "Figure 5",
        "n = 200",
        "n = 5000",
        "ece_sweep:equal_mass",
        "level α",
    ] {
        assert!(svg.contains(text), "{text}");
    }
    let findings = std::fs::read_to_string(dir.join("findings.md")).unwrap();
    assert!(
        findings.contains("--figure5-datasets 1 --figure5-resamples 1"),
        "{findings}"
    );
    assert!(findings.contains("## (e)"), "{findings}");
    assert!(
        findings.contains("- n = 5000, d = 3 (TCE 13.61 %): EM ECE_sweep 0.000 ± 0.000"),
        "{findings}"
    );
    // A row per (n, d, statistic): 2 sizes × 9 curves × 7 statistics.
    let figure5 = std::fs::read_to_string(dir.join("figure5.csv")).unwrap();
    let mut lines = figure5.lines();
    assert_eq!(
        lines.next().unwrap(),
        "alpha,beta,d,tce_percent,n,statistic,datasets,resamples,rejections,undefined,rate,se"
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2 * 9 * 7);
    assert_eq!(
        rows[0],
        [
            "1.1",
            "0.1",
            "1",
            "0",
            "200",
            "ece_sweep:equal_mass",
            "1",
            "1",
            "0",
            "0",
            "0",
            "0"
        ]
    );
    // With one resample a resampled test's p-value is at least 1/2: none of the five
    // rejects at α = 0.05 (Spiegelhalter's and Hosmer-Lemeshow's p-values are analytic).
    for row in rows
        .iter()
        .filter(|r| !r[5].contains("spiegelhalter") && !r[5].contains("hosmer"))
    {
        assert_eq!(row[8], "0", "{row:?}");
    }
    let last = rows.last().unwrap();
    assert_eq!(
        (last[2], last[3], last[4], last[5]),
        ("3", "13.6101", "5000", "hosmer_lemeshow")
    );
    // Clear miscalibration at n = 5000: Hosmer-Lemeshow rejects its one data set.
    assert_eq!((last[8], last[10]), ("1", "1"));
}
