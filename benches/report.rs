//! Timings of `tce::report` (docs/performance.md, "report"): the whole report at
//! n = 10^4 and 10^6 (default settings: 1000 resamples; 1000 simulations at 10^4, 50 at
//! 10^6; the calibration test with 999 resamples and 100 power simulations at 10^4, 19
//! and 20 at 10^6), and 1000 bootstrap resamples of the equal-mass sweep alone at
//! n = 10^6.
//!
//!   cargo bench --bench report             (RAYON_NUM_THREADS=2 for the 2-core figures)
//!   cargo bench --bench report -- quick    (n = 10^4 only)
//!   cargo bench --bench report -- bootstrap   (the sweep's bootstrap at n = 10^6 only)

use std::time::Instant;

use tce::report::{bootstrap, report, ReportSettings, Resampling, Target};
use tce::sim::estimator::EvaluationSettings;
use tce::sim::{Beta, Curve, Model};
use tce::{Binning, Slot, SortedBuffer};

fn data(n: usize) -> (Vec<f64>, Vec<u8>) {
    // Close to the paper's fit of ResNet-110 on CIFAR-10: confident and a little
    // overconfident.
    let model = Model::new(
        Beta::new(2.8, 0.05).unwrap(),
        Curve::polynomial(1.1).unwrap(),
    );
    model.dataset(1, 0, n)
}

fn main() {
    let quick = std::env::args().any(|a| a == "quick");
    let bootstrap_only = std::env::args().any(|a| a == "bootstrap");
    println!("threads: {}", rayon::current_num_threads());
    let sizes: &[usize] = match (quick, bootstrap_only) {
        (_, true) => &[],
        (true, _) => &[10_000],
        _ => &[10_000, 1_000_000],
    };
    for &n in sizes {
        let (scores, labels) = data(n);
        let start = Instant::now();
        let r = report(&scores, &labels, &ReportSettings::default(), &|_| {}).unwrap();
        println!(
            "report n = {n}: {:.2} s ({} resamples, {} simulations)",
            start.elapsed().as_secs_f64(),
            r.settings.resamples,
            r.settings.simulations.unwrap()
        );
    }
    if quick {
        return;
    }
    let n = 1_000_000;
    let (scores, labels) = data(n);
    let mut storage = vec![Slot::EMPTY; n];
    let mut buffer = SortedBuffer::with_storage(&mut storage).unwrap();
    buffer.push_batch(&scores, &labels).unwrap();
    let sorted = buffer.sorted();
    let target = Target {
        spec: tce::sim::EstimatorSpec::binned(
            tce::sim::EstimatorKind::EceSweep,
            Binning::EQUAL_MASS,
        )
        .unwrap(),
        bins: None,
    };
    let settings = EvaluationSettings::default();
    let value = sorted
        .ece_sweep(Binning::EQUAL_MASS, settings.norm, settings.sweep)
        .unwrap();
    let start = Instant::now();
    let b = bootstrap::bootstrap(
        &sorted,
        &[target],
        &[value.value],
        &settings,
        Resampling {
            resamples: 1000,
            level: 0.95,
            seed: 0,
        },
        &|| {},
    );
    println!(
        "bootstrap of the EM sweep, n = {n}, 1000 resamples: {:.2} s (b* on the data {})",
        start.elapsed().as_secs_f64(),
        value.bins
    );
    assert!(b[0].is_ok());
}
