//! A comparison as JSON (`tce compare --json`, Python's `Comparison.to_dict`): one
//! object, its keys fixed here (docs/decisions.md). Non-finite numbers are `null`.

use serde::Serialize;

use super::text::{decision_words, method_words};
use super::{Comparison, Estimate, Method, Verdict};
use crate::report::json::{Source, VERSION};
use crate::sweep::SweepLimit;

#[derive(Serialize)]
struct ModelJson<'a, I> {
    file: String,
    input: &'a I,
    estimate: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep_bins: Option<usize>,
}

#[derive(Serialize)]
struct SettingsJson {
    statistic: String,
    resamples: usize,
    alpha: f64,
    seed: u64,
    bins: usize,
    norm: f64,
    max_bins: Option<usize>,
    paper_limit: bool,
}

#[derive(Serialize)]
struct IntervalJson {
    level: f64,
    lower: f64,
    upper: f64,
    method: &'static str,
    words: String,
    z0: Option<f64>,
    acceleration: Option<f64>,
}

#[derive(Serialize)]
struct DecisionJson {
    alpha: f64,
    p_value: f64,
    p_interval: f64,
    p_normal: Option<f64>,
    reject: bool,
    better: Option<&'static str>,
    words: String,
}

#[derive(Serialize)]
struct Document<'a, I> {
    tce_version: &'static str,
    command: &'static str,
    settings: SettingsJson,
    n: usize,
    a: ModelJson<'a, I>,
    b: ModelJson<'a, I>,
    hypothesis: &'static str,
    delta: f64,
    se: f64,
    interval: IntervalJson,
    decision: DecisionJson,
}

fn model<'a, I>(source: &'a Source<I>, e: &Estimate) -> ModelJson<'a, I> {
    ModelJson {
        file: source.file.clone(),
        input: &source.input,
        estimate: e.value,
        sweep_bins: e.sweep_bins,
    }
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// The comparison as one line of JSON: both estimates, Δ, its interval, the p-value, the
/// decision, every setting and the version.
pub fn json<I: Serialize>(a: &Source<I>, b: &Source<I>, c: &Comparison) -> String {
    let s = &c.settings;
    let document = Document {
        tce_version: VERSION,
        command: "compare",
        settings: SettingsJson {
            statistic: s.statistic.to_string(),
            resamples: s.resamples,
            alpha: s.alpha,
            seed: s.seed,
            bins: s.bins,
            norm: s.norm.p(),
            max_bins: s.sweep.max_bins,
            paper_limit: s.sweep.limit == SweepLimit::PaperCode,
        },
        n: c.n,
        a: model(a, &c.a),
        b: model(b, &c.b),
        hypothesis: "Delta = CE_A - CE_B = 0",
        delta: c.delta,
        se: c.se,
        interval: IntervalJson {
            level: 1.0 - s.alpha,
            lower: c.interval.lower,
            upper: c.interval.upper,
            method: match c.method {
                Method::Bca => "bca",
                Method::Percentile => "percentile",
            },
            words: method_words(c),
            z0: finite(c.z0),
            acceleration: finite(c.acceleration),
        },
        decision: DecisionJson {
            alpha: s.alpha,
            p_value: c.p_value,
            p_interval: c.p_interval,
            p_normal: finite(c.p_normal),
            reject: c.reject(),
            better: match c.verdict() {
                Verdict::ABetter => Some("A"),
                Verdict::BBetter => Some("B"),
                Verdict::NoDifference => None,
            },
            words: decision_words(c),
        },
    };
    serde_json::to_string(&document).expect("a comparison serializes")
}
