//! The report as JSON (`tce report --json`, Python's `Report.to_json`): one object, its
//! keys fixed here (docs/report.md). Fractions, not percentages.

use serde::Serialize;

use super::classwise::{ClasswiseReport, MarginalResult};
use super::text::{
    alternative_words, bias_of, calibration_test_words, chosen_power, distribution,
    recommendation_words, BinsDistribution,
};
use super::{
    Basis, EstimatorResult, Interval, IntervalKind, Report, ReportSettings, Unavailable,
    FIT_CHECK_LEVEL, JACKKNIFE_GROUPS,
};
use crate::fit::monotone_curve::CurveChoice;
use crate::fit::AtomAccuracy;
use crate::report::{Parametric, ParametricFit};
use crate::sim::ScoreDensity;
use crate::{Closure, SweepLimit, Ties};

/// The version every output carries (`tce_version`): the workspace's one version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

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
    /// Weighted rows only: Σw, Σw·y and Kish's effective count of the bin (`count` and
    /// `hits` then count rows; `mean_score` and `accuracy` are weighted).
    #[serde(skip_serializing_if = "Option::is_none")]
    weight: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    weighted_hits: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    effective_count: Option<f64>,
}

/// A weighted report's weights (`report::WeightSummary`).
#[derive(Serialize)]
struct WeightsJson {
    rows: usize,
    zero_rows: usize,
    total: f64,
    effective_n: f64,
    accuracy: f64,
    mean_confidence: f64,
    integer: bool,
    words: String,
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
    /// `flexible` or `paper` (`--model`).
    model: &'static str,
    /// The score density: `{kind: "beta", alpha, beta}` or `{kind: "logit_mixture",
    /// components: [{weight, mean, sd}]}`, with the candidates' AICs (flexible model).
    density: DensityJson,
    /// The calibration curve: `{kind: "glm", name, b0, b1}`, `{kind: "monotone_spline",
    /// intercept, knots, slopes}` or `{kind: "identity"}`, with its AIC.
    curve: CurveJson,
    /// The Beta's parameters, when the density is a Beta.
    #[serde(skip_serializing_if = "Option::is_none")]
    alpha: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    beta: Option<f64>,
    /// The GLM's name and coefficients, when the curve is a GLM.
    #[serde(skip_serializing_if = "Option::is_none")]
    glm: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b0: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b1: Option<f64>,
    /// The chosen curve's AIC.
    aic: f64,
    /// Atoms at 0 and 1 (`null`: no score of exactly 0 or 1).
    point_masses: Option<PointMassesJson>,
    tce: f64,
    tce_l1: f64,
    tce_l2: f64,
    simulations: usize,
    check_level: f64,
    checks: Vec<CheckJson>,
    reproduces: bool,
    /// The fitted model's TCE as an estimator, with its error at n from refits
    /// (`null` with 0 refits).
    plug_in: Option<PlugInJson>,
}

#[derive(Serialize)]
struct PlugInJson {
    estimate: f64,
    refits: usize,
    failed: usize,
    /// Against the fitted model's TCE (`null` if no refit succeeded).
    bias: Option<BiasJson>,
    least_biased: bool,
}

#[derive(Serialize)]
struct ComponentJson {
    weight: f64,
    mean: f64,
    sd: f64,
}

#[derive(Serialize)]
struct DensityJson {
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    alpha: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    beta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    components: Option<Vec<ComponentJson>>,
    /// The flexible fit's candidates: the Beta's AIC and the log-odds mixture's.
    #[serde(skip_serializing_if = "Option::is_none")]
    aic_beta: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aic_mixture: Option<f64>,
}

#[derive(Serialize)]
struct CurveJson {
    kind: &'static str,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    b0: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    b1: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    intercept: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    knots: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    slopes: Option<Vec<f64>>,
    aic: f64,
}

