#![cfg(feature = "std")]
//! Issue 38, part 2: the paired comparison of two models' calibration
//! (`tce::decision::compare`). Δ, its interval and the p-value of Δ = 0 against a naive
//! paired bootstrap written here (resample written out row by row, the estimator from
//! tests/common), with the two models' labels the same and different; bad input; the
//! pairing by order and by id; reproducibility; the paired simulator's TCEs and label
//! draws against Monte Carlo; and the size by construction at a reduced scale, with
//! shared labels and with each model's own: when TCE_A = TCE_B the comparison rejects
//! at α = 0.05 at most 0.05 + 2 Monte-Carlo standard errors.
//!
//! The full size and power tables of docs/decisions.md (shared labels, and each model's
//! own labels) are made by the ignored tests:
//!
//!     cargo test --release --all-features --test compare -- --ignored --nocapture

mod common;

use tce::decision::compare::paired::{rejection_rates, PairedModel, PairedModelError};
use tce::decision::compare::{
    compare, draw_rows, jackknife_rows, CompareError, CompareSettings, Method, Model, Outputs,
    Paired, Verdict,
};
use tce::decision::{Statistic, MAX_RESAMPLES};
use tce::report::normal;
use tce::sim::{Beta, Curve};
use tce::PushError;

/// A naive estimator on (scores, labels) in any order (tests/common, as in
/// tests/decision.rs): 15-bin ECE_bin (p = 2), the literal jackknife ECE_debias, or the
/// paper's sweep rebinning for every b.
fn naive_statistic(name: &str, scores: &[f64], labels: &[u8]) -> f64 {
    let table = |assignment: &[usize], bins| common::bin_table(scores, labels, assignment, bins);
    match name {
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

/// The rows weighted by `counts`, written out in row order (each row `count` times).
fn written_out(scores: &[f64], labels: &[u8], counts: &[u32]) -> (Vec<f64>, Vec<u8>) {
    let mut out = (Vec::new(), Vec::new());
    for ((&s, &y), &c) in scores.iter().zip(labels).zip(counts) {
        for _ in 0..c {
            out.0.push(s);
            out.1.push(y);
        }
    }
    out
}

/// Δ on the rows weighted by `counts`: the same rows written out for both models, each
/// with its own labels.
fn naive_delta(name: &str, data: &Paired, counts: &[u32]) -> f64 {
    let side = |m| written_out(data.scores(m), data.labels(m), counts);
    let ((sa, ya), (sb, yb)) = (side(Model::A), side(Model::B));
    naive_statistic(name, &sa, &ya) - naive_statistic(name, &sb, &yb)
}

/// R's type-7 quantile of sorted values.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

struct Naive {
    delta: f64,
    replicates: Vec<f64>,
    /// (z0, a) when BCa is defined.
    bca: Option<(f64, f64)>,
}

impl Naive {
    /// The interval of level 1 − alpha: BCa when defined, else percentile.
    fn interval(&self, alpha: f64) -> (f64, f64) {
        let mut sorted = self.replicates.clone();
        sorted.sort_by(f64::total_cmp);
        let level = |z: f64| match self.bca {
            Some((z0, a)) => normal::cdf(z0 + (z0 + z) / (1.0 - a * (z0 + z))),
            None => normal::cdf(z),
        };
        (
            quantile(&sorted, level(normal::quantile(alpha / 2.0))),
            quantile(&sorted, level(normal::quantile(1.0 - alpha / 2.0))),
        )
    }

    /// The bootstrap standard error: the replicates' standard deviation.
    fn se(&self) -> f64 {
        let b = self.replicates.len() as f64;
        let mean = self.replicates.iter().sum::<f64>() / b;
        (self
            .replicates
            .iter()
            .map(|d| (d - mean).powi(2))
            .sum::<f64>()
            / (b - 1.0))
            .sqrt()
    }

    /// The normal p-value on the bootstrap standard error.
    fn p_normal(&self) -> f64 {
        if self.delta == 0.0 {
            1.0
        } else {
            2.0 * (1.0 - normal::cdf((self.delta / self.se()).abs()))
        }
    }

    /// The larger of the interval's p-value and the normal one.
    fn p_value(&self) -> f64 {
        self.p_interval().max(self.p_normal())
    }

    /// The smallest α whose interval excludes 0, by bisection (at least 1/(B + 1)).
    fn p_interval(&self) -> f64 {
        let excludes = |alpha: f64| {
            let (lo, hi) = self.interval(alpha);
            lo > 0.0 || hi < 0.0
        };
        let floor = 1.0 / (self.replicates.len() as f64 + 1.0);
        let (mut lo, mut hi) = (1e-12, 1.0 - 1e-12);
        if !excludes(hi) {
            return 1.0;
        }
        if excludes(lo) {
            return floor;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if excludes(mid) {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        hi.max(floor)
    }
}

/// The paired bootstrap as the module docs describe it, written out: Δ on the data, Δ*
/// on each resample's rows (from `draw_rows`) written out for both models (each with its
/// own labels), the grouped jackknife (groups from `jackknife_rows`) left out of both,
/// BCa's z0 and a by their textbook formulas.
fn naive(name: &str, data: &Paired, resamples: usize, seed: u64) -> Naive {
    let n = data.len();
    let delta = naive_statistic(name, data.scores(Model::A), data.labels(Model::A))
        - naive_statistic(name, data.scores(Model::B), data.labels(Model::B));
    let replicates: Vec<f64> = (0..resamples)
        .map(|r| {
            let mut counts = vec![0; n];
            draw_rows(seed, r, &mut counts);
            naive_delta(name, data, &counts)
        })
        .collect();
    let (groups, assignment) = jackknife_rows(seed, n);
    let jackknife: Vec<f64> = (0..groups)
        .map(|g| {
            let counts: Vec<u32> = assignment.iter().map(|&k| u32::from(k != g)).collect();
            naive_delta(name, data, &counts)
        })
        .collect();
    let below = replicates.iter().filter(|&&d| d < delta).count() as f64;
    let ties = replicates.iter().filter(|&&d| d == delta).count() as f64;
    let z0 = normal::quantile((below + ties / 2.0) / resamples as f64);
    let mean = jackknife.iter().sum::<f64>() / groups as f64;
    let s2: f64 = jackknife.iter().map(|t| (mean - t).powi(2)).sum();
    let s3: f64 = jackknife.iter().map(|t| (mean - t).powi(3)).sum();
    let acceleration = s3 / (6.0 * s2.powf(1.5));
    let bca = (z0.is_finite() && s2 > 0.0).then_some((z0, acceleration));
    Naive {
        delta,
        replicates,
        bca,
    }
}

fn settings(statistic: &str, resamples: usize, seed: u64) -> CompareSettings {
    CompareSettings {
        statistic: statistic.parse().unwrap(),
        resamples,
        seed,
        ..CompareSettings::default()
    }
}

/// An overconfident A and a milder B of one latent Beta(2, 5).
fn two_models() -> PairedModel {
    PairedModel::new(
        Beta::new(2.0, 5.0).unwrap(),
        Curve::logistic_log_odds(0.0, 2.0).unwrap(),
        Curve::logistic_log_odds(0.3, 1.2).unwrap(),
    )
    .unwrap()
}

/// Both sides' outputs paired by order (the test data are valid).
fn paired(a: &[f64], labels_a: &[u8], b: &[f64], labels_b: &[u8]) -> Paired {
    Paired::by_order(Outputs::new(a, labels_a), Outputs::new(b, labels_b)).unwrap()
}

#[test]
fn delta_interval_and_p_value_are_those_of_a_naive_paired_bootstrap() {
    naive_check(&two_models().dataset(7, 0, 60));
}

#[test]
fn with_each_models_own_labels_too() {
    // Labels drawn apart (ρ = 0.3): A and B are right on different rows.
    let data = two_models()
        .with_label_correlation(0.3)
        .unwrap()
        .dataset(7, 0, 60);
    let differ = (0..60)
        .filter(|&i| data.labels(Model::A)[i] != data.labels(Model::B)[i])
        .count();
    assert!(differ >= 10, "{differ} rows differ");
    naive_check(&data);
}

fn naive_check(data: &Paired) {
    for name in [
        "ece_sweep:equal_mass",
        "ece_bin:equal_width",
        "ece_debias:equal_mass",
    ] {
        let (resamples, seed) = (99, 5);
        let c = compare(data, &settings(name, resamples, seed)).unwrap();
        let oracle = naive(name, data, resamples, seed);
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * (1.0 + y.abs());
        assert!(
            close(c.delta, oracle.delta),
            "{name}: Δ {} vs {}",
            c.delta,
            oracle.delta
        );
        assert!(close(c.delta, c.a.value - c.b.value));
        for (r, (x, y)) in c.replicates.iter().zip(&oracle.replicates).enumerate() {
            assert!(close(*x, *y), "{name}: Δ*_{r} {x} vs naive {y}");
        }
        assert_eq!(c.method == Method::Bca, oracle.bca.is_some(), "{name}");
        if let Some((z0, a)) = oracle.bca {
            assert!((c.z0 - z0).abs() < 1e-12, "{name}: z0 {} vs {z0}", c.z0);
            assert!(
                (c.acceleration - a).abs() < 1e-9,
                "{name}: a {} vs {a}",
                c.acceleration
            );
        }
        let (lo, hi) = oracle.interval(0.05);
        assert!(
            (c.interval.lower - lo).abs() < 1e-9 && (c.interval.upper - hi).abs() < 1e-9,
            "{name}: [{}, {}] vs naive [{lo}, {hi}]",
            c.interval.lower,
            c.interval.upper
        );
        let p = oracle.p_interval();
        assert!(
            (c.p_interval - p).abs() < 1e-6,
            "{name}: p {} vs naive {p}",
            c.p_interval
        );
        assert!(
            (c.se - oracle.se()).abs() <= 1e-12 * (1.0 + oracle.se()),
            "{name}"
        );
        let p = oracle.p_normal();
        assert!(
            (c.p_normal - p).abs() < 1e-9,
            "{name}: normal p {} vs naive {p}",
            c.p_normal
        );
        let p = oracle.p_value();
        assert!(
            (c.p_value - p).abs() < 1e-6,
            "{name}: p {} vs naive {p}",
            c.p_value
        );
        assert_eq!(c.reject(), p <= 0.05);
        // A rejection never contradicts the interval.
        assert!(!c.reject() || !c.interval.contains(0.0), "{name}");
        assert_eq!(c.p_interval <= 0.05, !c.interval.contains(0.0), "{name}");
    }
}

#[test]
fn a_clear_difference_is_found_in_the_right_direction() {
    // A = the identity (TCE 0), B overconfident: A is better.
    let model = PairedModel::new(
        Beta::new(2.0, 2.0).unwrap(),
        Curve::polynomial(1.0).unwrap(),
        Curve::logistic_log_odds(0.0, 3.0).unwrap(),
    )
    .unwrap();
    // Each model's own labels (ρ = 0.5): the direction does not depend on shared labels.
    let data = model
        .with_label_correlation(0.5)
        .unwrap()
        .dataset(1, 0, 2000);
    let c = compare(&data, &settings("ece_sweep:equal_mass", 199, 0)).unwrap();
    assert!(c.delta < 0.0 && c.p_value <= 0.01, "{c:?}");
    assert_eq!(c.verdict(), Verdict::ABetter);
    assert!(c.interval.upper < 0.0);
    // Swapping the models negates Δ and its replicates and keeps p.
    let swapped = paired(
        data.scores(Model::B),
        data.labels(Model::B),
        data.scores(Model::A),
        data.labels(Model::A),
    );
    let swapped = compare(&swapped, &settings("ece_sweep:equal_mass", 199, 0)).unwrap();
    assert_eq!(swapped.delta, -c.delta);
    assert_eq!(swapped.verdict(), Verdict::BBetter);
    for (x, y) in swapped.replicates.iter().zip(&c.replicates) {
        assert_eq!(*x, -*y);
    }
}

#[test]
fn a_twelve_point_difference_at_n_2000_is_found() {
    // A calibrated (TCE 0) against σ(2.5 logit u) (TCE 14.5 %), each with its own labels
    // (ρ = 0.5), n = 2000, 199 resamples: Δ = −12.8 points, interval [−15.7, −11.1],
    // bootstrap se 1.3 points (|Δ| is 9.5 of them); p is the floor 1/(B + 1).
    let data = PairedModel::new(
        Beta::new(2.0, 2.0).unwrap(),
        Curve::polynomial(1.0).unwrap(),
        Curve::logistic_log_odds(0.0, 2.5).unwrap(),
    )
    .unwrap()
    .with_label_correlation(0.5)
    .unwrap()
    .dataset(1, 0, 2000);
    let c = compare(&data, &settings("ece_sweep:equal_mass", 199, 0)).unwrap();
    eprintln!(
        "Δ {} se {} [{}, {}] p {} (interval {}, normal {})",
        c.delta, c.se, c.interval.lower, c.interval.upper, c.p_value, c.p_interval, c.p_normal
    );
    assert!((c.delta + 0.1282).abs() < 1e-3, "{}", c.delta);
    assert!(c.interval.upper < -0.11, "{:?}", c.interval);
    assert_eq!(c.p_value, 1.0 / 200.0, "{c:?}");
    assert_eq!(c.verdict(), Verdict::ABetter);
}

#[test]
fn an_interval_excluding_zero_without_a_rejection_says_why() {
    // The words only (the numbers set by hand): an interval above 0 with Δ 1.5 bootstrap
    // standard errors from 0, so the normal p-value 2Φ(−1.5) = 0.1336 decides.
    use tce::decision::compare::text::{interval_without_rejection_words, summary};
    let data = two_models().dataset(3, 0, 300);
    let mut c = compare(&data, &settings("ece_sweep:equal_mass", 99, 0)).unwrap();
    c.interval = tce::report::bootstrap::Interval {
        lower: 0.001,
        upper: 0.02,
    };
    (c.delta, c.se) = (0.015, 0.01);
    c.p_normal = 2.0 * normal::cdf(-1.5);
    (c.p_interval, c.p_value) = (0.01, c.p_normal);
    let words = "the interval excludes 0, but Delta is only 1.50 bootstrap standard errors \
                 from 0 (normal p = 0.1336), and the test needs both";
    assert_eq!(interval_without_rejection_words(&c).as_deref(), Some(words));
    assert!(summary("a", "b", &c).contains(words));
    // Rejected, or an interval that holds 0: nothing to explain.
    c.p_value = 0.05;
    assert_eq!(interval_without_rejection_words(&c), None);
    (c.p_value, c.interval.lower) = (c.p_normal, -0.001);
    assert_eq!(interval_without_rejection_words(&c), None);
}

#[test]
fn identical_models_never_differ() {
    let data = two_models().dataset(3, 0, 300);
    let (a, y) = (data.scores(Model::A), data.labels(Model::A));
    let c = compare(
        &paired(a, y, a, y),
        &CompareSettings {
            resamples: 99,
            ..CompareSettings::default()
        },
    )
    .unwrap();
    assert_eq!(c.delta, 0.0);
    assert!(c.replicates.iter().all(|&d| d == 0.0));
    assert_eq!(c.method, Method::Percentile);
    assert_eq!(c.p_value, 1.0);
    assert_eq!((c.interval.lower, c.interval.upper), (0.0, 0.0));
    assert_eq!(c.verdict(), Verdict::NoDifference);
}

#[test]
fn the_same_seed_gives_the_same_comparison_on_any_thread_count() {
    let data = two_models().dataset(4, 0, 400);
    let run = |threads: usize, seed: u64| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| compare(&data, &settings("ece_sweep:equal_mass", 64, seed)).unwrap())
    };
    let one = run(1, 9);
    assert_eq!(one, run(3, 9));
    assert_ne!(one.replicates, run(1, 10).replicates);
}

#[test]
fn bad_input_is_a_named_error() {
    let s = CompareSettings::default();
    let ok = [0.2, 0.7, 0.9];
    let y = [0, 1, 1];
    // Shared labels y on both sides unless said otherwise.
    let err = |a: &[f64], b: &[f64], y: &[u8], s: &CompareSettings| {
        Paired::by_order(Outputs::new(a, y), Outputs::new(b, y))
            .and_then(|data| compare(&data, s))
            .unwrap_err()
    };
    assert_eq!(
        Paired::by_order(Outputs::new(&ok, &y), Outputs::new(&ok[..2], &y[..2])).unwrap_err(),
        CompareError::LengthsDiffer { a: 3, b: 2 }
    );
    assert_eq!(
        Paired::by_order(Outputs::new(&ok, &y), Outputs::new(&ok, &y[..2])).unwrap_err(),
        CompareError::Input {
            model: Model::B,
            error: PushError::LengthMismatch {
                scores: 3,
                labels: 2
            }
        }
    );
    assert_eq!(err(&[], &[], &[], &s), CompareError::NoSamples);
    // A bad label of B alone (A's labels fine) is B's.
    assert_eq!(
        compare(&paired(&ok, &y, &ok, &[0, 1, 3]), &s).unwrap_err(),
        CompareError::Input {
            model: Model::B,
            error: PushError::InvalidLabel { index: 2 }
        }
    );
    assert_eq!(
        err(&ok, &[0.2, f64::NAN, 0.9], &y, &s),
        CompareError::Input {
            model: Model::B,
            error: PushError::NonFiniteScore { index: 1 }
        }
    );
    assert_eq!(
        err(&[1.5, 0.7, 0.9], &ok, &y, &s),
        CompareError::Input {
            model: Model::A,
            error: PushError::ScoreOutOfRange { index: 0 }
        }
    );
    assert_eq!(
        err(&ok, &ok, &[0, 2, 1], &s),
        CompareError::Input {
            model: Model::A,
            error: PushError::InvalidLabel { index: 1 }
        }
    );
    let with = |f: &dyn Fn(&mut CompareSettings)| {
        let mut s = CompareSettings::default();
        f(&mut s);
        err(&ok, &ok, &y, &s)
    };
    assert_eq!(
        with(&|s| s.resamples = 0),
        CompareError::ResamplesOutOfRange(0)
    );
    assert_eq!(
        with(&|s| s.resamples = MAX_RESAMPLES + 1),
        CompareError::ResamplesOutOfRange(MAX_RESAMPLES + 1)
    );
    assert_eq!(with(&|s| s.alpha = 1.0), CompareError::InvalidAlpha(1.0));
    assert_eq!(with(&|s| s.bins = 0), CompareError::BinsOutOfRange(0));
    assert_eq!(
        with(&|s| s.statistic = Statistic::Spiegelhalter),
        CompareError::NotAnEstimator(Statistic::Spiegelhalter)
    );
    let message = with(&|s| s.statistic = Statistic::HosmerLemeshow).to_string();
    assert!(message.contains("not a calibration error"), "{message}");
}

#[test]
fn inputs_pair_by_order_or_by_id_or_not_at_all() {
    let a = Outputs::new(&[0.1, 0.5, 0.9], &[0, 1, 1]);
    // B is wrong on row 1 where A is right: each keeps its own labels.
    let b = Outputs::new(&[0.2, 0.4, 0.8], &[0, 0, 1]);
    let by_order = Paired::by_order(a, b).unwrap();
    assert_eq!(by_order.len(), 3);
    assert_eq!(by_order.scores(Model::B), [0.2, 0.4, 0.8]);
    assert_eq!(by_order.labels(Model::A), [0, 1, 1]);
    assert_eq!(by_order.labels(Model::B), [0, 0, 1]);
    assert_eq!(
        Paired::by_order(a, Outputs::new(&b.scores[..2], &b.labels[..2])).unwrap_err(),
        CompareError::LengthsDiffer { a: 3, b: 2 }
    );
    // True classes: the same on every row, or the inputs are not the same examples.
    let classes = [2usize, 0, 1];
    assert_eq!(
        Paired::by_order(a.with_classes(&classes), b.with_classes(&classes)).unwrap(),
        by_order
    );
    assert_eq!(
        Paired::by_order(a.with_classes(&classes), b.with_classes(&[2, 1, 1])).unwrap_err(),
        CompareError::TrueClassDiffers { row: 1, a: 0, b: 1 }
    );
    assert_eq!(
        Paired::by_order(a, b.with_classes(&[2, 1])).unwrap_err(),
        CompareError::ClassesLengthDiffer {
            model: Model::B,
            classes: 2,
            rows: 3
        }
    );
    // B's rows in another order, joined back into A's (labels and classes with them).
    let ids_a = ["x", "y", "z"];
    let ids_b = ["z", "x", "y"];
    let b_rotated = Outputs::new(&[0.8, 0.2, 0.4], &[1, 0, 0]);
    let joined = Paired::by_id((&ids_a[..], a), (&ids_b[..], b_rotated)).unwrap();
    assert_eq!(joined, by_order);
    let joined = Paired::by_id(
        (&ids_a[..], a.with_classes(&classes)),
        (&ids_b[..], b_rotated.with_classes(&[1, 2, 0])),
    )
    .unwrap();
    assert_eq!(joined, by_order);
    assert_eq!(
        Paired::by_id(
            (&ids_a[..], a.with_classes(&classes)),
            (&ids_b[..], b_rotated.with_classes(&[1, 2, 2])),
        )
        .unwrap_err(),
        CompareError::TrueClassDiffers { row: 1, a: 0, b: 2 }
    );
    let join = |ids_b: &[&str], scores_b: &[f64], labels_b: &[u8]| {
        Paired::by_id((&ids_a[..], a), (ids_b, Outputs::new(scores_b, labels_b))).unwrap_err()
    };
    assert_eq!(
        join(&["z", "x", "x"], &[0.8, 0.2, 0.4], &[1, 0, 1]),
        CompareError::DuplicateId {
            model: Model::B,
            id: "x".into()
        }
    );
    assert_eq!(
        join(&["z", "x", "w"], &[0.8, 0.2, 0.4], &[1, 0, 1]),
        CompareError::MissingId {
            missing_from: Model::B,
            id: "y".into()
        }
    );
    assert_eq!(
        join(&["z", "x", "y", "w"], &[0.8, 0.2, 0.4, 0.5], &[1, 0, 1, 0]),
        CompareError::MissingId {
            missing_from: Model::A,
            id: "w".into()
        }
    );
    assert_eq!(
        join(&["z", "x"], &[0.8, 0.2, 0.4], &[1, 0, 1]),
        CompareError::IdsLengthDiffer {
            model: Model::B,
            ids: 2,
            rows: 3
        }
    );
    assert_eq!(
        join(&["z", "x", "y"], &[0.8, 0.2, 0.4], &[1, 0]),
        CompareError::Input {
            model: Model::B,
            error: PushError::LengthMismatch {
                scores: 3,
                labels: 2
            }
        }
    );
}

#[test]
fn the_paired_simulator_knows_both_tces() {
    // Each TCE by quadrature against a Monte-Carlo mean of |g(u) − u|² over 4e5 draws of
    // the latent (which does not need the labels). The labels, drawn apart at ρ = 0.4:
    // each model's is Bernoulli(u) given u, so E[(Y − u) h(u)] = 0 for h = 1, u, u²
    // (each model calibrated at its score's latent, whatever the other's label); they
    // disagree with probability 2(1 − ρ) E[u(1 − u)] and are both 1 with probability
    // ρ E[u] + (1 − ρ) E[u²]. Each checked within 4 Monte-Carlo standard errors.
    let rho = 0.4;
    let model = two_models().with_label_correlation(rho).unwrap();
    let data = model.dataset(11, 0, 400_000);
    let m = 4e5;
    let within = |sample: &dyn Fn(usize) -> f64, expected: f64, what: &str| {
        let (mut sum, mut sq) = (0.0, 0.0);
        for i in 0..data.len() {
            let x = sample(i);
            sum += x;
            sq += x * x;
        }
        let mean = sum / m;
        let se = ((sq / m - mean * mean) / m).sqrt();
        assert!(
            (mean - expected).abs() < 4.0 * se,
            "{what}: MC {mean} ± {se} vs {expected}"
        );
    };
    // Beta(2, 5): E[u] = 2/7, E[u²] = 2·3/(7·8).
    let (mean_u, mean_u2) = (2.0 / 7.0, 6.0 / 56.0);
    let latent = |i: usize| {
        // logistic_log_odds(0, 2): s = σ(2 logit u), so u = σ(logit s / 2).
        let s = data.scores(Model::A)[i];
        1.0 / (1.0 + ((1.0 - s) / s).sqrt())
    };
    for model in [Model::A, Model::B] {
        let y = |i: usize| f64::from(data.labels(model)[i]);
        for (power, name) in [(0, "1"), (1, "u"), (2, "u²")] {
            within(
                &|i| (y(i) - latent(i)) * latent(i).powi(power),
                0.0,
                &format!("{model}: E[(Y − u) {name}]"),
            );
        }
    }
    let label = |model: Model, i: usize| data.labels(model)[i];
    within(
        &|i| f64::from(u8::from(label(Model::A, i) != label(Model::B, i))),
        2.0 * (1.0 - rho) * (mean_u - mean_u2),
        "P(Y_A ≠ Y_B)",
    );
    within(
        &|i| f64::from(label(Model::A, i) * label(Model::B, i)),
        rho * mean_u + (1.0 - rho) * mean_u2,
        "P(Y_A = Y_B = 1)",
    );
    // ρ = 1 (the default): one label for both.
    let shared = two_models().dataset(11, 0, 1000);
    assert_eq!(shared.labels(Model::A), shared.labels(Model::B));
    assert_eq!(
        two_models().with_label_correlation(1.5).unwrap_err(),
        PairedModelError::CorrelationOutOfRange(1.5)
    );
    let map_a = model.map(Model::A);
    let inverse_of_a = |s: f64| {
        // logistic_log_odds(0, 2): s = σ(2 logit u), so u = σ(logit s / 2).
        1.0 / (1.0 + ((1.0 - s) / s).sqrt())
    };
    let mut sum = [0.0f64; 2];
    let mut sq = [0.0f64; 2];
    for (&a, &b) in data.scores(Model::A).iter().zip(data.scores(Model::B)) {
        let u = inverse_of_a(a);
        assert!((map_a.eval(u) - a).abs() < 1e-9);
        for (k, s) in [a, b].into_iter().enumerate() {
            let g = (s - u).powi(2);
            sum[k] += g;
            sq[k] += g * g;
        }
    }
    for (k, m) in [Model::A, Model::B].into_iter().enumerate() {
        let mean = sum[k] / 4e5;
        let se = ((sq[k] / 4e5 - mean * mean) / 4e5).sqrt();
        let exact = model.tce(m, 2.0).unwrap().powi(2);
        assert!(
            (mean - exact).abs() < 4.0 * se,
            "{m}: MC {mean} ± {se} vs {exact}"
        );
    }
    // Mirror maps under a symmetric latent have equal TCE.
    let mirror = PairedModel::new(
        Beta::new(2.0, 2.0).unwrap(),
        Curve::polynomial(2.0).unwrap(),
        Curve::flip_polynomial(2.0).unwrap(),
    )
    .unwrap();
    let (ta, tb) = (
        mirror.tce(Model::A, 2.0).unwrap(),
        mirror.tce(Model::B, 2.0).unwrap(),
    );
    assert!(ta > 0.05 && (ta - tb).abs() < 1e-12, "{ta} {tb}");
    // A decreasing map is refused.
    assert!(PairedModel::new(
        Beta::new(2.0, 2.0).unwrap(),
        Curve::polynomial(1.0).unwrap(),
        Curve::logistic_log_odds(0.0, -1.0).unwrap(),
    )
    .is_err());
}

/// Equal TCE by mirror maps under Beta(2, 2): polynomial(2) against flip_polynomial(2).
fn mirror_pair(d: f64) -> PairedModel {
    PairedModel::new(
        Beta::new(2.0, 2.0).unwrap(),
        Curve::polynomial(d).unwrap(),
        Curve::flip_polynomial(d).unwrap(),
    )
    .unwrap()
}

#[test]
fn size_by_construction_at_a_reduced_scale() {
    // TCE_A = TCE_B: rejections at α = 0.05 at most 0.05 + 2 Monte-Carlo se (27 of 400,
    // 0.068 ± 0.013, against a bound of 0.075).
    let rates = rejection_rates(
        &mirror_pair(2.0),
        1000,
        400,
        21,
        &settings("ece_sweep:equal_mass", 199, 0),
    )
    .unwrap();
    let (rate, se) = rates.rate();
    eprintln!("size: {rate} ± {se} ({} BCa)", rates.bca);
    assert!(
        rate <= 0.05 + 2.0 * se.max((0.05f64 * 0.95 / 400.0).sqrt()),
        "{rates:?}"
    );
}

#[test]
fn size_with_each_models_own_labels_at_a_reduced_scale() {
    // TCE_A = TCE_B, the two models' labels drawn apart (ρ = 0.5: they differ on about
    // 2 · 0.5 · E[u(1 − u)] = 20 % of rows): rejections at α = 0.05 at most 0.05 + 2
    // Monte-Carlo se (8 of 400, 0.020 ± 0.007).
    let model = mirror_pair(2.0).with_label_correlation(0.5).unwrap();
    let rates = rejection_rates(
        &model,
        1000,
        400,
        22,
        &settings("ece_sweep:equal_mass", 199, 0),
    )
    .unwrap();
    let (rate, se) = rates.rate();
    eprintln!("size, own labels: {rate} ± {se} ({} BCa)", rates.bca);
    assert!(
        rate <= 0.05 + 2.0 * se.max((0.05f64 * 0.95 / 400.0).sqrt()),
        "{rates:?}"
    );
}

fn row(label: &str, model: &PairedModel, n: usize, datasets: usize, statistic: &str) {
    let s = settings(statistic, 999, 0);
    let p = if statistic == "smece" { 1.0 } else { 2.0 };
    let (ta, tb) = (
        model.tce(Model::A, p).unwrap(),
        model.tce(Model::B, p).unwrap(),
    );
    let rates = rejection_rates(model, n, datasets, 2026, &s).unwrap();
    let (rate, se) = rates.rate();
    println!(
        "| {label} | {statistic} | {n} | {:.2} | {:.2} | {:+.2} | {:.3} ± {:.3} | {} | {}/{} |",
        100.0 * ta,
        100.0 * tb,
        100.0 * (ta - tb),
        rate,
        se,
        rates.a_better,
        rates.bca,
        datasets
    );
}

/// The size table of docs/decisions.md: TCE_A = TCE_B by mirror maps under Beta(2, 2).
#[test]
#[ignore]
fn size_table() {
    println!("| pair | statistic | n | TCE_A % | TCE_B % | difference | rejection rate ± se | A better | BCa |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let logistic = PairedModel::new(
        Beta::new(2.0, 2.0).unwrap(),
        Curve::logistic_log_odds(0.5, 1.5).unwrap(),
        Curve::logistic_log_odds(-0.5, 1.5).unwrap(),
    )
    .unwrap();
    for n in [300, 1000, 3000, 10_000] {
        row(
            "u², 1−(1−u)²",
            &mirror_pair(2.0),
            n,
            400,
            "ece_sweep:equal_mass",
        );
        row(
            "σ(±0.5 + 1.5 logit u)",
            &logistic,
            n,
            400,
            "ece_sweep:equal_mass",
        );
    }
    for statistic in [
        "ece_debias:equal_mass",
        "ece_bin:equal_width",
        "ece_bin:equal_mass",
    ] {
        row("u², 1−(1−u)²", &mirror_pair(2.0), 1000, 400, statistic);
    }
}

/// The pairs of the size tables: TCE_A = TCE_B by mirror maps under Beta(2, 2).
fn equal_pairs() -> [(&'static str, PairedModel); 2] {
    let logistic = PairedModel::new(
        Beta::new(2.0, 2.0).unwrap(),
        Curve::logistic_log_odds(0.5, 1.5).unwrap(),
        Curve::logistic_log_odds(-0.5, 1.5).unwrap(),
    )
    .unwrap();
    [
        ("u², 1−(1−u)²", mirror_pair(2.0)),
        ("σ(±0.5 + 1.5 logit u)", logistic),
    ]
}

/// The size table with each model's own labels (docs/decisions.md): the pairs of the
/// size table, each model's label drawn with correlation ρ given the latent. The last
/// row (ρ = 1) is the shared-label table's first row, drawn again: the same rows.
#[test]
#[ignore]
fn size_table_own_labels() {
    println!("| pair | statistic | n | TCE_A % | TCE_B % | difference | rejection rate ± se | A better | BCa |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for n in [300, 1000, 3000] {
        for rho in [0.0, 0.5] {
            for (name, pair) in equal_pairs() {
                row(
                    &format!("{name}, ρ = {rho}"),
                    &pair.with_label_correlation(rho).unwrap(),
                    n,
                    400,
                    "ece_sweep:equal_mass",
                );
            }
        }
    }
    let [(name, pair), _] = equal_pairs();
    row(
        &format!("{name}, ρ = 1"),
        &pair,
        300,
        400,
        "ece_sweep:equal_mass",
    );
}

/// The power table with each model's own labels (docs/decisions.md): B = σ(1.5 logit u),
/// A = σ(b logit u), latent Beta(2, 2), labels drawn apart at ρ = 0.5; then at b = 1.6
/// and b = 2, n = 1000, the power against ρ.
#[test]
#[ignore]
fn power_table_own_labels() {
    println!("| pair | statistic | n | TCE_A % | TCE_B % | difference | rejection rate ± se | A better | BCa |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let pair = |b: f64, rho: f64| {
        PairedModel::new(
            Beta::new(2.0, 2.0).unwrap(),
            Curve::logistic_log_odds(0.0, b).unwrap(),
            Curve::logistic_log_odds(0.0, 1.5).unwrap(),
        )
        .unwrap()
        .with_label_correlation(rho)
        .unwrap()
    };
    for n in [300, 1000, 3000] {
        for b in [1.6, 1.75, 2.0, 2.5, 3.0] {
            row(
                &format!("σ({b} logit u), σ(1.5 logit u), ρ = 0.5"),
                &pair(b, 0.5),
                n,
                200,
                "ece_sweep:equal_mass",
            );
        }
    }
    for b in [1.6, 2.0] {
        for rho in [0.0, 0.5, 0.9, 0.99, 1.0] {
            row(
                &format!("σ({b} logit u), σ(1.5 logit u), ρ = {rho}"),
                &pair(b, rho),
                1000,
                200,
                "ece_sweep:equal_mass",
            );
        }
    }
}

/// The second power table of docs/decisions.md: maps that cross, A overconfident
/// σ(b logit u), B underconfident σ(0.6 logit u), latent Beta(2, 2), n = 1000.
#[test]
#[ignore]
fn power_table_crossing() {
    println!("| pair | statistic | n | TCE_A % | TCE_B % | difference | rejection rate ± se | A better | BCa |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for b in [1.3, 1.4, 1.5, 1.6, 1.75, 2.0] {
        let model = PairedModel::new(
            Beta::new(2.0, 2.0).unwrap(),
            Curve::logistic_log_odds(0.0, b).unwrap(),
            Curve::logistic_log_odds(0.0, 0.6).unwrap(),
        )
        .unwrap();
        row(
            &format!("σ({b} logit u), σ(0.6 logit u)"),
            &model,
            1000,
            200,
            "ece_sweep:equal_mass",
        );
    }
}

/// The power table of docs/decisions.md: B = σ(1.5 logit u), A = σ(b logit u) for b above
/// 1.5 (A more overconfident), latent Beta(2, 2), equal-mass ECE_sweep.
#[test]
#[ignore]
fn power_table() {
    println!("| pair | statistic | n | TCE_A % | TCE_B % | difference | rejection rate ± se | A better | BCa |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for n in [300, 1000] {
        for b in [1.51, 1.52, 1.54, 1.57, 1.6, 1.75] {
            let model = PairedModel::new(
                Beta::new(2.0, 2.0).unwrap(),
                Curve::logistic_log_odds(0.0, b).unwrap(),
                Curve::logistic_log_odds(0.0, 1.5).unwrap(),
            )
            .unwrap();
            row(
                &format!("σ({b} logit u), σ(1.5 logit u)"),
                &model,
                n,
                200,
                "ece_sweep:equal_mass",
            );
        }
    }
}

/// Each p-value's rejection rate alone on two pairs of the size table (docs/decisions.md):
/// the test's, BCa's, the normal one on the bootstrap standard error and the percentile
/// interval's, with Δ's spread over the data sets against the mean bootstrap standard
/// error.
#[test]
#[ignore]
fn size_of_each_p_value() {
    let logistic = PairedModel::new(
        Beta::new(2.0, 2.0).unwrap(),
        Curve::logistic_log_odds(0.5, 1.5).unwrap(),
        Curve::logistic_log_odds(-0.5, 1.5).unwrap(),
    )
    .unwrap();
    for (model, n) in [
        (logistic.with_label_correlation(0.0).unwrap(), 300),
        (logistic, 1000),
    ] {
        let s = settings("ece_sweep:equal_mass", 999, 0);
        let m = 400;
        let comparisons: Vec<_> = (0..m)
            .map(|r| compare(&model.dataset(2026, r, n), &s).unwrap())
            .collect();
        let rate = |p: &dyn Fn(&tce::decision::compare::Comparison) -> f64| {
            comparisons.iter().filter(|c| p(c) <= 0.05).count() as f64 / m as f64
        };
        let deltas: Vec<f64> = comparisons.iter().map(|c| c.delta).collect();
        let mean = deltas.iter().sum::<f64>() / m as f64;
        let sd = (deltas.iter().map(|d| (d - mean).powi(2)).sum::<f64>() / (m - 1) as f64).sqrt();
        let mean_se = comparisons.iter().map(|c| c.se).sum::<f64>() / m as f64;
        eprintln!(
            "rho {} n {n}: test {} BCa {} boot-normal {} percentile {} | mean Δ {mean:.5} sd Δ {sd:.5} mean se {mean_se:.5}",
            model.label_correlation(),
            rate(&|c| c.p_value),
            rate(&|c| c.p_interval),
            rate(&|c| c.p_normal),
            rate(&|c| tce::report::bootstrap::inverted_p_value(&c.replicates, 0.0, None)),
        );
    }
}
