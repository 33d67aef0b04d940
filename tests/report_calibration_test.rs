//! The report's "is it calibrated?" line (docs/report.md): the calibration test of
//! `tce::decision`, its power measured against the report's own fitted model (fitted
//! once), equal bit for bit to the test run alone on the same data and seed; in the JSON
//! with its real values, on the page, and its settings refused by name.

use tce::decision::{calibration_test, Basis, TestError, TestSettings};
use tce::report::json::Source;
use tce::report::{report, ReportError, ReportSettings, ReportTest};
use tce::sim::{Beta, Curve, Model};

/// Miscalibrated scores (T(c) = c²) at n = 800: the test rejects.
fn miscalibrated() -> (Vec<f64>, Vec<u8>) {
    let model = Model::new(
        Beta::new(2.0, 1.0).unwrap(),
        Curve::polynomial(2.0).unwrap(),
    );
    model.dataset(3, 0, 800)
}

/// A small report: no bootstrap, few simulations, a small test.
fn settings(seed: u64) -> ReportSettings {
    ReportSettings {
        resamples: 0,
        simulations: Some(5),
        refits: Some(0),
        seed,
        test: Some(ReportTest {
            resamples: Some(39),
            power_simulations: Some(10),
            alpha: 0.05,
        }),
        ..ReportSettings::default()
    }
}

#[test]
fn the_reports_test_is_the_test_alone_bit_for_bit() {
    let (scores, labels) = miscalibrated();
    let settings = settings(11);
    let r = report(&scores, &labels, &settings, &|_| {}).unwrap();
    let in_report = r.calibration_test.clone().unwrap().unwrap();
    let alone = calibration_test(
        &scores,
        &labels,
        &TestSettings {
            resamples: 39,
            power_simulations: 10,
            seed: 11,
            ..TestSettings::default()
        },
    )
    .unwrap();
    // The same statistics, values, p-values and null replicates to the bit, the same
    // choice from the same fit (the report's default model is the test's).
    assert_eq!(in_report, alone);
    let p_bits = |t: &tce::decision::CalibrationTest| -> Vec<u64> {
        t.results
            .iter()
            .map(|s| s.outcome.as_ref().unwrap().p_value.to_bits())
            .collect()
    };
    assert_eq!(p_bits(&in_report), p_bits(&alone));
    // The test's alternative is the report's fit itself.
    assert_eq!(
        in_report.choice.fit.as_deref(),
        Some(&r.parametric.as_ref().unwrap().fit)
    );
    assert_eq!(in_report.choice.basis, Basis::HighestPower);
    let decision = in_report.decision().unwrap();
    assert!(decision.reject, "{decision:?}");
    assert_eq!(decision.p_value, 1.0 / 40.0);
    // The resolved settings are in the report's.
    assert_eq!(r.settings.test, settings.test);
}

#[test]
fn the_defaults_follow_the_budget_and_keep_the_size_exact() {
    use tce::report::{default_test_power_simulations, default_test_resamples};
    assert_eq!(default_test_resamples(10), 999);
    assert_eq!(default_test_resamples(10_000), 999);
    assert_eq!(default_test_resamples(20_000), 999);
    assert_eq!(default_test_resamples(20_001), 499);
    assert_eq!(default_test_resamples(100_000), 199);
    assert_eq!(default_test_resamples(1_000_000), 19);
    assert_eq!(default_test_resamples(usize::MAX), 19);
    for n in [1, 10_000, 30_000, 100_000, 150_000, 300_000, 10_000_000] {
        // (B + 1)·α whole at α = 0.05: the resampling test's size is exactly α.
        assert_eq!((default_test_resamples(n) + 1) % 20, 0, "n = {n}");
    }
    assert_eq!(default_test_power_simulations(10_000), 100);
    assert_eq!(default_test_power_simulations(100_000), 100);
    assert_eq!(default_test_power_simulations(200_000), 50);
    assert_eq!(default_test_power_simulations(1_000_000), 20);
    assert_eq!(default_test_power_simulations(usize::MAX), 20);
    assert_eq!(default_test_power_simulations(0), 100);
}

#[test]
fn no_test_and_the_test_without_a_fit() {
    let (scores, labels) = miscalibrated();
    let r = report(
        &scores,
        &labels,
        &ReportSettings {
            test: None,
            ..settings(1)
        },
        &|_| {},
    )
    .unwrap();
    assert_eq!(r.calibration_test, None);
    assert_eq!(
        tce::report::text::calibration_test_words(&r),
        ["Not tested (no calibration test was asked for)."]
    );
    // Certain scores only: no model can be fitted; the test falls back on the sweep,
    // as `calibration_test` does.
    let (scores, labels) = (vec![1.0, 1.0, 0.0, 0.0], vec![1, 1, 0, 0]);
    let r = report(&scores, &labels, &settings(2), &|_| {}).unwrap();
    let t = r.calibration_test.unwrap().unwrap();
    assert!(r.parametric.is_err());
    assert!(matches!(t.choice.basis, Basis::NoFit(_)), "{:?}", t.choice);
    let alone = calibration_test(
        &scores,
        &labels,
        &TestSettings {
            resamples: 39,
            power_simulations: 10,
            seed: 2,
            ..TestSettings::default()
        },
    )
    .unwrap();
    assert_eq!(t.results, alone.results);
    assert_eq!(t.decision(), alone.decision());
}

