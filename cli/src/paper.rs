//! `tce paper`: the simulation figures of Roelofs et al. (AISTATS 2022), regenerated at the
//! paper's protocol (m = 1000 data sets per cell, p = 2, 15 bins where the bin count is
//! fixed, common random numbers), as SVG and CSV, with `findings.md` checking the paper's
//! claims against this run's numbers.
//!
//! 1. Figure 1: the distribution of EW ECE_bin for a perfectly calibrated model with
//!    Beta(2.8, 0.05) scores, n = 200, beside EM ECE_sweep and EM ECE_debias.
//! 2. Figure 2b: bias heat maps of EW and EM ECE_bin over n × bins, Beta(1.1, 0.1), T = c².
//! 3. Figure 3: bias and RMSE against n of six estimators, d = 1 and d = 2, Beta(1.1, 0.1).
//! 4. Figure 4: mean estimate against TCE for T = c^d, d = 1..10, two densities, two n.
//! 5. Figure 5: the calibration tests' detection rate at α = 0.05 against TCE along
//!    T = c^d from d = 1 (calibrated) to 2.5, Beta(1.1, 0.1), at Figure 4's two n
//!    (`tce::decision::construction::power_curve`).
//! 6. Table 1 by construction (`table1.md`, `--table1-reps`) and, with `--table1-splits`,
//!    on real splits of the bundled files (`table1_real.md`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use tce::decision::construction::{power_curve, PowerPoint};
use tce::decision::{Statistic, StatisticChoice, TestSettings};
use tce::recalibrate::table1::check_repetitions;
use tce::sim::estimator::EvaluationSettings;
use tce::sim::runner::MAX_REPETITIONS;
use tce::sim::{Beta, Curve, EstimatorSpec, Grid, Model, Simulation, SimulationError};
use tce::{Norm, SweepOptions};

use crate::plot::{self, Guide, HistogramPanel, LinePanel, Series, XScale};
use crate::recalibrate::{check_table1, table1_failure, table1_markdown, Table1Args, Table1Mode};
use crate::simulate::{
    bias_heat_maps, cell_record, draw_failure, run_with_progress, series_against_n, series_name,
    significant, write_csv, CELL_COLUMNS,
};
use crate::Failure;

/// Options of `tce paper`.
#[derive(Args)]
pub struct PaperArgs {
    /// Directory of the figures, CSVs and findings.md (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Repetitions per cell (the paper uses 1000; at most 100000,
    /// tce::sim::runner::MAX_REPETITIONS).
    #[arg(long, default_value_t = 1000)]
    reps: usize,
    /// Seed of the data sets.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Repetitions per setting of the Table 1 experiment (0 skips it; at most 100000,
    /// tce::recalibrate::table1::MAX_REPETITIONS); 1000, as in docs/fit/table1.md, so
    /// that both copies of the table are one run.
    #[arg(long, default_value_t = 1000)]
    table1_reps: usize,
    /// Random splits of each file per split size for Table 1 on real data, written to
    /// table1_real.md (0, the default, skips it; at most 100000,
    /// tce::recalibrate::table1::MAX_REPETITIONS). It costs about 2 CPU-seconds a split
    /// for the six bundled files (docs/fit/table1_real.md: 100 splits).
    #[arg(long, default_value_t = 0)]
    table1_splits: usize,
    /// Data sets per (model, n) of Figure 5, the calibration tests' detection rates
    /// (0 skips it; at most 100000, tce::sim::runner::MAX_REPETITIONS). Smooth ECE's
    /// resamples are most of its time.
    #[arg(long, default_value_t = 200)]
    figure5_datasets: usize,
    /// Consistency resamples of each test of Figure 5 (1 to 100000,
    /// tce::decision::MAX_RESAMPLES). With 19, (B + 1)·α = 1 at α = 0.05, so every
    /// resampling test's size is exactly α; more resamples raise every test's power a
    /// little, at a proportional cost.
    #[arg(long, default_value_t = 19)]
    figure5_resamples: usize,
    /// Directory of the real outputs (`*.csv`) whose fits are Table 1 settings.
    #[arg(long, value_name = "DIR", default_value = "data")]
    data: PathBuf,
}

/// The paper's fixed bin count.
const BINS: usize = 15;
/// The histogram of Figure 1 has this many bars.
const HISTOGRAM_BARS: usize = 30;

fn estimator(name: &str) -> EstimatorSpec {
    name.parse().expect("the paper's estimator names parse")
}

fn polynomial_model(alpha: f64, beta: f64, d: f64) -> Model {
    Model::new(
        Beta::new(alpha, beta).expect("the paper's densities are valid"),
        Curve::polynomial(d).expect("the paper's exponents are valid"),
    )
}

/// Doubling sample sizes from `first` to `last`.
fn doubling(first: usize, last: usize) -> Vec<usize> {
    std::iter::successors(Some(first), |n| Some(n * 2))
        .take_while(|&n| n <= last)
        .collect()
}

