//! `tce report`: the library's [`tce::report::report`] rendered by the library's
//! renderers as a terminal summary ([`tce::report::text::summary`]), a JSON object
//! (`--json`, [`tce::report::json`]) and a self-contained HTML page (`--html`,
//! [`tce::report::html`]). This module reads the options and the input, and shows
//! progress bars; nothing else.

use std::path::PathBuf;

use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use tce::report::classwise::{classwise_report_with, ClassColumn, ClasswiseOptions, ClasswisePlan};
use tce::report::json::Source;
use tce::report::{report, weighted_report, Phase, ReportError, ReportSettings};
use tce::{Closure, Ties};

use crate::{input, parse_bins, parse_norm, ClosureArg, Failure, InputArgs, TiesArg};

/// Options of `tce report`.
#[derive(Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Bins of ECE_bin, ECE_debias, MCE and the equal-width reliability diagram.
    #[arg(long, default_value_t = 15, value_parser = parse_bins)]
    pub bins: usize,
    /// Exponent p of the l_p calibration error (p >= 1; smooth ECE joins at p = 1).
    #[arg(long, value_name = "P", default_value = "2", value_parser = parse_norm)]
    pub norm: tce::Norm,
    /// Which side of each equal-width bin is closed.
    #[arg(long, value_enum, default_value_t = ClosureArg::Left)]
    pub closure: ClosureArg,
    /// Equal-mass ties: `split` (exact sizes) or `keep` (equal scores share a bin).
    #[arg(long, value_enum, default_value_t = TiesArg::Split)]
    pub ties: TiesArg,
    /// Cap on the sweep's number of bins b*.
    #[arg(long, value_name = "N", value_parser = parse_bins)]
    pub max_bins: Option<usize>,
    /// Let the sweep try at most n - 1 bins, as the paper's released code does.
    #[arg(long)]
    pub paper_limit: bool,
    /// Bootstrap resamples (0: no intervals; at most 100000, tce::report::MAX_RESAMPLES).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub resamples: usize,
    /// Data sets simulated from the fitted model for the bias table (default: 1000, fewer
    /// above n = 50 000 so that n x simulations <= 5e7; with --classwise, of each simulated
    /// class, fewer above n = 5 000 so that n x simulations <= 5e6; at least 50; at most
    /// 100000, tce::report::MAX_SIMULATIONS).
    #[arg(long, value_name = "N")]
    pub simulations: Option<usize>,
    /// With --classwise: the classes fitted and simulated for the bias figures (default 10:
    /// every class up to 10, else a seeded random sample of 10, the marginal's bias
    /// estimated from it; 0: none; at least 2 below the number of classes). A fit takes
    /// about a second a class at n = 10^4.
    #[arg(long, value_name = "N")]
    pub simulated_classes: Option<usize>,
    /// Simulated data sets fitted again to measure the error of the fitted model's own
    /// TCE as an estimator (default: 10 up to n = 50 000, else 0; at most the
    /// simulations; 0: none). Each costs one fit.
    #[arg(long, value_name = "N")]
    pub refits: Option<usize>,
    /// Level of every interval.
    #[arg(long, default_value_t = 0.95)]
    pub level: f64,
    /// Seed of the bootstrap and the simulations.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Include the KDE estimator (slower: a kernel grid per evaluation).
    #[arg(long)]
    pub kde: bool,
    /// Scores within this distance of 0 or 1 are taken to be this far from it by the fit.
    #[arg(long, default_value_t = tce::fit::endpoint::DEFAULT_EPSILON)]
    pub epsilon: f64,
    /// The model of your data the bias figures are simulated from: `flexible` (point
    /// masses, a Beta or log-odds mixture density, the best of 12 GLMs, monotone splines
    /// and the identity, by AIC) or `paper` (Roelofs et al.'s Beta + 12 GLMs).
    #[arg(long, value_enum, default_value_t = ModelArg::Flexible)]
    pub model: ModelArg,
    /// Consistency resamples of the calibration test ("is it calibrated?"; docs/report.md)
    /// (default: 999 up to n = 20 000, fewer above so that n x (B + 1) <= 2e7: 199 at
    /// n = 10^5, 19 at 10^6; 1 to 100000, tce::decision::MAX_RESAMPLES).
    #[arg(long, value_name = "B")]
    pub test_resamples: Option<usize>,
    /// Label sets simulated from the fitted model to measure the test statistics' power
    /// (default: 100 up to n = 10^5, fewer above so that n x M <= 1e7, at least 20;
    /// 1 to 100000).
    #[arg(long, value_name = "M")]
    pub test_power_simulations: Option<usize>,
    /// The level of the calibration test: calibration is rejected when p <= alpha
    /// (default 0.05).
    #[arg(long)]
    pub alpha: Option<f64>,
    /// No calibration test.
    #[arg(long, conflicts_with_all = ["test_resamples", "test_power_simulations", "alpha"])]
    pub no_test: bool,
    /// Weigh each row by this CSV column (of (confidence, correct) rows or of class
    /// outputs' top labels): frequency weights, at least 0; 0 leaves the row out. The
    /// estimates and their bootstrap are weighted; the fit, the bias table and the
    /// calibration test are left out (docs/report.md, Weighted rows).
    #[arg(long, value_name = "NAME", conflicts_with_all = [
        "simulations", "refits", "simulated_classes", "test_resamples",
        "test_power_simulations", "alpha", "epsilon", "model", "classwise",
    ])]
    pub weight_col: Option<String>,
    /// Weigh each row by a .npy file of N weights (float, or integer counts; shape (N,)),
    /// for .npy or CSV inputs; as --weight-col otherwise.
    #[arg(long, value_name = "FILE", conflicts_with_all = [
        "weight_col", "simulations", "refits", "simulated_classes", "test_resamples",
        "test_power_simulations", "alpha", "epsilon", "model", "classwise",
    ])]
    pub weights: Option<PathBuf>,
    /// Print one JSON object (every number, setting, the version and the seed).
    #[arg(long)]
    pub json: bool,
    /// Write a self-contained HTML page (inline SVG, no scripts) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// No progress bars on stderr.
    #[arg(long)]
    pub quiet: bool,
}

