//! `tce recalibrate`: fit a recalibration map on one file and write another file's rows
//! with their confidences recalibrated; `tce table1`: the Table 1 experiment.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde::Serialize;
use tce::binning::equal_width_edges;
use tce::fit::EndpointRule;
use tce::recalibrate::logistic::temperature_of;
use tce::recalibrate::table1::{
    run, summarize, wilson_interval, Estimator, Mean, Set, Setting, Summary, Table1Error,
    ESTIMATORS, PAPER_METHODS,
};
use tce::recalibrate::{Method, Pieces, RecalibrateError, RecalibrationMap};
use tce::sim::{Beta, Curve, Model};

use crate::fit::{chosen_name, fit_failure, fit_samples, PointMassArg};
use crate::input;
use crate::{ColumnArgs, Failure};

/// The recalibration methods on the command line.
#[derive(Clone, Copy, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MethodArg {
    Histogram,
    Isotonic,
    Platt,
    Temperature,
}

impl MethodArg {
    fn method(self) -> Method {
        match self {
            MethodArg::Histogram => Method::Histogram,
            MethodArg::Isotonic => Method::Isotonic,
            MethodArg::Platt => Method::Platt,
            MethodArg::Temperature => Method::Temperature,
        }
    }
}

/// Options of `tce recalibrate`.
#[derive(Args)]
pub struct RecalibrateArgs {
    /// The method.
    #[arg(long, value_enum)]
    method: MethodArg,
    /// CSV to fit the map on (`confidence`, `correct`).
    #[arg(long, value_name = "A.csv")]
    fit: PathBuf,
    /// CSV whose confidences are recalibrated; its other columns are copied.
    #[arg(long, value_name = "B.csv")]
    apply: PathBuf,
    /// Output file (default: stdout). With --out the fitted map is printed on stdout,
    /// without it on stderr.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print the fitted map and the settings as one JSON object (needs --out, since
    /// stdout would otherwise carry the CSV).
    #[arg(long, requires = "out")]
    json: bool,
    #[command(flatten)]
    columns: ColumnArgs,
}

/// Options of `tce table1`.
#[derive(Args)]
pub struct Table1Args {
    /// Data files whose fitted models are settings (default: none).
    pub files: Vec<PathBuf>,
    /// Repetitions per setting (1 to 100000,
    /// tce::recalibrate::table1::MAX_REPETITIONS).
    #[arg(long, default_value_t = 200)]
    pub reps: usize,
    /// Calibration-set size (1 to 2147483647, tce::recalibrate::table1::MAX_SET_SIZE;
    /// the memory the sets need is checked before any work).
    #[arg(long, default_value_t = 1000)]
    pub calibration: usize,
    /// Test-set size (1 to 2147483647, tce::recalibrate::table1::MAX_SET_SIZE).
    #[arg(long, default_value_t = 1000)]
    pub test: usize,
    /// Seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The paper's sizes per data set instead of --calibration/--test: 25000/25000 for a
    /// file whose name says ImageNet (`imgnet`, `imagenet`), 5000/10000 (the CIFAR
    /// validation and test sizes) for every other file and the simulator settings.
    #[arg(long, conflicts_with_all = ["calibration", "test"])]
    pub paper_sizes: bool,
    /// Point masses at scores of exactly 0 and 1 in the fits of the files (as in
    /// `tce fit --point-mass`); the paper's two simulator settings stay pure Beta.
    #[arg(long, value_enum, default_value_t = PointMassArg::None)]
    pub point_mass: PointMassArg,
    #[command(flatten)]
    pub columns: ColumnArgs,
}

/// The paper's calibration/test sizes (Roelofs et al., Table 1): validation folds of
/// 5000 (CIFAR) and 25000 (ImageNet), test sets of 10000 and 25000.
pub const PAPER_CIFAR_SIZES: (usize, usize) = (5000, 10_000);
/// See [`PAPER_CIFAR_SIZES`].
pub const PAPER_IMAGENET_SIZES: (usize, usize) = (25_000, 25_000);

