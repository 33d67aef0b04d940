//! `tce`: calibration-error estimates from the command line.
//!
//! Exit codes: 0 on success, 2 for bad input or options (clap's usage errors included),
//! 1 for anything else.

mod estimate;
mod fit;
mod fit_svg;
mod input;
mod paper;
mod plot;
mod recalibrate;
mod simulate;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use tce::{Closure, Norm, SweepLimit, SweepOptions, Ties};

#[derive(Parser)]
#[command(
    name = "tce",
    version,
    about = "Calibration error estimators (Roelofs et al., AISTATS 2022)"
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
    /// Column of the confidences (scores in [0, 1]).
    #[arg(long, value_name = "NAME", default_value = "confidence")]
    score_col: String,
    /// Column of the labels (1 if the prediction was right, else 0).
    #[arg(long, value_name = "NAME", default_value = "correct")]
    label_col: String,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, ValueEnum)]
enum ClosureArg {
    Left,
    Right,
}

#[derive(Clone, Copy, ValueEnum)]
enum TiesArg {
    Split,
    Keep,
}

fn parse_bins(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err(tce::ConfigError::ZeroBins.to_string()),
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

/// A failure to report on stderr, with its exit code.
struct Failure {
    code: u8,
    message: String,
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
    let samples =
        input::read_path(&args.file, &args.score_col, &args.label_col).map_err(|e| Failure {
            code: 2,
            message: format!("{}: {e}", args.file.display()),
        })?;
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
        .map_err(|message| Failure { code: 1, message })?;
    let text = if args.json {
        let mut json = serde_json::to_string(&report).map_err(|e| Failure {
            code: 1,
            message: format!("JSON: {e}"),
        })?;
        json.push('\n');
        json
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
