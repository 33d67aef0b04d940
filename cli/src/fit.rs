//! `tce fit`: the Beta density and the twelve GLM calibration curves of one file, the
//! AIC-best model and its TCE; `tce fit-check`: Fig. 3c (ECE_bin of data simulated from
//! each file's fit against the real ECE_bin).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;
use tce::fit::beta::BetaFitError;
use tce::fit::bootstrap::{bootstrap, check_replicates, Bootstrap, BootstrapError};
use tce::fit::check::{check_repetitions, compare_ece, CheckError};
use tce::fit::glm::{GlmData, Validity};
use tce::fit::saturation::AtomVariant;
use tce::fit::{
    fit_model, fit_model_with_point_masses, AtomAccuracy, EndpointRule, FitError, FittedModel,
    SaturationFit,
};

use crate::input;
use crate::{ColumnArgs, Failure};

/// Options of `tce fit`.
#[derive(Args)]
pub struct FitArgs {
    /// CSV file with `confidence` and `correct` columns; `-` reads stdin.
    file: PathBuf,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
    /// Write an SVG: the fitted curve over the reliability diagram and the fitted density
    /// over the score histogram.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Bootstrap replicates for coefficient uncertainty (0: none; at most 100000,
    /// tce::fit::bootstrap::MAX_REPLICATES).
    #[arg(long, value_name = "N", default_value_t = 0)]
    bootstrap: usize,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Scores within this distance of 0 or 1 are taken to be this far from it.
    #[arg(long, default_value_t = tce::fit::endpoint::DEFAULT_EPSILON)]
    epsilon: f64,
    /// Point masses at scores of exactly 0 and 1: none (a pure Beta, the default), or
    /// atoms whose accuracy comes from the curve, is fitted separately, or is chosen by
    /// AIC (aic). Not with --bootstrap or --svg, which show the pure-Beta fit.
    #[arg(long, value_enum, default_value_t = PointMassArg::None)]
    point_mass: PointMassArg,
    #[command(flatten)]
    columns: ColumnArgs,
}

/// Options of `tce fit-check`.
#[derive(Args)]
pub struct FitCheckArgs {
    /// CSV files to fit and check.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Simulated data sets per file (at least 2; at most 100000,
    /// tce::fit::check::MAX_REPETITIONS).
    #[arg(long, default_value_t = 200)]
    reps: usize,
    /// Seed of the simulation.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Point masses at scores of exactly 0 and 1: none (a pure Beta, the default), or
    /// atoms whose accuracy comes from the curve, is fitted separately, or is chosen by
    /// AIC (aic).
    #[arg(long, value_enum, default_value_t = PointMassArg::None)]
    point_mass: PointMassArg,
    #[command(flatten)]
    columns: ColumnArgs,
}

/// `--point-mass` of `tce fit`, `tce fit-check` and `tce table1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PointMassArg {
    /// A pure Beta density (the paper's model).
    None,
    /// Atoms with the accuracy of the GLM fitted on all rows.
    Curve,
    /// Atoms with their own accuracy, the GLMs on the other rows.
    Fitted,
    /// Curve or fitted, whichever has the lower AIC.
    Aic,
}

impl PointMassArg {
    /// Where the library takes the atoms' accuracies from; `None` for a pure Beta.
    pub fn accuracy(self) -> Option<AtomAccuracy> {
        match self {
            PointMassArg::None => None,
            PointMassArg::Curve => Some(AtomAccuracy::FromCurve),
            PointMassArg::Fitted => Some(AtomAccuracy::Fitted),
            PointMassArg::Aic => Some(AtomAccuracy::ByAic),
        }
    }
}

/// The fit `--point-mass` asks for: [`fit_model`] (a pure Beta) or
/// [`fit_model_with_point_masses`]. The one dispatch of `tce fit`, `tce fit-check` and
/// `tce table1`.
pub fn fit_samples(
    scores: &[f64],
    labels: &[u8],
    rule: &EndpointRule,
    point_mass: PointMassArg,
) -> Result<FittedModel, FitError> {
    match point_mass.accuracy() {
        None => fit_model(scores, labels, rule),
        Some(choice) => fit_model_with_point_masses(scores, labels, rule, choice),
    }
}

