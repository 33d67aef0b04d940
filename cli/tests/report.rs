//! `tce report` end to end: the summary leads with the recommendation, the JSON holds every
//! number and setting and is reproducible from its seed, bad options are named errors, and
//! the HTML page renders in headless Chromium without console errors, with its figures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::{data, stdout as ok, tce, TempDir};

const FIGURES: [&str; 5] = [
    "reliability-ew",
    "reliability-em",
    "scores",
    "curve",
    "bias",
];

#[test]
fn json_holds_every_number_and_is_reproducible() {
    let file = data("resnet110_c10_test.csv");
    let args = [
        "report",
        &file,
        "--json",
        "--resamples",
        "60",
        "--simulations",
        "30",
        "--seed",
        "9",
        "--quiet",
        "--test-resamples",
        "19",
        "--test-power-simulations",
        "10",
    ];
    let text = ok(&tce(&args));
    assert_eq!(text, ok(&tce(&args)), "same seed, same report");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["command"], "report");
    assert_eq!(v["tce_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["settings"]["seed"], 9);
    assert_eq!(v["settings"]["resamples"], 60);
    assert_eq!(v["settings"]["simulations"], 30);
    // n = 10^4: ten refits by default (at most the simulations).
    assert_eq!(v["settings"]["refits"], 10);
    let plug_in = &v["fit"]["plug_in"];
    assert_eq!(plug_in["refits"], 10);
    assert_eq!(plug_in["estimate"], v["fit"]["tce"]);
    assert!(
        plug_in["bias"]["rmse"].as_f64().unwrap() >= 0.0,
        "{plug_in}"
    );
    assert_eq!(v["settings"]["level"], 0.95);
    assert_eq!(v["n"], 10000);
    // Is it calibrated? No: the data's sweep exceeds all 19 of its resamples, p = 1/20.
    let test = &v["calibration_test"];
    assert_eq!(test["statistic"], "ece_sweep:equal_mass", "{test}");
    assert_eq!(test["p_value"], 0.05);
    assert_eq!(test["reject"], true);
    assert_eq!(test["alpha"], 0.05);
    assert_eq!(test["resamples"], 19);
    assert_eq!(test["power_simulations"], 10);
    assert_eq!(test["seed"], 9);
    assert_eq!(test["power"]["n"], 10000);
    assert_eq!(test["power"]["simulations"], 10);
    assert_eq!(test["alternative"]["model"], "flexible");
    assert_eq!(test["alternative"]["curve"], v["fit"]["curve"]["name"]);
    assert_eq!(v["settings"]["test_resamples"], 19);
    // `tce test` alone, same seed: the same p-values.
    let alone: Value = serde_json::from_str(&ok(&tce(&[
        "test",
        &file,
        "--json",
        "--seed",
        "9",
        "--resamples",
        "19",
        "--power-simulations",
        "10",
    ])))
    .unwrap();
    assert_eq!(alone["decision"]["statistic"], test["statistic"]);
    let p_values = |rows: &Value| -> Vec<(Value, Value)> {
        rows.as_array()
            .unwrap()
            .iter()
            .map(|r| (r["name"].clone(), r["p_value"].clone()))
            .collect()
    };
    assert_eq!(p_values(&test["statistics"]), p_values(&alone["tests"]));
    let estimators = v["estimators"].as_array().unwrap();
    assert_eq!(estimators.len(), 8);
    // ECE_bin 15 equal-width bins on ResNet-110 CIFAR-10 is tce estimate's value.
    let ew = &estimators[0];
    assert_eq!(ew["name"], "ece_bin:equal_width");
    let estimate: Value = serde_json::from_str(&ok(&tce(&["estimate", &file, "--json"]))).unwrap();
    assert_eq!(ew["value"], estimate["estimates"][0]["value"]);
    for e in estimators {
        let b = &e["bootstrap"];
        assert_eq!(b["replicates"].as_array().unwrap().len(), 60, "{e}");
        let (lo, hi) = (
            b["percentile"]["lower"].as_f64().unwrap(),
            b["percentile"]["upper"].as_f64().unwrap(),
        );
        assert!(lo <= hi, "{e}");
    }
    let sweep = &estimators[3];
    assert_eq!(sweep["name"], "ece_sweep:equal_mass");
    assert_eq!(
        sweep["bootstrap"]["sweep_bins_per_resample"]
            .as_array()
            .unwrap()
            .len(),
        60
    );
    assert!(sweep["bootstrap"]["sweep_bins"]["median"].as_u64().unwrap() >= 1);
    assert_eq!(v["fit"]["checks"].as_array().unwrap().len(), 2);
    assert!(v["fit"]["tce"].as_f64().unwrap() > 0.0);
    let rec = &v["recommendation"];
    assert!(estimators.iter().any(|e| e["name"] == rec["estimator"]));
    assert!(rec["words"][0]
        .as_str()
        .unwrap()
        .starts_with("Calibration error"));
    assert_eq!(v["reliability"][0]["bins"].as_array().unwrap().len(), 15);
}

#[test]
fn summary_leads_with_the_recommendation() {
    let file = data("densenet40_c10_test.csv");
    let text = ok(&tce(&[
        "report",
        &file,
        "--resamples",
        "40",
        "--simulations",
        "20",
        "--quiet",
        "--test-resamples",
        "19",
        "--test-power-simulations",
        "10",
    ]));
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    assert!(
        text.contains(
            "\nis it calibrated? Calibration rejected at alpha = 0.05: p = 0.0500 <= 0.05"
        ),
        "{text}"
    );
    assert!(
        text.contains("p-value 0.0500 from 19 resamples (the smallest possible 0.0500), seed 0"),
        "{text}"
    );
    assert!(lines[0].starts_with("tce report: "), "{text}");
    assert!(
        lines[1].starts_with("Calibration error (TCE_2): "),
        "{text}"
    );
    assert!(
        text.contains("estimator ") && text.contains("RMSE"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with('*')).count(),
        1,
        "one recommended row"
    );
}

#[test]
fn bad_options_are_named_errors() {
    let file = data("resnet110_c10_test.csv");
    for (args, message) in [
        (vec!["--level", "1.5"], "level"),
        (
            vec!["--simulations", "0"],
            "--simulations: 0 simulations: a report takes 1 to",
        ),
        (vec!["--classwise"], "classwise"),
        (vec!["--epsilon", "0.7"], "epsilon"),
        (
            vec!["--simulations", "5", "--refits", "6"],
            "--refits: 6 refits: a report refits at most its 5 simulated data sets",
        ),
        (
            vec!["--classwise", "--prob-cols", "confidence", "--refits", "2"],
            "--refits: 2 refits: a classwise report does not refit its classes",
        ),
        (
            vec!["--simulated-classes", "2"],
            "--simulated-classes is an option of --classwise reports",
        ),
        (
            vec!["--test-resamples", "0"],
            "--test-resamples: the calibration test: 0 resamples: a test takes 1 to 100000",
        ),
        (
            vec!["--test-power-simulations", "100001"],
            "--test-power-simulations: the calibration test: 100001 power simulations",
        ),
        (
            vec!["--alpha", "1.5"],
            "--alpha: the calibration test: the level alpha must be in (0, 1), got 1.5",
        ),
        (
            vec!["--classwise", "--prob-cols", "confidence", "--alpha", "0.1"],
            "--classwise: a classwise report has no calibration test",
        ),
        (
            vec!["--no-test", "--test-resamples", "9"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["report", file.as_str(), "--quiet"];
        all.extend(args);
        let out = tce(&all);
        assert_eq!(out.status.code(), Some(2), "{all:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(message),
            "{all:?}"
        );
    }
}

#[test]
fn huge_counts_are_named_errors_before_any_work() {
    // 2^64 − 1 resamples or simulations overflowed a capacity (a panic, exit 101); 10^9
    // resamples of 500 rows grew by 15 MB/s with no check up front. The bounds are the
    // library's (tce::report::MAX_RESAMPLES, MAX_SIMULATIONS), checked before the input
    // is read.
    let dir = TempDir::new("huge");
    let (scores, labels) = common::load("resnet50_birds_test.csv");
    let mut text = String::from("confidence,correct\n");
    for (s, y) in scores.iter().zip(&labels).take(500) {
        text += &format!("{s},{y}\n");
    }
    let file = common::write(&dir, "rows.csv", &text);
    let (classes, _) = multiclass(&dir);
    let classes = classes.to_str().unwrap();
    let top = ["report", file.as_str(), "--quiet"];
    let classwise = [
        "report",
        classes,
        "--prob-cols",
        "p*",
        "--classwise",
        "--quiet",
    ];
    for (input, args, message) in [
        (&top[..], ["--resamples", "18446744073709551615"], "--resamples: 18446744073709551615 resamples: a report takes at most 100000 (tce::report::MAX_RESAMPLES)"),
        (&top[..], ["--resamples", "1000000000"], "--resamples: 1000000000 resamples: a report takes at most 100000"),
        (&top[..], ["--resamples", "100001"], "--resamples: 100001 resamples"),
        (&top[..], ["--simulations", "18446744073709551615"], "--simulations: 18446744073709551615 simulations: a report takes 1 to 100000 (tce::report::MAX_SIMULATIONS)"),
        (&top[..], ["--simulations", "100001"], "--simulations: 100001 simulations"),
        (&classwise[..], ["--resamples", "18446744073709551615"], "--resamples: 18446744073709551615 resamples"),
        (&classwise[..], ["--simulations", "18446744073709551615"], "--simulations: 18446744073709551615 simulations"),
    ] {
        let all: Vec<&str> = input.iter().copied().chain(args).collect();
        let out = common::tce_bounded(&all, 512, 20);
        let stderr = common::refused(&out, &format!("{all:?}"));
        assert!(stderr.contains(message), "{all:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{all:?}: {stderr}");
    }
}

/// A CSV of `n` (confidence, correct) rows none of which is a hit: KDE is undefined.
fn no_hits(dir: &Path, n: usize) -> String {
    let mut text = String::from("confidence,correct\n");
    for i in 0..n {
        text += &format!("{},0\n", (i as f64 + 0.5) / n as f64);
    }
    common::write(dir, "no-hits.csv", &text)
}

#[test]
fn kde_undefined_on_the_data_is_reported_unavailable_with_the_rest() {
    // It failed the whole report (exit 1); now KDE is left out, with why, in every form.
    let dir = TempDir::new("kde");
    let file = no_hits(&dir, 300);
    let html = dir.join("page.html");
    let html_arg = html.to_str().unwrap();
    let args = [
        "report",
        "--no-test",
        file.as_str(),
        "--kde",
        "--quiet",
        "--resamples",
        "50",
        "--simulations",
        "10",
    ];
    let reason = "no hits (label 1): the hit-score density and bandwidth are undefined";
    let summary = ok(&tce(&[&args[..], &["--html", html_arg]].concat()));
    assert!(
        summary.contains(&format!(
            " KDE                     unavailable: undefined on these data: {reason}\n"
        )),
        "{summary}"
    );
    assert!(summary.contains("ECE_sweep, equal-mass"), "{summary}");
    let v: Value = serde_json::from_str(&ok(&tce(&[&args[..], &["--json"]].concat()))).unwrap();
    assert_eq!(
        v["unavailable"],
        serde_json::json!([{"name": "kde", "estimator": "kde", "reason": reason}])
    );
    let names: Vec<&str> = v["estimators"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 8, "{names:?}");
    assert!(!names.contains(&"kde"));
    // The rest is the report without --kde.
    let without: Value = serde_json::from_str(&ok(&tce(&[
        "report",
        "--no-test",
        file.as_str(),
        "--quiet",
        "--resamples",
        "50",
        "--simulations",
        "10",
        "--json",
    ])))
    .unwrap();
    assert_eq!(v["estimators"], without["estimators"]);
    assert!(without.get("unavailable").is_none());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(&format!("<tr class=\"unavailable\"><td>KDE</td><td colspan=\"7\">unavailable: undefined on these data: {reason}</td></tr>")),
        "the page's table names KDE unavailable"
    );

    // Classwise: a class that never occurs has no hit; KDE has no marginal, and the
    // class's own report says why.
    let mut text = String::from("p0,p1,p2,label\n");
    for i in 0..120 {
        let p0 = 0.3 + 0.5 * (i as f64 / 120.0);
        text += &format!("{p0},{},0.1,{}\n", 0.9 - p0, i % 2);
    }
    let classes = common::write(&dir, "classes.csv", &text);
    let v: Value = serde_json::from_str(&ok(&tce(&[
        "report",
        &classes,
        "--prob-cols",
        "p*",
        "--classwise",
        "--kde",
        "--quiet",
        "--resamples",
        "20",
        "--simulations",
        "5",
        "--json",
    ])))
    .unwrap();
    assert_eq!(
        v["unavailable"],
        serde_json::json!([{"name": "kde", "estimator": "kde", "class": 2, "reason": reason}])
    );
    assert!(v["marginal"]
        .as_array()
        .unwrap()
        .iter()
        .all(|m| m["name"] != "kde"));
    assert_eq!(v["classes"][2]["unavailable"][0]["reason"], reason);
    assert!(v["classes"][0].get("unavailable").is_none());
    assert!(v["classes"][0]["estimators"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["name"] == "kde"));
    let summary = ok(&tce(&[
        "report",
        &classes,
        "--prob-cols",
        "p*",
        "--classwise",
        "--kde",
        "--quiet",
        "--resamples",
        "20",
        "--simulations",
        "5",
    ]));
    assert!(
        summary.contains(&format!(
            " KDE                     unavailable: undefined on class 2: {reason}\n"
        )),
        "{summary}"
    );
}

/// The page is self-contained: no script, no stylesheet or image from elsewhere; the only
/// URL is the SVG namespace.
fn assert_no_outside_content(page: &str) {
    assert!(!page.contains("<script"), "no scripts");
    let urls = page.matches("http").count();
    let namespaces = page.matches("http://www.w3.org/2000/svg").count()
        + page.matches("http://www.w3.org/1999/xlink").count();
    assert_eq!(urls, namespaces, "only the SVG namespace is a URL");
}

/// A top-label page: self-contained, with its five figures.
fn assert_self_contained(page: &str) {
    assert_no_outside_content(page);
    for id in FIGURES {
        assert!(page.contains(&format!("<figure id=\"{id}\"><svg")), "{id}");
    }
}

/// Chromium as Debian ships it (`scripts/test` installs it); the test fails without it.
fn chromium() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("chromium"))
        .find(|p| p.is_file())
        .expect("`chromium` is not on PATH; run the suite with scripts/test, which installs it")
}