/// The paper's sizes for a setting named `name` (a file stem): ImageNet's if the name
/// says so, else CIFAR's. The paper's Table 1 has no Birds model and no pure simulator
/// setting; those get the CIFAR sizes, the closer of the two in n.
pub fn paper_sizes_for(name: &str) -> (usize, usize) {
    let lower = name.to_ascii_lowercase();
    if lower.contains("imgnet") || lower.contains("imagenet") {
        PAPER_IMAGENET_SIZES
    } else {
        PAPER_CIFAR_SIZES
    }
}

/// A share of `trials` in percent with its 95 % Wilson interval: "56.5 [53.1, 59.8]".
fn share_with_interval(successes: usize, trials: usize) -> String {
    let share = 100.0 * successes as f64 / trials as f64;
    match wilson_interval(successes, trials) {
        Some((lo, hi)) => format!("{share:.1} [{:.1}, {:.1}]", 100.0 * lo, 100.0 * hi),
        None => format!("{share:.1}"),
    }
}

fn failure(code: u8) -> impl Fn(String) -> Failure {
    move |message| Failure { code, message }
}

/// A fitted map, as the JSON of `tce recalibrate` gives it.
#[derive(Serialize)]
#[serde(tag = "method", rename_all = "snake_case")]
enum MapJson {
    /// g(c) = σ(logit(c) / T).
    Temperature { temperature: f64, b: f64 },
    /// g(c) = σ(a + b·logit c).
    Platt { a: f64, b: f64 },
    /// Bin k is [edges[k], edges[k+1]) (the last closed at 1), mapped to values[k].
    Histogram {
        bins: usize,
        edges: Vec<f64>,
        values: Vec<f64>,
    },
    /// Step k holds [starts[k], starts[k+1]) (the last closed at 1), mapped to values[k].
    Isotonic { starts: Vec<f64>, values: Vec<f64> },
}

impl MapJson {
    fn new(method: Method, map: &RecalibrationMap) -> MapJson {
        match map {
            RecalibrationMap::Monotone(curve) => {
                let params = curve.params();
                let (a, b) = (params.a.unwrap_or(0.0), params.b.unwrap_or(f64::NAN));
                if method == Method::Temperature {
                    MapJson::Temperature {
                        temperature: temperature_of(curve),
                        b,
                    }
                } else {
                    MapJson::Platt { a, b }
                }
            }
            RecalibrationMap::Piecewise(map) => match &map.pieces {
                Pieces::EqualWidth { bins } => MapJson::Histogram {
                    bins: *bins,
                    edges: (0..*bins)
                        .map(|k| equal_width_edges(k, *bins).0)
                        .chain([1.0])
                        .collect(),
                    values: map.values.clone(),
                },
                Pieces::Starts(starts) => MapJson::Isotonic {
                    starts: starts.clone(),
                    values: map.values.clone(),
                },
            },
        }
    }

    /// The map in words, one line per piece for the piecewise maps.
    fn text(&self) -> String {
        let mut out = String::new();
        let pieces = |out: &mut String, lower: &[f64], values: &[f64]| {
            for (k, value) in values.iter().enumerate() {
                let upper = lower.get(k + 1).copied().unwrap_or(1.0);
                let close = if k + 1 == values.len() { ']' } else { ')' };
                let _ = writeln!(out, "  [{:.6}, {upper:.6}{close}  ->  {value:.6}", lower[k]);
            }
        };
        match self {
            MapJson::Temperature { temperature, b } => {
                let _ = writeln!(
                    out,
                    "temperature scaling: g(c) = σ(logit(c) / T), T = {temperature:.6} (1/T = {b:.6})"
                );
            }
            MapJson::Platt { a, b } => {
                let _ = writeln!(
                    out,
                    "Platt scaling: g(c) = σ(a + b·logit c), a = {a:.6}, b = {b:.6}"
                );
            }
            MapJson::Histogram {
                bins,
                edges,
                values,
            } => {
                let _ = writeln!(
                    out,
                    "histogram binning: {bins} equal-width bins, each mapped to the mean label of its calibration rows (an empty bin to its centre):"
                );
                pieces(&mut out, edges, values);
            }
            MapJson::Isotonic { starts, values } => {
                let _ = writeln!(
                    out,
                    "isotonic regression: {} steps, a non-decreasing step function:",
                    values.len()
                );
                pieces(&mut out, starts, values);
            }
        }
        out
    }
}