/// The name of the variant a point-mass fit chose.
pub fn chosen_name(saturation: &SaturationFit) -> &'static str {
    match saturation.chosen {
        AtomAccuracy::Fitted => "fitted",
        _ => "curve",
    }
}

#[derive(Serialize)]
struct BetaJson {
    alpha: f64,
    beta: f64,
    nll: f64,
}

#[derive(Serialize)]
struct GlmJson {
    name: String,
    b0: f64,
    b1: f64,
    nll: f64,
    aic: f64,
    valid: bool,
    /// Why not valid, or why valid but without a simulator curve.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bootstrap: Option<CoefficientsJson>,
}

#[derive(Serialize)]
struct SpreadJson {
    se: f64,
    lower: f64,
    upper: f64,
}

#[derive(Serialize)]
struct CoefficientsJson {
    b0: SpreadJson,
    b1: SpreadJson,
    invalid_replicates: usize,
}

#[derive(Serialize)]
struct TceJson {
    l1: f64,
    l2: f64,
}

/// What `tce fit` was run with.
#[derive(Serialize)]
struct FitSettingsJson {
    file: String,
    columns: input::Columns,
    epsilon: f64,
    bootstrap: usize,
    seed: u64,
    svg: Option<String>,
    point_mass: PointMassArg,
}

/// One way of fitting the atoms' accuracies (`accuracy_0`/`accuracy_1` null where
/// there is no atom).
#[derive(Serialize)]
struct AtomVariantJson {
    best: String,
    accuracy_0: Option<f64>,
    accuracy_1: Option<f64>,
    aic: f64,
}

/// The point masses at 0.0 and 1.0 of `--point-mass`.
#[derive(Serialize)]
struct PointMassesJson {
    /// Rows with a score of exactly 0.0 and exactly 1.0.
    count_0: usize,
    count_1: usize,
    /// The atoms' weights, the sample fractions.
    pi_0: f64,
    pi_1: f64,
    /// The model's accuracies at the atoms (of the chosen variant).
    accuracy_0: Option<f64>,
    accuracy_1: Option<f64>,
    /// "curve" or "fitted".
    chosen: &'static str,
    from_curve: AtomVariantJson,
    /// Null if the unsaturated rows admit no usable GLM.
    fitted: Option<AtomVariantJson>,
}

fn variant_json(variant: &AtomVariant) -> AtomVariantJson {
    AtomVariantJson {
        best: variant.best.name(),
        accuracy_0: variant.accuracy[0],
        accuracy_1: variant.accuracy[1],
        aic: variant.aic,
    }
}

fn point_masses_json(saturation: &SaturationFit) -> PointMassesJson {
    let masses = &saturation.point_masses;
    let [pi_0, pi_1] = masses.weights();
    PointMassesJson {
        count_0: saturation.counts[0],
        count_1: saturation.counts[1],
        pi_0,
        pi_1,
        accuracy_0: masses.zero().map(|a| a.accuracy()),
        accuracy_1: masses.one().map(|a| a.accuracy()),
        chosen: chosen_name(saturation),
        from_curve: variant_json(&saturation.from_curve),
        fitted: saturation.fitted.as_ref().map(variant_json),
    }
}

#[derive(Serialize)]
struct FitJson {
    tce_version: &'static str,
    command: &'static str,
    settings: FitSettingsJson,
    n: usize,
    beta: BetaJson,
    glms: Vec<GlmJson>,
    best: String,
    /// Of the model with its atoms, if any.
    tce: TceJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    bootstrap: Option<BetaBootstrapJson>,
    /// Present with `--point-mass` other than none.
    #[serde(skip_serializing_if = "Option::is_none")]
    point_masses: Option<PointMassesJson>,
}