fn density_json(p: &Parametric) -> DensityJson {
    let (aic_beta, aic_mixture) = match &p.fit {
        ParametricFit::Flexible(fit) => (fit.beta_aic(), fit.mixture_aic()),
        ParametricFit::Paper(_) => (None, None),
    };
    match &p.model.density {
        ScoreDensity::Beta(b) => DensityJson {
            kind: "beta",
            alpha: Some(b.alpha()),
            beta: Some(b.beta()),
            components: None,
            aic_beta,
            aic_mixture,
        },
        ScoreDensity::LogitMixture(m) => DensityJson {
            kind: "logit_mixture",
            alpha: None,
            beta: None,
            components: Some(
                m.components()
                    .iter()
                    .map(|c| ComponentJson {
                        weight: c.weight,
                        mean: c.mean,
                        sd: c.sd,
                    })
                    .collect(),
            ),
            aic_beta,
            aic_mixture,
        },
    }
}

fn curve_json(p: &Parametric) -> CurveJson {
    let glm = |g: &crate::fit::GlmFit| CurveJson {
        kind: "glm",
        name: g.spec.name(),
        b0: Some(g.b0),
        b1: Some(g.b1),
        intercept: None,
        knots: None,
        slopes: None,
        aic: g.aic,
    };
    match &p.fit {
        ParametricFit::Paper(fit) => glm(fit.best_glm()),
        ParametricFit::Flexible(fit) => match fit.curves.best {
            Some(CurveChoice::Glm(i)) => glm(&fit.curves.glms[i]),
            Some(CurveChoice::Monotone(i)) => {
                let (curve, aic) = fit.curves.monotone[i]
                    .fit
                    .as_ref()
                    .map(|f| (f.curve.clone(), f.aic))
                    .unwrap_or((crate::sim::MonotoneCurve::identity(), f64::NAN));
                CurveJson {
                    kind: "monotone_spline",
                    name: fit.curve_name(),
                    b0: None,
                    b1: None,
                    intercept: Some(curve.intercept()),
                    knots: Some(curve.knots().to_vec()),
                    slopes: Some(curve.slopes().to_vec()),
                    aic,
                }
            }
            Some(CurveChoice::Identity) | None => CurveJson {
                kind: "identity",
                name: fit.curve_name(),
                b0: None,
                b1: None,
                intercept: None,
                knots: None,
                slopes: None,
                aic: 2.0 * fit.curves.identity_nll,
            },
        },
    }
}

#[derive(Serialize)]
struct AtomJson {
    rows: usize,
    mass: f64,
    accuracy: f64,
}

#[derive(Serialize)]
struct PointMassesJson {
    zero: Option<AtomJson>,
    one: Option<AtomJson>,
    /// `curve` or `fitted`: where the atoms' accuracies come from (the lower AIC).
    accuracy_from: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    aic_curve: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    aic_fitted: Option<f64>,
}

fn point_masses_json(p: &Parametric) -> Option<PointMassesJson> {
    let fit = match &p.fit {
        ParametricFit::Paper(fit) => fit,
        ParametricFit::Flexible(fit) => {
            let atoms = &fit.model.point_masses;
            if atoms.is_none() {
                return None;
            }
            let atom = |k: usize, a: Option<crate::sim::PointMass>| {
                a.map(|a| AtomJson {
                    rows: fit.atom_counts[k],
                    mass: a.mass(),
                    accuracy: a.accuracy(),
                })
            };
            return Some(PointMassesJson {
                zero: atom(0, atoms.zero()),
                one: atom(1, atoms.one()),
                accuracy_from: "fitted",
                aic_curve: None,
                aic_fitted: None,
            });
        }
    };
    let s = fit.saturation.as_ref()?;
    let atom = |k: usize, a: Option<crate::sim::PointMass>| {
        a.map(|a| AtomJson {
            rows: s.counts[k],
            mass: a.mass(),
            accuracy: a.accuracy(),
        })
    };
    Some(PointMassesJson {
        zero: atom(0, s.point_masses.zero()),
        one: atom(1, s.point_masses.one()),
        accuracy_from: match s.chosen {
            AtomAccuracy::Fitted => "fitted",
            _ => "curve",
        },
        aic_curve: Some(s.from_curve.aic),
        aic_fitted: s.fitted.as_ref().map(|v| v.aic),
    })
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
struct SettingsJson<'a, I> {
    file: String,
    input: &'a I,
    bins: usize,
    norm: f64,
    closure: &'static str,
    ties: &'static str,
    max_bins: Option<usize>,
    paper_limit: bool,
    resamples: usize,
    simulations: usize,
    refits: usize,
    level: f64,
    seed: u64,
    kde: bool,
    epsilon: f64,
    /// `flexible` or `paper`.
    model: &'static str,
    jackknife_groups: usize,
    /// The calibration test's resamples, power simulations and α (`null` without a test,
    /// and in a classwise report, which has none).
    test_resamples: Option<usize>,
    test_power_simulations: Option<usize>,
    alpha: Option<f64>,
}

