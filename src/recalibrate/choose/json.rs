//! A [`Choice`] as JSON (`tce recalibrate --methods … --json`): one object, its keys
//! fixed here (docs/decisions.md). Non-finite numbers are `null`.

use serde::Serialize;

use super::text::{decision_words, verdict_word};
use super::Choice;
use crate::decision::compare::{Comparison, Estimate};
use crate::report::json::{Source, VERSION};
use crate::sweep::SweepLimit;

#[derive(Serialize)]
struct SettingsJson {
    methods: Vec<&'static str>,
    holdout: f64,
    seed: u64,
    statistic: String,
    resamples: usize,
    alpha: f64,
    bins: usize,
    norm: f64,
    max_bins: Option<usize>,
    paper_limit: bool,
}

#[derive(Serialize)]
struct EstimateJson {
    estimate: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep_bins: Option<usize>,
}

/// Δ = CE_method − CE_against.
#[derive(Serialize)]
struct ComparisonJson {
    against: String,
    delta: f64,
    se: f64,
    level: f64,
    lower: f64,
    upper: f64,
    interval_method: &'static str,
    p_value: f64,
    p_interval: f64,
    p_normal: Option<f64>,
    reject: bool,
    /// `better`, `worse` or `no significant difference`, from the method's side.
    verdict: &'static str,
}

#[derive(Serialize)]
struct MethodJson {
    method: &'static str,
    #[serde(flatten)]
    estimate: EstimateJson,
    vs_uncalibrated: ComparisonJson,
    vs_best_other: Option<ComparisonJson>,
}

#[derive(Serialize)]
struct DecisionJson {
    best: Option<&'static str>,
    runner_up: Option<&'static str>,
    better_than_uncalibrated: Vec<&'static str>,
    best_beats_runner_up: Option<bool>,
    words: String,
}

#[derive(Serialize)]
struct Document<'a, I> {
    tce_version: &'static str,
    command: &'static str,
    settings: SettingsJson,
    file: &'a str,
    input: &'a I,
    rows: usize,
    fit_rows: usize,
    holdout_rows: usize,
    hypothesis: &'static str,
    uncalibrated: Option<EstimateJson>,
    methods: Vec<MethodJson>,
    decision: DecisionJson,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

fn estimate(e: Estimate) -> EstimateJson {
    EstimateJson {
        estimate: e.value,
        sweep_bins: e.sweep_bins,
    }
}

fn comparison(against: String, c: &Comparison) -> ComparisonJson {
    ComparisonJson {
        against,
        delta: c.delta,
        se: c.se,
        level: 1.0 - c.settings.alpha,
        lower: c.interval.lower,
        upper: c.interval.upper,
        interval_method: match c.method {
            crate::decision::compare::Method::Bca => "bca",
            crate::decision::compare::Method::Percentile => "percentile",
        },
        p_value: c.p_value,
        p_interval: c.p_interval,
        p_normal: finite(c.p_normal),
        reject: c.reject(),
        verdict: verdict_word(c),
    }
}

/// The choice as one line of JSON: the split, every method's held-out CE and its two
/// comparisons, the decision, every setting and the version.
pub fn json<I: Serialize>(source: &Source<I>, choice: &Choice) -> String {
    let s = &choice.settings;
    let c = &s.compare;
    let methods = choice
        .candidates
        .iter()
        .map(|m| MethodJson {
            method: m.method.name(),
            estimate: estimate(m.estimate()),
            vs_uncalibrated: comparison("uncalibrated".to_owned(), &m.uncalibrated),
            vs_best_other: m
                .against_best_other()
                .map(|(other, o)| comparison(other.name().to_owned(), o)),
        })
        .collect();
    let document = Document {
        tce_version: VERSION,
        command: "recalibrate",
        settings: SettingsJson {
            methods: s.methods.iter().map(|m| m.name()).collect(),
            holdout: s.holdout,
            seed: c.seed,
            statistic: c.statistic.to_string(),
            resamples: c.resamples,
            alpha: c.alpha,
            bins: c.bins,
            norm: c.norm.p(),
            max_bins: c.sweep.max_bins,
            paper_limit: c.sweep.limit == SweepLimit::PaperCode,
        },
        file: &source.file,
        input: &source.input,
        rows: choice.rows,
        fit_rows: choice.fitting.len(),
        holdout_rows: choice.held_out.len(),
        hypothesis: "Delta = CE_method - CE_other = 0 on the held-out rows",
        uncalibrated: choice.uncalibrated_estimate().map(estimate),
        methods,
        decision: DecisionJson {
            best: choice.best().map(|b| b.method.name()),
            runner_up: choice.runner_up().map(|r| r.method.name()),
            better_than_uncalibrated: choice
                .better_than_uncalibrated()
                .iter()
                .map(|m| m.method.name())
                .collect(),
            best_beats_runner_up: choice.best_beats_runner_up(),
            words: decision_words(choice),
        },
    };
    serde_json::to_string(&document).expect("a choice serializes")
}
