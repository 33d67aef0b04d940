//! `tce report`: the library's [`tce::report::report`] rendered as a terminal summary, a
//! JSON object (`--json`) and a self-contained HTML page (`--html`, [`crate::report_html`]).
//! Nothing is computed here beyond formatting.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use serde::Serialize;
use tce::report::{
    report, Basis, EstimatorResult, Interval, Phase, Report, ReportSettings, Target,
    FIT_CHECK_LEVEL, JACKKNIFE_GROUPS,
};
use tce::{Binning, Closure, SweepLimit, SweepOptions, Ties};

use crate::{input, parse_bins, parse_norm, ClosureArg, Failure, InputArgs, TiesArg, VERSION};

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
    /// Bootstrap resamples (0: no intervals).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub resamples: usize,
    /// Data sets simulated from the fitted model for the bias table (default: 1000, fewer
    /// above n = 50 000 so that n x simulations <= 5e7; at least 50).
    #[arg(long, value_name = "N")]
    pub simulations: Option<usize>,
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

impl ReportArgs {
    fn settings(&self) -> Result<ReportSettings, Failure> {
        if self.simulations == Some(0) {
            return Err(Failure::input("--simulations must be at least 1"));
        }
        Ok(ReportSettings {
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
            sweep: SweepOptions {
                max_bins: self.max_bins,
                limit: if self.paper_limit {
                    SweepLimit::PaperCode
                } else {
                    SweepLimit::Samples
                },
            },
            resamples: self.resamples,
            simulations: self.simulations,
            level: self.level,
            seed: self.seed,
            kde: self.kde,
            endpoint: tce::fit::EndpointRule::new(self.epsilon)
                .map_err(|e| Failure::input(e.to_string()))?,
        })
    }
}

/// A human name: "ECE_sweep, equal-mass".
pub fn display_name(target: &Target) -> String {
    use tce::sim::EstimatorKind as K;
    let kind = match target.spec.kind() {
        K::EceBin => "ECE_bin",
        K::EceSweep => "ECE_sweep",
        K::EceDebias => "ECE_debias",
        K::Mce => "MCE",
        K::Kde => "KDE",
        K::SmoothEce => "smooth ECE",
    };
    match target.spec.binning() {
        Some(Binning::EqualWidth(_)) => format!("{kind}, equal-width"),
        Some(Binning::EqualMass(_)) => format!("{kind}, equal-mass"),
        None => kind.to_owned(),
    }
}

/// A fraction in percent with 2 decimals.
pub fn pct(x: f64) -> String {
    format!("{:.2}%", 100.0 * x)
}

fn interval_text(i: &Interval) -> String {
    format!("{:.2}–{:.2}%", 100.0 * i.lower, 100.0 * i.upper)
}

/// The recommendation in plain words, as the summary and the page give it.
pub fn recommendation_words(r: &Report) -> Vec<String> {
    let rec = &r.recommendation;
    let chosen = &r.estimators[rec.estimator];
    let level = format!("{:.0}%", 100.0 * r.settings.level);
    let mut lines = Vec::new();
    let interval = match chosen.interval() {
        Some((i, kind)) => format!(
            " ({level} {} interval {})",
            match kind {
                tce::report::IntervalKind::Bca => "BCa",
                tce::report::IntervalKind::Percentile => "percentile",
            },
            interval_text(&i)
        ),
        None => String::new(),
    };
    lines.push(format!(
        "Calibration error (TCE_{}): {}{interval}, by {}.",
        r.settings.norm.p(),
        pct(chosen.estimate),
        display_name(&chosen.target)
    ));
    match (&r.parametric, rec.basis) {
        (Ok(p), basis) => {
            let row = &p.bias[rec.bias_row.unwrap_or(0)];
            lines.push(format!(
                "Why this estimator: on {} data sets of your size (n = {}) simulated from a model fitted to your data, it was off by {:.2} points on average (RMSE), the least of all estimators; its bias there was {:+.2} points.",
                p.simulations,
                r.n,
                100.0 * row.summary.rmse,
                100.0 * row.summary.bias
            ));
            if let Some(u) = rec.usual_row {
                let usual = &p.bias[u];
                let value = r
                    .estimators
                    .iter()
                    .find(|e| e.target == usual.target)
                    .map_or(f64::NAN, |e| e.estimate);
                lines.push(format!(
                    "The usual {}-bin equal-width ECE_bin is {} on your data; at this n it is expected to be off by {:+.2} points (bias), {:.2} points typically (RMSE).",
                    r.settings.bins,
                    pct(value),
                    100.0 * usual.summary.bias,
                    100.0 * usual.summary.rmse
                ));
            }
            if basis == Basis::LowestRmsePoorFit {
                lines.push(format!(
                    "Caveat: the fitted model does not reproduce your data (a real value falls outside the central {:.0}% of the simulated ones, see the fit check), so the bias figures, and the choice they make, are less certain.",
                    100.0 * FIT_CHECK_LEVEL
                ));
            }
        }
        (Err(e), _) => lines.push(format!(
            "No parametric model could be fitted ({e}); this is the paper's default estimator, without a bias check at your n."
        )),
    }
    lines
}

