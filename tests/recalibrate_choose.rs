#![cfg(feature = "std")]
//! Issue 38, part 3: which recalibration (`tce::recalibrate::choose`). On simulator
//! data whose answer is known by construction: overconfident scores (accuracy c² at
//! confidence c), where Platt and top-label temperature scaling must be significantly
//! better than the uncalibrated outputs, and calibrated scores (accuracy c), where no
//! method may be said to be. Every reported CE is checked against the estimator written
//! out (tests/common) on the held-out outputs, and those outputs against the method
//! fitted by hand on the fitting rows.

mod common;

use tce::decision::compare::{CompareSettings, Verdict};
use tce::recalibrate::choose::{choose, split, ChooseError, ChooseSettings};
use tce::recalibrate::multiclass::{ClassTable, MulticlassMethod};
use tce::recalibrate::{Method, Outputs, RecalibrateError, Recalibration, TopLabels};
use tce::sim::{repetition_rng, Beta, Curve, Model};

/// The paper's sweep (equal mass, p = 2) written out.
fn naive_sweep(scores: &[f64], labels: &[u8]) -> f64 {
    let bins = |b| common::equal_mass_bins(scores, b, false);
    let b = common::sweep_bins(scores, labels, scores.len(), &bins);
    common::ece(&common::bin_table(scores, labels, &bins(b), b), 2.0)
}

const TOP_LABEL: [Recalibration; 4] = [
    Recalibration::TopLabel(Method::Histogram),
    Recalibration::TopLabel(Method::Isotonic),
    Recalibration::TopLabel(Method::Platt),
    Recalibration::TopLabel(Method::Temperature),
];

fn settings(methods: &[Recalibration], seed: u64) -> ChooseSettings {
    ChooseSettings {
        methods: methods.to_vec(),
        holdout: 0.5,
        compare: CompareSettings {
            resamples: 199,
            seed,
            ..CompareSettings::default()
        },
    }
}

/// n samples of Beta(2, 0.5) confidences with accuracy `curve`.
fn simulated(curve: Curve, n: usize, seed: u64) -> Outputs {
    let model = Model::new(Beta::new(2.0, 0.5).unwrap(), curve);
    let (scores, labels) = model.sample(n, &mut repetition_rng(seed, 0));
    Outputs::TopLabel(TopLabels { scores, labels })
}

/// Every compared CE is the estimator written out on that method's held-out outputs,
/// Δ is their difference, and the held-out outputs are the method fitted by hand on the
/// fitting rows and applied to the held-out rows.
fn check_against_written_out(outputs: &Outputs, choice: &tce::recalibrate::choose::Choice) {
    let fit = outputs.select(&choice.fitting);
    let held = outputs.select(&choice.held_out);
    let uncalibrated = naive_sweep(&choice.uncalibrated.scores, &choice.uncalibrated.labels);
    assert_eq!(choice.uncalibrated, held.top_label());
    for c in &choice.candidates {
        let by_hand = c
            .method
            .fit(&fit)
            .unwrap()
            .apply(&held)
            .unwrap()
            .top_label();
        assert_eq!(c.outputs, by_hand, "{}", c.method);
        let u = &c.uncalibrated;
        let mine = naive_sweep(&c.outputs.scores, &c.outputs.labels);
        assert!(
            (u.a.value - mine).abs() < 1e-12,
            "{}: {} vs {mine}",
            c.method,
            u.a.value
        );
        assert!((u.b.value - uncalibrated).abs() < 1e-12);
        assert_eq!(u.delta, u.a.value - u.b.value);
        if let Some((other, o)) = c.against_best_other() {
            let theirs = choice
                .candidates
                .iter()
                .find(|d| d.method == other)
                .unwrap();
            let theirs = naive_sweep(&theirs.outputs.scores, &theirs.outputs.labels);
            assert!((o.delta - (mine - theirs)).abs() < 1e-12);
        }
    }
}