#[test]
fn bad_test_settings_are_named_errors_before_any_work() {
    let with = |test| ReportSettings {
        test: Some(test),
        ..settings(0)
    };
    let cases = [
        (
            ReportTest {
                resamples: Some(0),
                ..ReportTest::default()
            },
            TestError::ResamplesOutOfRange(0),
        ),
        (
            ReportTest {
                resamples: Some(tce::decision::MAX_RESAMPLES + 1),
                ..ReportTest::default()
            },
            TestError::ResamplesOutOfRange(tce::decision::MAX_RESAMPLES + 1),
        ),
        (
            ReportTest {
                power_simulations: Some(0),
                ..ReportTest::default()
            },
            TestError::PowerSimulationsOutOfRange(0),
        ),
        (
            ReportTest {
                alpha: 1.0,
                ..ReportTest::default()
            },
            TestError::InvalidAlpha(1.0),
        ),
    ];
    for (test, error) in cases {
        assert_eq!(with(test).check(), Err(ReportError::Test(error.clone())));
        // Refused by `report` before the samples are looked at (these are not samples).
        assert_eq!(
            report(&[f64::NAN], &[7], &with(test), &|_| {}).unwrap_err(),
            ReportError::Test(error)
        );
    }
    // A classwise report has no test: explicit test settings are refused by name.
    let column = tce::report::classwise::ClassColumn {
        class: 0,
        name: "a",
        scores: &[0.5, 0.7],
        labels: &[1, 0],
    };
    let classwise = |test| {
        tce::report::classwise::classwise_report(
            &[column, column],
            &ReportSettings {
                test,
                ..settings(0)
            },
            &|_| {},
        )
    };
    assert_eq!(
        classwise(Some(ReportTest {
            resamples: Some(99),
            ..ReportTest::default()
        }))
        .unwrap_err(),
        ReportError::TestNotClasswise
    );
    assert!(classwise(None).is_ok());
    assert!(classwise(Some(ReportTest::default())).is_ok());
}

/// A JSON number against a double: serde_json reads back within an ulp or two of what
/// it wrote (without its float_roundtrip feature), so within 4 ulps.
#[cfg(feature = "render")]
fn close(json: &serde_json::Value, x: f64) -> bool {
    let y = json.as_f64().expect("a number");
    (y - x).abs() <= 4.0 * f64::EPSILON * x.abs()
}

#[cfg(feature = "render")]
#[test]
fn the_json_and_the_page_carry_the_line() {
    let (scores, labels) = miscalibrated();
    let r = report(&scores, &labels, &settings(11), &|_| {}).unwrap();
    let t = r.calibration_test.clone().unwrap().unwrap();
    let source = Source {
        file: "miscalibrated".to_owned(),
        input: (),
    };
    let json: serde_json::Value =
        serde_json::from_str(&tce::report::json::json(&source, &r)).unwrap();
    let c = &json["calibration_test"];
    let chosen = t.chosen();
    assert_eq!(c["statistic"], chosen.statistic.to_string());
    assert_eq!(c["basis"], "highest_power");
    assert_eq!(c["p_value"], 0.025);
    assert_eq!(
        c["p_value"].as_f64().unwrap(),
        chosen.outcome.as_ref().unwrap().p_value
    );
    assert_eq!(c["alpha"], 0.05);
    assert_eq!(c["reject"], true);
    assert_eq!(c["resamples"], 39);
    assert_eq!(c["power_simulations"], 10);
    assert_eq!(c["seed"], 11);
    let power = t
        .choice
        .powers
        .iter()
        .find(|p| p.statistic == chosen.statistic)
        .unwrap();
    assert!(close(&c["power"]["power"], power.power));
    assert!(close(&c["power"]["se"], power.se));
    assert_eq!(c["power"]["n"], 800);
    assert_eq!(c["power"]["simulations"], 10);
    assert_eq!(c["alternative"]["model"], "flexible");
    let fit = &r.parametric.as_ref().unwrap().fit;
    assert_eq!(c["alternative"]["curve"], fit.curve_name());
    assert!(close(&c["alternative"]["tce"], t.choice.fit_tce.unwrap()));
    assert!(c["why"]
        .as_str()
        .unwrap()
        .contains("the highest power at n = 800"));
    let statistics = c["statistics"].as_array().unwrap();
    assert_eq!(statistics.len(), t.results.len());
    for (s, result) in statistics.iter().zip(&t.results) {
        assert_eq!(s["name"], result.statistic.to_string());
        assert!(close(
            &s["p_value"],
            result.outcome.as_ref().unwrap().p_value
        ));
    }
    assert_eq!(json["settings"]["test_resamples"], 39);
    assert_eq!(json["settings"]["test_power_simulations"], 10);
    assert_eq!(json["settings"]["alpha"], 0.05);
    let words = tce::report::text::calibration_test_words(&r);
    assert!(
        words[0].starts_with("Calibration rejected at alpha = 0.05: p = 0.0250 <= 0.05"),
        "{words:?}"
    );
    assert_eq!(c["words"], serde_json::json!(words));

    let text = tce::report::text::summary("miscalibrated", &r);
    assert!(
        text.contains(&format!("is it calibrated? {}\n", words[0])),
        "{text}"
    );
    let page = tce::report::html::page("miscalibrated", &scores, &r);
    assert!(
        page.contains(
            "<section id=\"calibration-test\"><h2>Is it calibrated?</h2><p class=\"lead\">\
             Calibration rejected at alpha = 0.05: p = 0.0250 &lt;= 0.05"
        ),
        "{page}"
    );
    assert!(page.contains(&tce::report::html::escape(&words[2])));

    // Without a test: `null`, and the settings' test fields too.
    let r = report(
        &scores,
        &labels,
        &ReportSettings {
            test: None,
            ..settings(11)
        },
        &|_| {},
    )
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&tce::report::json::json(&source, &r)).unwrap();
    assert!(json["calibration_test"].is_null());
    assert!(json["settings"]["alpha"].is_null());
}