fn bias_of<'a>(r: &'a Report, target: &Target) -> Option<&'a tce::report::BiasRow> {
    r.parametric
        .as_ref()
        .ok()?
        .bias
        .iter()
        .find(|b| b.target == *target)
}

/// The terminal summary: the recommendation first, then the table.
pub fn summary(file: &str, r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "tce report: {file}: n = {}, accuracy {}, p = {}, seed {}",
        r.n,
        pct(r.hits as f64 / r.n as f64),
        r.settings.norm.p(),
        r.settings.seed
    );
    out.push('\n');
    for line in recommendation_words(r) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    let level = format!("{:.0}%", 100.0 * r.settings.level);
    let _ = writeln!(
        out,
        "{:<24} {:>5} {:>8} {:>17} {:>17} {:>8} {:>7} {:>7}",
        "estimator",
        "bins",
        "estimate",
        format!("percentile {level}"),
        format!("BCa {level}"),
        "bias",
        "sd",
        "RMSE"
    );
    for e in &r.estimators {
        let boot = e.bootstrap.as_ref().and_then(|b| b.as_ref().ok());
        let bins = e
            .sweep_bins
            .or(e.target.bins)
            .map_or("-".into(), |b| b.to_string());
        let percentile = boot.map_or("-".into(), |b| interval_text(&b.percentile));
        let bca = boot
            .and_then(|b| b.bca.as_ref())
            .map_or("-".into(), interval_text);
        let (bias, sd, rmse) =
            bias_of(r, &e.target).map_or(("-".into(), "-".into(), "-".into()), |b| {
                (
                    format!("{:+.2}", 100.0 * b.summary.bias),
                    format!("{:.2}", 100.0 * b.summary.sd),
                    format!("{:.2}", 100.0 * b.summary.rmse),
                )
            });
        let mark = if std::ptr::eq(e, &r.estimators[r.recommendation.estimator]) {
            "*"
        } else {
            " "
        };
        let _ = writeln!(
            out,
            "{mark}{:<23} {bins:>5} {:>8} {percentile:>17} {bca:>17} {bias:>8} {sd:>7} {rmse:>7}",
            display_name(&e.target),
            pct(e.estimate)
        );
        if let Some(Err(err)) = &e.bootstrap {
            let _ = writeln!(out, "  (no interval: {err})");
        }
    }
    let _ = writeln!(
        out,
        "bias, sd, RMSE: percentage points against the fitted model's TCE; MCE estimates the largest gap, not TCE."
    );
    for e in &r.estimators {
        if let Some(Ok(b)) = &e.bootstrap {
            if let Some(bins) = &b.sweep_bins {
                let d = distribution(bins);
                let _ = writeln!(
                    out,
                    "b* of {}: {} on the data; over the resamples median {}, 2.5–97.5% {}–{}, range {}–{}",
                    display_name(&e.target),
                    e.sweep_bins.unwrap_or(0),
                    d.median,
                    d.p025,
                    d.p975,
                    d.min,
                    d.max
                );
            }
        }
    }
    match &r.parametric {
        Ok(p) => {
            let best = p.fit.best_glm();
            let _ = writeln!(
                out,
                "\nfit: Beta({:.4}, {:.4}) scores, curve {} (lowest AIC of 12 GLMs: b0 = {:.4}, b1 = {:.4}); TCE_{} of the fit {}",
                p.fit.model.density.alpha(),
                p.fit.model.density.beta(),
                best.spec.name(),
                best.b0,
                best.b1,
                r.settings.norm.p(),
                pct(p.tce)
            );
            for c in &p.checks {
                let _ = writeln!(
                    out,
                    "fit check, {}: real {}, simulated mean {}, central {:.0}% {} → {}",
                    display_name(&c.target),
                    pct(c.real),
                    pct(c.simulated_mean),
                    100.0 * FIT_CHECK_LEVEL,
                    interval_text(&c.interval),
                    if c.reproduces {
                        "reproduced"
                    } else {
                        "NOT reproduced"
                    }
                );
            }
        }
        Err(e) => {
            let _ = writeln!(out, "\nno fit: {e}");
        }
    }
    out
}

/// Summary statistics of the resamples' b*.
#[derive(Serialize, Clone, Copy)]
pub struct BinsDistribution {
    pub min: usize,
    pub p025: usize,
    pub median: usize,
    pub p975: usize,
    pub max: usize,
    pub mean: f64,
}