#[test]
fn overconfident_scores_platt_and_temperature_beat_the_uncalibrated() {
    // Accuracy c² at confidence c: TCE about 13 % for Beta(2, 0.5); 2000 held-out rows.
    let outputs = simulated(Curve::polynomial(2.0).unwrap(), 4000, 1);
    let choice = choose(&outputs, &settings(&TOP_LABEL, 7)).unwrap();
    assert_eq!((choice.fitting.len(), choice.held_out.len()), (2000, 2000));
    check_against_written_out(&outputs, &choice);
    for c in &choice.candidates {
        let u = &c.uncalibrated;
        assert_eq!(u.verdict(), Verdict::ABetter, "{}: {u:?}", c.method);
    }
    let better = choice.better_than_uncalibrated();
    assert_eq!(better.len(), 4);
    // The ranking is by CE; the best's other is the runner-up and vice versa.
    let best = choice.best().unwrap();
    let runner_up = choice.runner_up().unwrap();
    assert!(best.estimate().value <= runner_up.estimate().value);
    assert_eq!(best.against_best_other().unwrap().0, runner_up.method);
    assert_eq!(runner_up.against_best_other().unwrap().0, best.method);
    let words = tce::recalibrate::choose::text::decision_words(&choice);
    assert!(
        words.starts_with(&format!(
            "{} has the lowest CE and is significantly better",
            best.method
        )),
        "{words}"
    );
}

#[test]
fn calibrated_scores_no_method_is_better() {
    // Accuracy c: the uncalibrated outputs are calibrated, and recalibrating can only add
    // fitting noise.
    let outputs = simulated(Curve::polynomial(1.0).unwrap(), 2000, 2);
    let choice = choose(&outputs, &settings(&TOP_LABEL, 3)).unwrap();
    check_against_written_out(&outputs, &choice);
    assert!(choice.better_than_uncalibrated().is_empty());
    let words = tce::recalibrate::choose::text::decision_words(&choice);
    assert!(
        words.starts_with(
            "no method is significantly better calibrated than the uncalibrated outputs"
        ),
        "{words}"
    );
    let summary = tce::recalibrate::choose::text::summary("calibrated", &choice);
    assert!(
        summary.contains("no method is significantly better"),
        "{summary}"
    );
}

/// Rows of 4 logits, classes drawn from softmax(z), the model's logits 2.5 z
/// (overconfident).
fn overconfident_logits(n: usize, seed: u64) -> ClassTable {
    use rand::Rng;
    let mut rng = repetition_rng(seed, 0);
    let (mut values, mut truth) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let z: Vec<f64> = (0..4).map(|_| rng.gen_range(-3.0..3.0)).collect();
        let w: Vec<f64> = z.iter().map(|v| v.exp()).collect();
        let mut u = rng.gen::<f64>() * w.iter().sum::<f64>();
        let mut class = 0;
        while class < 3 && u >= w[class] {
            u -= w[class];
            class += 1;
        }
        values.extend(z.iter().map(|v| 2.5 * v));
        truth.push(class);
    }
    ClassTable::new(values, 4, truth, true).unwrap()
}

#[test]
fn multiclass_temperature_and_one_vs_rest_are_compared_each_with_its_own_correctness() {
    let table = overconfident_logits(3000, 5);
    let outputs = Outputs::Classes(table);
    let methods = [
        Recalibration::Multiclass(MulticlassMethod::Temperature),
        Recalibration::Multiclass(MulticlassMethod::IsotonicOneVsRest),
        Recalibration::TopLabel(Method::Platt),
    ];
    let choice = choose(&outputs, &settings(&methods, 0)).unwrap();
    check_against_written_out(&outputs, &choice);
    // Temperature scaling keeps every prediction: compared, and (T ≈ 2.5 undoes the
    // overconfidence) significantly better than the uncalibrated outputs.
    let temperature = &choice.candidates[0];
    assert_eq!(temperature.outputs.labels, choice.uncalibrated.labels);
    assert_eq!(temperature.uncalibrated.verdict(), Verdict::ABetter);
    // Isotonic one-vs-rest moves some arg-maxes: it is compared with its own correctness
    // (check_against_written_out above checks its CE and Δ on its own labels).
    let ovr = &choice.candidates[1];
    let changed = ovr
        .outputs
        .labels
        .iter()
        .zip(&choice.uncalibrated.labels)
        .filter(|(a, b)| a != b)
        .count();
    assert!(changed > 0, "this data set changes some predictions");
    assert_eq!(choice.ranking.len(), 3);
}