fn headless(profile: &Path, args: &[&str], page: &Path) -> Output {
    Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("run chromium")
}

#[test]
fn page_renders_in_chromium_with_its_figures() {
    let tmp = TempDir::new("page");
    let page = tmp.path().join("report.html");
    let file = data("resnet110_c10_test.csv");
    ok(&tce(&[
        "report",
        "--test-resamples",
        "19",
        "--test-power-simulations",
        "10",
        &file,
        "--resamples",
        "50",
        "--simulations",
        "20",
        "--quiet",
        "--html",
        page.to_str().unwrap(),
    ]));
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);

    let png = tmp.path().join("report.png");
    let shot = headless(
        &tmp.path().join("profile-shot"),
        &[
            "--window-size=1280,2400",
            &format!("--screenshot={}", png.display()),
        ],
        &page,
    );
    let log = String::from_utf8_lossy(&shot.stderr);
    assert!(shot.status.success(), "chromium failed: {log}");
    // Console messages (errors included) are logged as `INFO:CONSOLE`; a control page in
    // `console_errors_are_seen` shows they would be.
    assert!(!log.contains(":CONSOLE"), "console output: {log}");
    let image = std::fs::read(&png).unwrap();
    assert_eq!(&image[..8], b"\x89PNG\r\n\x1a\n");
    assert!(
        image.len() > 50_000,
        "a blank page would be small: {} bytes",
        image.len()
    );

    let dom = headless(&tmp.path().join("profile-dom"), &["--dump-dom"], &page);
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    for id in FIGURES {
        let at = dom_text
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("{id}"));
        assert!(dom_text[at..].contains("<svg"), "{id} has its SVG");
    }
    assert!(!String::from_utf8_lossy(&dom.stderr).contains(":CONSOLE"));
}

