//! The words of a [`Choice`], and its terminal summary (`tce recalibrate --methods`
//! prints it; the JSON quotes the same words).

use std::fmt::Write as _;

use super::{Candidate, Choice};
use crate::decision::compare::text::interval_without_rejection_words;
use crate::decision::compare::{Comparison, Estimate, Verdict};
use crate::decision::text::p_text;

fn percent(x: f64) -> String {
    format!("{:.4}%", 100.0 * x)
}

fn estimate_text(e: &Estimate) -> String {
    match e.sweep_bins {
        Some(b) => format!("{} (b* = {b})", percent(e.value)),
        None => percent(e.value),
    }
}

/// One comparison's verdict, from the method's side (A): `better`, `worse` or `no
/// significant difference`.
pub fn verdict_word(c: &Comparison) -> &'static str {
    match c.verdict() {
        Verdict::ABetter => "better",
        Verdict::BBetter => "worse",
        Verdict::NoDifference => "no significant difference",
    }
}

/// Δ, its interval and p in one line.
fn delta_text(c: &Comparison) -> String {
    let guard =
        interval_without_rejection_words(c).map_or_else(String::new, |words| format!(" ({words})"));
    format!(
        "Delta {} [{}, {}] ({}), p = {}: {}{guard}",
        percent(c.delta),
        percent(c.interval.lower),
        percent(c.interval.upper),
        c.method,
        p_text(c.p_value),
        verdict_word(c)
    )
}

/// The decision at α in words: whether any method is significantly better than the
/// uncalibrated outputs, and whether the best is significantly better than the
/// runner-up.
pub fn decision_words(choice: &Choice) -> String {
    let alpha = choice.settings.compare.alpha;
    let statistic = choice.settings.compare.statistic;
    let Some(best) = choice.best() else {
        return "no method was given".to_owned();
    };
    let p_of = |c: &Candidate| p_text(c.uncalibrated.p_value);
    let better = choice.better_than_uncalibrated();
    if better.is_empty() {
        return format!(
            "no method is significantly better calibrated than the uncalibrated outputs by \
             {statistic} at alpha = {alpha} (the lowest CE, {}, has p = {}): the data do not \
             show that recalibrating helps, which is not evidence that it does not",
            best.method,
            p_of(best)
        );
    }
    let mut words = if best.better_than_uncalibrated() {
        format!(
            "{} has the lowest CE and is significantly better calibrated than the \
             uncalibrated outputs by {statistic} at alpha = {alpha} (p = {})",
            best.method,
            p_of(best)
        )
    } else {
        let names: Vec<String> = better.iter().map(|c| c.method.to_string()).collect();
        format!(
            "{} significantly better calibrated than the uncalibrated outputs by \
             {statistic} at alpha = {alpha}; the lowest CE, {}, is not (p = {})",
            if names.len() == 1 {
                format!("{} is", names[0])
            } else {
                format!("{} are", names.join(", "))
            },
            best.method,
            p_of(best)
        )
    };
    if let Some((runner_up, c)) = best.against_best_other() {
        let _ = match c.verdict() {
            Verdict::ABetter => write!(
                words,
                "; it is significantly better than the runner-up, {runner_up} (p = {})",
                p_text(c.p_value)
            ),
            _ => write!(
                words,
                "; it is not significantly better than the runner-up, {runner_up} (p = {}): \
                 the data do not separate the two",
                p_text(c.p_value)
            ),
        };
    }
    words
}

/// The width of the summary's first column (the longest method name and two spaces).
const LABEL: usize = 23;

/// The summary: the split, the uncalibrated CE, each method's CE and its two
/// comparisons, and the decision.
pub fn summary(file: &str, choice: &Choice) -> String {
    let s = &choice.settings;
    let mut out = String::new();
    let mut line = |label: &str, text: String| {
        let _ = writeln!(out, "{label:<LABEL$}{text}");
    };
    line("input", file.to_owned());
    line(
        "rows",
        format!(
            "{}: {} to fit, {} held out (a fraction {} at random, seed {})",
            choice.rows,
            choice.fitting.len(),
            choice.held_out.len(),
            s.holdout,
            s.compare.seed
        ),
    );
    line("estimator", s.compare.statistic.to_string());
    line(
        "comparisons",
        format!(
            "paired bootstrap, {} resamples of the held-out rows, {}% intervals",
            s.compare.resamples,
            100.0 * (1.0 - s.compare.alpha)
        ),
    );
    if let Some(e) = &choice.uncalibrated_estimate() {
        line("uncalibrated", format!("CE {}", estimate_text(e)));
    }
    for c in &choice.candidates {
        let name = c.method.to_string();
        line(&name, format!("CE {}", estimate_text(&c.estimate())));
        line("  vs uncalibrated", delta_text(&c.uncalibrated));
        if let Some((other, o)) = c.against_best_other() {
            line(&format!("  vs {other}"), delta_text(o));
        }
    }
    line("decision", decision_words(choice));
    out
}