/// The settings of `tce recalibrate`, in its JSON.
#[derive(Serialize)]
struct RecalibrateSettingsJson {
    method: MethodArg,
    fit: String,
    apply: String,
    out: Option<String>,
    fit_columns: input::Columns,
    apply_columns: input::Columns,
}

#[derive(Serialize)]
struct RecalibrateJson {
    tce_version: &'static str,
    command: &'static str,
    settings: RecalibrateSettingsJson,
    /// Rows of the fit file.
    n_fit: usize,
    /// Rows written.
    n_apply: usize,
    map: MapJson,
}

/// A map that could not be fitted on the rows of `path`: data that admit no map are bad
/// input (exit 2), a fit that did not converge is not (exit 1).
fn map_failure(path: &Path, error: &RecalibrateError) -> Failure {
    let message = format!("{}: {error}", path.display());
    match error {
        RecalibrateError::NotConverged | RecalibrateError::Reduce(_) => Failure::internal(message),
        _ => Failure::input(message),
    }
}

/// Runs `tce recalibrate`.
pub fn run_recalibrate(args: &RecalibrateArgs) -> Result<(), Failure> {
    let fit_rows = crate::read_samples(&args.fit, &args.columns)?;
    // Reads and validates every row of B (with line numbers) before anything is written.
    let table = input::read_table(&args.apply, args.columns.names()).map_err(|e| Failure {
        code: e.exit_code(),
        message: format!("{}: {e}", args.apply.display()),
    })?;
    let method = args.method.method();
    let map = method
        .fit(&fit_rows.scores, &fit_rows.labels)
        .map_err(|e| map_failure(&args.fit, &e))?;
    let map_json = MapJson::new(method, &map);
    let io = |e: &dyn std::fmt::Display| failure(1)(format!("{e}"));
    let (header, column) = (&table.header, table.score_index);
    let sink: Box<dyn std::io::Write> = match &args.out {
        Some(path) => Box::new(std::fs::File::create(path).map_err(|e| io(&e))?),
        None => Box::new(std::io::stdout().lock()),
    };
    let mut writer = csv::Writer::from_writer(sink);
    // A closed stdout (`tce recalibrate … | head`) ends the output quietly, as in
    // `crate::write_stdout`.
    let closed = |e: &csv::Error| matches!(e.kind(), csv::ErrorKind::Io(e) if e.kind() == std::io::ErrorKind::BrokenPipe);
    match writer.write_record(header) {
        Err(e) if closed(&e) => return Ok(()),
        result => result.map_err(|e| io(&e))?,
    }
    for (record, &score) in table.records.iter().zip(&table.samples.scores) {
        let recalibrated = map.apply(score).to_string();
        let row: Vec<&str> = record
            .iter()
            .enumerate()
            .map(|(i, field)| {
                if i == column {
                    recalibrated.as_str()
                } else {
                    field
                }
            })
            .collect();
        match writer.write_record(&row) {
            Err(e) if closed(&e) => return Ok(()),
            result => result.map_err(|e| io(&e))?,
        }
    }
    let mut sink = match writer.into_inner() {
        Err(e) if e.error().kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
        result => result.map_err(|e| io(&e.error()))?,
    };
    match sink.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(io(&e)),
        _ => {}
    }
    drop(sink);
    // The map: on stdout when the CSV went to a file, else on stderr beside the CSV.
    let report = if args.json {
        crate::json_line(&RecalibrateJson {
            tce_version: crate::VERSION,
            command: "recalibrate",
            settings: RecalibrateSettingsJson {
                method: args.method,
                fit: args.fit.display().to_string(),
                apply: args.apply.display().to_string(),
                out: args.out.as_ref().map(|p| p.display().to_string()),
                fit_columns: fit_rows.columns.clone(),
                apply_columns: table.samples.columns.clone(),
            },
            n_fit: fit_rows.scores.len(),
            n_apply: table.records.len(),
            map: map_json,
        })?
    } else {
        map_json.text()
    };
    if args.out.is_some() {
        crate::write_stdout(&report)
    } else {
        eprint!("{report}");
        Ok(())
    }
}