/// `--model`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ModelArg {
    Flexible,
    Paper,
}

impl ReportArgs {
    /// The library's settings, checked by the library (level, the bounds on resamples and
    /// simulations) before any input is read.
    fn settings(&self) -> Result<ReportSettings, Failure> {
        let settings = ReportSettings {
            norm: self.norm,
            bins: self.bins,
            closure: match self.closure {
                ClosureArg::Left => Closure::Left,
                ClosureArg::Right => Closure::Right,
            },
            ties: match self.ties {
                TiesArg::Split => Ties::Split,
                TiesArg::Keep => Ties::Keep,
            },
            sweep: crate::sweep_options(self.max_bins, self.paper_limit),
            resamples: self.resamples,
            simulations: self.simulations,
            level: self.level,
            seed: self.seed,
            kde: self.kde,
            endpoint: tce::fit::EndpointRule::new(self.epsilon)
                .map_err(|e| Failure::input(e.to_string()))?,
            model: match self.model {
                ModelArg::Flexible => tce::report::ModelKind::Flexible,
                ModelArg::Paper => tce::report::ModelKind::Paper,
            },
            refits: self.refits,
            test: (!self.no_test).then(|| tce::report::ReportTest {
                resamples: self.test_resamples,
                power_simulations: self.test_power_simulations,
                alpha: self.alpha.unwrap_or(tce::decision::DEFAULT_ALPHA),
            }),
        };
        settings.check().map_err(report_failure)?;
        let test_given = self.test_resamples.is_some()
            || self.test_power_simulations.is_some()
            || self.alpha.is_some();
        if test_given && self.input.classwise {
            return Err(report_failure(ReportError::TestNotClasswise));
        }
        if let Some(m) = self.refits.filter(|&m| m > 0 && self.input.classwise) {
            return Err(report_failure(ReportError::RefitsNotClasswise(m)));
        }
        if self.simulated_classes.is_some() && !self.input.classwise {
            return Err(Failure::input(
                "--simulated-classes is an option of --classwise reports".to_owned(),
            ));
        }
        Ok(settings)
    }
}

