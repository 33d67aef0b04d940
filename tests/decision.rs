#![cfg(feature = "std")]
//! Issue 38, part 1: the calibration test (`tce::decision`). Its p-values against a naive
//! consistency resampling written here, Spiegelhalter and Hosmer–Lemeshow against values
//! computed by hand and by scipy, bad input, reproducibility, the choice of the deciding
//! statistic, and its size by construction at a reduced scale: on perfectly calibrated
//! models every test rejects at α = 0.05 within 3 Monte-Carlo standard errors of 0.05.
//!
//! The full size and power tables of docs/decisions.md are made by the ignored tests:
//!
//!     cargo test --release --all-features --test decision -- --ignored --nocapture

mod common;

use rand::Rng;
use tce::decision::construction::{calibrated, power_curve, rejection_rates, Rates};
use tce::decision::resampling::{stream_seed, NULL_STREAM};
use tce::decision::{
    calibration_test, calibration_test_with, hosmer_lemeshow, spiegelhalter, Basis, Reference,
    Statistic, StatisticChoice, TestError, TestSettings, MAX_POWER_SIMULATIONS, MAX_RESAMPLES,
};
use tce::report::{ModelKind, ParametricFit};
use tce::sim::{repetition_rng, Beta, Curve, Model};
use tce::PushError;

const SPEC_F: [f64; 20] = [
    0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997, 0.936, 0.965, 0.986,
    0.906, 0.734, 0.864, 0.976, 0.738, 0.851,
];
const SPEC_Y: [u8; 20] = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0];

fn given(statistic: &str) -> StatisticChoice {
    StatisticChoice::Given(statistic.parse().unwrap())
}

fn paper_model(alpha: f64, beta: f64, d: f64) -> Model {
    Model::new(
        Beta::new(alpha, beta).unwrap(),
        Curve::polynomial(d).unwrap(),
    )
}

/// A naive statistic on (scores, labels) in any order: 15-bin ECE_bin (p = 2), the
/// debiased estimator by the literal jackknife, or the paper's sweep rebinning for
/// every b, all from tests/common.
fn naive_statistic(name: &str, scores: &[f64], labels: &[u8]) -> f64 {
    let table = |assignment: &[usize], bins| common::bin_table(scores, labels, assignment, bins);
    match name {
        "ece_bin:equal_mass" => {
            common::ece(&table(&common::equal_mass_bins(scores, 15, false), 15), 2.0)
        }
        "ece_bin:equal_width" => common::ece(
            &table(&common::equal_width_bins(scores, 15, false), 15),
            2.0,
        ),
        "ece_debias:equal_mass" => common::debias(
            scores,
            labels,
            &common::equal_mass_bins(scores, 15, false),
            15,
            2.0,
        ),
        "ece_sweep:equal_mass" => {
            let bins = |b| common::equal_mass_bins(scores, b, false);
            let b = common::sweep_bins(scores, labels, scores.len(), &bins);
            common::ece(&table(&bins(b), b), 2.0)
        }
        other => panic!("no naive {other}"),
    }
}

/// Consistency resampling as the module docs describe it, written out: sort the rows
/// stably by score; resample b draws a uniform U for each sorted row from
/// `repetition_rng(stream_seed(seed, NULL_STREAM), b)` and sets y* = 1 if U < the score;
/// the statistic is recomputed on (sorted scores, y*); p = (1 + #{T* ≥ T}) / (B + 1).
/// Returns (T, #{T* ≥ T}).
fn naive_p(name: &str, scores: &[f64], labels: &[u8], resamples: usize, seed: u64) -> (f64, usize) {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].partial_cmp(&scores[b]).unwrap());
    let sorted: Vec<f64> = order.iter().map(|&i| scores[i]).collect();
    let observed = naive_statistic(name, scores, labels);
    let mut at_least = 0;
    for b in 0..resamples {
        let mut rng = repetition_rng(stream_seed(seed, NULL_STREAM), b as u64);
        let drawn: Vec<u8> = sorted
            .iter()
            .map(|&f| u8::from(rng.gen::<f64>() < f))
            .collect();
        if naive_statistic(name, &sorted, &drawn) >= observed {
            at_least += 1;
        }
    }
    (observed, at_least)
}