/// "Is it calibrated?": the report's calibration test (docs/report.md).
#[derive(Serialize)]
struct CalibrationTestJson {
    /// The deciding statistic's canonical name (`ece_sweep:equal_mass`).
    statistic: String,
    /// Why it: `highest_power`, `calibrated_fit` or `no_fit`.
    basis: &'static str,
    /// Why it, in words.
    why: String,
    p_value: Option<f64>,
    alpha: f64,
    reject: Option<bool>,
    /// The power of the deciding test at n against `alternative` (`null` when not
    /// measured: with a calibrated fit it is α, without a fit unknown).
    power: Option<TestPowerJson>,
    alternative: AlternativeJson,
    /// Consistency resamples B of the resampled statistics.
    resamples: usize,
    power_simulations: usize,
    seed: u64,
    /// Every statistic of the test: name, value and p-value (`null` when undefined).
    statistics: Vec<TestStatisticJson>,
    /// The decision, the choice, the power and the p-value's source in words.
    words: Vec<String>,
}

#[derive(Serialize)]
struct TestPowerJson {
    power: f64,
    se: f64,
    n: usize,
    simulations: usize,
}

#[derive(Serialize)]
struct AlternativeJson {
    /// `flexible` or `paper`: the report's model.
    model: &'static str,
    density: Option<String>,
    curve: Option<String>,
    /// The fitted model's TCE_p (fraction).
    tce: Option<f64>,
    words: String,
}

#[derive(Serialize)]
struct TestStatisticJson {
    name: String,
    value: Option<f64>,
    p_value: Option<f64>,
}

/// The report's test as JSON; `None` without a test. A test that could not be made is
/// `{"error": ...}`.
fn calibration_test_json(r: &Report) -> Option<serde_json::Value> {
    use crate::decision::Basis as B;
    let t = match r.calibration_test.as_ref()? {
        Ok(t) => t,
        Err(e) => return Some(serde_json::json!({ "error": e.to_string() })),
    };
    let decision = t.decision();
    let fit = t.choice.fit.as_deref();
    let document = CalibrationTestJson {
        statistic: t.chosen().statistic.to_string(),
        basis: match t.choice.basis {
            B::Given => "given",
            B::HighestPower => "highest_power",
            B::CalibratedFit => "calibrated_fit",
            B::NoFit(_) => "no_fit",
        },
        why: crate::decision::text::basis_words(t),
        p_value: decision.map(|d| d.p_value),
        alpha: t.settings.alpha,
        reject: decision.map(|d| d.reject),
        power: chosen_power(t).map(|(power, se, simulations)| TestPowerJson {
            power,
            se,
            n: t.n,
            simulations,
        }),
        alternative: AlternativeJson {
            model: r.settings.model.name(),
            density: fit.map(|f| f.model().density.describe()),
            curve: fit.map(ParametricFit::curve_name),
            tce: t.choice.fit_tce,
            words: alternative_words(r, t),
        },
        resamples: t.settings.resamples,
        power_simulations: t.settings.power_simulations,
        seed: t.settings.seed,
        statistics: t
            .results
            .iter()
            .map(|s| {
                let o = s.outcome.as_ref().ok();
                TestStatisticJson {
                    name: s.statistic.to_string(),
                    // Non-finite (an infinite Z or C) as null, as in `tce test --json`.
                    value: o.map(|o| o.value).filter(|v| v.is_finite()),
                    p_value: o.map(|o| o.p_value),
                }
            })
            .collect(),
        words: calibration_test_words(r),
    };
    Some(serde_json::to_value(document).expect("a test serializes"))
}

