//! `tce test` end to end: every statistic's p-value with the deciding one starred, the
//! JSON with every number and setting (reproducible from its seed, its estimates those
//! of `tce estimate`), a given statistic, the inputs of `tce estimate`, and bad options
//! refused as named errors with exit 2.

mod common;
use common::{birds, c10, json, refused, stdout, tce, tce_stdin};

use serde_json::Value;

const FAST: [&str; 4] = ["--resamples", "99", "--power-simulations", "40"];

fn test_json(file: &str, extra: &[&str]) -> Value {
    let mut args = vec!["test", file, "--json"];
    args.extend(FAST);
    args.extend(extra);
    json(&tce(&args))
}

/// Rows of `file` with a confidence of exactly 1 and label 0, counted here.
fn wrong_at_one(file: &str) -> u64 {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split(',').collect();
            fields[0].parse::<f64>().unwrap() == 1.0 && fields[1] == "0"
        })
        .count() as u64
}

#[test]
fn json_holds_every_p_value_and_the_decision() {
    let file = c10();
    let v = test_json(&file, &["--seed", "5"]);
    assert_eq!(
        v,
        test_json(&file, &["--seed", "5"]),
        "same seed, same test"
    );
    assert_eq!(v["command"], "test");
    assert_eq!(v["tce_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["settings"]["seed"], 5);
    assert_eq!(v["settings"]["resamples"], 99);
    assert_eq!(v["settings"]["statistic"], "auto");
    assert_eq!(v["settings"]["input"]["rows"], 10000);
    assert_eq!(v["n"], 10000);
    let tests = v["tests"].as_array().unwrap();
    let names: Vec<&str> = tests.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "ece_sweep:equal_mass",
            "ece_debias:equal_mass",
            "ece_bin:equal_width",
            "ece_bin:equal_mass",
            "smece",
            "spiegelhalter",
            "hosmer_lemeshow"
        ]
    );
    // The estimates are tce estimate's (smooth ECE with --norm 1), and each resampled
    // p-value is (1 + at_least) / (B + 1).
    let estimate = json(&tce(&["estimate", &file, "--json"]));
    let estimate_of = |estimator: &str, binning: &str| {
        estimate["estimates"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["estimator"] == estimator && e["binning"] == binning)
            .unwrap()["value"]
            .clone()
    };
    assert_eq!(tests[0]["value"], estimate_of("ece_sweep", "equal_mass"));
    assert_eq!(tests[2]["value"], estimate_of("ece_bin", "equal_width"));
    assert_eq!(tests[3]["value"], estimate_of("ece_bin", "equal_mass"));
    let smece = json(&tce(&["estimate", &file, "--json", "--norm", "1"]));
    let smece_value = smece["estimates"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["estimator"] == "smece")
        .unwrap()["value"]
        .as_f64()
        .unwrap();
    assert!((tests[4]["value"].as_f64().unwrap() - smece_value).abs() < 1e-12);
    for t in &tests[..5] {
        assert_eq!(t["method"], "resampling", "{t}");
        let at_least = t["at_least"].as_f64().unwrap();
        assert_eq!(
            t["p_value"].as_f64().unwrap(),
            (1.0 + at_least) / 100.0,
            "{t}"
        );
        assert!(t["power"]["power"].as_f64().is_some(), "{t}");
    }
    assert_eq!(tests[5]["method"], "normal");
    assert_eq!(tests[6]["method"], "chi_square");
    // ResNet-110 on CIFAR-10 is clearly miscalibrated (TCE about 9 %): every resampled
    // test puts the data above all 99 resamples, and the decision rejects.
    for t in &tests[..5] {
        assert_eq!(t["at_least"], 0, "{t}");
    }
    assert_eq!(v["decision"]["reject"], true);
    assert_eq!(v["decision"]["p_value"], 0.01);
    assert_eq!(v["choice"]["basis"], "highest_power");
    assert_eq!(v["decision"]["statistic"], v["choice"]["statistic"]);
    assert!(v["choice"]["fit"]["tce"].as_f64().unwrap() > 0.05);
    // Its confidences of exactly 1 that are wrong, counted from the file.
    let wrong = wrong_at_one(&file);
    assert!(wrong > 0);
    assert_eq!(v["contradictions"]["wrong_at_one"], wrong);
    assert_eq!(v["contradictions"]["right_at_zero"], 0);
}