#[derive(Serialize)]
struct BetaBootstrapJson {
    replicates: usize,
    alpha: SpreadJson,
    beta: SpreadJson,
}

fn spread(s: &tce::fit::bootstrap::Spread) -> SpreadJson {
    SpreadJson {
        se: s.se,
        lower: s.lower,
        upper: s.upper,
    }
}

fn note(fit: &tce::fit::GlmFit) -> Option<String> {
    match (&fit.validity, &fit.curve) {
        (Validity::MeanLeavesUnitInterval, _) => Some("mean leaves (0, 1) on the data".to_string()),
        (Validity::NotConverged, _) => Some("did not converge".to_string()),
        (Validity::Valid, Err(e)) => Some(format!("no simulator curve: {e}")),
        (Validity::Valid, Ok(_)) => None,
    }
}

fn to_json(fit: &FittedModel, boot: Option<&Bootstrap>, settings: FitSettingsJson) -> FitJson {
    FitJson {
        tce_version: crate::VERSION,
        command: "fit",
        settings,
        n: fit.n,
        beta: BetaJson {
            alpha: fit.beta.density.alpha(),
            beta: fit.beta.density.beta(),
            nll: fit.beta.nll,
        },
        glms: fit
            .glms
            .iter()
            .enumerate()
            .map(|(i, g)| GlmJson {
                name: g.spec.name(),
                b0: g.b0,
                b1: g.b1,
                nll: g.nll,
                aic: g.aic,
                valid: g.validity == Validity::Valid,
                note: note(g),
                bootstrap: boot.map(|b| CoefficientsJson {
                    b0: spread(&b.glms[i].b0),
                    b1: spread(&b.glms[i].b1),
                    invalid_replicates: b.glms[i].invalid,
                }),
            })
            .collect(),
        best: fit.best_glm().spec.name(),
        tce: TceJson {
            l1: fit.tce_l1,
            l2: fit.tce_l2,
        },
        bootstrap: boot.map(|b| BetaBootstrapJson {
            replicates: b.replicates,
            alpha: spread(&b.alpha),
            beta: spread(&b.beta),
        }),
        point_masses: fit.saturation.as_ref().map(point_masses_json),
    }
}

/// "a_0 = …, a_1 = …" for the atoms a variant has.
fn accuracies(accuracy: &[Option<f64>; 2]) -> String {
    let cells: Vec<String> = accuracy
        .iter()
        .enumerate()
        .filter_map(|(k, a)| a.map(|a| format!("a_{k} = {a:.6}")))
        .collect();
    cells.join(", ")
}

/// The point-mass lines of the table: counts, weights, both variants and the choice.
fn point_mass_lines(out: &mut String, saturation: &SaturationFit, n: usize) {
    let masses = &saturation.point_masses;
    if masses.is_none() {
        let _ = writeln!(
            out,
            "Point masses: none (no score is exactly 0 or 1), so this is the pure-Beta fit"
        );
        return;
    }
    let [pi_0, pi_1] = masses.weights();
    let _ = writeln!(
        out,
        "Point masses: {} scores of exactly 0 (pi_0 = {pi_0:.6}), {} of exactly 1 \
         (pi_1 = {pi_1:.6}); the Beta density is fitted on the other {} scores",
        saturation.counts[0],
        saturation.counts[1],
        n - saturation.counts[0] - saturation.counts[1]
    );
    // One line per variant, the chosen one marked *.
    let fitted_chosen = saturation.chosen == AtomAccuracy::Fitted;
    for (variant, chosen, how) in [
        (
            Some(&saturation.from_curve),
            !fitted_chosen,
            "from the curve (GLMs on all rows)",
        ),
        (
            saturation.fitted.as_ref(),
            fitted_chosen,
            "fitted separately (GLMs on the other rows)",
        ),
    ] {
        let mark = if chosen { "*" } else { " " };
        let _ = match variant {
            Some(v) => writeln!(
                out,
                "{mark} atom accuracy {how}:  {}, best GLM {}, AIC {:.3}",
                accuracies(&v.accuracy),
                v.best.name(),
                v.aic
            ),
            None => writeln!(out, "  atom accuracy {how}: no usable GLM"),
        };
    }
    let _ = writeln!(
        out,
        "atom accuracy used (marked *): {}; the GLMs below are that variant's",
        chosen_name(saturation)
    );
}