#[derive(Serialize)]
struct ReportJson<'a, I> {
    tce_version: &'static str,
    command: &'static str,
    settings: SettingsJson<'a, I>,
    /// "Is it calibrated?" (`null` without a test).
    calibration_test: Option<serde_json::Value>,
    #[serde(flatten)]
    body: BodyJson,
}

/// The numbers of one report (of the data, or of one class in a classwise report).
#[derive(Serialize)]
struct BodyJson {
    n: usize,
    hits: u64,
    /// Weighted rows only (`n` and `hits` then count the rows of positive weight).
    #[serde(skip_serializing_if = "Option::is_none")]
    weights: Option<WeightsJson>,
    recommendation: RecommendationJson,
    estimators: Vec<EstimatorJson>,
    reliability: Vec<ReliabilityJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fit: Option<FitJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fit_error: Option<String>,
    /// Estimators left out as undefined on the data (present only when there are any).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unavailable: Vec<UnavailableJson>,
    /// Distinct scores d.
    distinct_scores: usize,
    /// What the ties mean for the binned estimators (present only when there are any):
    /// `report::ties::TieSummary::notes`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
}

#[derive(Serialize)]
struct UnavailableJson {
    name: String,
    estimator: &'static str,
    /// In a classwise report's marginal, the first class the estimator is undefined on.
    #[serde(skip_serializing_if = "Option::is_none")]
    class: Option<usize>,
    reason: String,
}

fn unavailable_json(unavailable: &[Unavailable]) -> Vec<UnavailableJson> {
    unavailable
        .iter()
        .map(|u| UnavailableJson {
            name: u.target.spec.to_string(),
            estimator: u.target.spec.kind().name(),
            class: u.class,
            reason: u.cause.to_string(),
        })
        .collect()
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

/// Where the samples came from, as the JSON's `settings.file` and `settings.input` say.
#[derive(Clone, Debug, PartialEq)]
pub struct Source<I> {
    /// The file (`-` for stdin), or what the caller names its arrays.
    pub file: String,
    /// What was read (the CLI's input provenance: format, values, reduction, rows, …),
    /// serialized as it is.
    pub input: I,
}

/// The report as one line of JSON (docs/report.md, "Reading the output"): every number,
/// every setting, the version and the seed; keys in a fixed order, non-finite numbers as
/// `null`.
pub fn json<I: Serialize>(source: &Source<I>, r: &Report) -> String {
    serde_json::to_string(&document(source, r)).expect("a report serializes")
}

fn settings_json<'a, I>(
    source: &'a Source<I>,
    settings: &ReportSettings,
    n: usize,
) -> SettingsJson<'a, I> {
    SettingsJson {
        file: source.file.clone(),
        input: &source.input,
        bins: settings.bins,
        norm: settings.norm.p(),
        closure: match settings.closure {
            Closure::Left => "left",
            Closure::Right => "right",
        },
        ties: match settings.ties {
            Ties::Split => "split",
            Ties::Keep => "keep",
        },
        max_bins: settings.sweep.max_bins,
        paper_limit: settings.sweep.limit == SweepLimit::PaperCode,
        resamples: settings.resamples,
        simulations: settings.simulations.unwrap_or(0),
        refits: settings.refits.unwrap_or(0),
        level: settings.level,
        seed: settings.seed,
        kde: settings.kde,
        epsilon: settings.endpoint.epsilon(),
        model: settings.model.name(),
        jackknife_groups: JACKKNIFE_GROUPS.min(n),
        test_resamples: settings.test.and_then(|t| t.resamples),
        test_power_simulations: settings.test.and_then(|t| t.power_simulations),
        alpha: settings.test.map(|t| t.alpha),
    }
}

fn interval_kind(kind: IntervalKind) -> &'static str {
    match kind {
        IntervalKind::Bca => "bca",
        IntervalKind::Percentile => "percentile",
    }
}

fn basis_name(basis: Basis) -> &'static str {
    match basis {
        Basis::LowestRmse => "lowest_rmse",
        Basis::LowestRmsePoorFit => "lowest_rmse_poor_fit",
        Basis::NoFit => "no_fit",
        Basis::Marginal => "marginal",
    }
}

