//! `tce recalibrate`: fit a recalibration map on one file and write another file's rows
//! recalibrated (`--method`), or compare several methods on held-out rows of one input
//! (`--methods`, the library's [`tce::recalibrate::choose`]); `tce table1`: the Table 1
//! experiment.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use serde::Serialize;
use tce::binning::equal_width_edges;
use tce::decision::Statistic;
use tce::fit::flexible::FlexibleFitError;
use tce::fit::EndpointRule;
use tce::recalibrate::choose::{choose, ChooseError, ChooseSettings, DEFAULT_HOLDOUT};
use tce::recalibrate::logistic::temperature_of;
use tce::recalibrate::multiclass::{ClassTable, MulticlassMap};
use tce::recalibrate::table1::{
    check_repetitions, run, summarize, wilson_interval, Estimator, Mean, Set, Setting, Summary,
    Table1Error, ESTIMATORS, PAPER_METHODS,
};
use tce::recalibrate::table1_real::{self, RealFile, Split, Table1RealError, Truth};
use tce::recalibrate::{
    Fitted, Method, Outputs, Pieces, PiecewiseConstant, RecalibrateError, Recalibrated,
    Recalibration, RecalibrationMap, TopLabels,
};
use tce::report::json::Source;
use tce::sim::{Beta, Curve, Model};

use crate::fit::{chosen_name, fit_failure, fit_samples, PointMassArg};
use crate::input;
use crate::{parse_bins, parse_norm, ColumnArgs, Failure, InputArgs};

fn parse_method(text: &str) -> Result<Recalibration, String> {
    text.parse()
        .map_err(|e: tce::recalibrate::ParseRecalibrationError| e.to_string())
}

/// `--methods`: a list, or every method that fits the input.
#[derive(Clone, Debug)]
pub enum MethodsArg {
    All,
    List(Vec<Recalibration>),
}

fn parse_methods(text: &str) -> Result<MethodsArg, String> {
    if text == "all" {
        return Ok(MethodsArg::All);
    }
    text.split(',')
        .map(|m| parse_method(m.trim()))
        .collect::<Result<_, _>>()
        .map(MethodsArg::List)
}

