//! `tce`: calibration-error estimates from the command line.
//!
//! Exit codes (also in `tce --help`, [`EXIT_CODES`]): 0 on success, 2 for bad input or
//! options (clap's usage errors included), 1 for I/O and internal errors.

mod calibration_test;
mod compare;
mod estimate;
mod fit;
mod fit_svg;
mod input;
mod merge;
mod paper;
mod plot;
mod recalibrate;
mod report;
mod simulate;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use serde::Serialize;
use tce::{Closure, Norm, SweepLimit, SweepOptions, Ties};

/// The version every JSON output carries as `tce_version`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The exit codes, as `tce --help` lists them.
const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  I/O or internal error: an output could not be written, an input failed part way
     through reading, or a computation failed on valid input (e.g. a fit did not
     converge)
  2  bad input: invalid options or arguments, an input file that cannot be opened, is
     malformed (the error names its line) or has a line over 1 MiB, or data the command
     cannot use (e.g. too few distinct rows to fit)

Input files are CSV with a header. Columns are found by name (--score-col, --label-col;
default `confidence` and `correct`): an exact match first, else a match without regard to
case, which is reported on stderr. `tce estimate` also reads class probabilities or
logits (CSV with --prob-cols, or .npy arrays with --labels; see docs/cli.md), and so
do `tce report` and `tce test`. JSON
outputs carry `tce_version` and every setting that produced them.";

#[derive(Parser)]
#[command(
    name = "tce",
    version,
    about = "Calibration error estimators (Roelofs et al., AISTATS 2022)",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every estimator over one input of model outputs: ECE_bin, ECE_sweep, ECE_debias
    /// and MCE, equal-width and equal-mass. Reads (confidence, correct) CSV rows, CSV
    /// class probabilities or logits (--prob-cols), or .npy arrays (--labels).
    Estimate(EstimateArgs),
    /// The bias of estimators on a synthetic model with known TCE (bias by construction):
    /// mean, bias, sd and RMSE per (n, bins, estimator), in percent.
    Simulate(simulate::SimulateArgs),
    /// Regenerates the paper's simulation figures (SVG + CSV) and findings.md.
    Paper(paper::PaperArgs),
    /// Fit a Beta score density and the twelve GLM calibration curves to one CSV; print
    /// the AIC table, the best model and its TCE.
    Fit(fit::FitArgs),
    /// Fig. 3c check: ECE_bin of data simulated from each file's fit against the real one.
    FitCheck(fit::FitCheckArgs),
    /// The calibration report: every estimator with bootstrap intervals, a check of the
    /// parametric model fitted to the data, each estimator's bias at your n on it, and
    /// the estimator to trust; as a summary, JSON (--json) or an HTML page (--html).
    Report(report::ReportArgs),
    /// Is it calibrated? A test of H0: E[Y | f(X)] = f(X): every statistic's p-value
    /// (estimators by consistency resampling, Spiegelhalter's Z, Hosmer-Lemeshow), the
    /// deciding statistic chosen by its power at your n on the model fitted to your data,
    /// and the decision at --alpha.
    Test(calibration_test::TestArgs),
    /// Is A better calibrated than B? Two models' outputs on the same examples (rows in
    /// the same order, or joined by --id), each with its own labels (its own
    /// correctness): Delta = CE_A - CE_B for one estimator, its paired bootstrap
    /// interval (BCa), the p-value of Delta = 0 and the decision at --alpha. One model
    /// before and after recalibration is A = original, B = recalibrated, with the same
    /// labels.
    Compare(compare::CompareArgs),
    /// Fit a recalibration map on one file and apply it to another (--method: of the
    /// top-label confidence, or of rows of class outputs); or, with --methods, compare
    /// several methods on held-out rows of one input: which one helps, if any.
    Recalibrate(recalibrate::RecalibrateArgs),
    /// The Table 1 experiment: how often each estimator picks the recalibration method
    /// with the lowest true calibration error.
    Table1(recalibrate::Table1Args),
    /// Decode encoded state files (tce's portable format, from C devices or Python),
    /// merge them (histograms exactly, reservoirs into a uniform sample) and print the
    /// merged state's estimates.
    Merge(merge::MergeArgs),
}