#[test]
fn p_values_are_those_of_a_naive_consistency_resampling() {
    // Miscalibrated data with ties (scores rounded to two decimals, so equal-mass bins
    // cut through groups of equal scores, kept in arrival order), and calibrated data.
    let (raw, labels) = paper_model(2.0, 1.0, 1.6).dataset(3, 0, 240);
    let rounded: Vec<f64> = raw.iter().map(|f| (f * 100.0).round() / 100.0).collect();
    let (calibrated_scores, calibrated_labels) = paper_model(1.1, 0.1, 1.0).dataset(3, 1, 150);
    let names = [
        "ece_bin:equal_mass",
        "ece_bin:equal_width",
        "ece_debias:equal_mass",
        "ece_sweep:equal_mass",
    ];
    for (scores, labels) in [
        (&rounded, &labels),
        (&calibrated_scores, &calibrated_labels),
    ] {
        let settings = TestSettings {
            statistic: given("ece_sweep:equal_mass"),
            resamples: 199,
            seed: 11,
            ..TestSettings::default()
        };
        let statistics: Vec<Statistic> = names.iter().map(|n| n.parse().unwrap()).collect();
        let test = calibration_test_with(scores, labels, &settings, &statistics).unwrap();
        for name in names {
            let result = test.result(name.parse().unwrap()).unwrap();
            let outcome = result.outcome.unwrap();
            let (value, at_least) = naive_p(name, scores, labels, 199, 11);
            assert!(
                (outcome.value - value).abs() < 1e-12,
                "{name}: {} vs naive {value}",
                outcome.value
            );
            assert_eq!(
                outcome.reference,
                Reference::Resampling {
                    resamples: 199,
                    at_least
                },
                "{name}"
            );
            assert_eq!(outcome.p_value, (1.0 + at_least as f64) / 200.0, "{name}");
            assert_eq!(result.null.len(), 199);
        }
    }
    // The miscalibrated data are rejected, so the comparison is not of p = 1 alone.
    let test = calibration_test(
        &rounded,
        &labels,
        &TestSettings {
            statistic: given("ece_sweep:equal_mass"),
            resamples: 199,
            ..TestSettings::default()
        },
    )
    .unwrap();
    assert!(test.decision().unwrap().reject, "{:?}", test.decision());
}

#[test]
fn spiegelhalter_and_hosmer_lemeshow_are_scipys_on_the_spec_example() {
    // scipy 1.16.3: z = Σ(y − f)(1 − 2f) / √Σ(1 − 2f)²f(1 − f), p = 2·norm.sf(|z|);
    // C over groups by stable rank ⌊jG/n⌋, p = chi2.sf(C, G) (numpy's stable argsort).
    let z = spiegelhalter(&SPEC_F, &SPEC_Y).unwrap();
    assert!((z.z - -0.07226869338401301).abs() < 1e-13, "{z:?}");
    assert!((z.p_value - 0.9423880785907299).abs() < 1e-13, "{z:?}");
    for (groups, statistic, p) in [
        (10, 5.255335971385366, 0.8734816359785722),
        (4, 2.4230340542325837, 0.6584686879703189),
        (3, 1.401449925832075, 0.7051948957250782),
    ] {
        let hl = hosmer_lemeshow(&SPEC_F, &SPEC_Y, groups).unwrap();
        assert!((hl.statistic - statistic).abs() < 1e-12, "{groups}: {hl:?}");
        assert_eq!(hl.degrees_of_freedom, groups);
        assert!((hl.p_value - p).abs() < 1e-12, "{groups}: {hl:?}");
    }
    // The test reports the same.
    let test = calibration_test(
        &SPEC_F,
        &SPEC_Y,
        &TestSettings {
            statistic: given("spiegelhalter"),
            resamples: 9,
            ..TestSettings::default()
        },
    )
    .unwrap();
    // (Summed in sorted order there: the same to rounding.)
    let z_test = test
        .result(Statistic::Spiegelhalter)
        .unwrap()
        .outcome
        .unwrap();
    assert!((z_test.value - z.z).abs() < 1e-13 && (z_test.p_value - z.p_value).abs() < 1e-13);
    assert_eq!(z_test.reference, Reference::Normal);
    let hl = test
        .result(Statistic::HosmerLemeshow)
        .unwrap()
        .outcome
        .unwrap();
    assert_eq!(
        hl.reference,
        Reference::ChiSquare {
            degrees_of_freedom: 10
        }
    );
    assert!((hl.p_value - 0.8734816359785722).abs() < 1e-12);
    assert_eq!(test.decision().unwrap().p_value, z_test.p_value);
}