/// The index of `method` in [`Method::ALL`], the order of a summary's arrays.
fn method_index(method: Method) -> usize {
    Method::ALL
        .iter()
        .position(|m| *m == method)
        .expect("every method is in Method::ALL")
}

/// The table of one competition: a column per candidate method (only those in
/// `methods`), then one per estimator.
fn markdown(summaries: &[Summary], methods: &[Method]) -> String {
    let mut out = String::new();
    let _ = write!(out, "| setting | n cal/test | TCE % before |");
    for m in methods {
        let _ = write!(out, " mean TCE % {m} (best in %) |");
    }
    for e in Estimator::ALL {
        let _ = write!(out, " {} picks best % |", e.name());
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "|---|---|---:|{}",
        "---:|".repeat(methods.len() + Estimator::ALL.len())
    );
    for s in summaries {
        let _ = write!(
            out,
            "| {} | {}/{} | {:.2} |",
            s.name,
            s.sizes.0,
            s.sizes.1,
            100.0 * s.original_tce
        );
        for m in methods.iter().map(|&m| method_index(m)) {
            let _ = write!(
                out,
                " {:.2} ({}) |",
                100.0 * s.mean_tce[m],
                share_with_interval(s.tce_best[m], s.repetitions)
            );
        }
        for e in 0..Estimator::ALL.len() {
            let undefined = if s.undefined[e] > 0 {
                format!(" ({} undef.)", s.undefined[e])
            } else {
                String::new()
            };
            let _ = write!(
                out,
                " {}{undefined} |",
                share_with_interval(s.agreements[e], s.repetitions)
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// One cell for the paper's methods, "histogram / isotonic / temperature": each mean
/// formatted by `show`, "n/a" where no estimate was defined.
fn per_paper_method(means: &[Mean; 4], show: impl Fn(f64) -> String) -> String {
    PAPER_METHODS
        .iter()
        .map(|method| {
            let m = Method::ALL
                .iter()
                .position(|m| m == method)
                .expect("a paper method is a method");
            means[m].value().map_or_else(|| "n/a".into(), &show)
        })
        .collect::<Vec<_>>()
        .join(" / ")
}

/// Per setting and estimator, the mean estimate − exact TCE for the paper's methods, and
/// the EM sweeps' mean b*; a last row pools the settings' repetitions. The signed error
/// shows which methods an estimator under-reports, and so prefers.
fn signed_error_markdown(summaries: &[Summary]) -> String {
    let sweeps = [Estimator::EqualMassSweep, Estimator::EqualMassSweepTiesKept];
    let mut out = String::new();
    let _ = write!(out, "| setting |");
    for e in Estimator::ALL {
        let _ = write!(out, " {} |", e.name());
    }
    for e in sweeps {
        let _ = write!(out, " {} mean b* |", e.name());
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "|---|{}",
        "---:|".repeat(Estimator::ALL.len() + sweeps.len())
    );
    let pooled = summaries.iter().fold(
        (
            [[Mean::default(); ESTIMATORS]; 4],
            [[Mean::default(); ESTIMATORS]; 4],
        ),
        |(mut signed, mut bins), s| {
            for m in 0..4 {
                for e in 0..ESTIMATORS {
                    signed[m][e] = signed[m][e].merge(s.signed_error[m][e]);
                    bins[m][e] = bins[m][e].merge(s.sweep_bins[m][e]);
                }
            }
            (signed, bins)
        },
    );
    let total: usize = summaries.iter().map(|s| s.repetitions).sum();
    let pooled_name = format!("pooled ({total} repetitions)");
    let rows = summaries
        .iter()
        .map(|s| (s.name.as_str(), &s.signed_error, &s.sweep_bins))
        .chain([(pooled_name.as_str(), &pooled.0, &pooled.1)]);
    for (name, signed, bins) in rows {
        let _ = write!(out, "| {name} |");
        for e in 0..ESTIMATORS {
            let means = signed.map(|per_estimator| per_estimator[e]);
            let cell = per_paper_method(&means, |v| format!("{:+.2}", 100.0 * v));
            let _ = write!(out, " {cell} |");
        }
        for e in sweeps {
            let e = Estimator::ALL
                .iter()
                .position(|x| *x == e)
                .expect("a sweep is an estimator");
            let means = bins.map(|per_estimator| per_estimator[e]);
            let cell = per_paper_method(&means, |v| format!("{v:.1}"));
            let _ = write!(out, " {cell} |");
        }
        let _ = writeln!(out);
    }
    out
}

/// A failed Table 1 run: repetitions or sizes out of range, and memory the allocator
/// refuses for them, are the options' doing (exit 2; `reps_option` names the option of
/// the repetitions); a method that cannot be fitted or a TCE that fails is not (exit 1).
pub fn table1_failure(error: &Table1Error, reps_option: &str) -> Failure {
    match error {
        Table1Error::RepetitionsOutOfRange(_) => Failure::input(format!("{reps_option}: {error}")),
        Table1Error::SizeOutOfRange { set, .. } => {
            let option = match set {
                Set::Calibration => "--calibration",
                Set::Test => "--test",
            };
            Failure::input(format!("{option}: {error}"))
        }
        Table1Error::OutOfMemory { .. } => Failure::input(error.to_string()),
        Table1Error::Recalibrate { .. } | Table1Error::Tce(_) => failure(1)(error.to_string()),
    }
}

/// The library's checks of a Table 1 run ([`tce::recalibrate::table1::check`]: the
/// repetitions, the sizes of every setting and the memory they need), before any input
/// is read or any work done.
pub fn check_table1(args: &Table1Args, reps_option: &str) -> Result<(), Failure> {
    let sizes = if args.paper_sizes {
        vec![PAPER_CIFAR_SIZES, PAPER_IMAGENET_SIZES]
    } else {
        vec![(args.calibration, args.test)]
    };
    for (calibration, test) in sizes {
        tce::recalibrate::table1::check(calibration, test, args.reps)
            .map_err(|e| table1_failure(&e, reps_option))?;
    }
    Ok(())
}

/// Runs `tce table1`: the paper's simulator settings, then one per data file.
pub fn run_table1(args: &Table1Args) -> Result<(), Failure> {
    check_table1(args, "--reps")?;
    crate::write_stdout(&table1_markdown(args)?)
}

/// The Table 1 experiment as markdown: the tables `tce table1` prints and `tce paper`
/// writes to table1.md.
pub fn table1_markdown(args: &Table1Args) -> Result<String, Failure> {
    let sizes = |name: &str| {
        if args.paper_sizes {
            paper_sizes_for(name)
        } else {
            (args.calibration, args.test)
        }
    };
    let paper = |alpha: f64, beta: f64| {
        Model::new(
            Beta::new(alpha, beta).expect("valid"),
            Curve::polynomial(2.0).expect("valid"),
        )
    };
    let mut settings = vec![
        Setting {
            name: "Beta(1.1, 0.1), T = c^2".into(),
            model: paper(1.1, 0.1),
            calibration: sizes("simulator").0,
            test: sizes("simulator").1,
        },
        Setting {
            name: "Beta(2.8, 0.05), T = c^2".into(),
            model: paper(2.8, 0.05),
            calibration: sizes("simulator").0,
            test: sizes("simulator").1,
        },
    ];
    for path in &args.files {
        let rows = crate::read_samples(path, &args.columns)?;
        let fit = fit_samples(
            &rows.scores,
            &rows.labels,
            &EndpointRule::default(),
            args.point_mass,
        )
        .map_err(|e| fit_failure(path, &e))?;
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into(),
        );
        let (calibration, test) = sizes(&name);
        // With atoms, the name says their weights and where their accuracy came from.
        let atoms = fit
            .saturation
            .as_ref()
            .map_or_else(String::new, |saturation| {
                let [pi_0, pi_1] = saturation.point_masses.weights();
                format!(
                    "; pi_0 = {pi_0:.4}, pi_1 = {pi_1:.4}, atom accuracy {}",
                    chosen_name(saturation)
                )
            });
        settings.push(Setting {
            name: format!("fit of {name} ({}{atoms})", fit.best_glm().spec.name()),
            model: fit.model,
            calibration,
            test,
        });
    }
    let mut paper = Vec::new();
    let mut all = Vec::new();
    for setting in &settings {
        let outcomes =
            run(setting, args.reps, args.seed).map_err(|e| table1_failure(&e, "--reps"))?;
        let summary = |methods: &[Method]| {
            summarize(setting, &outcomes, methods).map_err(|e| table1_failure(&e, "--reps"))
        };
        paper.push(summary(&PAPER_METHODS)?);
        all.push(summary(&Method::ALL)?);
        eprintln!("tce table1: {} done", setting.name);
    }
    let mut text = String::new();
    for (title, summaries, methods) in [
        (
            "The paper's methods (histogram binning, isotonic, temperature scaling)",
            &paper,
            &PAPER_METHODS[..],
        ),
        (
            "All four methods (with Platt scaling)",
            &all,
            &Method::ALL[..],
        ),
    ] {
        let _ = writeln!(text, "### {title}\n");
        text.push_str(&markdown(summaries, methods));
        let total: usize = summaries.iter().map(|s| s.repetitions).sum();
        let _ = writeln!(text);
        let _ = write!(
            text,
            "Pooled over all {} settings ({total} repetitions):",
            summaries.len()
        );
        for (e, estimator) in Estimator::ALL.iter().enumerate() {
            let agreements: usize = summaries.iter().map(|s| s.agreements[e]).sum();
            let _ = write!(
                text,
                " {} {} %;",
                estimator.name(),
                share_with_interval(agreements, total)
            );
        }
        let _ = writeln!(text, "\n");
        if methods == PAPER_METHODS {
            // The paper's own count, for comparison: over its 10 settings EM ECE_sweep
            // picked the best of these methods 7 times and EW ECE_bin 3 times.
            let _ = writeln!(
                text,
                "The paper's Table 1 (Roelofs et al. 2022, 10 settings): EM ECE_sweep picks \
                 best {} %, EW ECE_bin {} % (7 and 3 of 10, 95 % Wilson intervals).\n",
                share_with_interval(7, 10),
                share_with_interval(3, 10)
            );
        }
    }
    let _ = writeln!(
        text,
        "### Signed error: mean of estimate − exact TCE, in % (histogram / isotonic / temperature)\n"
    );
    let _ = writeln!(
        text,
        "Negative: the estimator under-reports that method's TCE_2 (same scale as \"mean \
         TCE %\"). The last two columns are the EM sweeps' mean b*, in the same order; with \
         ties kept, bins past the number of distinct scores can be empty, so b* can exceed \
         the number of bins that hold samples.\n"
    );
    text.push_str(&signed_error_markdown(&paper));
    Ok(text)
}