#[derive(Args)]
struct EstimateArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Number of bins of ECE_bin, ECE_debias and MCE.
    #[arg(long, default_value_t = 15, value_parser = parse_bins)]
    bins: usize,
    /// Exponent p of the l_p calibration error (p >= 1).
    #[arg(long, value_name = "P", default_value = "2", value_parser = parse_norm)]
    norm: Norm,
    /// Which side of each equal-width bin is closed: left [k/B, (k+1)/B) as in the paper,
    /// right (k/B, (k+1)/B] as in Guo et al. and scikit-learn.
    #[arg(long, value_enum, default_value_t = ClosureArg::Left)]
    closure: ClosureArg,
    /// Equal-mass bins: `split` sizes bins exactly (equal scores may straddle an edge),
    /// `keep` keeps equal scores in one bin.
    #[arg(long, value_enum, default_value_t = TiesArg::Split)]
    ties: TiesArg,
    /// Cap on the sweep's number of bins b*.
    #[arg(long, value_name = "N", value_parser = parse_bins)]
    max_bins: Option<usize>,
    /// Let the sweep try at most n - 1 bins, as the paper's released code does (default: n).
    #[arg(long)]
    paper_limit: bool,
    /// Weigh each row by this CSV column (of (confidence, correct) rows or of class
    /// outputs): frequency weights >= 0, a row of weight k counting as k copies, 0
    /// dropping it. Reports ECE_bin, ECE_sweep, ECE_debias, MCE and smooth ECE, weighted
    /// (with --classwise, of every class, each one-vs-rest row weighted as its row).
    #[arg(long, value_name = "NAME")]
    weight_col: Option<String>,
    /// Weigh each row by a .npy file of N weights (float, or integer counts; shape (N,)),
    /// for .npy or CSV inputs; as --weight-col otherwise.
    #[arg(long, value_name = "FILE", conflicts_with = "weight_col")]
    weights: Option<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// The input of a command that reads model outputs (`tce estimate`), in every form
/// the input layer takes (docs/cli.md): a CSV of (confidence, correct) rows, a CSV of
/// class columns and a label column, or `.npy` arrays.
#[derive(Args, Clone, Debug)]
pub struct InputArgs {
    /// The input: a CSV file with a header (`-` reads stdin), or a `.npy` array of
    /// scores (by its extension; then --labels names the labels array).
    pub file: PathBuf,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// CSV of class outputs: the class columns, as a comma-separated list (the i-th is
    /// class i) or a glob with `*` and `?` (matched case-sensitively against the
    /// header, classes in header order, the label column left out). The label column
    /// (--label-col, default `label`) then holds the true class id 0..K-1.
    #[arg(long, value_name = "LIST|GLOB")]
    pub prob_cols: Option<String>,
    /// The class columns (or the .npy array) hold logits, not probabilities: the
    /// softmax is taken, in f64 with the maximum subtracted.
    #[arg(long)]
    pub logits: bool,
    /// The labels of a .npy scores array: a .npy of N integers (class ids 0..K-1 for
    /// an N×K array, 0/1 for N confidences).
    #[arg(long, value_name = "FILE")]
    pub labels: Option<PathBuf>,
    /// Estimate the calibration of every class one-vs-rest (p_k against 1{y = k})
    /// and their l_p mean over classes (Kumar et al.'s marginal calibration error)
    /// instead of the top-label reduction.
    #[arg(long)]
    pub classwise: bool,
}

impl InputArgs {
    /// The input spec these options name; contradictory options are bad input.
    pub fn spec(&self) -> Result<input::InputSpec, Failure> {
        let npy = self
            .file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("npy"));
        let refuse = |message: &str| Err(Failure::input(message));
        let reduction = if self.classwise {
            input::Reduction::Classwise
        } else {
            input::Reduction::TopLabel
        };
        let source = if npy {
            if self.prob_cols.is_some()
                || self.columns.score_col.is_some()
                || self.columns.label_col.is_some()
            {
                return refuse("--prob-cols, --score-col and --label-col name CSV columns; a .npy input has none");
            }
            let Some(labels) = &self.labels else {
                return refuse(
                    "a .npy scores array needs --labels FILE (a .npy of N integer labels)",
                );
            };
            input::Source::Npy {
                scores: self.file.clone(),
                labels: labels.clone(),
                logits: self.logits,
            }
        } else if self.labels.is_some() {
            return refuse("--labels names the labels of a .npy scores array; a CSV has its labels in a column (--label-col)");
        } else if let Some(cols) = &self.prob_cols {
            if self.columns.score_col.is_some() {
                return refuse("--score-col names the confidence column of (confidence, correct) rows; class outputs have --prob-cols instead");
            }
            input::Source::ClassCsv {
                path: self.file.clone(),
                classes: input::ClassColumns::parse(cols),
                label_col: self
                    .columns
                    .label_col
                    .clone()
                    .unwrap_or_else(|| "label".to_owned()),
                logits: self.logits,
            }
        } else {
            if self.logits || self.classwise {
                return refuse("--logits and --classwise need class outputs: class columns (--prob-cols) or a .npy array of N×K");
            }
            let names = self.columns.names();
            input::Source::ConfidenceCsv {
                path: self.file.clone(),
                score_col: names.score.to_owned(),
                label_col: names.label.to_owned(),
            }
        };
        Ok(input::InputSpec {
            source,
            reduction,
            true_classes: false,
            weights: None,
        })
    }

    /// Reads and validates the input (exit 2 for bad input, 1 for a failing read);
    /// notes go to stderr.
    pub fn load(&self) -> Result<input::Input, Failure> {
        self.load_spec(&self.spec()?)
    }

    /// Reads and validates the input of `spec` (made by [`InputArgs::spec`], perhaps
    /// adjusted), as [`InputArgs::load`] does.
    pub fn load_spec(&self, spec: &input::InputSpec) -> Result<input::Input, Failure> {
        let loaded = input::load(spec).map_err(|e| Failure {
            code: e.exit_code(),
            message: e.to_string(),
        })?;
        input::report_notes(&self.file.display().to_string(), &loaded.notes);
        Ok(loaded)
    }
}

