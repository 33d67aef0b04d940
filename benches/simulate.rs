//! The simulator's cost: the Figure 2b grid of the paper (6 sizes × 6 bin counts × EW and
//! EM ECE_bin, 1000 repetitions) end to end, and the cost of one repetition relative to
//! drawing its samples alone.
//!
//! `cargo bench --bench simulate` prints criterion's timings and then the ratio.

use std::time::Instant;

use criterion::{criterion_group, Criterion};
use rayon::prelude::*;
use tce::sim::estimator::EvaluationSettings;
use tce::sim::{simulate, Beta, Curve, Grid, Model};

fn model() -> Model {
    Model::new(
        Beta::new(1.1, 0.1).unwrap(),
        Curve::polynomial(2.0).unwrap(),
    )
}

fn figure2b(repetitions: usize) -> Grid {
    Grid {
        sizes: vec![200, 400, 800, 1600, 3200, 6400],
        bins: vec![2, 4, 8, 16, 32, 64],
        estimators: vec![
            "ece_bin:equal_width".parse().unwrap(),
            "ece_bin:equal_mass".parse().unwrap(),
        ],
        repetitions,
        seed: 1,
        settings: EvaluationSettings::default(),
    }
}

/// Draws every repetition's largest data set, as the runner does, and nothing else.
fn generate_only(model: &Model, repetitions: usize, max_n: usize) -> usize {
    (0..repetitions as u64)
        .into_par_iter()
        .map(|rep| model.dataset(1, rep, max_n).1.len())
        .sum()
}

fn benches(c: &mut Criterion) {
    let model = model();
    let mut group = c.benchmark_group("simulate");
    group.sample_size(10);
    group.bench_function("figure2b_grid_1000_reps", |b| {
        b.iter(|| simulate(&model, &figure2b(1000), &|| {}).unwrap())
    });
    group.bench_function("generate_only_1000_reps_n6400", |b| {
        b.iter(|| generate_only(&model, 1000, 6400))
    });
    group.finish();
}

criterion_group!(simulate_benches, benches);

fn main() {
    simulate_benches();
    Criterion::default().configure_from_args().final_summary();

    // The ratio, timed directly: the same pool, best of 3 to damp other load.
    let model = model();
    let best = |f: &dyn Fn()| {
        (0..3)
            .map(|_| {
                let start = Instant::now();
                f();
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let grid = best(&|| {
        simulate(&model, &figure2b(1000), &|| {}).unwrap();
    });
    let generate = best(&|| {
        generate_only(&model, 1000, 6400);
    });
    println!(
        "figure 2b grid (36 cells x 2 binnings x 1000 reps): {grid:.3} s on {} threads; \
         {:.3} ms of CPU per repetition; sample generation alone {:.3} ms per repetition; ratio {:.2}",
        rayon::current_num_threads(),
        1e3 * grid / 1000.0 * rayon::current_num_threads() as f64,
        1e3 * generate / 1000.0 * rayon::current_num_threads() as f64,
        grid / generate
    );
}