/// Options of `tce recalibrate`.
#[derive(Args)]
pub struct RecalibrateArgs {
    /// The method, fitted on --fit and applied to --apply. On the top-label confidence
    /// (any input): `histogram` (15 equal-width bins), `isotonic`, `platt`,
    /// `top-label-temperature` (σ(logit(c)/T): one logit, the confidence's). On rows of
    /// class probabilities or logits (--prob-cols, or .npy N×K): `temperature` (Guo et
    /// al.'s: softmax(z/T), one T for all logits, fitted by the NLL of the true class;
    /// log-probabilities as logits), `histogram-ovr`, `isotonic-ovr` (one map per class
    /// on (p_k, 1[y = k]), each row renormalised).
    #[arg(long, value_name = "NAME", value_parser = parse_method,
          required_unless_present = "methods", conflicts_with = "methods",
          requires_all = ["fit", "apply"])]
    method: Option<Recalibration>,
    /// Compare several methods (comma-separated names of --method, or `all`: every
    /// method the input allows) on one input (--data): each fitted on a random part,
    /// applied to the held-out rest, and compared by `tce compare`'s paired test with the
    /// uncalibrated held-out outputs and with the best other method.
    #[arg(long, value_name = "LIST|all", value_parser = parse_methods, requires = "data",
          conflicts_with_all = ["fit", "apply", "out", "fit_labels", "apply_labels"])]
    methods: Option<MethodsArg>,
    /// File to fit the map on (a CSV, `confidence`/`correct` or class columns with
    /// --prob-cols; or a .npy array with --fit-labels).
    #[arg(long, value_name = "A")]
    fit: Option<PathBuf>,
    /// File whose outputs are recalibrated, in the same form. (confidence, correct)
    /// CSV rows are written with their other columns copied; class outputs with a
    /// multiclass method are written as the recalibrated probabilities (the class columns
    /// and the label column); class outputs with a top-label method as (confidence,
    /// correct) rows.
    #[arg(long, value_name = "B")]
    apply: Option<PathBuf>,
    /// The input of --methods, in any form --fit takes (a .npy array with --labels).
    #[arg(long, value_name = "FILE", requires = "methods")]
    data: Option<PathBuf>,
    /// Output file (default: stdout). With --out the fitted map is printed on stdout,
    /// without it on stderr.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// With --method: print the fitted map and the settings as one JSON object (needs
    /// --out, since stdout would otherwise carry the CSV). With --methods: print the
    /// comparison as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    columns: ColumnArgs,
    /// CSV of class outputs: the class columns, as a list or a glob, as in `tce estimate`.
    #[arg(long, value_name = "LIST|GLOB")]
    prob_cols: Option<String>,
    /// The class columns (or the .npy arrays) hold logits, not probabilities.
    #[arg(long)]
    logits: bool,
    /// The labels of a .npy --fit array.
    #[arg(long, value_name = "FILE")]
    fit_labels: Option<PathBuf>,
    /// The labels of a .npy --apply array.
    #[arg(long, value_name = "FILE")]
    apply_labels: Option<PathBuf>,
    /// The labels of a .npy --data array.
    #[arg(long, value_name = "FILE", requires = "data")]
    labels: Option<PathBuf>,
    /// With --methods: the fraction of rows held out (at random) to compare the methods
    /// on; the rest fits them.
    #[arg(long, value_name = "FRACTION", default_value_t = DEFAULT_HOLDOUT)]
    holdout: f64,
    /// With --methods: seed of the split and of the resamples.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// With --methods: the estimator whose difference Delta = CE_method - CE_other is
    /// compared, as in `tce compare`.
    #[arg(long, alias = "estimator", value_name = "NAME",
          default_value = "ece_sweep:equal_mass", value_parser = crate::compare::parse_statistic)]
    statistic: Statistic,
    /// With --methods: the level (a (1 - alpha) interval; Delta = 0 rejected when
    /// p <= alpha).
    #[arg(long, default_value_t = tce::decision::DEFAULT_ALPHA)]
    alpha: f64,
    /// With --methods: paired bootstrap resamples (1 to 100000,
    /// tce::decision::MAX_RESAMPLES).
    #[arg(long, value_name = "B", default_value_t = tce::decision::DEFAULT_RESAMPLES)]
    resamples: usize,
    /// With --methods: bins of ECE_bin, ECE_debias and MCE.
    #[arg(long, default_value_t = 15, value_parser = parse_bins)]
    bins: usize,
    /// With --methods: exponent p of the binned estimators.
    #[arg(long, value_name = "P", default_value = "2", value_parser = parse_norm)]
    norm: tce::Norm,
    /// With --methods: cap on the sweep's number of bins b*.
    #[arg(long, value_name = "N", value_parser = parse_bins)]
    max_bins: Option<usize>,
    /// With --methods: let the sweep try at most n - 1 bins, as the paper's code does.
    #[arg(long)]
    paper_limit: bool,
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
    /// Which table: by construction (data simulated from the paper's models and each
    /// file's fitted model, with the exact TCE), on real splits of the files (the truth
    /// from flexible-model fits; docs/fit/table1_real.md), or both.
    #[arg(long, value_enum, default_value_t = Table1Mode::Construction)]
    pub mode: Table1Mode,
    /// Random splits of each file per split size, in the real-data table (1 to 100000,
    /// tce::recalibrate::table1::MAX_REPETITIONS): random halves, and the sizes of
    /// --calibration/--test or --paper-sizes where the file has the rows.
    #[arg(long, default_value_t = 20)]
    pub splits: usize,
    /// Point masses at scores of exactly 0 and 1 in the fits of the files (as in
    /// `tce fit --point-mass`); the paper's two simulator settings stay pure Beta.
    #[arg(long, value_enum, default_value_t = PointMassArg::None)]
    pub point_mass: PointMassArg,
    #[command(flatten)]
    pub columns: ColumnArgs,
}