/// The columns a command reads from its CSV files.
#[derive(Args, Clone, Debug, Default)]
pub struct ColumnArgs {
    /// Column of the confidences (scores in [0, 1]; default `confidence`); matched
    /// exactly, else without regard to case.
    #[arg(long, value_name = "NAME")]
    pub score_col: Option<String>,
    /// Column of the labels (default `correct`: 1 if the prediction was right, else 0;
    /// with --prob-cols, default `label`: the true class id); matched exactly, else
    /// without regard to case.
    #[arg(long, value_name = "NAME")]
    pub label_col: Option<String>,
}

impl ColumnArgs {
    pub fn names(&self) -> input::ColumnNames<'_> {
        input::ColumnNames {
            score: self.score_col.as_deref().unwrap_or("confidence"),
            label: self.label_col.as_deref().unwrap_or("correct"),
        }
    }
}

/// Reads the samples of `path` (exit 2 for bad input, 1 for a failing read).
pub fn read_samples(path: &Path, columns: &ColumnArgs) -> Result<input::Samples, Failure> {
    input::read_path(path, columns.names()).map_err(|e| Failure {
        code: e.exit_code(),
        message: format!("{}: {e}", path.display()),
    })
}

#[derive(Clone, Copy, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
enum ClosureArg {
    Left,
    Right,
}

#[derive(Clone, Copy, ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
enum TiesArg {
    Split,
    Keep,
}

/// The sweep's options from `--max-bins` and `--paper-limit`, as every command that runs
/// the sweep takes them.
pub fn sweep_options(max_bins: Option<usize>, paper_limit: bool) -> SweepOptions {
    SweepOptions {
        max_bins,
        limit: if paper_limit {
            SweepLimit::PaperCode
        } else {
            SweepLimit::Samples
        },
    }
}

fn parse_bins(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err(tce::ConfigError::ZeroBins.to_string()),
        Ok(bins) if bins > tce::MAX_BINS => Err(tce::ConfigError::TooManyBins {
            bins,
            max: tce::MAX_BINS,
        }
        .to_string()),
        Ok(bins) => Ok(bins),
        Err(_) => Err(format!("`{text}` is not a whole number of bins")),
    }
}

fn parse_norm(text: &str) -> Result<Norm, String> {
    let p: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number"))?;
    Norm::new(p).map_err(|e| e.to_string())
}

/// A failure to report on stderr, with its exit code (see [`EXIT_CODES`]).
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    /// Bad input or options (exit 2).
    pub fn input(message: impl Into<String>) -> Self {
        Failure {
            code: 2,
            message: message.into(),
        }
    }

    /// An I/O or internal error (exit 1).
    pub fn internal(message: impl Into<String>) -> Self {
        Failure {
            code: 1,
            message: message.into(),
        }
    }
}

/// `value` as one line of JSON, for stdout.
pub fn json_line<T: Serialize>(value: &T) -> Result<String, Failure> {
    serde_json::to_string(value)
        .map(|json| json + "\n")
        .map_err(|e| Failure::internal(format!("JSON: {e}")))
}

/// The settings of `tce estimate`, in its JSON: the input (`file`, `columns`, `input`)
/// and the estimators' options.
#[derive(Serialize)]
struct EstimateSettingsJson<'a> {
    file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    columns: Option<&'a input::ReadColumns>,
    input: &'a input::Provenance,
    bins: usize,
    norm: f64,
    closure: ClosureArg,
    ties: TiesArg,
    max_bins: Option<usize>,
    paper_limit: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    weight_col: Option<&'a str>,
    /// `--weights`: the `.npy` file of weights.
    #[serde(skip_serializing_if = "Option::is_none")]
    weights: Option<String>,
}