#[test]
fn bad_input_and_settings_are_named_errors() {
    let ok = TestSettings {
        resamples: 9,
        statistic: given("ece_bin:equal_mass"),
        ..TestSettings::default()
    };
    let test = |scores: &[f64], labels: &[u8], settings: &TestSettings| {
        calibration_test(scores, labels, settings).unwrap_err()
    };
    assert_eq!(
        test(&[0.5, f64::NAN], &[1, 0], &ok),
        TestError::Push(PushError::NonFiniteScore { index: 1 })
    );
    assert_eq!(
        test(&[0.5, 1.5], &[1, 0], &ok),
        TestError::Push(PushError::ScoreOutOfRange { index: 1 })
    );
    assert_eq!(
        test(&[0.5, 0.7], &[1, 2], &ok),
        TestError::Push(PushError::InvalidLabel { index: 1 })
    );
    assert_eq!(
        test(&[0.5, 0.7], &[1], &ok),
        TestError::Push(PushError::LengthMismatch {
            scores: 2,
            labels: 1
        })
    );
    assert_eq!(test(&[], &[], &ok), TestError::NoSamples);
    let with = |f: &dyn Fn(&mut TestSettings)| {
        let mut s = ok;
        f(&mut s);
        test(&[0.5], &[1], &s)
    };
    for b in [0, MAX_RESAMPLES + 1, usize::MAX] {
        assert_eq!(
            with(&|s| s.resamples = b),
            TestError::ResamplesOutOfRange(b)
        );
    }
    for a in [0.0, 1.0, -0.1, f64::NAN] {
        assert!(
            matches!(with(&|s| s.alpha = a), TestError::InvalidAlpha(x) if x.is_nan() == a.is_nan())
        );
    }
    assert_eq!(
        with(&|s| s.power_simulations = MAX_POWER_SIMULATIONS + 1),
        TestError::PowerSimulationsOutOfRange(MAX_POWER_SIMULATIONS + 1)
    );
    assert_eq!(with(&|s| s.bins = 0), TestError::BinsOutOfRange(0));
    assert_eq!(with(&|s| s.groups = 0), TestError::GroupsOutOfRange(0));
    // The bound itself is taken (one cheap statistic: the defaults' smooth ECE costs
    // 2 ms a resample).
    let cheap: Statistic = "ece_bin:equal_mass".parse().unwrap();
    let at_bound = calibration_test_with(
        &[0.5],
        &[1],
        &TestSettings {
            resamples: MAX_RESAMPLES,
            ..ok
        },
        &[cheap],
    )
    .unwrap();
    assert_eq!(at_bound.results.len(), 1);
    assert_eq!(at_bound.results[0].null.len(), MAX_RESAMPLES);
    let message = with(&|s| s.resamples = 0).to_string();
    assert!(
        message.contains("tce::decision::MAX_RESAMPLES"),
        "{message}"
    );
}

#[test]
fn the_same_seed_gives_the_same_test_whatever_the_threads() {
    let (scores, labels) = paper_model(1.1, 0.1, 1.3).dataset(5, 0, 1500);
    let settings = TestSettings {
        resamples: 99,
        power_simulations: 40,
        seed: 3,
        ..TestSettings::default()
    };
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| calibration_test(&scores, &labels, &settings).unwrap())
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_ne!(
        one.results[0].null,
        calibration_test(
            &scores,
            &labels,
            &TestSettings {
                seed: 4,
                ..settings
            }
        )
        .unwrap()
        .results[0]
            .null
    );
}

