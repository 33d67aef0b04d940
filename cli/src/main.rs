//! `tce`: calibration-error estimates from the command line.
//!
//! Exit codes (also in `tce --help`, [`EXIT_CODES`]): 0 on success, 2 for bad input or
//! options (clap's usage errors included), 1 for I/O and internal errors.

mod estimate;
mod fit;
mod fit_svg;
mod input;
mod paper;
mod plot;
mod recalibrate;
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
case, which is reported on stderr. JSON outputs carry `tce_version` and every setting
that produced them.";

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
    /// Every estimator over one CSV of (confidence, correct) rows: ECE_bin, ECE_sweep,
    /// ECE_debias and MCE, equal-width and equal-mass.
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
    /// Fit a recalibration map on one CSV and apply it to another's confidences.
    Recalibrate(recalibrate::RecalibrateArgs),
    /// The Table 1 experiment: how often each estimator picks the recalibration method
    /// with the lowest true calibration error.
    Table1(recalibrate::Table1Args),
}

#[derive(Args)]
struct EstimateArgs {
    /// CSV file with a header line; `-` reads stdin.
    file: PathBuf,
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
    #[command(flatten)]
    columns: ColumnArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// The columns a command reads from its CSV files.
#[derive(Args, Clone, Debug)]
pub struct ColumnArgs {
    /// Column of the confidences (scores in [0, 1]); matched exactly, else without
    /// regard to case.
    #[arg(long, value_name = "NAME", default_value = "confidence")]
    pub score_col: String,
    /// Column of the labels (1 if the prediction was right, else 0); matched exactly,
    /// else without regard to case.
    #[arg(long, value_name = "NAME", default_value = "correct")]
    pub label_col: String,
}

impl Default for ColumnArgs {
    fn default() -> Self {
        ColumnArgs {
            score_col: "confidence".to_owned(),
            label_col: "correct".to_owned(),
        }
    }
}

impl ColumnArgs {
    pub fn names(&self) -> input::ColumnNames<'_> {
        input::ColumnNames {
            score: &self.score_col,
            label: &self.label_col,
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

/// The settings of `tce estimate`, in its JSON.
#[derive(Serialize)]
struct EstimateSettingsJson<'a> {
    file: String,
    columns: &'a input::Columns,
    bins: usize,
    norm: f64,
    closure: ClosureArg,
    ties: TiesArg,
    max_bins: Option<usize>,
    paper_limit: bool,
}

/// The JSON of `tce estimate`: version and settings, then the report's fields.
#[derive(Serialize)]
struct EstimateJson<'a> {
    tce_version: &'static str,
    command: &'static str,
    settings: EstimateSettingsJson<'a>,
    #[serde(flatten)]
    report: &'a estimate::Report,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Estimate(args) => run_estimate(&args),
        Command::Simulate(args) => simulate::run(&args),
        Command::Paper(args) => paper::run(&args),
        Command::Fit(args) => fit::run(&args),
        Command::FitCheck(args) => fit::run_check(&args),
        Command::Recalibrate(args) => recalibrate::run_recalibrate(&args),
        Command::Table1(args) => recalibrate::run_table1(&args),
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
    let samples = read_samples(&args.file, &args.columns)?;
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
        sweep: SweepOptions {
            max_bins: args.max_bins,
            limit: if args.paper_limit {
                SweepLimit::PaperCode
            } else {
                SweepLimit::Samples
            },
        },
    };
    let report = estimate::compute(&samples.scores, &samples.labels, &settings)
        .map_err(Failure::internal)?;
    let text = if args.json {
        json_line(&EstimateJson {
            tce_version: VERSION,
            command: "estimate",
            settings: EstimateSettingsJson {
                file: args.file.display().to_string(),
                columns: &samples.columns,
                bins: args.bins,
                norm: args.norm.p(),
                closure: args.closure,
                ties: args.ties,
                max_bins: args.max_bins,
                paper_limit: args.paper_limit,
            },
            report: &report,
        })?
    } else {
        report.table()
    };
    write_stdout(&text)
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