/// The tables `tce table1` makes.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Table1Mode {
    /// By construction: simulated data sets with the exact TCE.
    Construction,
    /// Real splits of the files.
    Real,
    /// Both, the by-construction table first.
    Both,
}

impl Table1Mode {
    fn construction(self) -> bool {
        matches!(self, Table1Mode::Construction | Table1Mode::Both)
    }

    fn real(self) -> bool {
        matches!(self, Table1Mode::Real | Table1Mode::Both)
    }
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

/// One class's one-vs-rest map in the JSON.
#[derive(Serialize)]
#[serde(untagged)]
enum ClassMapJson {
    Histogram {
        bins: usize,
        edges: Vec<f64>,
        values: Vec<f64>,
    },
    Isotonic {
        starts: Vec<f64>,
        values: Vec<f64>,
    },
}

impl ClassMapJson {
    fn new(map: &PiecewiseConstant) -> ClassMapJson {
        match &map.pieces {
            Pieces::EqualWidth { bins } => ClassMapJson::Histogram {
                bins: *bins,
                edges: (0..*bins)
                    .map(|k| equal_width_edges(k, *bins).0)
                    .chain([1.0])
                    .collect(),
                values: map.values.clone(),
            },
            Pieces::Starts(starts) => ClassMapJson::Isotonic {
                starts: starts.clone(),
                values: map.values.clone(),
            },
        }
    }