#[test]
fn auto_picks_the_most_powerful_candidate_or_the_fallback() {
    // Miscalibrated (Beta(1.1, 0.1), T(c) = c^1.5, TCE 4.1 %): the fit is not
    // calibrated, every candidate has a power with its standard error, and the most
    // powerful decides.
    let (scores, labels) = paper_model(1.1, 0.1, 1.5).dataset(2, 0, 1000);
    let test = calibration_test(
        &scores,
        &labels,
        &TestSettings {
            resamples: 99,
            power_simulations: 60,
            ..TestSettings::default()
        },
    )
    .unwrap();
    assert_eq!(test.choice.basis, Basis::HighestPower);
    assert_eq!(test.choice.simulations, 60);
    let powers = &test.choice.powers;
    assert_eq!(
        powers.iter().map(|p| p.statistic).collect::<Vec<_>>(),
        Statistic::candidates()
    );
    for p in powers {
        assert!((0.0..=1.0).contains(&p.power));
        assert!((p.se - (p.power * (1.0 - p.power) / 60.0).sqrt()).abs() < 1e-15);
        // Each power is a count of 60.
        assert!((p.power * 60.0 - (p.power * 60.0).round()).abs() < 1e-9);
    }
    let best = powers.iter().map(|p| p.power).fold(0.0, f64::max);
    let chosen = test.chosen().statistic;
    assert_eq!(
        powers.iter().find(|p| p.power == best).unwrap().statistic,
        chosen
    );
    assert!(best > 0.5, "{powers:?}");
    assert!(test.choice.fit_tce.unwrap() > 0.01);

    // Calibrated (T(c) = c): the fit keeps the identity curve, and the fallback decides.
    let (scores, labels) = paper_model(1.1, 0.1, 1.0).dataset(2, 0, 1000);
    let test = calibration_test(
        &scores,
        &labels,
        &TestSettings {
            resamples: 99,
            ..TestSettings::default()
        },
    )
    .unwrap();
    assert_eq!(test.choice.basis, Basis::CalibratedFit);
    assert_eq!(test.chosen().statistic, Statistic::fallback());
    assert!(test.choice.powers.is_empty());
    assert_eq!(test.choice.fit_tce, Some(0.0));

    // Every score exactly 0 or 1: no density can be fitted, and the fallback decides.
    let scores: Vec<f64> = (0..200).map(|i| f64::from(i % 2)).collect();
    let labels: Vec<u8> = (0..200).map(|i| u8::from(i % 4 == 1)).collect();
    let test = calibration_test(
        &scores,
        &labels,
        &TestSettings {
            resamples: 19,
            ..TestSettings::default()
        },
    )
    .unwrap();
    assert!(
        matches!(test.choice.basis, Basis::NoFit(_)),
        "{:?}",
        test.choice.basis
    );
    assert_eq!(test.chosen().statistic, Statistic::fallback());
}

#[test]
fn contradicted_certain_scores_are_counted() {
    let scores = [1.0, 1.0, 0.0, 0.0, 0.5, 0.7];
    let labels = [0, 1, 1, 0, 1, 0];
    let test = calibration_test(
        &scores,
        &labels,
        &TestSettings {
            resamples: 19,
            statistic: given("ece_bin:equal_width"),
            ..TestSettings::default()
        },
    )
    .unwrap();
    assert_eq!(test.contradictions.wrong_at_one, 1);
    assert_eq!(test.contradictions.right_at_zero, 1);
    assert_eq!(
        test.result(Statistic::HosmerLemeshow)
            .unwrap()
            .outcome
            .unwrap()
            .p_value,
        0.0
    );
}

/// The nominal bound 3·√(α(1 − α)/m): each resampling test (and the deciding statistic
/// of `auto`) within it of α on both sides; the analytic baselines, whose null
/// distributions are approximations, at most α plus it (never anti-conservative), their
/// rates returned to be pinned where they are conservative.
fn assert_size(rates: &Rates, alpha: f64, model: &str) -> Vec<(Statistic, f64)> {
    let bound = 3.0 * (alpha * (1.0 - alpha) / rates.datasets as f64).sqrt();
    let mut lines = Vec::new();
    let mut ok = true;
    for (i, s) in rates.statistics.iter().enumerate() {
        let (rate, _) = rates.rate(i);
        ok &= rates.undefined[i] == 0
            && if s.is_resampled() {
                (rate - alpha).abs() <= bound
            } else {
                rate <= alpha + bound
            };
        lines.push(format!("{s}: {rate:.3}"));
    }
    if let Some((rate, _)) = rates.auto_rate() {
        ok &= (rate - alpha).abs() <= bound;
        lines.push(format!("auto: {rate:.3}"));
    }
    println!("{model}, n = {}: {}", rates.n, lines.join(", "));
    assert!(ok, "{model}, n = {}, bound ±{bound:.3}: {lines:?}", rates.n);
    rates
        .statistics
        .iter()
        .enumerate()
        .map(|(i, &s)| (s, rates.rate(i).0))
        .collect()
}

/// B = 19 resamples: (B + 1)·α = 1, so each resampling test rejects only when the data's
/// value beats all 19, with probability exactly 0.05 under H0.
fn size_settings(statistic: StatisticChoice) -> TestSettings {
    TestSettings {
        statistic,
        resamples: 19,
        power_simulations: 40,
        ..TestSettings::default()
    }
}