/// The order statistics of b* (nearest rank).
pub fn distribution(bins: &[usize]) -> BinsDistribution {
    let mut s = bins.to_vec();
    s.sort_unstable();
    let at = |q: f64| s[((q * (s.len() - 1) as f64).round() as usize).min(s.len() - 1)];
    BinsDistribution {
        min: s[0],
        p025: at(0.025),
        median: at(0.5),
        p975: at(0.975),
        max: s[s.len() - 1],
        mean: s.iter().sum::<usize>() as f64 / s.len() as f64,
    }
}

#[derive(Serialize)]
struct IntervalJson {
    lower: f64,
    upper: f64,
}

impl From<&Interval> for IntervalJson {
    fn from(i: &Interval) -> Self {
        IntervalJson {
            lower: i.lower,
            upper: i.upper,
        }
    }
}

#[derive(Serialize)]
struct BootstrapJson {
    se: f64,
    percentile: IntervalJson,
    bca: Option<IntervalJson>,
    z0: Option<f64>,
    acceleration: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep_bins: Option<BinsDistribution>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep_bins_per_resample: Option<Vec<usize>>,
    replicates: Vec<f64>,
}

#[derive(Serialize)]
struct BiasJson {
    mean: f64,
    bias: f64,
    sd: f64,
    rmse: f64,
    se: f64,
}

#[derive(Serialize)]
struct EstimatorJson {
    name: String,
    estimator: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    binning: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bins: Option<usize>,
    value: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    bootstrap: Option<BootstrapJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bootstrap_error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bias: Option<BiasJson>,
}

#[derive(Serialize)]
struct BinJson {
    count: u64,
    hits: u64,
    mean_score: Option<f64>,
    accuracy: Option<f64>,
    interval: Option<IntervalJson>,
}

#[derive(Serialize)]
struct ReliabilityJson {
    binning: &'static str,
    bins: Vec<BinJson>,
}

#[derive(Serialize)]
struct CheckJson {
    estimator: String,
    real: f64,
    simulated_mean: f64,
    interval: IntervalJson,
    reproduces: bool,
}

#[derive(Serialize)]
struct FitJson {
    alpha: f64,
    beta: f64,
    glm: String,
    b0: f64,
    b1: f64,
    aic: f64,
    tce: f64,
    tce_l1: f64,
    tce_l2: f64,
    simulations: usize,
    check_level: f64,
    checks: Vec<CheckJson>,
    reproduces: bool,
}

#[derive(Serialize)]
struct RecommendationJson {
    estimator: String,
    value: f64,
    interval: Option<IntervalJson>,
    interval_kind: Option<&'static str>,
    basis: &'static str,
    words: Vec<String>,
}

#[derive(Serialize)]
struct SettingsJson<'a> {
    file: String,
    input: &'a input::Provenance,
    bins: usize,
    norm: f64,
    closure: ClosureArg,
    ties: TiesArg,
    max_bins: Option<usize>,
    paper_limit: bool,
    resamples: usize,
    simulations: usize,
    level: f64,
    seed: u64,
    kde: bool,
    epsilon: f64,
    jackknife_groups: usize,
}

#[derive(Serialize)]
struct ReportJson<'a> {
    tce_version: &'static str,
    command: &'static str,
    settings: SettingsJson<'a>,
    n: usize,
    hits: u64,
    recommendation: RecommendationJson,
    estimators: Vec<EstimatorJson>,
    reliability: Vec<ReliabilityJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fit: Option<FitJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fit_error: Option<String>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn estimator_json(r: &Report, e: &EstimatorResult) -> EstimatorJson {
    let (bootstrap, bootstrap_error) = match &e.bootstrap {
        None => (None, None),
        Some(Err(err)) => (None, Some(err.to_string())),
        Some(Ok(b)) => (
            Some(BootstrapJson {
                se: b.se,
                percentile: (&b.percentile).into(),
                bca: b.bca.as_ref().map(Into::into),
                z0: finite(b.z0),
                acceleration: finite(b.acceleration),
                sweep_bins: b.sweep_bins.as_deref().map(distribution),
                sweep_bins_per_resample: b.sweep_bins.clone(),
                replicates: b.replicates.clone(),
            }),
            None,
        ),
    };
    EstimatorJson {
        name: e.target.spec.to_string(),
        estimator: e.target.spec.kind().name(),
        binning: e.target.spec.binning_name(),
        bins: e.sweep_bins.or(e.target.bins),
        value: e.estimate,
        bootstrap,
        bootstrap_error,
        bias: bias_of(r, &e.target).map(|b| BiasJson {
            mean: b.summary.mean,
            bias: b.summary.bias,
            sd: b.summary.sd,
            rmse: b.summary.rmse,
            se: b.summary.se,
        }),
    }
}