/// The JSON of `tce estimate`: version and settings, then the report's fields.
#[derive(Serialize)]
struct EstimateJson<'a, R: Serialize> {
    tce_version: &'static str,
    command: &'static str,
    settings: EstimateSettingsJson<'a>,
    #[serde(flatten)]
    report: &'a R,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Estimate(args) => run_estimate(&args),
        Command::Simulate(args) => simulate::run(&args),
        Command::Paper(args) => paper::run(&args),
        Command::Fit(args) => fit::run(&args),
        Command::Report(args) => report::run(&args),
        Command::Test(args) => calibration_test::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::FitCheck(args) => fit::run_check(&args),
        Command::Recalibrate(args) => recalibrate::run_recalibrate(&args),
        Command::Table1(args) => recalibrate::run_table1(&args),
        Command::Merge(args) => merge::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("tce: error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn run_estimate(args: &EstimateArgs) -> Result<(), Failure> {
    let mut spec = args.input.spec()?;
    spec.weights = match (&args.weight_col, &args.weights) {
        (Some(name), _) => Some(input::WeightSource::Column(name.clone())),
        (None, Some(path)) => Some(input::WeightSource::Npy(path.clone())),
        (None, None) => None,
    };
    // While the input is read (on one thread, for most large files), another thread
    // prepares the sort's storage for about as many rows (estimate::sort_storage_ahead).
    let hint = spec.rows_hint();
    let (loaded, ahead) = std::thread::scope(|scope| {
        let ahead = hint.map(|rows| scope.spawn(move || estimate::sort_storage_ahead(rows)));
        let loaded = args.input.load_spec(&spec);
        (
            loaded,
            ahead.and_then(|thread| thread.join().ok().flatten()),
        )
    });
    let loaded = loaded?;
    let settings = estimate::Settings {
        bins: args.bins,
        norm: args.norm,
        closure: match args.closure {
            ClosureArg::Left => Closure::Left,
            ClosureArg::Right => Closure::Right,
        },
        ties: match args.ties {
            TiesArg::Split => Ties::Split,
            TiesArg::Keep => Ties::Keep,
        },
        sweep: sweep_options(args.max_bins, args.paper_limit),
    };
    let settings_json = || EstimateSettingsJson {
        file: args.input.file.display().to_string(),
        columns: loaded.provenance.columns.as_ref(),
        input: &loaded.provenance,
        bins: args.bins,
        norm: args.norm.p(),
        closure: args.closure,
        ties: args.ties,
        max_bins: args.max_bins,
        paper_limit: args.paper_limit,
        weight_col: args.weight_col.as_deref(),
        weights: args.weights.as_ref().map(|p| p.display().to_string()),
    };
    let json = |report: &dyn erased::Report| report.json(settings_json());
    let weights = loaded.weights.as_deref();
    // The weights were checked as they were read: a refusal here is the library's.
    let refused = |e: String| Failure::input(format!("{}: {e}", args.input.file.display()));
    let text = match &loaded.data {
        input::Data::TopLabel { scores, labels } => {
            let report = match weights {
                Some(weights) => estimate::compute_weighted(scores, labels, weights, &settings)
                    .map_err(refused)?,
                None => estimate::compute(scores, labels, &settings, ahead)
                    .map_err(Failure::internal)?,
            };
            if args.json {
                json(&report)?
            } else {
                report.table()
            }
        }
        input::Data::Classwise(columns) => {
            let report =
                estimate::compute_classwise(columns, weights, &settings).map_err(
                    |e| match weights {
                        Some(_) => refused(e),
                        None => Failure::internal(e),
                    },
                )?;
            if args.json {
                json(&report)?
            } else {
                report.table()
            }
        }
        input::Data::Rows { .. } => unreachable!("rows are kept only for tce recalibrate"),
    };
    write_stdout(&text)
}

/// The two reports of `tce estimate` behind one JSON writer.
mod erased {
    use super::{json_line, EstimateJson, EstimateSettingsJson, Failure, VERSION};

    pub trait Report {
        fn json(&self, settings: EstimateSettingsJson<'_>) -> Result<String, Failure>;
    }

    impl<R: serde::Serialize> Report for R {
        fn json(&self, settings: EstimateSettingsJson<'_>) -> Result<String, Failure> {
            json_line(&EstimateJson {
                tce_version: VERSION,
                command: "estimate",
                settings,
                report: self,
            })
        }
    }
}

/// Writes to stdout; a closed pipe (`tce estimate f | head -1`) is not an error.
fn write_stdout(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure {
            code: 1,
            message: format!("cannot write output: {e}"),
        }),
        _ => Ok(()),
    }
}