fn without_smece() -> Vec<Statistic> {
    Statistic::defaults()
        .into_iter()
        .filter(|s| *s != Statistic::Resampled(tce::sim::EstimatorSpec::smooth_ece()))
        .collect()
}

#[test]
fn size_on_the_papers_calibrated_models() {
    let fallback = StatisticChoice::Given(Statistic::fallback());
    // Every statistic, smooth ECE included, on the most confident model at small n.
    let rates = rejection_rates(
        &paper_model(2.8, 0.05, 1.0),
        200,
        400,
        1,
        &size_settings(fallback),
        &Statistic::defaults(),
    )
    .unwrap();
    assert_size(&rates, 0.05, "Beta(2.8, 0.05)");
    // Smooth ECE costs 2 ms an evaluation whatever n: left out at larger n.
    let rates = rejection_rates(
        &paper_model(1.1, 0.1, 1.0),
        3000,
        400,
        2,
        &size_settings(fallback),
        &without_smece(),
    )
    .unwrap();
    assert_size(&rates, 0.05, "Beta(1.1, 0.1)");
}

#[test]
fn size_on_a_bundled_files_calibrated_twin_and_of_auto() {
    let (scores, labels) = common::read_bundled("resnet110_c10_test.csv");
    let fit = ParametricFit::of(
        &scores,
        &labels,
        ModelKind::Flexible,
        &tce::fit::EndpointRule::default(),
    )
    .unwrap();
    let twin = calibrated(&fit.model());
    assert_eq!(twin.tce(2.0).unwrap(), 0.0);
    let rates = rejection_rates(
        &twin,
        1000,
        300,
        3,
        &size_settings(StatisticChoice::Given(Statistic::fallback())),
        &without_smece(),
    )
    .unwrap();
    let sizes = assert_size(&rates, 0.05, "ResNet-110 CIFAR-10's density, T(c) = c");
    // Pinned: on scores this close to 1 Hosmer-Lemeshow's χ² reference is too wide and
    // the test is conservative: 2 of these 300 (0.007 to 0.040 in the full size table).
    let hl = sizes
        .iter()
        .find(|(s, _)| *s == Statistic::HosmerLemeshow)
        .unwrap()
        .1;
    assert!(hl < 0.02, "{hl}");
    // The deciding statistic of `auto`, fit and choice included, on the paper's model.
    let rates = rejection_rates(
        &paper_model(1.1, 0.1, 1.0),
        500,
        200,
        4,
        &size_settings(StatisticChoice::Auto),
        &[],
    )
    .unwrap();
    assert_size(&rates, 0.05, "Beta(1.1, 0.1), auto");
}

#[test]
fn power_against_clear_miscalibration() {
    // Beta(1.1, 0.1) with T(c) = c², TCE 8.5 %: at n = 500 with 19 resamples every
    // resampled binned test rejects most of the time (equal-width ECE_bin, the weakest,
    // 71 of 100).
    let rates = rejection_rates(
        &paper_model(1.1, 0.1, 2.0),
        500,
        100,
        5,
        &size_settings(StatisticChoice::Given(Statistic::fallback())),
        &Statistic::candidates()[..4],
    )
    .unwrap();
    for (i, s) in rates.statistics.iter().enumerate() {
        assert!(rates.rate(i).0 >= 0.6, "{s}: {:?}", rates.rate(i));
    }
}

