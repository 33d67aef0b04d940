//! Must-show of the classwise report's reductions (docs/report.md, "Classwise"), checked
//! by construction on simulated data with known truth:
//!
//! - each class's intervals, read off the joint resamples of the rows, cover the class's
//!   TCE as often as the top-label bootstrap's intervals do (report_coverage.rs);
//! - the marginal's bias estimated from a sample of classes lies within its stated
//!   Monte-Carlo se of the bias over all the classes about as often as it claims;
//! - a sampled report says which classes it simulated, and the others take the marginal's
//!   estimator.

use rand::seq::index::sample;
use rand::Rng;
use tce::report::classwise::{
    classwise_report_with, marginal_bias, ClassColumn, ClasswiseOptions, ClasswisePlan,
};
use tce::report::{bootstrap, targets, Basis, ParametricError, ReportSettings, Resampling};
use tce::sim::estimator::EvaluationSettings;
use tce::sim::{repetition_rng, Beta, Curve, EstimatorKind, Model};
use tce::{Norm, Slot, SortedBuffer};

/// Whether each 95% interval (percentile, BCa) of the equal-mass sweep contains each
/// class's TCE, over `datasets` data sets of three classes with n = 500 rows: from 200
/// joint resamples, and from 200 resamples of the class alone (the top-label bootstrap).
/// Classes 0 and 1 share their scores (the rows' classes depend on each other), each with
/// its own labels; class 2 is drawn apart. Every class's samples are a draw of `model`,
/// whose TCE is known.
fn joint_coverage(model: &Model, datasets: u64) -> Vec<[[bool; 2]; 2]> {
    let n = 500;
    let tce = model.tce(2.0).unwrap();
    let settings = ReportSettings {
        resamples: 200,
        simulations: Some(1),
        ..ReportSettings::default()
    };
    let options = ClasswiseOptions {
        simulated_classes: Some(0),
    };
    let target = targets(&settings)
        .into_iter()
        .find(|t| t.spec.to_string() == "ece_sweep:equal_mass")
        .unwrap();
    let mut out = Vec::new();
    for d in 0..datasets {
        let (shared, labels0) = model.dataset(21, d, n);
        let mut rng = repetition_rng(22, d);
        let labels1: Vec<u8> = shared
            .iter()
            .map(|&s| u8::from(rng.gen::<f64>() < model.curve.eval(s)))
            .collect();
        let (apart, labels2) = model.dataset(23, d, n);
        let names = ["a", "b", "c"];
        let columns = [(&shared, &labels0), (&shared, &labels1), (&apart, &labels2)];
        let views: Vec<ClassColumn<'_>> = columns
            .iter()
            .enumerate()
            .map(|(class, (scores, labels))| ClassColumn {
                class,
                name: names[class],
                scores,
                labels,
            })
            .collect();
        let r = classwise_report_with(
            &views,
            &ReportSettings {
                seed: d,
                ..settings
            },
            &options,
            &|_| {},
        )
        .unwrap();
        for (c, (scores, labels)) in r.classes.iter().zip(columns) {
            let sweep = c
                .report
                .estimators
                .iter()
                .find(|e| e.target == target)
                .unwrap();
            let joint = sweep.bootstrap.as_ref().unwrap().as_ref().unwrap();
            assert_eq!(joint.replicates.len(), 200);
            let mut storage = vec![Slot::EMPTY; n];
            let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
            buffer.push_batch(scores, labels).unwrap();
            let alone = bootstrap::bootstrap(
                &buffer.sorted(),
                &[target],
                &[sweep.estimate],
                &EvaluationSettings::default(),
                Resampling {
                    resamples: 200,
                    level: 0.95,
                    seed: d,
                },
                &|| {},
            );
            let alone = alone[0].as_ref().unwrap();
            out.push([joint, alone].map(|b| {
                [
                    b.percentile.contains(tce),
                    b.bca.is_some_and(|i| i.contains(tce)),
                ]
            }));
        }
    }
    out
}