fn table(fit: &FittedModel, boot: Option<&Bootstrap>) -> String {
    let mut out = String::new();
    let d = fit.beta.density;
    let _ = writeln!(out, "n = {}", fit.n);
    let _ = writeln!(
        out,
        "Beta density: alpha = {:.6}, beta = {:.6}, log-likelihood = {:.4}",
        d.alpha(),
        d.beta(),
        -fit.beta.nll
    );
    if let Some(saturation) = &fit.saturation {
        point_mass_lines(&mut out, saturation, fit.n);
    }
    if let Some(b) = boot {
        let _ = writeln!(
            out,
            "  bootstrap ({} replicates): alpha se {:.4} [{:.4}, {:.4}], beta se {:.5} [{:.5}, {:.5}]",
            b.replicates, b.alpha.se, b.alpha.lower, b.alpha.upper, b.beta.se, b.beta.lower, b.beta.upper
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "  {:<22} {:>11} {:>11} {:>12} {:>12}  note",
        "calibration GLM", "b0", "b1", "NLL", "AIC"
    );
    for (i, g) in fit.glms.iter().enumerate() {
        let mark = if i == fit.best { "*" } else { " " };
        let _ = writeln!(
            out,
            "{mark} {:<22} {:>11.5} {:>11.5} {:>12.3} {:>12.3}  {}",
            g.spec.name(),
            g.b0,
            g.b1,
            g.nll,
            g.aic,
            note(g).unwrap_or_default()
        );
        if let Some(b) = boot {
            let s = &b.glms[i];
            let _ = writeln!(
                out,
                "  {:<22} se {:>8.5} {:>11.5}   95% b0 [{:.4}, {:.4}] b1 [{:.4}, {:.4}]{}",
                "",
                s.b0.se,
                s.b1.se,
                s.b0.lower,
                s.b0.upper,
                s.b1.lower,
                s.b1.upper,
                if s.invalid > 0 {
                    format!(" ({} invalid)", s.invalid)
                } else {
                    String::new()
                }
            );
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "best (lowest AIC, marked *): {} = {}",
        fit.best_glm().spec.name(),
        fit.model.curve
    );
    let _ = writeln!(
        out,
        "TCE of the fitted model{}: l1 = {:.6}, l2 = {:.6}",
        if fit.saturation.is_some() {
            " (with its point masses)"
        } else {
            ""
        },
        fit.tce_l1,
        fit.tce_l2
    );
    out
}

fn rule(epsilon: f64) -> Result<EndpointRule, Failure> {
    EndpointRule::new(epsilon).map_err(|e| Failure::input(e.to_string()))
}

/// A failed fit of the file at `path`: data that admit no fit (too few rows, all scores
/// or all labels equal, no usable curve) are bad input (exit 2); a fit that did not
/// converge, or a TCE that could not be computed, is not the input's fault (exit 1).
pub fn fit_failure(path: &Path, error: &FitError) -> Failure {
    let message = format!("{}: {error}", path.display());
    match error {
        FitError::Beta(BetaFitError::NotConverged { .. })
        | FitError::Tce(_)
        | FitError::PointMass(_) => Failure::internal(message),
        FitError::Beta(_) | FitError::Glm(_) | FitError::NoUsableCurve => Failure::input(message),
    }
}

/// A bootstrap refused: too many replicates, or more memory than the allocator gives for
/// them; both are the options' doing (exit 2).
fn bootstrap_failure(error: &BootstrapError) -> Failure {
    match error {
        BootstrapError::TooManyReplicates(_) => Failure::input(format!("--bootstrap: {error}")),
        BootstrapError::OutOfMemory { .. } => Failure::input(error.to_string()),
    }
}

/// Runs `tce fit`.
pub fn run(args: &FitArgs) -> Result<(), Failure> {
    let rule = rule(args.epsilon)?;
    // The library's bound, before the input is read.
    check_replicates(args.bootstrap).map_err(|e| bootstrap_failure(&e))?;
    if args.point_mass != PointMassArg::None {
        // Both resample or draw the pure-Beta model; neither knows the atoms.
        for (used, option) in [
            (args.bootstrap > 0, "--bootstrap"),
            (args.svg.is_some(), "--svg"),
        ] {
            if used {
                return Err(Failure::input(format!(
                    "{option} shows the pure-Beta fit and cannot be combined with --point-mass"
                )));
            }
        }
    }
    let samples = crate::read_samples(&args.file, &args.columns)?;
    let fit = fit_samples(&samples.scores, &samples.labels, &rule, args.point_mass)
        .map_err(|e| fit_failure(&args.file, &e))?;
    let boot = if args.bootstrap > 0 {
        let data = GlmData::new(&samples.scores, &samples.labels, &rule)
            .map_err(|e| fit_failure(&args.file, &FitError::Glm(e)))?;
        Some(
            bootstrap(&samples.scores, &data, &rule, args.bootstrap, args.seed)
                .map_err(|e| bootstrap_failure(&e))?,
        )
    } else {
        None
    };
    if let Some(path) = &args.svg {
        crate::fit_svg::write(path, &samples.scores, &samples.labels, &fit)
            .map_err(Failure::internal)?;
    }
    let text = if args.json {
        let settings = FitSettingsJson {
            file: args.file.display().to_string(),
            columns: samples.columns.clone(),
            epsilon: args.epsilon,
            bootstrap: args.bootstrap,
            seed: args.seed,
            svg: args.svg.as_ref().map(|p| p.display().to_string()),
            point_mass: args.point_mass,
        };
        crate::json_line(&to_json(&fit, boot.as_ref(), settings))?
    } else {
        table(&fit, boot.as_ref())
    };
    crate::write_stdout(&text)
}

/// A check that could not run: repetitions out of range are the options' doing (exit 2),
/// a failure on a file's data is not (exit 1).
fn check_failure(path: Option<&Path>, error: &CheckError) -> Failure {
    match (error, path) {
        (CheckError::RepetitionsOutOfRange(_), _) => Failure::input(format!("--reps: {error}")),
        (_, Some(path)) => Failure::internal(format!("{}: {error}", path.display())),
        (_, None) => Failure::internal(error.to_string()),
    }
}

/// Runs `tce fit-check`: a markdown table, one row per file.
pub fn run_check(args: &FitCheckArgs) -> Result<(), Failure> {
    // The library's bounds (one repetition has no spread, so its z column would be
    // meaningless), before any file is read.
    check_repetitions(args.reps).map_err(|e| check_failure(None, &e))?;
    let rule = EndpointRule::default();
    let mut out = String::new();
    let atoms = args.point_mass != PointMassArg::None;
    let _ = writeln!(
        out,
        "| file | n | best GLM | alpha | beta |{} TCE_2 % | real ECE_bin % | simulated mean % | simulated sd % | z = abs(real − sim) / sd |",
        if atoms { " pi_1 | a_1 | a_1 from |" } else { "" }
    );
    let _ = writeln!(
        out,
        "|---|---:|---|---:|---:|{}---:|---:|---:|---:|---:|",
        if atoms { "---:|---:|---|" } else { "" }
    );
    for path in &args.files {
        let samples = crate::read_samples(path, &args.columns)?;
        let fit = fit_samples(&samples.scores, &samples.labels, &rule, args.point_mass)
            .map_err(|e| fit_failure(path, &e))?;
        let atom_cells = match &fit.saturation {
            Some(saturation) => {
                let one = saturation.point_masses.one();
                format!(
                    " {:.4} | {} | {} |",
                    saturation.point_masses.weights()[1],
                    one.map_or_else(|| "–".into(), |a| format!("{:.5}", a.accuracy())),
                    chosen_name(saturation)
                )
            }
            None => String::new(),
        };
        let check = compare_ece(
            &fit.model,
            &samples.scores,
            &samples.labels,
            args.reps,
            args.seed,
        )
        .map_err(|e| check_failure(Some(path), &e))?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let _ = writeln!(
            out,
            "| {name} | {} | {} | {:.4} | {:.5} |{atom_cells} {:.3} | {:.3} | {:.3} | {:.3} | {:.2} |",
            check.n,
            fit.best_glm().spec.name(),
            fit.model.density.alpha(),
            fit.model.density.beta(),
            100.0 * fit.tce_l2,
            100.0 * check.real,
            100.0 * check.simulated_mean,
            100.0 * check.simulated_sd,
            check.z()
        );
    }
    flexible_checks(args, &mut out)?;
    crate::write_stdout(&out)
}

/// The second table of `tce fit-check`: the check `tce report` makes of its default
/// (flexible) model, on the same files: real EW ECE_bin and EM ECE_sweep against the
/// central 99 % of `--reps` data sets simulated from the fit.
fn flexible_checks(args: &FitCheckArgs, out: &mut String) -> Result<(), Failure> {
    let settings = tce::report::ReportSettings {
        resamples: 0,
        simulations: Some(args.reps),
        seed: args.seed,
        test: None,
        ..Default::default()
    };
    let _ = writeln!(
        out,
        "\nThe report's flexible model (`tce report`'s default), checked as the report checks it: \
         real values against the central {:.0}% of {} simulated data sets.\n",
        100.0 * tce::report::FIT_CHECK_LEVEL,
        args.reps
    );
    let _ = writeln!(
        out,
        "| file | n | density | curve | TCE_2 % | real EW ECE_bin % | simulated (central) | real EM ECE_sweep % | simulated (central) | reproduced |"
    );
    let _ = writeln!(out, "|---|---:|---|---|---:|---:|---|---:|---|---|");
    for path in &args.files {
        let samples = crate::read_samples(path, &args.columns)?;
        let report = tce::report::report(&samples.scores, &samples.labels, &settings, &|_| {})
            .map_err(|e| Failure::internal(format!("{}: {e}", path.display())))?;
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let p = match &report.parametric {
            Ok(p) => p,
            Err(e) => {
                let _ = writeln!(out, "| {name} | {} | no fit: {e} | | | | | | | |", report.n);
                continue;
            }
        };
        let density = match &p.model.density {
            tce::sim::ScoreDensity::Beta(b) => format!("Beta({:.3}, {:.4})", b.alpha(), b.beta()),
            tce::sim::ScoreDensity::LogitMixture(m) => format!("log-odds mixture of {}", m.len()),
        };
        let atoms = if p.model.point_masses.is_none() {
            String::new()
        } else {
            format!(
                " + atoms ({:.1}% at 1)",
                100.0 * p.model.point_masses.weights()[1]
            )
        };
        let cell = |c: &tce::report::FitCheck| {
            (
                format!("{:.3}", 100.0 * c.real),
                format!(
                    "{:.3} ({:.3}–{:.3})",
                    100.0 * c.simulated_mean,
                    100.0 * c.interval.lower,
                    100.0 * c.interval.upper
                ),
            )
        };
        let (ew, em) = match p.checks.as_slice() {
            [ew, em] => (cell(ew), cell(em)),
            _ => (("–".into(), "–".into()), ("–".into(), "–".into())),
        };
        let _ = writeln!(
            out,
            "| {name} | {} | {density}{atoms} | {} | {:.3} | {} | {} | {} | {} | {} |",
            report.n,
            p.fit.curve_name(),
            100.0 * p.fit.tce_l1_l2().1,
            ew.0,
            ew.1,
            em.0,
            em.1,
            if p.reproduces { "yes" } else { "**no**" }
        );
    }
    Ok(())
}