/// Figure 5 of `tce paper` (`power_curve`) at a reduced scale: the ends of its family,
/// Beta(1.1, 0.1) with T(c) = c (calibrated) and c³ (TCE 13.6 %), at n = 500 with 150
/// data sets and 19 resamples. At the calibrated end every test rejects within 3
/// Monte-Carlo standard errors of α (the analytic ones at most that above it); at the
/// miscalibrated end every test rejects at least 90 % of the time. Smooth ECE (2 ms an
/// evaluation) is left out to keep the debug build under 10 s.
#[test]
fn power_along_the_papers_curve_family() {
    let family: Vec<(f64, Model)> = [1.0, 3.0]
        .into_iter()
        .map(|d| (d, paper_model(1.1, 0.1, d)))
        .collect();
    let settings = size_settings(StatisticChoice::Given(Statistic::fallback()));
    let points = power_curve(&family, 2.0, &[500], 150, 9, &settings, &without_smece()).unwrap();
    assert_eq!(points.len(), 2);
    assert_eq!((points[0].parameter, points[1].parameter), (1.0, 3.0));
    assert_eq!(points[0].tce, 0.0);
    // TCE_2 of c³ on Beta(1.1, 0.1), computed by the model.
    assert!((points[1].tce - 0.1361).abs() < 1e-4, "{}", points[1].tce);
    assert_size(&points[0].rates, 0.05, "Beta(1.1, 0.1), T(c) = c");
    let miscalibrated = &points[1].rates;
    assert_eq!(miscalibrated.n, 500);
    for (i, s) in miscalibrated.statistics.iter().enumerate() {
        let (rate, _) = miscalibrated.rate(i);
        assert!(rate >= 0.9, "{s}: {rate}");
    }
    // The member's rates are rejection_rates' on the same seed: one computation.
    assert_eq!(
        points[1].rates,
        rejection_rates(&family[1].1, 500, 150, 9, &settings, &without_smece()).unwrap()
    );
    // The paired difference of the sweep and EW ECE_bin from the data sets' outcomes.
    let (sweep, ew) = (0, 2);
    assert_eq!(
        miscalibrated.statistics[ew].to_string(),
        "ece_bin:equal_width"
    );
    let paired: Vec<f64> = miscalibrated
        .by_dataset
        .iter()
        .map(|row| {
            f64::from(u8::from(row[sweep] == Some(true)))
                - f64::from(u8::from(row[ew] == Some(true)))
        })
        .collect();
    let mean = paired.iter().sum::<f64>() / 150.0;
    let variance = paired.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 150.0;
    let (difference, se) = miscalibrated.difference(sweep, ew);
    assert!((difference - mean).abs() < 1e-12, "{difference} {mean}");
    assert!((se - (variance / 150.0).sqrt()).abs() < 1e-12, "{se}");
}

#[test]
fn data_sets_of_the_construction_are_the_models() {
    // rejection_rates tests data set j = model.try_dataset(seed, j, n) with seed + j.
    let model = paper_model(2.0, 1.0, 3.0);
    let settings = TestSettings {
        resamples: 19,
        statistic: given("ece_bin:equal_mass"),
        seed: 50,
        ..TestSettings::default()
    };
    let statistics: Vec<Statistic> = vec!["ece_bin:equal_mass".parse().unwrap()];
    let rates = rejection_rates(&model, 100, 6, 8, &settings, &statistics).unwrap();
    let by_hand = (0..6)
        .filter(|&j| {
            let (s, l) = model.try_dataset(8, j, 100).unwrap();
            calibration_test_with(
                &s,
                &l,
                &TestSettings {
                    seed: 50 + j,
                    ..settings
                },
                &statistics,
            )
            .unwrap()
            .decision()
            .unwrap()
            .reject
        })
        .count();
    assert_eq!(rates.rejections, [by_hand]);
    assert!(by_hand > 0);
}

const FILES: [(&str, &str); 6] = [
    ("resnet110_c10_test.csv", "ResNet-110 CIFAR-10"),
    ("resnet110_c100_test.csv", "ResNet-110 CIFAR-100"),
    ("densenet40_c10_test.csv", "DenseNet-40 CIFAR-10"),
    ("densenet40_c100_test.csv", "DenseNet-40 CIFAR-100"),
    ("resnet50_birds_test.csv", "ResNet-50 Birds"),
    (
        "torchvision_densenet161_imgnet_test.csv",
        "DenseNet-161 ImageNet",
    ),
];

/// Hosmer–Lemeshow's rejections at α when C is referred to χ² with G − 2 degrees of
/// freedom (the textbook's for data a model was fitted on), over the same data sets as
/// `rejection_rates` draws.
fn hosmer_lemeshow_g_minus_2(
    model: &dyn tce::sim::Synthetic,
    n: usize,
    datasets: usize,
    seed: u64,
) -> usize {
    (0..datasets)
        .filter(|&j| {
            let (s, l) = model.try_dataset(seed, j as u64, n).unwrap();
            let hl = hosmer_lemeshow(&s, &l, 10).unwrap();
            let df = hl.degrees_of_freedom.saturating_sub(2).max(1) as f64;
            tce::decision::chi_square::survival(hl.statistic, df) <= 0.05
        })
        .count()
}