/// 200 data sets of n = 500 rows and three classes: every class's 95% intervals of the
/// equal-mass sweep from 200 joint resamples contain its TCE as often as those of 200
/// resamples of the class alone (the top-label bootstrap, tests/report_coverage.rs) on the
/// same data sets: the paired difference within 3 of its sd (McNemar's, from the
/// discordant pairs), and both within 3 binomial sd of 0.95 as report_coverage.rs asks,
/// counting the 200 data sets (sd √(0.95·0.05/200) = 0.0154: [0.904, 0.996]; the three
/// classes of a data set are not independent, two share their scores).
#[test]
fn per_class_intervals_from_joint_resamples_cover_the_tce() {
    for model in [
        Model::new(
            Beta::new(1.1, 0.1).unwrap(),
            Curve::polynomial(2.0).unwrap(),
        ),
        Model::new(
            Beta::new(2.0, 1.0).unwrap(),
            Curve::polynomial(4.0).unwrap(),
        ),
    ] {
        let outcomes = joint_coverage(&model, 200);
        let total = outcomes.len() as f64;
        for (kind, name) in ["percentile", "BCa"].iter().enumerate() {
            let joint = outcomes.iter().filter(|o| o[0][kind]).count() as f64 / total;
            let alone = outcomes.iter().filter(|o| o[1][kind]).count() as f64 / total;
            let discordant = outcomes.iter().filter(|o| o[0][kind] != o[1][kind]).count();
            let sd = (discordant as f64).sqrt() / total;
            println!(
                "{model:?} {name}: joint {joint:.3}, alone {alone:.3}, discordant {discordant} (sd of the difference {sd:.4})"
            );
            assert!((joint - alone).abs() <= 3.0 * sd.max(1.0 / total), "{name}");
            let tolerance = 3.0 * (0.95f64 * 0.05 / 200.0).sqrt();
            assert!((joint - 0.95).abs() <= tolerance, "{name}: joint {joint}");
            assert!((alone - 0.95).abs() <= tolerance, "{name}: alone {alone}");
        }
    }
}