fn document<'a, I: Serialize>(source: &'a Source<I>, r: &Report) -> ReportJson<'a, I> {
    ReportJson {
        tce_version: VERSION,
        command: "report",
        settings: settings_json(source, &r.settings, r.n),
        calibration_test: calibration_test_json(r),
        body: body(r),
    }
}

fn body(r: &Report) -> BodyJson {
    let chosen = &r.estimators[r.recommendation.estimator];
    let interval = chosen.interval();
    BodyJson {
        n: r.n,
        hits: r.hits,
        weights: r.weights.as_ref().map(|w| WeightsJson {
            rows: w.rows,
            zero_rows: w.zero_rows,
            total: w.total,
            effective_n: w.effective_n,
            accuracy: w.accuracy,
            mean_confidence: w.mean_confidence,
            integer: w.integer,
            words: super::text::weights_words(r).unwrap_or_default(),
        }),
        recommendation: RecommendationJson {
            estimator: chosen.target.spec.to_string(),
            value: chosen.estimate,
            interval: interval.as_ref().map(|(i, _)| i.into()),
            interval_kind: interval.map(|(_, k)| interval_kind(k)),
            basis: basis_name(r.recommendation.basis),
            words: recommendation_words(r),
        },
        estimators: r.estimators.iter().map(|e| estimator_json(r, e)).collect(),
        reliability: r
            .reliability
            .iter()
            .map(|rel| ReliabilityJson {
                binning: crate::sim::estimator::binning_name(rel.binning),
                bins: rel
                    .bins
                    .iter()
                    .map(|b| BinJson {
                        count: b.count,
                        hits: b.hits,
                        mean_score: b.mean_score,
                        accuracy: b.accuracy,
                        interval: b.interval.as_ref().map(Into::into),
                        weight: b.weight.map(|w| w.weight),
                        weighted_hits: b.weight.map(|w| w.weighted_hits),
                        effective_count: b.weight.map(|w| w.effective),
                    })
                    .collect(),
            })
            .collect(),
        fit: r.parametric.as_ref().ok().map(|p| {
            let (density, curve) = (density_json(p), curve_json(p));
            let (tce_l1, tce_l2) = p.fit.tce_l1_l2();
            FitJson {
                model: p.fit.kind().name(),
                alpha: density.alpha,
                beta: density.beta,
                glm: (curve.kind == "glm").then(|| curve.name.clone()),
                b0: curve.b0,
                b1: curve.b1,
                aic: curve.aic,
                density,
                curve,
                point_masses: point_masses_json(p),
                tce_l1,
                tce_l2,
                tce: p.tce,
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
                plug_in: p.plug_in.as_ref().map(|plug| PlugInJson {
                    estimate: plug.estimate,
                    refits: plug.refits,
                    failed: plug.failed,
                    bias: plug.summary.map(|b| BiasJson {
                        mean: b.mean,
                        bias: b.bias,
                        sd: b.sd,
                        rmse: b.rmse,
                        se: b.se,
                    }),
                    least_biased: plug.least_biased(&p.bias),
                }),
            }
        }),
        fit_error: r.parametric.as_ref().err().map(ToString::to_string),
        unavailable: unavailable_json(&r.unavailable),
        distinct_scores: r.ties.distinct,
        notes: r.ties.notes(r.settings.bins, r.settings.ties),
    }
}