fn json(args: &ReportArgs, provenance: &input::Provenance, r: &Report) -> Result<String, Failure> {
    let chosen = &r.estimators[r.recommendation.estimator];
    let interval = chosen.interval();
    let value = ReportJson {
        tce_version: VERSION,
        command: "report",
        settings: SettingsJson {
            file: args.input.file.display().to_string(),
            input: provenance,
            bins: r.settings.bins,
            norm: r.settings.norm.p(),
            closure: args.closure,
            ties: args.ties,
            max_bins: args.max_bins,
            paper_limit: args.paper_limit,
            resamples: r.settings.resamples,
            simulations: r.settings.simulations.unwrap_or(0),
            level: r.settings.level,
            seed: r.settings.seed,
            kde: r.settings.kde,
            epsilon: args.epsilon,
            jackknife_groups: JACKKNIFE_GROUPS.min(r.n),
        },
        n: r.n,
        hits: r.hits,
        recommendation: RecommendationJson {
            estimator: chosen.target.spec.to_string(),
            value: chosen.estimate,
            interval: interval.as_ref().map(|(i, _)| i.into()),
            interval_kind: interval.map(|(_, k)| match k {
                tce::report::IntervalKind::Bca => "bca",
                tce::report::IntervalKind::Percentile => "percentile",
            }),
            basis: match r.recommendation.basis {
                Basis::LowestRmse => "lowest_rmse",
                Basis::LowestRmsePoorFit => "lowest_rmse_poor_fit",
                Basis::NoFit => "no_fit",
            },
            words: recommendation_words(r),
        },
        estimators: r.estimators.iter().map(|e| estimator_json(r, e)).collect(),
        reliability: r
            .reliability
            .iter()
            .map(|rel| ReliabilityJson {
                binning: tce::sim::estimator::binning_name(rel.binning),
                bins: rel
                    .bins
                    .iter()
                    .map(|b| BinJson {
                        count: b.count,
                        hits: b.hits,
                        mean_score: b.mean_score,
                        accuracy: b.accuracy,
                        interval: b.interval.as_ref().map(Into::into),
                    })
                    .collect(),
            })
            .collect(),
        fit: r.parametric.as_ref().ok().map(|p| {
            let best = p.fit.best_glm();
            FitJson {
                alpha: p.fit.model.density.alpha(),
                beta: p.fit.model.density.beta(),
                glm: best.spec.name(),
                b0: best.b0,
                b1: best.b1,
                aic: best.aic,
                tce: p.tce,
                tce_l1: p.fit.tce_l1,
                tce_l2: p.fit.tce_l2,
                simulations: p.simulations,
                check_level: FIT_CHECK_LEVEL,
                checks: p
                    .checks
                    .iter()
                    .map(|c| CheckJson {
                        estimator: c.target.spec.to_string(),
                        real: c.real,
                        simulated_mean: c.simulated_mean,
                        interval: (&c.interval).into(),
                        reproduces: c.reproduces,
                    })
                    .collect(),
                reproduces: p.reproduces,
            }
        }),
        fit_error: r.parametric.as_ref().err().map(ToString::to_string),
    };
    crate::json_line(&value)
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
}

pub fn run(args: &ReportArgs) -> Result<(), Failure> {
    if args.input.classwise {
        return Err(Failure::input(
            "tce report reads top-label samples; --classwise is not supported by report (use tce estimate --classwise)",
        ));
    }
    let settings = args.settings()?;
    let loaded = args.input.load()?;
    let (scores, labels) = match &loaded.data {
        input::Data::TopLabel { scores, labels } => (scores, labels),
        input::Data::Classwise(_) => unreachable!("refused above"),
    };
    let simulations = settings
        .simulations
        .unwrap_or_else(|| tce::report::default_simulations(scores.len()));
    let bars = Bars::new(settings.resamples, simulations, args.quiet);
    let result = report(scores, labels, &settings, &|phase| match phase {
        Phase::Bootstrap => bars.bootstrap.inc(1),
        Phase::Simulation => bars.simulation.inc(1),
    })
    .map_err(|e| match e {
        tce::report::ReportError::InvalidLevel(_) | tce::report::ReportError::NoSamples => {
            Failure::input(e.to_string())
        }
        other => Failure::internal(other.to_string()),
    })?;
    bars.bootstrap.finish_and_clear();
    bars.simulation.finish_and_clear();
    let file = args.input.file.display().to_string();
    if let Some(path) = &args.html {
        let page = crate::report_html::page(&file, scores, &result);
        std::fs::write(path, page)
            .map_err(|e| Failure::internal(format!("{}: cannot write: {e}", path.display())))?;
    }
    let text = if args.json {
        json(args, &loaded.provenance, &result)?
    } else {
        summary(&file, &result)
    };
    crate::write_stdout(&text)
}