    /// Lower bounds and values of the pieces.
    fn pieces(&self) -> (&[f64], &[f64]) {
        match self {
            ClassMapJson::Histogram { edges, values, .. } => (edges, values),
            ClassMapJson::Isotonic { starts, values } => (starts, values),
        }
    }
}

/// A fitted map, as the JSON of `tce recalibrate` gives it.
/// Its `method` is the method's name on the command line.
#[derive(Serialize)]
#[serde(tag = "method", rename_all = "kebab-case")]
enum MapJson {
    /// g(c) = σ(logit(c) / T) of the top-label confidence.
    TopLabelTemperature { temperature: f64, b: f64 },
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
    /// softmax(z / T) of each row of logits (log-probabilities).
    Temperature { temperature: f64 },
    /// Class k's histogram map of p_k (as `histogram`); rows renormalised.
    HistogramOvr { classes: Vec<ClassMapJson> },
    /// Class k's isotonic map of p_k (as `isotonic`); rows renormalised.
    IsotonicOvr { classes: Vec<ClassMapJson> },
}

impl MapJson {
    fn new(fitted: &Fitted) -> MapJson {
        match fitted {
            Fitted::TopLabel(method, RecalibrationMap::Monotone(curve)) => {
                let params = curve.params();
                let (a, b) = (params.a.unwrap_or(0.0), params.b.unwrap_or(f64::NAN));
                if *method == Method::Temperature {
                    MapJson::TopLabelTemperature {
                        temperature: temperature_of(curve),
                        b,
                    }
                } else {
                    MapJson::Platt { a, b }
                }
            }
            Fitted::TopLabel(_, RecalibrationMap::Piecewise(map)) => match ClassMapJson::new(map) {
                ClassMapJson::Histogram {
                    bins,
                    edges,
                    values,
                } => MapJson::Histogram {
                    bins,
                    edges,
                    values,
                },
                ClassMapJson::Isotonic { starts, values } => MapJson::Isotonic { starts, values },
            },
            Fitted::Multiclass(_, MulticlassMap::Temperature(t)) => MapJson::Temperature {
                temperature: t.temperature,
            },
            Fitted::Multiclass(_, MulticlassMap::OneVsRest(maps)) => {
                let classes = maps.iter().map(ClassMapJson::new).collect();
                match maps.first().map(|m| &m.pieces) {
                    Some(Pieces::EqualWidth { .. }) => MapJson::HistogramOvr { classes },
                    _ => MapJson::IsotonicOvr { classes },
                }
            }
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
            MapJson::TopLabelTemperature { temperature, b } => {
                let _ = writeln!(
                    out,
                    "top-label temperature scaling: g(c) = σ(logit(c) / T), T = {temperature:.6} (1/T = {b:.6})"
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
            MapJson::Temperature { temperature } => {
                let _ = writeln!(
                    out,
                    "temperature scaling (multiclass): softmax(z / T) of each row, T = {temperature:.6}"
                );
            }
            MapJson::HistogramOvr { classes } | MapJson::IsotonicOvr { classes } => {
                let what = if matches!(self, MapJson::HistogramOvr { .. }) {
                    "histogram binning"
                } else {
                    "isotonic regression"
                };
                let _ = writeln!(
                    out,
                    "{what} one-vs-rest: one map of p_k per class ({} classes), each row \
                     renormalised to sum to 1 (a row whose maps all give 0 keeps its \
                     probabilities):",
                    classes.len()
                );
                for (k, class) in classes.iter().enumerate() {
                    let _ = writeln!(out, "class {k}:");
                    let (lower, values) = class.pieces();
                    pieces(&mut out, lower, values);
                }
            }
        }
        out
    }
}

/// The settings of `tce recalibrate`, in its JSON.
#[derive(Serialize)]
struct RecalibrateSettingsJson {
    method: &'static str,
    fit: String,
    apply: String,
    out: Option<String>,
    fit_columns: Option<input::ReadColumns>,
    apply_columns: Option<input::ReadColumns>,
    fit_input: input::Provenance,
    apply_input: input::Provenance,
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
    /// Rows whose one-vs-rest maps all gave 0 and kept their probabilities.
    #[serde(skip_serializing_if = "Option::is_none")]
    kept_rows: Option<usize>,
    map: MapJson,
}

/// A map that could not be fitted on the rows of `path` (or applied to them): data that
/// admit no map are bad input (exit 2), a fit that did not converge is not (exit 1).
fn map_failure(path: &Path, error: &RecalibrateError) -> Failure {
    let message = format!("{}: {error}", path.display());
    match error {
        RecalibrateError::NotConverged => Failure::internal(message),
        _ => Failure::input(message),
    }
}

impl RecalibrateArgs {
    /// Reads one input in any form, class outputs kept whole.
    fn load(
        &self,
        file: &Path,
        labels: &Option<PathBuf>,
    ) -> Result<(Outputs, input::Provenance), Failure> {
        let input_args = InputArgs {
            file: file.to_owned(),
            columns: self.columns.clone(),
            prob_cols: self.prob_cols.clone(),
            logits: self.logits,
            labels: labels.clone(),
            classwise: false,
        };
        let mut spec = input_args.spec()?;
        spec.reduction = input::Reduction::Rows;
        let loaded = input_args.load_spec(&spec)?;
        let outputs = match loaded.data {
            input::Data::TopLabel { scores, labels } => {
                Outputs::TopLabel(TopLabels { scores, labels })
            }
            input::Data::Rows {
                values,
                classes,
                truth,
            } => Outputs::Classes(
                // The input layer checked every row by the same rule.
                ClassTable::new(values, classes, truth, self.logits)
                    .map_err(|e| Failure::input(format!("{}: {e}", file.display())))?,
            ),
            input::Data::Classwise(_) => unreachable!("rows were asked for"),
        };
        Ok((outputs, loaded.provenance))
    }

    /// Whether the inputs are (confidence, correct) CSVs, whose other columns are copied.
    fn confidence_csv(&self, file: &Path) -> bool {
        self.prob_cols.is_none()
            && !file
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
    }
}

/// Runs `tce recalibrate`.
pub fn run_recalibrate(args: &RecalibrateArgs) -> Result<(), Failure> {
    match (
        args.method,
        &args.methods,
        &args.fit,
        &args.apply,
        &args.data,
    ) {
        (Some(method), None, Some(fit), Some(apply), _) => run_one(args, method, fit, apply),
        (None, Some(methods), _, _, Some(data)) => run_choose(args, methods, data),
        _ => {
            unreachable!("clap requires --method with --fit and --apply, or --methods with --data")
        }
    }
}

/// A CSV writer on `--out` or stdout. A closed stdout (`tce recalibrate … | head`)
/// ends the output quietly, as in `crate::write_stdout`: the writer stops writing and
/// [`CsvOut::finish`] says so, and nothing more is printed.
struct CsvOut {
    writer: csv::Writer<Box<dyn std::io::Write>>,
    closed: bool,
}

fn broken_pipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

impl CsvOut {
    fn new(out: &Option<PathBuf>) -> Result<CsvOut, Failure> {
        let sink: Box<dyn std::io::Write> = match out {
            Some(path) => Box::new(
                std::fs::File::create(path)
                    .map_err(|e| Failure::internal(format!("{}: {e}", path.display())))?,
            ),
            None => Box::new(std::io::stdout().lock()),
        };
        Ok(CsvOut {
            writer: csv::Writer::from_writer(sink),
            closed: false,
        })
    }

    /// Writes a record (nothing once stdout is closed).
    fn record<I, T>(&mut self, record: I) -> Result<(), Failure>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        if self.closed {
            return Ok(());
        }
        match self.writer.write_record(record) {
            Err(e) if matches!(e.kind(), csv::ErrorKind::Io(e) if broken_pipe(e)) => {
                self.closed = true;
                Ok(())
            }
            result => result.map_err(|e| Failure::internal(e.to_string())),
        }
    }

    /// Flushes; `Ok(true)` when stdout was closed.
    fn finish(self) -> Result<bool, Failure> {
        if self.closed {
            return Ok(true);
        }
        let mut sink = match self.writer.into_inner() {
            Err(e) if broken_pipe(e.error()) => return Ok(true),
            result => result.map_err(|e| Failure::internal(e.error().to_string()))?,
        };
        match sink.flush() {
            Err(e) if broken_pipe(&e) => Ok(true),
            Err(e) => Err(Failure::internal(e.to_string())),
            Ok(()) => Ok(false),
        }
    }
}

/// `--method`: fit on A, write B recalibrated, print the map.
fn run_one(
    args: &RecalibrateArgs,
    method: Recalibration,
    fit: &Path,
    apply: &Path,
) -> Result<(), Failure> {
    if args.json && args.out.is_none() {
        return Err(Failure::input(
            "--json with --method needs --out: stdout carries the recalibrated CSV",
        ));
    }
    let (fit_outputs, fit_input) = args.load(fit, &args.fit_labels)?;
    // Every row of B is read and validated (with line numbers) before anything is written.
    let copy_columns = args.confidence_csv(apply);
    let table = if copy_columns {
        Some(
            input::read_table(apply, args.columns.names()).map_err(|e| Failure {
                code: e.exit_code(),
                message: format!("{}: {e}", apply.display()),
            })?,
        )
    } else {
        None
    };
    let (apply_outputs, apply_input) = match &table {
        Some(table) => (
            Outputs::TopLabel(TopLabels {
                scores: table.samples.scores.clone(),
                labels: table.samples.labels.clone(),
            }),
            input::Provenance {
                format: "csv",
                values: input::Values::Confidences,
                reduction: input::Reduction::TopLabel,
                rows: table.records.len(),
                classes: None,
                columns: Some(input::ReadColumns::Binary(table.samples.columns.clone())),
                prob_cols: None,
                labels_file: None,
                dtypes: None,
            },
        ),
        None => args.load(apply, &args.apply_labels)?,
    };
    let fitted = method.fit(&fit_outputs).map_err(|e| map_failure(fit, &e))?;
    let recalibrated = fitted
        .apply(&apply_outputs)
        .map_err(|e| map_failure(apply, &e))?;
    let map_json = MapJson::new(&fitted);
    let mut out = CsvOut::new(&args.out)?;
    let mut kept_rows = None;
    let written = match (&table, &recalibrated) {
        // (confidence, correct) CSV rows: the confidence replaced, other columns copied.
        (Some(table), Recalibrated::TopLabel(top)) => {
            let column = table.score_index;
            out.record(&table.header)?;
            for (record, &score) in table.records.iter().zip(&top.scores) {
                let recalibrated = score.to_string();
                out.record(record.iter().enumerate().map(|(i, field)| {
                    if i == column {
                        recalibrated.as_str()
                    } else {
                        field
                    }
                }))?;
            }
            table.records.len()
        }
        // Class outputs, a top-label method: (confidence, correct) rows.
        (None, Recalibrated::TopLabel(top)) => {
            out.record(["confidence", "correct"])?;
            for (score, label) in top.scores.iter().zip(&top.labels) {
                out.record([score.to_string(), label.to_string()])?;
            }
            top.scores.len()
        }
        // Class outputs, a multiclass method: the recalibrated probabilities.
        (_, Recalibrated::Classes(applied)) => {
            kept_rows = Some(applied.kept);
            let t = &applied.table;
            let (names, label) = class_header(&apply_input, t.classes());
            out.record(names.iter().chain([&label]))?;
            for i in 0..t.rows() {
                out.record(
                    t.row(i)
                        .iter()
                        .map(f64::to_string)
                        .chain([t.true_classes()[i].to_string()]),
                )?;
            }
            t.rows()
        }
    };
    if out.finish()? {
        return Ok(());
    }
    // The map: on stdout when the CSV went to a file, else on stderr beside the CSV.
    let report = if args.json {
        crate::json_line(&RecalibrateJson {
            tce_version: crate::VERSION,
            command: "recalibrate",
            settings: RecalibrateSettingsJson {
                method: method.name(),
                fit: fit.display().to_string(),
                apply: apply.display().to_string(),
                out: args.out.as_ref().map(|p| p.display().to_string()),
                fit_columns: fit_input.columns.clone(),
                apply_columns: apply_input.columns.clone(),
                fit_input,
                apply_input,
            },
            n_fit: fit_outputs.rows(),
            n_apply: written,
            kept_rows,
            map: map_json,
        })?
    } else {
        let mut text = map_json.text();
        if let Some(kept) = kept_rows.filter(|&k| k > 0) {
            let _ = writeln!(
                text,
                "{kept} row(s) of {} had every map at 0 and kept their probabilities",
                apply.display()
            );
        }
        text
    };
    if args.out.is_some() {
        crate::write_stdout(&report)
    } else {
        eprint!("{report}");
        Ok(())
    }
}

/// The header of recalibrated probabilities: the class columns and the label column
/// of a CSV, or `class_0`, …, `class_{K-1}` and `label` for arrays.
fn class_header(provenance: &input::Provenance, classes: usize) -> (Vec<String>, String) {
    match &provenance.columns {
        Some(input::ReadColumns::Classes { probs, label }) => (probs.clone(), label.clone()),
        _ => (
            (0..classes).map(|k| format!("class_{k}")).collect(),
            "label".to_owned(),
        ),
    }
}

fn choose_failure(e: ChooseError) -> Failure {
    match e {
        ChooseError::NoMethods | ChooseError::DuplicateMethod(_) => {
            Failure::input(format!("--methods: {e}"))
        }
        ChooseError::InvalidHoldout(_) => Failure::input(format!("--holdout: {e}")),
        ChooseError::Settings(e) => crate::compare::failure(e),
        ChooseError::Recalibrate {
            error: RecalibrateError::NotConverged,
            ..
        } => Failure::internal(e.to_string()),
        _ => Failure::input(e.to_string()),
    }
}

/// `--methods`: fit each on a random part of one input, compare on the rest.
fn run_choose(args: &RecalibrateArgs, methods: &MethodsArg, data: &Path) -> Result<(), Failure> {
    let settings = |methods: Vec<Recalibration>| ChooseSettings {
        methods,
        holdout: args.holdout,
        compare: tce::decision::compare::CompareSettings {
            statistic: args.statistic,
            resamples: args.resamples,
            alpha: args.alpha,
            seed: args.seed,
            bins: args.bins,
            norm: args.norm,
            sweep: crate::sweep_options(args.max_bins, args.paper_limit),
        },
    };
    // The settings are checked before the input is read (`all` with a placeholder list).
    let listed = match methods {
        MethodsArg::List(list) => list.clone(),
        MethodsArg::All => Recalibration::ALL.to_vec(),
    };
    settings(listed.clone()).check().map_err(choose_failure)?;
    let (outputs, provenance) = args.load(data, &args.labels)?;
    let methods = match methods {
        MethodsArg::List(_) => listed,
        MethodsArg::All => Recalibration::allowed(&outputs),
    };
    let choice = choose(&outputs, &settings(methods)).map_err(choose_failure)?;
    let file = data.display().to_string();
    crate::write_stdout(&if args.json {
        tce::recalibrate::choose::json::json(
            &Source {
                file: file.clone(),
                input: provenance,
            },
            &choice,
        ) + "\n"
    } else {
        tce::recalibrate::choose::text::summary(&file, &choice)
    })
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
    if args.mode.real() {
        check_repetitions(args.splits).map_err(|e| table1_failure(&e, "--splits"))?;
        if args.files.is_empty() {
            return Err(Failure::input(
                "--mode real and --mode both split data files: give at least one",
            ));
        }
    }
    Ok(())
}

/// Runs `tce table1`: the paper's simulator settings, then one per data file.
pub fn run_table1(args: &Table1Args) -> Result<(), Failure> {
    check_table1(args, "--reps")?;
    crate::write_stdout(&table1_markdown(args)?)
}

/// The Table 1 experiment as markdown: the tables `tce table1` prints (by construction,
/// on real splits, or both, as `--mode` says).
pub fn table1_markdown(args: &Table1Args) -> Result<String, Failure> {
    let mut text = String::new();
    if args.mode.construction() {
        text.push_str(&construction_markdown(args)?);
    }
    if args.mode.real() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&real_markdown(args)?);
    }
    Ok(text)
}