#[test]
fn console_errors_are_seen() {
    // The control of the check above: a page that logs an error and throws.
    let tmp = TempDir::new("control");
    let page = tmp.path().join("bad.html");
    std::fs::write(
        &page,
        "<html><body><script>console.error('boom'); missing();</script></body></html>",
    )
    .unwrap();
    let out = headless(&tmp.path().join("profile"), &["--dump-dom"], &page);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains(":CONSOLE") && log.contains("boom"), "{log}");
}

/// A small multiclass input: 240 rows of K = 3 class probabilities (a softmax of seeded
/// logits, written so that they parse back exactly) and the true class.
fn multiclass(dir: &Path) -> (PathBuf, Vec<(Vec<f64>, usize)>) {
    let mut state: u64 = 0x2545_F491_4F6C_DD1D;
    let mut uniform = || {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut rows: Vec<(Vec<f64>, usize)> = Vec::new();
    for _ in 0..240 {
        let class = (uniform() * 3.0) as usize;
        let mut z: Vec<f64> = (0..3).map(|_| 3.0 * uniform() - 1.5).collect();
        z[class] += 1.2;
        let max = z.iter().copied().fold(f64::MIN, f64::max);
        let e: Vec<f64> = z.iter().map(|v| (v - max).exp()).collect();
        let total: f64 = e.iter().sum();
        rows.push((e.iter().map(|v| v / total).collect(), class));
    }
    let path = dir.join("classes.csv");
    let mut text = String::from("p0,p1,p2,label\n");
    for (p, class) in &rows {
        text += &format!("{:?},{:?},{:?},{class}\n", p[0], p[1], p[2]);
    }
    std::fs::write(&path, text).unwrap();
    (path, rows)
}

/// A report's numbers without the settings and version (what a class entry holds), and
/// without what depends on the bootstrap: a classwise report's classes read their
/// intervals off the joint resamples of the rows, not off resamples of their own.
fn body(mut v: Value) -> Value {
    let o = v.as_object_mut().unwrap();
    for key in [
        "tce_version",
        "command",
        "settings",
        "class",
        "name",
        "simulated",
        "simulation_seed",
        // A class has no calibration test; the class alone was run without one.
        "calibration_test",
    ] {
        o.remove(key);
    }
    for e in o["estimators"].as_array_mut().unwrap() {
        e.as_object_mut().unwrap().remove("bootstrap");
    }
    let rec = o["recommendation"].as_object_mut().unwrap();
    rec.remove("interval");
    // The first line quotes the interval.
    rec["words"].as_array_mut().unwrap().remove(0);
    v
}

#[test]
fn classwise_is_every_class_one_vs_rest_and_their_lp_mean() {
    let dir = TempDir::new("classwise");
    let (path, rows) = multiclass(dir.path());
    let file = path.display().to_string();
    let options = [
        "--resamples",
        "50",
        "--simulations",
        "20",
        "--seed",
        "4",
        "--quiet",
        "--json",
    ];
    let mut args = vec![
        "report",
        &file,
        "--prob-cols",
        "p*",
        "--label-col",
        "label",
        "--classwise",
    ];
    args.extend(options);
    let text = ok(&tce(&args));
    assert_eq!(text, ok(&tce(&args)), "same seed, same classwise report");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["classwise"], true);
    assert_eq!(v["n"], 240);
    let classes = v["classes"].as_array().unwrap();
    assert_eq!(classes.len(), 3);
    // Each class equals `tce report` on a hand-made one-vs-rest file of that class, with
    // the class's simulation seed and no refits, but for the intervals: those are read off
    // the joint resamples (50 of them, as asked).
    assert_eq!(v["method"]["intervals"], "joint_resamples");
    assert_eq!(
        v["method"]["simulated_classes"],
        serde_json::json!([0, 1, 2])
    );
    assert_eq!(v["method"]["sampled"], false);
    for (k, class) in classes.iter().enumerate() {
        assert_eq!(class["simulated"], true);
        for e in class["estimators"].as_array().unwrap() {
            assert_eq!(e["bootstrap"]["replicates"].as_array().unwrap().len(), 50);
        }
        assert_eq!(class["class"], k);
        assert_eq!(class["name"], format!("p{k}"));
        let ovr = dir.path().join(format!("class{k}.csv"));
        let mut text = String::from("confidence,correct\n");
        for (p, c) in &rows {
            text += &format!("{:?},{}\n", p[k], u8::from(*c == k));
        }
        std::fs::write(&ovr, text).unwrap();
        let ovr = ovr.display().to_string();
        // A classwise report does not refit its classes, and simulates each from its own
        // seed.
        let seed = class["simulation_seed"].as_u64().unwrap().to_string();
        let mut args = vec!["report", ovr.as_str(), "--refits", "0", "--no-test"];
        args.extend(options);
        let at = args.iter().position(|a| *a == "4").unwrap();
        args[at] = &seed;
        let alone: Value = serde_json::from_str(&ok(&tce(&args))).unwrap();
        assert_eq!(body(class.clone()), body(alone), "class {k}");
    }
    // The marginal value is the l_p mean (p = 2) of the classes' values; MCE the maximum.
    let marginal = v["marginal"].as_array().unwrap();
    assert_eq!(marginal.len(), 8);
    for (i, m) in marginal.iter().enumerate() {
        let values: Vec<f64> = classes
            .iter()
            .map(|c| c["estimators"][i]["value"].as_f64().unwrap())
            .collect();
        assert_eq!(m["name"], classes[0]["estimators"][i]["name"]);
        let expected = if m["estimator"] == "mce" {
            values.iter().copied().fold(0.0, f64::max)
        } else {
            (values.iter().map(|x| x * x).sum::<f64>() / 3.0).sqrt()
        };
        let got = m["value"].as_f64().unwrap();
        assert!((got - expected).abs() <= 1e-15, "{m}: {got} vs {expected}");
        let boot = &m["bootstrap"];
        assert_eq!(boot["replicates"].as_array().unwrap().len(), 50, "{m}");
        let (lo, hi) = (
            boot["percentile"]["lower"].as_f64().unwrap(),
            boot["percentile"]["upper"].as_f64().unwrap(),
        );
        assert!(lo <= hi, "{m}");
        if m["estimator"] != "mce" {
            assert!(m["bias"]["rmse"].as_f64().unwrap() >= 0.0, "{m}");
        }
    }
    assert!(marginal
        .iter()
        .any(|m| m["name"] == v["recommendation"]["estimator"]));
    // Another seed resamples otherwise.
    let mut other = args.clone();
    let seed = other.iter().position(|a| *a == "4").unwrap();
    other[seed] = "5";
    let w: Value = serde_json::from_str(&ok(&tce(&other))).unwrap();
    assert_ne!(
        w["marginal"][0]["bootstrap"]["replicates"],
        v["marginal"][0]["bootstrap"]["replicates"]
    );
    assert_eq!(w["marginal"][0]["value"], v["marginal"][0]["value"]);

    // Two of the three classes fitted and simulated: the third says so and takes the
    // marginal's estimator; its estimates and intervals are the same.
    let mut sampled = args.clone();
    sampled.extend(["--simulated-classes", "2"]);
    let w: Value = serde_json::from_str(&ok(&tce(&sampled))).unwrap();
    assert_eq!(w["method"]["sampled"], true);
    let picked = w["method"]["simulated_classes"].as_array().unwrap();
    assert_eq!(picked.len(), 2);
    for (k, class) in w["classes"].as_array().unwrap().iter().enumerate() {
        let simulated = picked.contains(&Value::from(k));
        assert_eq!(class["simulated"], simulated);
        // (A class outside the sample has no bias rows of its own.)
        let without_bias = |c: &Value| {
            let mut e = c["estimators"].clone();
            for x in e.as_array_mut().unwrap() {
                x.as_object_mut().unwrap().remove("bias");
            }
            e
        };
        assert_eq!(
            without_bias(class),
            without_bias(&v["classes"][k]),
            "class {k}"
        );
        if !simulated {
            assert!(class["fit"].is_null());
            assert!(class["fit_error"]
                .as_str()
                .unwrap()
                .starts_with("not simulated"));
            assert_eq!(class["recommendation"]["basis"], "marginal");
            assert_eq!(
                class["recommendation"]["estimator"],
                w["recommendation"]["estimator"]
            );
        }
    }
    assert!(w["marginal"][0]["bias"]["se"].as_f64().unwrap() > 0.0);
    assert!(w["tce_se"].as_f64().unwrap() > 0.0);
    let summary = ok(&tce(&sampled[..sampled.len() - 3]
        .iter()
        .chain(&["--simulated-classes", "2"])
        .copied()
        .collect::<Vec<_>>()));
    assert!(
        summary.contains("Bias figures: 2 of the 3 classes") && summary.contains("not simulated"),
        "{summary}"
    );

    // At p = 1 the marginal is the plain mean of the classes' values (smooth ECE joins).
    let p1 = [
        "report",
        &file,
        "--prob-cols",
        "p*",
        "--label-col",
        "label",
        "--classwise",
        "--norm",
        "1",
        "--resamples",
        "0",
        "--simulations",
        "5",
        "--quiet",
        "--json",
    ];
    let v: Value = serde_json::from_str(&ok(&tce(&p1))).unwrap();
    let marginal = v["marginal"].as_array().unwrap();
    assert_eq!(marginal.len(), 9);
    for (i, m) in marginal.iter().enumerate() {
        if m["estimator"] == "mce" {
            continue;
        }
        let mean = v["classes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["estimators"][i]["value"].as_f64().unwrap())
            .sum::<f64>()
            / 3.0;
        assert!((m["value"].as_f64().unwrap() - mean).abs() <= 1e-15, "{m}");
    }

    // The summary and the page.
    let summary = ok(&tce(&args[..args.len() - 1]));
    assert!(
        summary
            .lines()
            .nth(2)
            .unwrap()
            .starts_with("Marginal calibration error over 3 classes"),
        "{summary}"
    );
    let page_path = dir.path().join("classes.html");
    let page_file = page_path.display().to_string();
    let mut html = args[..args.len() - 1].to_vec();
    html.extend(["--html", page_file.as_str()]);
    ok(&tce(&html));
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert_no_outside_content(&page);
    assert!(
        page.contains("<figure id=\"classes\"><svg"),
        "the per-class figure"
    );
    for k in 0..3 {
        assert!(
            page.contains(&format!("<figure id=\"reliability-class-{k}\"><svg")),
            "class {k}'s reliability diagram"
        );
    }
    // It loads in Chromium without console output, its figures in the DOM.
    let dom = headless(&dir.path().join("profile-dom"), &["--dump-dom"], &page_path);
    assert!(dom.status.success());
    let dom_text = String::from_utf8_lossy(&dom.stdout);
    for id in ["classes", "reliability-class-0", "reliability-class-2"] {
        let at = dom_text
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("{id}"));
        assert!(dom_text[at..].contains("<svg"), "{id} has its SVG");
    }
    assert!(!String::from_utf8_lossy(&dom.stderr).contains(":CONSOLE"));
    assert!(page.contains("Classwise calibration report"));
}