/// The size table of docs/decisions.md: every test's rejection rate at α = 0.05 on
/// perfectly calibrated models (the paper's two, and each bundled file's fitted score
/// density and atoms with T(c) = c) at n = 100 to 10^5, 400 data sets each, with
/// B = 19 resamples ((B + 1)·α = 1: a resampling test's size is exactly α for any such
/// B); `auto` (its fit and choice on every data set) up to n = 10^4.
#[test]
#[ignore]
fn size_table() {
    let datasets = 400;
    let mut models: Vec<(String, tce::sim::FlexibleModel)> = vec![
        (
            "Beta(2.8, 0.05)".into(),
            tce::sim::FlexibleModel::from(paper_model(2.8, 0.05, 1.0)),
        ),
        (
            "Beta(1.1, 0.1)".into(),
            tce::sim::FlexibleModel::from(paper_model(1.1, 0.1, 1.0)),
        ),
    ];
    for (file, name) in FILES {
        let (scores, labels) = common::read_bundled(file);
        let fit = ParametricFit::of(
            &scores,
            &labels,
            ModelKind::Flexible,
            &tce::fit::EndpointRule::default(),
        )
        .unwrap();
        models.push((format!("{name} (fitted density)"), calibrated(&fit.model())));
    }
    let header: Vec<String> = Statistic::defaults()
        .iter()
        .map(|s| s.to_string())
        .collect();
    println!(
        "| model | n | {} | hosmer_lemeshow, G − 2 df | auto |",
        header.join(" | ")
    );
    println!("|---|---|{}---|---|", "---|".repeat(header.len()));
    for (name, model) in &models {
        for (k, n) in [100usize, 1000, 10_000, 100_000].into_iter().enumerate() {
            let statistic = if n <= 10_000 {
                StatisticChoice::Auto
            } else {
                StatisticChoice::Given(Statistic::fallback())
            };
            let seed = 1000 + k as u64;
            let started = std::time::Instant::now();
            let rates = rejection_rates(
                model,
                n,
                datasets,
                seed,
                &size_settings(statistic),
                &Statistic::defaults(),
            )
            .unwrap();
            let g2 = hosmer_lemeshow_g_minus_2(model, n, datasets, seed);
            let cells: Vec<String> = (0..header.len())
                .map(|i| format!("{:.3}", rates.rate(i).0))
                .collect();
            let auto = rates
                .auto_rate()
                .map_or_else(|| "–".to_owned(), |(r, _)| format!("{r:.3}"));
            println!(
                "| {name} | {n} | {} | {:.3} | {auto} |",
                cells.join(" | "),
                g2 as f64 / datasets as f64
            );
            eprintln!("{name} n = {n}: {:.0} s", started.elapsed().as_secs_f64());
        }
    }
}

/// The power table of docs/decisions.md: each test's detection rate at α = 0.05 along
/// T(c) = c^d on Beta(1.1, 0.1) scores, from calibrated (d = 1) to clearly miscalibrated,
/// at n = 500 and 5000: 200 data sets a cell, B = 99 resamples, `auto` with 100 power
/// simulations.
#[test]
#[ignore]
fn power_table() {
    let datasets = 200;
    let header: Vec<String> = Statistic::defaults()
        .iter()
        .map(|s| s.to_string())
        .collect();
    println!("| n | d | TCE (%) | {} | auto |", header.join(" | "));
    println!("|---|---|---|{}---|", "---|".repeat(header.len()));
    for n in [500usize, 5000] {
        for d in [1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0, 2.5] {
            let model = paper_model(1.1, 0.1, d);
            let started = std::time::Instant::now();
            let rates = rejection_rates(
                &model,
                n,
                datasets,
                77,
                &TestSettings {
                    resamples: 99,
                    power_simulations: 100,
                    ..TestSettings::default()
                },
                &Statistic::defaults(),
            )
            .unwrap();
            let cells: Vec<String> = (0..header.len())
                .map(|i| {
                    let (r, se) = rates.rate(i);
                    format!("{r:.2} ± {se:.2}")
                })
                .collect();
            let (auto, auto_se) = rates.auto_rate().unwrap();
            println!(
                "| {n} | {d} | {:.2} | {} | {auto:.2} ± {auto_se:.2} |",
                100.0 * model.tce(2.0).unwrap(),
                cells.join(" | ")
            );
            eprintln!(
                "n = {n}, d = {d}: {:.0} s, auto chose {:?}",
                started.elapsed().as_secs_f64(),
                rates.auto.as_ref().unwrap().chosen
            );
        }
    }
}