struct Context {
    out: PathBuf,
    reps: usize,
    seed: u64,
    /// Figure 5's data sets per cell (0: no Figure 5) and the resamples of each test.
    figure5_datasets: usize,
    figure5_resamples: usize,
}

impl Context {
    fn grid(&self, sizes: Vec<usize>, bins: Vec<usize>, estimators: &[&str]) -> Grid {
        Grid {
            sizes,
            bins,
            estimators: estimators.iter().map(|e| estimator(e)).collect(),
            repetitions: self.reps,
            seed: self.seed,
            settings: EvaluationSettings {
                norm: Norm::L2,
                sweep: SweepOptions::default(),
            },
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.out.join(name)
    }
}

/// One figure's step: runs its simulations, writes its files, keeps its runs for the
/// findings.
type Figure = fn(&Context, &mut Findings) -> Result<(), Failure>;

/// The `*.csv` files of `--data`, sorted; a directory that cannot be listed is bad
/// input (exit 2), found before any figure is computed.
fn data_files(args: &PaperArgs) -> Result<Vec<PathBuf>, Failure> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(&args.data)
        .map_err(|e| {
            Failure::input(format!(
                "--data {}: cannot list the directory: {e}",
                args.data.display()
            ))
        })?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "csv"))
        .collect();
    files.sort();
    Ok(files)
}

/// Table 1 by construction (SPEC §8), with the paper's simulator settings and the fit of
/// every `files` (the `*.csv` of `args.data`), written to table1.md.
fn table1(args: &PaperArgs, files: Vec<PathBuf>) -> Result<(), Failure> {
    let table1_args = table1_args(args, files);
    let text = format!(
        "# Table 1 by construction\n\nMade by `tce paper` ({} repetitions per setting, \
         calibration and test sets of 1000, seed 0; the same as `tce table1 --reps {} \
         --seed 0 {}/*.csv`).\n\n{}",
        args.table1_reps,
        args.table1_reps,
        args.data.display(),
        table1_markdown(&table1_args)?
    );
    std::fs::write(args.out.join("table1.md"), text).map_err(|e| Failure {
        code: 1,
        message: format!("table1.md: {e}"),
    })
}

/// Table 1 on real splits of every `files`, written to table1_real.md.
fn table1_real(args: &PaperArgs, files: Vec<PathBuf>) -> Result<(), Failure> {
    let table1_args = Table1Args {
        mode: Table1Mode::Real,
        splits: args.table1_splits,
        ..table1_args(args, files)
    };
    let text = format!(
        "# Table 1 on real data\n\nMade by `tce paper` (the same as `tce table1 --mode real \
         --splits {} --seed 0 {}/*.csv`; [../fit/table1_real.md](../fit/table1_real.md) \
         says what the columns mean).\n\n{}",
        args.table1_splits,
        args.data.display(),
        table1_markdown(&table1_args)?
    );
    std::fs::write(args.out.join("table1_real.md"), text).map_err(|e| Failure {
        code: 1,
        message: format!("table1_real.md: {e}"),
    })
}

/// The `tce table1` options `tce paper` runs Table 1 with.
fn table1_args(args: &PaperArgs, files: Vec<PathBuf>) -> Table1Args {
    Table1Args {
        files,
        reps: args.table1_reps,
        calibration: 1000,
        test: 1000,
        seed: 0,
        paper_sizes: false,
        mode: Table1Mode::Construction,
        // Read in real mode only (table1_real sets it).
        splits: 1,
        point_mass: crate::fit::PointMassArg::None,
        columns: crate::ColumnArgs::default(),
    }
}