#[test]
fn the_fit_has_point_masses_when_the_data_has_exact_ones() {
    // ResNet-110 on CIFAR-10: 29% of the confidences are exactly 1.0.
    let file = data("resnet110_c10_test.csv");
    let ones = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| l.split(',').next().unwrap().trim().parse::<f64>().unwrap() == 1.0)
        .count();
    let args = [
        "report",
        &file,
        "--no-test",
        "--json",
        "--resamples",
        "0",
        "--simulations",
        "10",
        "--quiet",
    ];
    let v: Value = serde_json::from_str(&ok(&tce(&args))).unwrap();
    let atoms = &v["fit"]["point_masses"];
    assert_eq!(atoms["one"]["rows"], ones);
    assert_eq!(
        atoms["one"]["mass"].as_f64().unwrap(),
        ones as f64 / 10000.0
    );
    assert!(atoms["zero"].is_null());
    assert!(["curve", "fitted"].contains(&atoms["accuracy_from"].as_str().unwrap()));
    // The birds data has no score of exactly 0 or 1: a pure Beta fit.
    let birds = data("resnet50_birds_test.csv");
    let mut args = args;
    args[1] = &birds;
    let v: Value = serde_json::from_str(&ok(&tce(&args))).unwrap();
    assert!(v["fit"]["point_masses"].is_null(), "{}", v["fit"]);
}