/// Progress bars on stderr, one per phase (hidden when stderr is not a terminal).
struct Bars {
    bootstrap: ProgressBar,
    simulation: ProgressBar,
}

impl Bars {
    fn new(resamples: usize, simulations: usize, quiet: bool) -> Bars {
        let multi = MultiProgress::new();
        let style = ProgressStyle::with_template("{prefix:>12} [{bar:40}] {pos}/{len} {elapsed}")
            .expect("a valid template")
            .progress_chars("=> ");
        let bar = |len: usize, prefix: &'static str| {
            let bar = if quiet {
                ProgressBar::hidden()
            } else {
                multi.add(ProgressBar::new(len as u64))
            };
            bar.set_style(style.clone());
            bar.set_prefix(prefix);
            bar
        };
        Bars {
            bootstrap: bar(resamples, "bootstrap"),
            simulation: bar(simulations, "simulations"),
        }
    }

    /// Advances the bar of `phase`: the library's progress callback.
    fn step(&self, phase: Phase) {
        match phase {
            Phase::Bootstrap => self.bootstrap.inc(1),
            Phase::Simulation => self.simulation.inc(1),
        }
    }

    /// Clears both bars off stderr before the output.
    fn finish(&self) {
        self.bootstrap.finish_and_clear();
        self.simulation.finish_and_clear();
    }
}

fn report_failure(e: ReportError) -> Failure {
    match e {
        ReportError::InvalidLevel(_) | ReportError::NoSamples => Failure::input(e.to_string()),
        ReportError::TooManyResamples(_) => Failure::input(format!("--resamples: {e}")),
        ReportError::SimulationsOutOfRange(_) => Failure::input(format!("--simulations: {e}")),
        ReportError::TooManyRefits { .. } | ReportError::RefitsNotClasswise(_) => {
            Failure::input(format!("--refits: {e}"))
        }
        ReportError::Test(ref t) => {
            use tce::decision::TestError as T;
            let option = match t {
                T::ResamplesOutOfRange(_) => "--test-resamples: ",
                T::PowerSimulationsOutOfRange(_) => "--test-power-simulations: ",
                T::InvalidAlpha(_) => "--alpha: ",
                _ => "",
            };
            Failure::input(format!("{option}{e}"))
        }
        ReportError::TestNotClasswise => Failure::input(format!("--classwise: {e}")),
        // More than this machine gives for what the options ask: fewer resamples need less.
        ReportError::OutOfMemory { .. } => Failure::input(e.to_string()),
        other => Failure::internal(other.to_string()),
    }
}

