//! A calibration test as JSON (`tce test --json`, Python's `CalibrationTest.to_json` and
//! `to_dict`): one object, its keys fixed here (docs/decisions.md). Non-finite numbers
//! (an infinite Hosmer–Lemeshow C or Spiegelhalter Z) are `null`.

use serde::Serialize;

use super::text::{basis_words, decision_words, notes};
use super::{Basis, CalibrationTest, Reference, Statistic};
use crate::report::json::{Source, VERSION};
use crate::sweep::SweepLimit;

#[derive(Serialize)]
struct SettingsJson<'a, I> {
    file: String,
    input: &'a I,
    statistic: String,
    resamples: usize,
    alpha: f64,
    seed: u64,
    bins: usize,
    norm: f64,
    max_bins: Option<usize>,
    paper_limit: bool,
    groups: usize,
    power_simulations: usize,
}

#[derive(Serialize)]
struct ResultJson {
    name: String,
    method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sweep_bins: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    p_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resamples: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    at_least: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    degrees_of_freedom: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reject: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    power: Option<PowerJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    undefined: Option<String>,
}

#[derive(Serialize)]
struct PowerJson {
    power: f64,
    se: f64,
}

#[derive(Serialize)]
struct FitJson {
    density: String,
    curve: String,
    tce: Option<f64>,
    calibrated: bool,
}

#[derive(Serialize)]
struct ChoiceJson {
    statistic: String,
    basis: &'static str,
    words: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fit_error: Option<String>,
    fit: Option<FitJson>,
    power_simulations: usize,
}

#[derive(Serialize)]
struct DecisionJson {
    alpha: f64,
    statistic: String,
    p_value: Option<f64>,
    reject: Option<bool>,
    words: String,
}

#[derive(Serialize)]
struct ContradictionsJson {
    wrong_at_one: usize,
    right_at_zero: usize,
}

#[derive(Serialize)]
struct Document<'a, I> {
    tce_version: &'static str,
    command: &'static str,
    settings: SettingsJson<'a, I>,
    n: usize,
    hits: u64,
    hypothesis: &'static str,
    decision: DecisionJson,
    choice: ChoiceJson,
    tests: Vec<ResultJson>,
    contradictions: ContradictionsJson,
    notes: Vec<String>,
}

fn method(statistic: &Statistic) -> &'static str {
    match statistic {
        Statistic::Resampled(_) => "resampling",
        Statistic::Spiegelhalter => "normal",
        Statistic::HosmerLemeshow => "chi_square",
    }
}

/// The test as one line of JSON: every p-value, the choice of the deciding statistic
/// with each candidate's power, the decision, every setting and the version.
pub fn json<I: Serialize>(source: &Source<I>, t: &CalibrationTest) -> String {
    let s = &t.settings;
    let tests = t
        .results
        .iter()
        .map(|r| {
            let outcome = r.outcome.as_ref().ok();
            let reference = outcome.map(|o| &o.reference);
            let (resamples, at_least, degrees_of_freedom) = match reference {
                Some(Reference::Resampling {
                    resamples,
                    at_least,
                }) => (Some(*resamples), Some(*at_least), None),
                Some(Reference::ChiSquare { degrees_of_freedom }) => {
                    (None, None, Some(*degrees_of_freedom))
                }
                _ => (None, None, None),
            };
            ResultJson {
                name: r.statistic.to_string(),
                method: method(&r.statistic),
                value: outcome.map(|o| o.value),
                sweep_bins: outcome.and_then(|o| o.sweep_bins),
                p_value: outcome.map(|o| o.p_value),
                resamples,
                at_least,
                degrees_of_freedom,
                reject: outcome.map(|o| o.p_value <= s.alpha),
                power: t
                    .choice
                    .powers
                    .iter()
                    .find(|p| p.statistic == r.statistic)
                    .map(|p| PowerJson {
                        power: p.power,
                        se: p.se,
                    }),
                undefined: r.outcome.as_ref().err().map(ToString::to_string),
            }
        })
        .collect();
    let decision = t.decision();
    let document = Document {
        tce_version: VERSION,
        command: "test",
        settings: SettingsJson {
            file: source.file.clone(),
            input: &source.input,
            statistic: s.statistic.to_string(),
            resamples: s.resamples,
            alpha: s.alpha,
            seed: s.seed,
            bins: s.bins,
            norm: s.norm.p(),
            max_bins: s.sweep.max_bins,
            paper_limit: s.sweep.limit == SweepLimit::PaperCode,
            groups: s.groups,
            power_simulations: s.power_simulations,
        },
        n: t.n,
        hits: t.hits,
        hypothesis: "E[Y | f(X)] = f(X)",
        decision: DecisionJson {
            alpha: s.alpha,
            statistic: t.chosen().statistic.to_string(),
            p_value: decision.map(|d| d.p_value),
            reject: decision.map(|d| d.reject),
            words: decision_words(t),
        },
        choice: ChoiceJson {
            statistic: t.chosen().statistic.to_string(),
            basis: match t.choice.basis {
                Basis::Given => "given",
                Basis::HighestPower => "highest_power",
                Basis::CalibratedFit => "calibrated_fit",
                Basis::NoFit(_) => "no_fit",
            },
            words: basis_words(t),
            fit_error: match &t.choice.basis {
                Basis::NoFit(e) => Some(e.to_string()),
                _ => None,
            },
            fit: t.choice.fit.as_ref().map(|fit| FitJson {
                density: fit.model().density.describe(),
                curve: fit.curve_name(),
                tce: t.choice.fit_tce,
                calibrated: t.choice.basis == Basis::CalibratedFit,
            }),
            power_simulations: t.choice.simulations,
        },
        tests,
        contradictions: ContradictionsJson {
            wrong_at_one: t.contradictions.wrong_at_one,
            right_at_zero: t.contradictions.right_at_zero,
        },
        notes: notes(t),
    };
    serde_json::to_string(&document).expect("a test serializes")
}