#[test]
fn the_split_is_seeded_disjoint_and_complete() {
    let (held, fit) = split(101, 0.3, 9).unwrap();
    assert_eq!((held.len(), fit.len()), (30, 71));
    let mut all: Vec<usize> = held.iter().chain(&fit).copied().collect();
    all.sort_unstable();
    assert_eq!(all, (0..101).collect::<Vec<_>>());
    assert_eq!(split(101, 0.3, 9).unwrap().0, held);
    assert_ne!(split(101, 0.3, 10).unwrap().0, held);
}

#[test]
fn errors_are_named() {
    let outputs = simulated(Curve::polynomial(2.0).unwrap(), 50, 0);
    let platt = Recalibration::TopLabel(Method::Platt);
    let mut s = settings(&[], 0);
    assert_eq!(choose(&outputs, &s), Err(ChooseError::NoMethods));
    s.methods = vec![platt, platt];
    assert_eq!(
        choose(&outputs, &s),
        Err(ChooseError::DuplicateMethod(platt))
    );
    s.methods = vec![platt];
    s.holdout = 1.0;
    assert_eq!(choose(&outputs, &s), Err(ChooseError::InvalidHoldout(1.0)));
    s.holdout = 0.5;
    let one = outputs.select(&[0]);
    assert_eq!(
        choose(&one, &s),
        Err(ChooseError::SplitTooSmall {
            rows: 1,
            holdout: 0.5
        })
    );
    let temperature = Recalibration::Multiclass(MulticlassMethod::Temperature);
    s.methods = vec![temperature];
    assert_eq!(
        choose(&outputs, &s),
        Err(ChooseError::Recalibrate {
            method: temperature,
            error: RecalibrateError::NeedsClasses(temperature)
        })
    );
    s.methods = vec![platt];
    s.compare.resamples = 0;
    assert!(matches!(
        choose(&outputs, &s),
        Err(ChooseError::Settings(_))
    ));
}

/// By construction over many data sets (docs/decisions.md, "Which recalibration?"): how
/// often each top-label method is called significantly better than the uncalibrated
/// outputs at α = 0.05, on overconfident data (accuracy c², where each method should
/// win) and calibrated data (accuracy c, where a "better" is a false alarm), with the
/// binomial standard error; and how often no method, and the best over the runner-up, is
/// called better. Prints markdown rows:
///
///     cargo test --test recalibrate_choose rates_by_construction -- --ignored --nocapture
#[test]
#[ignore]
fn rates_by_construction() {
    let (reps, n) = (400, 2000);
    let rate = |k: usize| {
        let p = k as f64 / reps as f64;
        format!(
            "{k}/{reps} ({p:.3} ± {:.3})",
            (p * (1.0 - p) / reps as f64).sqrt()
        )
    };
    println!(
        "| accuracy | n (held out) | {} | no method better | best beats runner-up |",
        TOP_LABEL.map(|m| m.name()).join(" | ")
    );
    println!("|---|---|{}", "---:|".repeat(TOP_LABEL.len() + 2));
    for (name, curve) in [("c² (overconfident)", 2.0), ("c (calibrated)", 1.0)] {
        let mut better = [0usize; 4];
        let (mut none, mut separated) = (0, 0);
        for rep in 0..reps {
            let outputs = simulated(Curve::polynomial(curve).unwrap(), n, 1000 + rep as u64);
            let choice = choose(&outputs, &settings(&TOP_LABEL, rep as u64)).unwrap();
            for (count, c) in better.iter_mut().zip(&choice.candidates) {
                *count += usize::from(c.better_than_uncalibrated());
            }
            none += usize::from(choice.better_than_uncalibrated().is_empty());
            separated += usize::from(choice.best_beats_runner_up() == Some(true));
        }
        println!(
            "| {name} | {n} ({}) | {} | {} | {} |",
            n / 2,
            better.map(rate).join(" | "),
            rate(none),
            rate(separated)
        );
    }
}