/// K = 60 classes whose estimator, on a data set of the report's n, is
/// |N(TCE_k + b_k, σ_k)| with known TCE_k, bias b_k and sd σ_k (all different). The
/// truth: the marginal's bias over all 60 classes (p = 2), from 20 000 simulations of
/// every class. 400 times, a random sample of 8 classes is simulated 200 times each and
/// [`marginal_bias`] estimates the bias with its se. The share of estimates within
/// 1.96 se of the truth is about 0.95 (an 8-class jackknife has 7 degrees of freedom, so
/// a little less: the test asks at least 0.88, binomial sd 0.011), and the estimates
/// centre on the truth (their mean within 3 se of the mean).
#[test]
fn marginal_bias_from_a_sample_of_classes_is_within_its_se() {
    let k = 60;
    let mut rng = repetition_rng(31, 0);
    let classes: Vec<(f64, f64, f64)> = (0..k)
        .map(|_| {
            let tce = 0.01 + 0.03 * rng.gen::<f64>();
            let bias = 0.002 + 0.012 * rng.gen::<f64>();
            let sd = 0.002 + 0.008 * rng.gen::<f64>();
            (tce, bias, sd)
        })
        .collect();
    fn draw<R: Rng>(rng: &mut R, (tce, bias, sd): (f64, f64, f64)) -> f64 {
        // Box–Muller.
        let (u, v): (f64, f64) = (rng.gen::<f64>().max(1e-300), rng.gen());
        let z = (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos();
        (tce + bias + sd * z).abs()
    }
    let tces: Vec<f64> = classes.iter().map(|c| c.0).collect();
    let full: Vec<Vec<f64>> = classes
        .iter()
        .map(|&c| (0..20_000).map(|_| draw(&mut rng, c)).collect())
        .collect();
    let full_rows: Vec<&[f64]> = full.iter().map(Vec::as_slice).collect();
    let truth = marginal_bias(EstimatorKind::EceBin, Norm::L2, &tces, &full_rows, k).unwrap();
    let (trials, s, m) = (400, 8, 200);
    let (mut within, mut biases) = (0usize, Vec::new());
    for t in 0..trials {
        let mut rng = repetition_rng(32, t);
        let picked = sample(&mut rng, k, s).into_vec();
        let simulated: Vec<Vec<f64>> = picked
            .iter()
            .map(|&i| (0..m).map(|_| draw(&mut rng, classes[i])).collect())
            .collect();
        let rows: Vec<&[f64]> = simulated.iter().map(Vec::as_slice).collect();
        let sampled_tces: Vec<f64> = picked.iter().map(|&i| tces[i]).collect();
        let b = marginal_bias(EstimatorKind::EceBin, Norm::L2, &sampled_tces, &rows, k).unwrap();
        within += usize::from((b.bias - truth.bias).abs() <= 1.96 * b.se);
        biases.push((b.bias, b.se));
    }
    let share = within as f64 / trials as f64;
    let mean = biases.iter().map(|b| b.0).sum::<f64>() / trials as f64;
    let mean_se = biases.iter().map(|b| b.1).sum::<f64>() / trials as f64;
    println!(
        "truth {:.5} (se {:.5}); sampled: mean {mean:.5}, mean se {mean_se:.5}, within 1.96 se {share:.3}",
        truth.bias, truth.se
    );
    assert!(share >= 0.88, "{share}");
    assert!(
        (mean - truth.bias).abs() <= 3.0 * mean_se / (trials as f64).sqrt() + 3.0 * truth.se,
        "{mean} vs {}",
        truth.bias
    );
    // Every class simulated: the bias over the classes of each simulation's combination,
    // its se the simulations' alone.
    let all = marginal_bias(EstimatorKind::EceBin, Norm::L2, &tces, &full_rows, k).unwrap();
    let combined: Vec<f64> = (0..20_000)
        .map(|j| (full.iter().map(|v| v[j] * v[j]).sum::<f64>() / k as f64).sqrt())
        .collect();
    let t = (tces.iter().map(|t| t * t).sum::<f64>() / k as f64).sqrt();
    let direct = tce::sim::runner::Summary::of(&combined, t);
    assert!((all.bias - direct.bias).abs() < 1e-15 && all.se == direct.se);
}

/// Five classes, two of them simulated: the report names them, the others take the
/// marginal's estimator and say why, and the marginal's bias has a se that includes the
/// sampling of classes (larger than the simulations' alone).
#[test]
fn a_sampled_report_says_which_classes_it_simulated() {
    let n = 400;
    let columns: Vec<(Vec<f64>, Vec<u8>)> = (0..5)
        .map(|k| {
            Model::new(
                Beta::new(1.0 + k as f64, 2.0).unwrap(),
                Curve::polynomial(1.0 + 0.5 * k as f64).unwrap(),
            )
            .dataset(41, k, n)
        })
        .collect();
    let names: Vec<String> = (0..5).map(|k| format!("c{k}")).collect();
    let views: Vec<ClassColumn<'_>> = columns
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(class, ((scores, labels), name))| ClassColumn {
            class,
            name,
            scores,
            labels,
        })
        .collect();
    let settings = ReportSettings {
        resamples: 30,
        simulations: Some(20),
        ..ReportSettings::default()
    };
    let options = ClasswiseOptions {
        simulated_classes: Some(2),
    };
    let plan = ClasswisePlan::new(n, 5, &settings, &options);
    assert_eq!((plan.simulated_classes, plan.simulations), (2, 20));
    let r = classwise_report_with(&views, &settings, &options, &|_| {}).unwrap();
    assert!(r.sampled());
    assert_eq!(r.simulated.len(), 2);
    let chosen = r.marginal[r.recommendation.estimator].target;
    for (i, c) in r.classes.iter().enumerate() {
        let estimator = c.report.estimators[c.report.recommendation.estimator].target;
        if r.simulated.contains(&i) {
            assert!(c.report.parametric.is_ok(), "class {i}");
            assert_ne!(c.report.recommendation.basis, Basis::Marginal);
        } else {
            assert_eq!(
                c.report.parametric,
                Err(ParametricError::NotSimulated {
                    simulated: 2,
                    classes: 5
                })
            );
            assert_eq!(c.report.recommendation.basis, Basis::Marginal);
            assert_eq!(estimator, chosen);
        }
        // Every class has its intervals, from the same 30 joint resamples.
        for e in &c.report.estimators {
            let b = e.bootstrap.as_ref().unwrap().as_ref().unwrap();
            assert_eq!(b.replicates.len(), 30);
        }
    }
    let bias = r.marginal[r.recommendation.estimator].bias.unwrap();
    assert!(bias.se > bias.sd / 20f64.sqrt(), "{bias:?}");
    assert!(r.tce_se.unwrap() > 0.0);
    // Another seed samples other classes (here), and resamples otherwise.
    let other = classwise_report_with(
        &views,
        &ReportSettings {
            seed: 9,
            ..settings
        },
        &options,
        &|_| {},
    )
    .unwrap();
    assert_ne!(other.simulated, r.simulated);
    // Every class simulated when asked for as many.
    let all = classwise_report_with(
        &views,
        &settings,
        &ClasswiseOptions {
            simulated_classes: Some(5),
        },
        &|_| {},
    )
    .unwrap();
    assert!(!all.sampled() && all.tce_se == Some(0.0));
    // The estimates and intervals do not depend on which classes are simulated (compared
    // as text: an undefined acceleration is NaN).
    for (a, b) in all.classes.iter().zip(&r.classes) {
        assert_eq!(
            format!("{:?}", a.report.estimators),
            format!("{:?}", b.report.estimators)
        );
    }
    for (a, b) in all.marginal.iter().zip(&r.marginal) {
        assert_eq!(
            format!("{:?}", (a.value, &a.bootstrap)),
            format!("{:?}", (b.value, &b.bootstrap))
        );
    }
}