#[test]
fn a_calibrated_fit_falls_back_and_the_summary_says_so() {
    let mut args = vec!["test".to_owned(), birds()];
    args.extend(FAST.map(String::from));
    let text = stdout(&tce(&args));
    assert!(text.contains("n                2897"), "{text}");
    assert!(
        text.contains(
            "ece_sweep:equal_mass, the default: the model fitted to the data is calibrated"
        ),
        "{text}"
    );
    assert!(
        text.contains("Calibration not rejected at alpha = 0.05"),
        "{text}"
    );
    let starred: Vec<&str> = text.lines().filter(|l| l.contains(" * ")).collect();
    assert_eq!(starred.len(), 1, "{text}");
    assert!(starred[0].starts_with("ece_sweep:equal_mass *"), "{text}");
    // The JSON says the same.
    let v = test_json(&birds(), &[]);
    assert_eq!(v["choice"]["basis"], "calibrated_fit");
    assert_eq!(v["choice"]["fit"]["calibrated"], true);
    assert_eq!(v["decision"]["reject"], false);
}

#[test]
fn a_given_statistic_decides_and_joins_the_table() {
    let v = test_json(
        &birds(),
        &["--statistic", "hosmer_lemeshow", "--groups", "8"],
    );
    assert_eq!(v["choice"]["basis"], "given");
    assert_eq!(v["decision"]["statistic"], "hosmer_lemeshow");
    let hl = &v["tests"][6];
    assert_eq!(hl["degrees_of_freedom"], 8);
    assert_eq!(v["decision"]["p_value"], hl["p_value"]);
    assert_eq!(v["settings"]["groups"], 8);
    let v = test_json(
        &birds(),
        &["--statistic", "mce:equal_width", "--alpha", "0.1"],
    );
    let tests = v["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 8);
    assert_eq!(tests[7]["name"], "mce:equal_width");
    assert_eq!(v["decision"]["statistic"], "mce:equal_width");
    assert_eq!(
        v["decision"]["reject"],
        tests[7]["p_value"].as_f64().unwrap() <= 0.1
    );
}

#[test]
fn reads_stdin_as_estimate_does() {
    let csv = "confidence,correct\n0.9,1\n0.8,1\n0.7,0\n0.95,1\n0.6,1\n0.85,0\n";
    let out = tce_stdin(
        &[
            "test",
            "-",
            "--json",
            "--statistic",
            "ece_bin:equal_mass",
            "--resamples",
            "19",
        ],
        csv.as_bytes(),
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["n"], 6);
    assert_eq!(v["hits"], 4);
    assert_eq!(v["settings"]["file"], "-");
}

#[test]
fn bad_options_are_refused_with_exit_2() {
    let file = birds();
    for (args, message) in [
        (
            vec!["--resamples", "0"],
            "--resamples: 0 resamples: a test takes 1 to 100000",
        ),
        (
            vec!["--resamples", "100001"],
            "tce::decision::MAX_RESAMPLES",
        ),
        (
            vec!["--alpha", "1"],
            "--alpha: the level alpha must be in (0, 1), got 1",
        ),
        (vec!["--alpha", "0"], "--alpha"),
        (vec!["--power-simulations", "0"], "--power-simulations"),
        (vec!["--groups", "0"], "--groups: 0 Hosmer-Lemeshow groups"),
        (vec!["--statistic", "ece"], "unknown estimator `ece`"),
        (vec!["--statistic", "ece_bin"], "`ece_bin` needs a binning"),
    ] {
        let mut all = vec!["test", file.as_str()];
        all.extend(&args);
        let stderr = refused(&tce(&all), &format!("{args:?}"));
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    let stderr = refused(&tce(&["test", "no/such/file.csv"]), "a missing file");
    assert!(stderr.contains("no/such/file.csv"), "{stderr}");
    let dir = common::scratch("bad_labels");
    let bad = common::write(&dir, "bad.csv", "confidence,correct\n0.5,1\n0.7,2\n");
    let stderr = refused(&tce(&["test", &bad]), "a label of 2");
    assert!(stderr.contains("line 3"), "{stderr}");
}