pub fn run(args: &ReportArgs) -> Result<(), Failure> {
    let settings = args.settings()?;
    let weights = match (&args.weight_col, &args.weights) {
        (Some(name), _) => Some(input::WeightSource::Column(name.clone())),
        (None, Some(path)) => Some(input::WeightSource::Npy(path.clone())),
        (None, None) => None,
    };
    if let Some(weights) = weights {
        return run_weighted(args, &settings, weights);
    }
    let loaded = args.input.load()?;
    let file = args.input.file.display().to_string();
    let source = Source {
        file: file.clone(),
        input: &loaded.provenance,
    };
    match &loaded.data {
        input::Data::TopLabel { scores, labels } => {
            let simulations = settings
                .simulations
                .unwrap_or_else(|| tce::report::default_simulations(scores.len()));
            let bars = Bars::new(settings.resamples, simulations, args.quiet);
            let result = report(scores, labels, &settings, &|phase| bars.step(phase))
                .map_err(report_failure)?;
            bars.finish();
            if let Some(path) = &args.html {
                write_page(path, &tce::report::html::page(&file, scores, &result))?;
            }
            crate::write_stdout(&if args.json {
                tce::report::json::json(&source, &result) + "\n"
            } else {
                tce::report::text::summary(&file, &result)
            })
        }
        input::Data::Classwise(columns) => {
            let n = columns.first().map_or(0, |c| c.scores.len());
            let options = ClasswiseOptions {
                simulated_classes: args.simulated_classes,
            };
            let plan = ClasswisePlan::new(n, columns.len(), &settings, &options);
            // Every class on every joint resample, then the simulated classes' simulations.
            let bars = Bars::new(
                plan.resamples.saturating_mul(plan.classes),
                plan.simulations.saturating_mul(plan.simulated_classes),
                args.quiet,
            );
            let views: Vec<ClassColumn<'_>> = columns
                .iter()
                .map(|c| ClassColumn {
                    class: c.class,
                    name: &c.name,
                    scores: &c.scores,
                    labels: &c.labels,
                })
                .collect();
            let result =
                classwise_report_with(&views, &settings, &options, &|phase| bars.step(phase))
                    .map_err(report_failure)?;
            bars.finish();
            if let Some(path) = &args.html {
                write_page(path, &tce::report::html::classwise_page(&file, &result))?;
            }
            crate::write_stdout(&if args.json {
                tce::report::json::classwise_json(&source, &result) + "\n"
            } else {
                tce::report::text::classwise_summary(&file, &result)
            })
        }
        input::Data::Rows { .. } => unreachable!("rows are kept only for tce recalibrate"),
    }
}

/// `tce report --weight-col`: the rows and weights read by the input layer as
/// `tce estimate --weight-col` reads them (each weight checked there, a bad one named
/// with its line), the library's [`weighted_report`] rendered by the same renderers, the
/// JSON's input naming the weight column.
fn run_weighted(
    args: &ReportArgs,
    settings: &ReportSettings,
    weights: input::WeightSource,
) -> Result<(), Failure> {
    let mut spec = args.input.spec()?;
    spec.weights = Some(weights);
    let loaded = args.input.load_spec(&spec)?;
    let (input::Data::TopLabel { scores, labels }, Some(weights)) =
        (&loaded.data, loaded.weights.as_deref())
    else {
        return Err(Failure::input(
            "--weight-col weighs the top-label rows of tce report; the classwise report takes no weights",
        ));
    };
    let file = args.input.file.display().to_string();
    let bars = Bars::new(settings.resamples, 0, args.quiet);
    let result = weighted_report(scores, labels, weights, settings, &|phase| bars.step(phase))
        .map_err(|e| match e {
            // The input layer has checked every weight: what is left is the library's word.
            ReportError::Weight(w) => Failure::input(format!("{file}: {w}")),
            e => report_failure(e),
        })?;
    bars.finish();
    if let Some(path) = &args.html {
        write_page(path, &tce::report::html::page(&file, scores, &result))?;
    }
    let provenance = &loaded.provenance;
    let source = Source {
        file: file.clone(),
        input: WeightedInput {
            input: provenance,
            weight_col: args.weight_col.as_deref(),
            weights: args.weights.as_ref().map(|p| p.display().to_string()),
        },
    };
    crate::write_stdout(&if args.json {
        tce::report::json::json(&source, &result) + "\n"
    } else {
        tce::report::text::summary(&file, &result)
    })
}

/// The JSON's `settings.input` of a weighted report: what was read, and the weight column
/// or the `.npy` file of weights.
#[derive(serde::Serialize)]
struct WeightedInput<'a> {
    #[serde(flatten)]
    input: &'a input::Provenance,
    #[serde(skip_serializing_if = "Option::is_none")]
    weight_col: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    weights: Option<String>,
}

fn write_page(path: &std::path::Path, page: &str) -> Result<(), Failure> {
    std::fs::write(path, page)
        .map_err(|e| Failure::internal(format!("{}: cannot write: {e}", path.display())))
}