#[derive(Serialize)]
struct MarginalJson {
    name: String,
    estimator: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    binning: Option<&'static str>,
    /// The classes' common bin count; `null` for the sweep (each class has its own b*).
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
struct ClassJson {
    class: usize,
    name: String,
    /// Whether this class was fitted and simulated (its `fit` and bias rows).
    simulated: bool,
    /// The seed of its simulations (`tce report --seed` with it on the class alone makes
    /// the same ones).
    simulation_seed: u64,
    #[serde(flatten)]
    body: BodyJson,
}

/// How a classwise report was made, and what it reduced.
#[derive(Serialize)]
struct MethodJson {
    /// `joint_resamples`: every class's intervals and the marginal's from the same
    /// resamples of the rows.
    intervals: &'static str,
    resamples: usize,
    jackknife_groups: usize,
    /// The classes fitted and simulated (class ids), all or a seeded random sample.
    simulated_classes: Vec<usize>,
    /// Whether they are a sample (fewer than the classes): the marginal's bias, sd and
    /// RMSE and `tce` are then estimated from them, and each bias `se` includes the
    /// sampling of classes.
    sampled: bool,
    /// Simulated data sets of each simulated class.
    simulations_per_class: usize,
    words: Vec<String>,
}

#[derive(Serialize)]
struct ClasswiseJson<'a, I> {
    tce_version: &'static str,
    command: &'static str,
    classwise: bool,
    settings: SettingsJson<'a, I>,
    n: usize,
    classes_count: usize,
    recommendation: RecommendationJson,
    /// The l_p mean of the classes' fitted TCEs (`null` unless every simulated class has
    /// a fit); of the simulated classes when they are a sample.
    tce: Option<f64>,
    /// Its standard error from the sampling of classes (0 when every class is simulated).
    tce_se: Option<f64>,
    method: MethodJson,
    flagged: usize,
    unfitted: usize,
    marginal: Vec<MarginalJson>,
    /// Estimators without a marginal, undefined on some class (present only then).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unavailable: Vec<UnavailableJson>,
    classes: Vec<ClassJson>,
}

fn marginal_json(m: &MarginalResult) -> MarginalJson {
    let (bootstrap, bootstrap_error) = match &m.bootstrap {
        None => (None, None),
        Some(Err(err)) => (None, Some(err.to_string())),
        Some(Ok(b)) => (
            Some(BootstrapJson {
                se: b.se,
                percentile: (&b.percentile).into(),
                bca: b.bca.as_ref().map(Into::into),
                z0: finite(b.z0),
                acceleration: finite(b.acceleration),
                sweep_bins: None,
                sweep_bins_per_resample: None,
                replicates: b.replicates.clone(),
            }),
            None,
        ),
    };
    MarginalJson {
        name: m.target.spec.to_string(),
        estimator: m.target.spec.kind().name(),
        binning: m.target.spec.binning_name(),
        bins: m.target.bins,
        value: m.value,
        bootstrap,
        bootstrap_error,
        bias: m.bias.map(|b| BiasJson {
            mean: b.mean,
            bias: b.bias,
            sd: b.sd,
            rmse: b.rmse,
            se: b.se,
        }),
    }
}

/// The classwise report as one line of JSON: the settings, the marginal estimators with
/// their intervals and bias, and every class's report with the keys of a top-label one.
pub fn classwise_json<I: Serialize>(source: &Source<I>, r: &ClasswiseReport) -> String {
    let chosen = &r.marginal[r.recommendation.estimator];
    let interval = chosen.interval();
    let value = ClasswiseJson {
        tce_version: VERSION,
        command: "report",
        classwise: true,
        settings: settings_json(source, &r.settings, r.n),
        n: r.n,
        classes_count: r.classes.len(),
        recommendation: RecommendationJson {
            estimator: chosen.target.spec.to_string(),
            value: chosen.value,
            interval: interval.as_ref().map(|(i, _)| i.into()),
            interval_kind: interval.map(|(_, k)| interval_kind(k)),
            basis: basis_name(r.recommendation.basis),
            words: super::text::classwise_words(r),
        },
        tce: r.tce,
        tce_se: r.tce_se.and_then(finite),
        method: MethodJson {
            intervals: "joint_resamples",
            resamples: r.settings.resamples,
            jackknife_groups: JACKKNIFE_GROUPS.min(r.n),
            simulated_classes: r.simulated.iter().map(|&i| r.classes[i].class).collect(),
            sampled: r.sampled(),
            simulations_per_class: r.settings.simulations.unwrap_or(0),
            words: super::text::classwise_method_words(r),
        },
        flagged: r.flagged,
        unfitted: r.unfitted,
        marginal: r.marginal.iter().map(marginal_json).collect(),
        unavailable: unavailable_json(&r.unavailable),
        classes: r
            .classes
            .iter()
            .enumerate()
            .map(|(i, c)| ClassJson {
                class: c.class,
                name: c.name.clone(),
                simulated: r.simulated.binary_search(&i).is_ok(),
                simulation_seed: c.seed,
                body: body(&c.report),
            })
            .collect(),
    };
    serde_json::to_string(&value).expect("a report serializes")
}