/// Runs `tce paper`.
pub fn run(args: &PaperArgs) -> Result<(), Failure> {
    if args.reps == 0 {
        return Err(Failure {
            code: 2,
            message: "the number of repetitions must be at least 1".to_owned(),
        });
    }
    // The library's bounds on both counts, before any figure is computed or any file
    // read: the figures' simulations would refuse --reps only when the first one starts,
    // and Table 1's repetitions only after every figure.
    if args.reps > MAX_REPETITIONS {
        let error = SimulationError::TooManyRepetitions {
            repetitions: args.reps,
        };
        return Err(Failure::input(format!("--reps: {error}")));
    }
    if args.figure5_datasets > MAX_REPETITIONS {
        let error = SimulationError::TooManyRepetitions {
            repetitions: args.figure5_datasets,
        };
        return Err(Failure::input(format!("--figure5-datasets: {error}")));
    }
    figure5_settings(args.figure5_resamples, args.seed)
        .check()
        .map_err(|e| Failure::input(format!("--figure5-resamples: {e}")))?;
    if args.table1_reps > 0 {
        check_table1(&table1_args(args, Vec::new()), "--table1-reps")?;
    }
    if args.table1_splits > 0 {
        check_repetitions(args.table1_splits).map_err(|e| table1_failure(&e, "--table1-splits"))?;
    }
    let data = if args.table1_reps > 0 || args.table1_splits > 0 {
        Some(data_files(args)?)
    } else {
        None
    };
    std::fs::create_dir_all(&args.out).map_err(|e| Failure {
        code: 1,
        message: format!("{}: {e}", args.out.display()),
    })?;
    let context = Context {
        out: args.out.clone(),
        reps: args.reps,
        seed: args.seed,
        figure5_datasets: args.figure5_datasets,
        figure5_resamples: args.figure5_resamples,
    };
    let start = Instant::now();
    let mut findings = Findings::default();
    let steps: [(&str, Figure); 5] = [
        ("figure 1", figure1),
        ("figure 2b", figure2b),
        ("figure 3", figure3),
        ("figure 4", figure4),
        ("figure 5", figure5),
    ];
    for (name, step) in steps {
        let started = Instant::now();
        step(&context, &mut findings)?;
        eprintln!(
            "tce paper: {name} in {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }
    if let Some(files) = data {
        if args.table1_reps > 0 {
            let started = Instant::now();
            table1(args, files.clone())?;
            eprintln!(
                "tce paper: table 1 in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
        if args.table1_splits > 0 {
            let started = Instant::now();
            table1_real(args, files)?;
            eprintln!(
                "tce paper: table 1 on real data in {:.1} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    let text = findings.render(&context);
    std::fs::write(context.path("findings.md"), text).map_err(|e| Failure {
        code: 1,
        message: format!("findings.md: {e}"),
    })?;
    eprintln!(
        "tce paper: wrote {} in {:.1} s",
        args.out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Writes the cells of several simulations, each row prefixed with its model columns.
fn write_simulations_csv(
    path: &Path,
    runs: &[(Vec<String>, &Simulation)],
    model_columns: &[&str],
) -> Result<(), Failure> {
    let header: Vec<&str> = model_columns
        .iter()
        .copied()
        .chain(["tce_percent"])
        .chain(CELL_COLUMNS)
        .collect();
    let rows: Vec<Vec<String>> = runs
        .iter()
        .flat_map(|(model, simulation)| {
            simulation.cells.iter().map(move |cell| {
                model
                    .iter()
                    .cloned()
                    .chain([significant(simulation.tce)])
                    .chain(cell_record(cell))
                    .collect()
            })
        })
        .collect();
    write_csv(path, &header, &rows)
}

fn figure1(context: &Context, findings: &mut Findings) -> Result<(), Failure> {
    let model = polynomial_model(2.8, 0.05, 1.0);
    let grid = context.grid(
        vec![200],
        vec![BINS],
        &[
            "ece_bin:equal_width",
            "ece_sweep:equal_mass",
            "ece_debias:equal_mass",
        ],
    );
    let simulation = run_with_progress(&model, &grid)?;
    let highest = simulation
        .cells
        .iter()
        .flat_map(|c| c.estimates.iter().copied())
        .fold(0.0f64, f64::max);
    // One shared range, so that the three distributions compare at a glance.
    let width = if highest > 0.0 {
        highest / HISTOGRAM_BARS as f64
    } else {
        1.0
    };
    let edges: Vec<f64> = (0..=HISTOGRAM_BARS).map(|i| i as f64 * width).collect();
    let mut panels = Vec::new();
    let mut rows = Vec::new();
    for cell in &simulation.cells {
        let mut counts = vec![0usize; HISTOGRAM_BARS];
        for &value in &cell.estimates {
            counts[((value / width) as usize).min(HISTOGRAM_BARS - 1)] += 1;
        }
        let name = series_name(cell.key.estimator, cell.key.bins);
        for (i, &count) in counts.iter().enumerate() {
            rows.push(vec![
                name.clone(),
                significant(edges[i]),
                significant(edges[i + 1]),
                count.to_string(),
            ]);
        }
        let s = cell.summary;
        panels.push(HistogramPanel {
            title: format!("{name}: mean {:.2} %, sd {:.2} %", s.mean, s.sd),
            x_desc: "estimate (%)".to_owned(),
            edges: edges.clone(),
            counts,
            marker: (format!("TCE = {:.0} %", simulation.tce), simulation.tce),
        });
    }
    let title = format!(
        "Figure 1: estimates over {} data sets, perfectly calibrated, Beta(2.8, 0.05), n = 200",
        context.reps
    );
    plot::histograms(&context.path("figure1.svg"), &title, &panels, 3).map_err(draw_failure)?;
    write_csv(
        &context.path("figure1_histogram.csv"),
        &["estimator", "from_percent", "to_percent", "repetitions"],
        &rows,
    )?;
    write_simulations_csv(
        &context.path("figure1.csv"),
        &[(vec!["2.8".into(), "0.05".into(), "1".into()], &simulation)],
        &["alpha", "beta", "d"],
    )?;
    findings.figure1 = Some(simulation);
    Ok(())
}

fn figure2b(context: &Context, findings: &mut Findings) -> Result<(), Failure> {
    let model = polynomial_model(1.1, 0.1, 2.0);
    let grid = context.grid(
        doubling(200, 6400),
        doubling(2, 64),
        &["ece_bin:equal_width", "ece_bin:equal_mass"],
    );
    let simulation = run_with_progress(&model, &grid)?;
    let title = format!(
        "Figure 2b: bias (%) of ECE_bin, Beta(1.1, 0.1), T(c) = c², TCE = {:.2} %, m = {}",
        simulation.tce, context.reps
    );
    plot::heat_maps(
        &context.path("figure2b.svg"),
        &title,
        &bias_heat_maps(&simulation, &grid),
        2,
    )
    .map_err(draw_failure)?;
    write_simulations_csv(
        &context.path("figure2b.csv"),
        &[(vec!["1.1".into(), "0.1".into(), "2".into()], &simulation)],
        &["alpha", "beta", "d"],
    )?;
    findings.figure2b = Some((grid, simulation));
    Ok(())
}

/// The estimators of Figure 3.
const FIGURE3_ESTIMATORS: [&str; 6] = [
    "ece_bin:equal_width",
    "ece_bin:equal_mass",
    "ece_sweep:equal_width",
    "ece_sweep:equal_mass",
    "ece_debias:equal_mass",
    "kde",
];

fn figure3(context: &Context, findings: &mut Findings) -> Result<(), Failure> {
    let grid = context.grid(doubling(200, 12800), vec![BINS], &FIGURE3_ESTIMATORS);
    let mut runs = Vec::new();
    for d in [1.0, 2.0] {
        let simulation = run_with_progress(&polynomial_model(1.1, 0.1, d), &grid)?;
        runs.push((d, simulation));
    }
    let label = |d: f64| {
        if d == 1.0 {
            "perfectly calibrated (d = 1)".to_owned()
        } else {
            format!("miscalibrated (d = {d})")
        }
    };
    let mut panels = Vec::new();
    for (measure, y_desc, guide) in [
        ("bias", "bias (%)", Guide::Zero),
        ("RMSE", "RMSE (%)", Guide::None),
    ] {
        for (d, simulation) in &runs {
            panels.push(LinePanel {
                title: format!("{measure}, {}, TCE = {:.2} %", label(*d), simulation.tce),
                x_desc: "n".to_owned(),
                y_desc: y_desc.to_owned(),
                x_scale: XScale::Log2,
                guide,
                series: series_against_n(simulation, |c| {
                    if measure == "bias" {
                        c.summary.bias
                    } else {
                        c.summary.rmse
                    }
                }),
            });
        }
    }
    let title = format!(
        "Figure 3: bias and RMSE against n, Beta(1.1, 0.1), T(c) = c^d, m = {}",
        context.reps
    );
    plot::line_charts(&context.path("figure3.svg"), &title, &panels, 2).map_err(draw_failure)?;
    let csv_runs: Vec<(Vec<String>, &Simulation)> = runs
        .iter()
        .map(|(d, s)| (vec!["1.1".into(), "0.1".into(), d.to_string()], s))
        .collect();
    write_simulations_csv(
        &context.path("figure3.csv"),
        &csv_runs,
        &["alpha", "beta", "d"],
    )?;
    findings.figure3 = runs;
    Ok(())
}

/// The densities of Figure 4: (α, β, name).
const FIGURE4_DENSITIES: [(f64, f64, &str); 2] = [
    (1.0, 1.0, "uniform Beta(1, 1)"),
    (1.1, 0.1, "Beta(1.1, 0.1)"),
];

fn figure4(context: &Context, findings: &mut Findings) -> Result<(), Failure> {
    let sizes = vec![200, 5000];
    let grid = context.grid(
        sizes.clone(),
        vec![BINS],
        &[
            "ece_bin:equal_width",
            "ece_sweep:equal_mass",
            "ece_debias:equal_mass",
            "kde",
        ],
    );
    let mut runs = Vec::new();
    for (alpha, beta, _) in FIGURE4_DENSITIES {
        for d in 1..=10 {
            let simulation = run_with_progress(&polynomial_model(alpha, beta, d.into()), &grid)?;
            runs.push(((alpha, beta, d), simulation));
        }
    }
    let mut panels = Vec::new();
    for (alpha, beta, name) in FIGURE4_DENSITIES {
        for &n in &sizes {
            let mut series: Vec<Series> = Vec::new();
            for ((a, b, _), simulation) in &runs {
                if (*a, *b) != (alpha, beta) {
                    continue;
                }
                for cell in simulation.cells.iter().filter(|c| c.key.n == n) {
                    let name = series_name(cell.key.estimator, cell.key.bins);
                    let point = (simulation.tce, cell.summary.mean);
                    match series.iter_mut().find(|s| s.name == name) {
                        Some(s) => s.points.push(point),
                        None => series.push(Series {
                            name,
                            points: vec![point],
                        }),
                    }
                }
            }
            panels.push(LinePanel {
                title: format!("{name}, n = {n}"),
                x_desc: "TCE (%) of T(c) = c^d, d = 1..10".to_owned(),
                y_desc: "mean estimate (%)".to_owned(),
                x_scale: XScale::Linear,
                guide: Guide::Diagonal,
                series,
            });
        }
    }
    let title = format!("Figure 4: mean estimate against TCE, m = {}", context.reps);
    plot::line_charts(&context.path("figure4.svg"), &title, &panels, 2).map_err(draw_failure)?;
    let csv_runs: Vec<(Vec<String>, &Simulation)> = runs
        .iter()
        .map(|((a, b, d), s)| (vec![a.to_string(), b.to_string(), d.to_string()], s))
        .collect();
    write_simulations_csv(
        &context.path("figure4.csv"),
        &csv_runs,
        &["alpha", "beta", "d"],
    )?;
    findings.figure4 = runs;
    Ok(())
}

/// The curve family of Figure 5: T(c) = c^d on the paper's Beta(1.1, 0.1) scores, from
/// calibrated (d = 1) to clearly miscalibrated (d = 3, TCE 13.6 %).
const FIGURE5_EXPONENTS: [f64; 9] = [1.0, 1.1, 1.2, 1.35, 1.5, 1.75, 2.0, 2.5, 3.0];
/// The score density of Figure 5, (α, β).
const FIGURE5_DENSITY: (f64, f64) = (1.1, 0.1);
/// Figure 5's sample sizes: Figure 4's.
const FIGURE5_SIZES: [usize; 2] = [200, 5000];

/// The tests of Figure 5: every default statistic at α = 0.05 with `resamples`
/// consistency resamples; the deciding statistic is given (no fit), since only the
/// statistics' own rates are drawn.
fn figure5_settings(resamples: usize, seed: u64) -> TestSettings {
    TestSettings {
        statistic: StatisticChoice::Given(Statistic::fallback()),
        resamples,
        seed,
        ..TestSettings::default()
    }
}

fn figure5(context: &Context, findings: &mut Findings) -> Result<(), Failure> {
    if context.figure5_datasets == 0 {
        return Ok(());
    }
    let (alpha, beta) = FIGURE5_DENSITY;
    let family: Vec<(f64, Model)> = FIGURE5_EXPONENTS
        .iter()
        .map(|&d| (d, polynomial_model(alpha, beta, d)))
        .collect();
    let settings = figure5_settings(context.figure5_resamples, context.seed);
    let points = power_curve(
        &family,
        2.0,
        &FIGURE5_SIZES,
        context.figure5_datasets,
        context.seed,
        &settings,
        &Statistic::defaults(),
    )
    .map_err(|e| Failure::internal(format!("figure 5: {e}")))?;
    let panels: Vec<LinePanel> = FIGURE5_SIZES
        .iter()
        .map(|&n| {
            let at_n: Vec<&PowerPoint> = points.iter().filter(|p| p.rates.n == n).collect();
            let series = Statistic::defaults()
                .iter()
                .enumerate()
                .map(|(i, statistic)| Series {
                    name: statistic.to_string(),
                    points: at_n
                        .iter()
                        .map(|p| (100.0 * p.tce, p.rates.rate(i).0))
                        .collect(),
                })
                .collect();
            LinePanel {
                title: format!("n = {n}"),
                x_desc: "TCE (%) of T(c) = c^d".to_owned(),
                y_desc: format!("rejection rate at α = {}", settings.alpha),
                x_scale: XScale::Linear,
                guide: Guide::Level(settings.alpha),
                series,
            }
        })
        .collect();
    let title = format!(
        "Figure 5: detection rate against TCE, Beta({alpha}, {beta}), T(c) = c^d, \
         {} data sets, {} resamples",
        context.figure5_datasets, context.figure5_resamples
    );
    plot::line_charts(&context.path("figure5.svg"), &title, &panels, 2).map_err(draw_failure)?;
    let rows: Vec<Vec<String>> = points
        .iter()
        .flat_map(|p| {
            p.rates.statistics.iter().enumerate().map(move |(i, s)| {
                let (rate, se) = p.rates.rate(i);
                vec![
                    alpha.to_string(),
                    beta.to_string(),
                    p.parameter.to_string(),
                    significant(100.0 * p.tce),
                    p.rates.n.to_string(),
                    s.to_string(),
                    p.rates.datasets.to_string(),
                    context.figure5_resamples.to_string(),
                    p.rates.rejections[i].to_string(),
                    p.rates.undefined[i].to_string(),
                    significant(rate),
                    significant(se),
                ]
            })
        })
        .collect();
    write_csv(&context.path("figure5.csv"), &FIGURE5_COLUMNS, &rows)?;
    findings.figure5 = points;
    Ok(())
}

/// The columns of figure5.csv: one row per (n, d, statistic).
const FIGURE5_COLUMNS: [&str; 12] = [
    "alpha",
    "beta",
    "d",
    "tce_percent",
    "n",
    "statistic",
    "datasets",
    "resamples",
    "rejections",
    "undefined",
    "rate",
    "se",
];

/// The runs the findings are computed from.
#[derive(Default)]
struct Findings {
    figure1: Option<Simulation>,
    figure2b: Option<(Grid, Simulation)>,
    figure3: Vec<(f64, Simulation)>,
    figure4: Vec<((f64, f64, u32), Simulation)>,
    figure5: Vec<PowerPoint>,
}

fn verdict(holds: bool) -> &'static str {
    if holds {
        "**Holds.**"
    } else {
        "**Does not hold in our numbers.**"
    }
}

fn bias_of(simulation: &Simulation, n: usize, bins: Option<usize>, name: &str) -> f64 {
    simulation
        .cell(n, bins, estimator(name))
        .map_or(f64::NAN, |c| c.summary.bias)
}

impl Findings {
    fn render(&self, context: &Context) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# Findings of Roelofs et al. (AISTATS 2022), checked against this run\n\n\
             Generated by `tce paper --out {} --reps {} --seed {} --figure5-datasets {} \
             --figure5-resamples {}` from the numbers in the \
             CSV files beside this one. All values in percent (Figure 5's rates are \
             fractions); p = 2; 15 bins where the bin count is fixed; every cell of a figure sees the same {} data sets. \
             A bias is significant if it exceeds 2 Monte-Carlo standard errors (se = sd/√m).\n",
            context.out.display(),
            context.reps,
            context.seed,
            context.figure5_datasets,
            context.figure5_resamples,
            context.reps
        );
        self.figure1_summary(&mut out);
        self.finding_a(&mut out);
        self.finding_b(&mut out);
        self.finding_c(&mut out);
        self.finding_d(&mut out);
        self.finding_e(&mut out, context);
        out
    }

    fn figure1_summary(&self, out: &mut String) {
        let Some(simulation) = &self.figure1 else {
            return;
        };
        let _ = writeln!(
            out,
            "## Figure 1 (perfectly calibrated, Beta(2.8, 0.05), n = 200, TCE = 0)\n"
        );
        for cell in &simulation.cells {
            let s = cell.summary;
            let zero = cell.estimates.iter().filter(|&&v| v == 0.0).count();
            let _ = writeln!(
                out,
                "- {}: mean {:.3} % (bias {:+.3} ± {:.3}), sd {:.3} %, RMSE {:.3} %; {} of {} estimates are exactly 0.",
                series_name(cell.key.estimator, cell.key.bins),
                s.mean,
                s.bias,
                s.se,
                s.sd,
                s.rmse,
                zero,
                cell.estimates.len()
            );
        }
        let _ = writeln!(out);
    }

    /// (a) ECE_bin is most biased for perfectly calibrated models.
    fn finding_a(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "## (a) ECE_bin is most biased for perfectly calibrated models\n\n\
             EW ECE_bin (15 bins) bias against d in T(c) = c^d (Figure 4 runs): the paper's \
             claim holds for a (density, n) if d = 1 has the largest |bias| of d = 1..10.\n"
        );
        let mut held = 0;
        let mut total = 0;
        for (alpha, beta, name) in FIGURE4_DENSITIES {
            for n in [200, 5000] {
                let biases: Vec<(u32, f64)> = self
                    .figure4
                    .iter()
                    .filter(|((a, b, _), _)| (*a, *b) == (alpha, beta))
                    .map(|((_, _, d), s)| (*d, bias_of(s, n, Some(BINS), "ece_bin:equal_width")))
                    .collect();
                let Some(&(worst_d, worst)) =
                    biases.iter().max_by(|x, y| x.1.abs().total_cmp(&y.1.abs()))
                else {
                    continue;
                };
                total += 1;
                held += usize::from(worst_d == 1);
                let list: Vec<String> = biases
                    .iter()
                    .map(|(d, b)| format!("d={d}: {b:+.2}"))
                    .collect();
                let _ = writeln!(
                    out,
                    "- {name}, n = {n}: largest |bias| {worst:+.3} % at d = {worst_d}. ({})",
                    list.join(", ")
                );
            }
        }
        for n in [200, 12800] {
            let at = |d: f64| {
                self.figure3
                    .iter()
                    .find(|(dd, _)| *dd == d)
                    .map_or(f64::NAN, |(_, s)| {
                        bias_of(s, n, Some(BINS), "ece_bin:equal_width")
                    })
            };
            let _ = writeln!(
                out,
                "- Figure 3, Beta(1.1, 0.1), n = {n}: EW ECE_bin bias {:+.3} % at d = 1 vs {:+.3} % at d = 2.",
                at(1.0),
                at(2.0)
            );
        }
        let _ = writeln!(
            out,
            "\n{} d = 1 has the largest |bias| in {held} of {total} (density, n) settings.\n",
            verdict(total > 0 && held == total)
        );
    }

    /// (b) A bias-minimising bin count that grows with n.
    fn finding_b(&self, out: &mut String) {
        let Some((grid, simulation)) = &self.figure2b else {
            return;
        };
        let _ = writeln!(
            out,
            "## (b) The bias-minimising number of bins grows with n\n\n\
             Figure 2b (Beta(1.1, 0.1), T(c) = c², TCE = {:.3} %): per n, the bin count with the \
             smallest |bias|.\n",
            simulation.tce
        );
        let mut all_hold = true;
        for name in ["ece_bin:equal_width", "ece_bin:equal_mass"] {
            let best: Vec<(usize, usize, f64)> = grid
                .sizes
                .iter()
                .map(|&n| {
                    let (bins, bias) = grid
                        .bins
                        .iter()
                        .map(|&b| (b, bias_of(simulation, n, Some(b), name)))
                        .min_by(|x, y| x.1.abs().total_cmp(&y.1.abs()))
                        .unwrap_or((0, f64::NAN));
                    (n, bins, bias)
                })
                .collect();
            let never_shrinks = best.windows(2).all(|w| w[1].1 >= w[0].1);
            let grows = best.last().map(|l| l.1) > best.first().map(|f| f.1);
            all_hold &= never_shrinks && grows;
            let list: Vec<String> = best
                .iter()
                .map(|(n, b, bias)| format!("n={n}: {b} bins ({bias:+.3} %)"))
                .collect();
            let _ = writeln!(
                out,
                "- {name}: {}. {}",
                list.join("; "),
                match (never_shrinks, grows) {
                    (true, true) => "Never decreases with n, and grows.",
                    (false, true) => "Grows overall but not monotonically.",
                    _ => "Does not grow with n.",
                }
            );
        }
        let _ = writeln!(out, "\n{}\n", verdict(all_hold));
    }

    /// (c) Equal-mass binning is less biased than equal-width.
    fn finding_c(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "## (c) Equal-mass binning is less biased than equal-width\n"
        );
        let mut em_wins = 0;
        let mut total = 0;
        if let Some((grid, simulation)) = &self.figure2b {
            let (mut sum_ew, mut sum_em) = (0.0, 0.0);
            let mut grid_wins = 0;
            for &n in &grid.sizes {
                for &b in &grid.bins {
                    let ew = bias_of(simulation, n, Some(b), "ece_bin:equal_width").abs();
                    let em = bias_of(simulation, n, Some(b), "ece_bin:equal_mass").abs();
                    sum_ew += ew;
                    sum_em += em;
                    grid_wins += usize::from(em < ew);
                }
            }
            let cells = grid.sizes.len() * grid.bins.len();
            em_wins += grid_wins;
            total += cells;
            let _ = writeln!(
                out,
                "- Figure 2b grid (ECE_bin): |bias| EM < EW in {grid_wins} of {cells} (n, bins) cells; \
                 mean |bias| EM {:.3} % vs EW {:.3} %.",
                sum_em / cells as f64,
                sum_ew / cells as f64
            );
        }
        for (d, simulation) in &self.figure3 {
            for (em_name, ew_name, bins) in [
                ("ece_bin:equal_mass", "ece_bin:equal_width", Some(BINS)),
                ("ece_sweep:equal_mass", "ece_sweep:equal_width", None),
            ] {
                let sizes: Vec<usize> =
                    simulation
                        .cells
                        .iter()
                        .map(|c| c.key.n)
                        .fold(Vec::new(), |mut v, n| {
                            if !v.contains(&n) {
                                v.push(n);
                            }
                            v
                        });
                let wins = sizes
                    .iter()
                    .filter(|&&n| {
                        bias_of(simulation, n, bins, em_name).abs()
                            < bias_of(simulation, n, bins, ew_name).abs()
                    })
                    .count();
                em_wins += wins;
                total += sizes.len();
                let _ = writeln!(
                    out,
                    "- Figure 3, d = {d}: |bias| {em_name} < {ew_name} at {wins} of {} sizes n.",
                    sizes.len()
                );
            }
        }
        let _ = writeln!(
            out,
            "\n{} Equal mass has the smaller |bias| in {em_wins} of {total} comparisons{}.\n",
            verdict(total > 0 && em_wins * 4 >= total * 3),
            if em_wins * 4 >= total * 3 || em_wins * 2 <= total {
                ""
            } else {
                " (a majority, but not the three quarters we ask for a clear yes)"
            }
        );
    }

    /// (d) Debias is best for perfectly calibrated models, the sweep for miscalibrated ones.
    fn finding_d(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "## (d) ECE_debias is best for perfectly calibrated models, ECE_sweep for miscalibrated ones\n\n\
             Figure 3 (Beta(1.1, 0.1)): per n, the estimator with the lowest |bias| and the lowest RMSE.\n"
        );
        let mut holds = true;
        for (d, simulation) in &self.figure3 {
            let expected = if *d == 1.0 { "ece_debias" } else { "ece_sweep" };
            let mut sizes: Vec<usize> = simulation.cells.iter().map(|c| c.key.n).collect();
            sizes.dedup();
            let (mut bias_wins, mut rmse_wins) = (0, 0);
            let _ = writeln!(out, "d = {d} (TCE = {:.3} %):\n", simulation.tce);
            for &n in &sizes {
                let cells: Vec<_> = simulation.cells.iter().filter(|c| c.key.n == n).collect();
                let best_by = |measure: &dyn Fn(&tce::sim::Cell) -> f64| {
                    cells
                        .iter()
                        .min_by(|x, y| measure(x).total_cmp(&measure(y)))
                        .map(|c| {
                            (
                                series_name(c.key.estimator, c.key.bins),
                                c.key.estimator.kind().name(),
                                measure(c),
                            )
                        })
                        .unwrap_or_default()
                };
                let (bias_name, bias_kind, bias) = best_by(&|c| c.summary.bias.abs());
                let (rmse_name, rmse_kind, rmse) = best_by(&|c| c.summary.rmse);
                bias_wins += usize::from(bias_kind == expected);
                rmse_wins += usize::from(rmse_kind == expected);
                let all: Vec<String> = cells
                    .iter()
                    .map(|c| {
                        format!(
                            "{} {:+.3} ± {:.3}",
                            series_name(c.key.estimator, c.key.bins),
                            c.summary.bias,
                            c.summary.se
                        )
                    })
                    .collect();
                let _ = writeln!(
                    out,
                    "- n = {n}: lowest |bias| {bias_name} ({bias:.3} %); lowest RMSE {rmse_name} \
                     ({rmse:.3} %). Bias ± se: {}.",
                    all.join("; ")
                );
            }
            let _ = writeln!(
                out,
                "\n{expected} is lowest in |bias| at {bias_wins} and in RMSE at {rmse_wins} of {} sizes.\n",
                sizes.len()
            );
            holds &= 2 * bias_wins > sizes.len() || 2 * rmse_wins > sizes.len();
        }
        let _ = writeln!(
            out,
            "{} (We count the claim as holding for a model if the expected estimator is best \
             in |bias| or in RMSE at a majority of sizes.)",
            verdict(!self.figure3.is_empty() && holds)
        );
    }

    /// (e) EM ECE_sweep detects miscalibration more often than EW ECE_bin (Figure 5).
    fn finding_e(&self, out: &mut String, context: &Context) {
        if self.figure5.is_empty() {
            return;
        }
        let index = |points: &PowerPoint, name: &str| {
            points
                .rates
                .statistics
                .iter()
                .position(|s| s.to_string() == name)
        };
        let _ = writeln!(
            out,
            "\n## (e) EM ECE_sweep detects miscalibration more often than EW ECE_bin (Figure 5)\n\n\
             Figure 5 (Beta(1.1, 0.1), T(c) = c^d; {} data sets a cell, consistency resampling \
             with {} resamples, α = 0.05): each statistic's rejection rate ± its Monte-Carlo \
             standard error, and the paired difference EM ECE_sweep − EW ECE_bin on the same \
             data sets ± its standard error. The sweep is ahead (behind) where the difference \
             exceeds 2 standard errors.\n",
            context.figure5_datasets, context.figure5_resamples
        );
        let (mut ahead, mut behind, mut level, mut miscalibrated) = (0, 0, 0, 0);
        for point in &self.figure5 {
            let (Some(sweep), Some(ew)) = (
                index(point, "ece_sweep:equal_mass"),
                index(point, "ece_bin:equal_width"),
            ) else {
                continue;
            };
            let rates = &point.rates;
            let (rs, ss) = rates.rate(sweep);
            let (re, se) = rates.rate(ew);
            let (diff, diff_se) = rates.difference(sweep, ew);
            // A difference with no spread (every data set the same ±1) is ahead too.
            let sweep_ahead = diff > 2.0 * diff_se;
            let sweep_behind = -diff > 2.0 * diff_se;
            let verdict = if sweep_ahead {
                "sweep ahead"
            } else if sweep_behind {
                "EW ECE_bin ahead"
            } else {
                "no measurable difference"
            };
            // The first of the highest, in the statistics' order, and how many share it.
            let highest = (0..rates.statistics.len())
                .map(|i| rates.rejections[i])
                .max()
                .unwrap_or(0);
            let first = rates.rejections.iter().position(|&r| r == highest);
            let sharing = rates.rejections.iter().filter(|&&r| r == highest).count();
            let best = first.map_or_else(String::new, |i| {
                let others = match sharing {
                    1 => String::new(),
                    2 => " and 1 other".to_owned(),
                    k => format!(" and {} others", k - 1),
                };
                format!("{}{others} {:.3}", rates.statistics[i], rates.rate(i).0)
            });
            if point.tce > 0.0 {
                miscalibrated += 1;
                ahead += usize::from(sweep_ahead);
                behind += usize::from(sweep_behind);
                level += usize::from(!sweep_ahead && !sweep_behind);
            }
            let _ = writeln!(
                out,
                "- n = {}, d = {} (TCE {:.2} %): EM ECE_sweep {rs:.3} ± {ss:.3}, EW ECE_bin \
                 {re:.3} ± {se:.3}; difference {diff:+.3} ± {diff_se:.3}: {verdict}. Highest \
                 rate: {best}.",
                rates.n,
                point.parameter,
                100.0 * point.tce
            );
        }
        let _ = writeln!(
            out,
            "\n{} Of the {miscalibrated} miscalibrated (n, d), the sweep is ahead in {ahead}, \
             behind in {behind}, and within 2 standard errors in {level}.",
            verdict(ahead > 0 && behind == 0)
        );
    }
}
