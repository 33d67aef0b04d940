//! `tce report` end to end: the summary leads with the recommendation, the JSON holds every
//! number and setting and is reproducible from its seed, bad options are named errors, and
//! the HTML page renders in headless Chromium without console errors, with its figures.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data");

fn tce(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tce"))
        .args(args)
        .output()
        .expect("run tce")
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "tce failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn data(name: &str) -> String {
    format!("{DATA}/{name}")
}

/// A directory of its own, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("tce-report-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
    ];
    let text = ok(&tce(&args));
    assert_eq!(text, ok(&tce(&args)), "same seed, same report");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["command"], "report");
    assert_eq!(v["tce_version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["settings"]["seed"], 9);
    assert_eq!(v["settings"]["resamples"], 60);
    assert_eq!(v["settings"]["simulations"], 30);
    assert_eq!(v["settings"]["level"], 0.95);
    assert_eq!(v["n"], 10000);
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
    ]));
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
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
        (vec!["--simulations", "0"], "--simulations"),
        (vec!["--classwise"], "classwise"),
        (vec!["--epsilon", "0.7"], "epsilon"),
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

/// The page is self-contained: no script, no stylesheet or image from elsewhere; the only
/// URL is the SVG namespace.
fn assert_self_contained(page: &str) {
    assert!(!page.contains("<script"), "no scripts");
    let urls = page.matches("http").count();
    let namespaces = page.matches("http://www.w3.org/2000/svg").count()
        + page.matches("http://www.w3.org/1999/xlink").count();
    assert_eq!(urls, namespaces, "only the SVG namespace is a URL");
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
    let page = tmp.0.join("report.html");
    let file = data("resnet110_c10_test.csv");
    ok(&tce(&[
        "report",
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

    let png = tmp.0.join("report.png");
    let shot = headless(
        &tmp.0.join("profile-shot"),
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

    let dom = headless(&tmp.0.join("profile-dom"), &["--dump-dom"], &page);
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
    let page = tmp.0.join("bad.html");
    std::fs::write(
        &page,
        "<html><body><script>console.error('boom'); missing();</script></body></html>",
    )
    .unwrap();
    let out = headless(&tmp.0.join("profile"), &["--dump-dom"], &page);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains(":CONSOLE") && log.contains("boom"), "{log}");
}