/// The paper's own count, for comparison: over its 10 settings EM ECE_sweep picked the
/// best of its three methods 7 times and EW ECE_bin 3 times.
fn paper_count() -> String {
    format!(
        "The paper's Table 1 (Roelofs et al. 2022, 10 settings): EM ECE_sweep picks \
         best {} %, EW ECE_bin {} % (7 and 3 of 10, 95 % Wilson intervals).",
        share_with_interval(7, 10),
        share_with_interval(3, 10)
    )
}

/// "Pooled over all {count} {what} ({total} {units}): EW ECE_bin 57.3 [56.2, 58.3] %; …;"
fn pooled_line(summaries: &[Summary], what: &str, units: &str) -> String {
    let total: usize = summaries.iter().map(|s| s.repetitions).sum();
    let mut line = format!(
        "Pooled over all {} {what} ({total} {units}):",
        summaries.len()
    );
    for (e, estimator) in Estimator::ALL.iter().enumerate() {
        let agreements: usize = summaries.iter().map(|s| s.agreements[e]).sum();
        let _ = write!(
            line,
            " {} {} %;",
            estimator.name(),
            share_with_interval(agreements, total)
        );
    }
    line
}

/// The by-construction tables: the paper's simulator settings, then one per data file.
fn construction_markdown(args: &Table1Args) -> Result<String, Failure> {
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
        let _ = writeln!(
            text,
            "\n{}\n",
            pooled_line(summaries, "settings", "repetitions")
        );
        if methods == PAPER_METHODS {
            let _ = writeln!(text, "{}\n", paper_count());
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

/// A real-data run failed: a split count out of range is the option's doing, a file too
/// small for a split or whose rows admit no model is the input's (exit 2); a map that
/// cannot be fitted or a TCE that fails is not (exit 1).
fn real_failure(path: &Path, error: &Table1RealError) -> Failure {
    let message = format!("{}: {error}", path.display());
    match error {
        Table1RealError::Table1(e) => table1_failure(e, "--splits"),
        Table1RealError::FileFit(FlexibleFitError::Tce(_)) => Failure::internal(message),
        Table1RealError::TooFewRows { .. } | Table1RealError::FileFit(_) => Failure::input(message),
    }
}

/// The real-data tables: per split design (random halves, then the sized splits) and
/// truth, the paper's methods per file and pooled, then all four methods pooled; last,
/// the signed errors under the whole-file model's truth.
fn real_markdown(args: &Table1Args) -> Result<String, Failure> {
    let mut files = Vec::new();
    for path in &args.files {
        let rows = crate::read_samples(path, &args.columns)?;
        let name = path.file_stem().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into(),
        );
        let file =
            RealFile::new(name, rows.scores, rows.labels).map_err(|e| real_failure(path, &e))?;
        files.push((path, file));
    }
    let sized = |name: &str| {
        let (calibration, test) = if args.paper_sizes {
            paper_sizes_for(name)
        } else {
            (args.calibration, args.test)
        };
        Split::Sizes { calibration, test }
    };
    let mut text = format!(
        "## Table 1 on real splits ({} splits per file and split size, seed {})\n\n",
        args.splits, args.seed
    );
    let _ = writeln!(text, "{}\n", paper_count());
    let mut signed = Vec::new();
    for design in ["Random halves", "sized"] {
        // Per truth: the paper's methods' and all four methods' summaries.
        let mut by_truth = [(Vec::new(), Vec::new()), (Vec::new(), Vec::new())];
        let mut notes = Vec::new();
        let mut heading = String::from(design);
        for (path, file) in &files {
            let split = if design == "Random halves" {
                Split::Halves
            } else {
                sized(&file.name)
            };
            if let Split::Sizes { calibration, test } = split {
                heading = if args.paper_sizes {
                    "the paper's sizes".into()
                } else {
                    format!("{calibration}/{test}")
                };
            }
            if let Err(e @ Table1RealError::TooFewRows { .. }) = split.sizes(file.scores.len()) {
                notes.push(format!("{} is left out: {e}.", file.name));
                continue;
            }
            let outcomes = table1_real::run(file, split, args.splits, args.seed)
                .map_err(|e| real_failure(path, &e))?;
            for (t, truth) in Truth::ALL.into_iter().enumerate() {
                for (methods, into) in [
                    (&PAPER_METHODS[..], &mut by_truth[t].0),
                    (&Method::ALL[..], &mut by_truth[t].1),
                ] {
                    let (mut summary, left_out) =
                        table1_real::summarize(file, split, &outcomes, truth, methods)
                            .map_err(|e| real_failure(path, &e))?;
                    let mut notes = Vec::new();
                    if left_out > 0 {
                        notes.push(format!(
                            "{left_out} of {} splits without this truth",
                            args.splits
                        ));
                    }
                    if summary.tied > 0 {
                        notes.push(format!("{} with a tied best", summary.tied));
                    }
                    if !notes.is_empty() {
                        summary.name = format!("{} ({})", summary.name, notes.join("; "));
                    }
                    if summary.repetitions > 0 {
                        into.push(summary);
                    }
                }
            }
            eprintln!("tce table1: {} ({split}) done", file.name);
        }
        for (t, truth) in Truth::ALL.into_iter().enumerate() {
            let (paper, all) = &by_truth[t];
            let label = ["a", "b"][t];
            let _ = writeln!(
                text,
                "### {heading}, truth ({label}): {}\n",
                truth.describe()
            );
            for note in &notes {
                let _ = writeln!(text, "{note}\n");
            }
            if paper.is_empty() {
                continue;
            }
            text.push_str(&markdown(paper, &PAPER_METHODS));
            let _ = writeln!(text, "\n{}\n", pooled_line(paper, "files", "splits"));
            let _ = writeln!(
                text,
                "All four methods (with Platt scaling): {}\n",
                pooled_line(all, "files", "splits")
            );
        }
        signed.push((heading, by_truth[1].0.clone()));
    }
    for (heading, summaries) in signed.iter().filter(|(_, s)| !s.is_empty()) {
        let _ = writeln!(
            text,
            "### Signed error, {heading}, truth (b): mean of estimate − truth (b), in % \
             (histogram / isotonic / temperature)\n"
        );
        text.push_str(&signed_error_markdown(summaries));
        text.push('\n');
    }
    Ok(text)
}
