//! The words of a comparison, and its terminal summary (`tce compare` prints it,
//! Python's `str(result)` is it; the JSON quotes the same words).

use std::fmt::Write as _;

use super::{Comparison, Method, Verdict};
use crate::decision::text::p_text;

/// The decision at α in one sentence.
pub fn decision_words(c: &Comparison) -> String {
    let alpha = c.settings.alpha;
    let statistic = c.settings.statistic;
    match c.verdict() {
        Verdict::ABetter => format!(
            "A is better calibrated than B by {statistic}: Delta = 0 is rejected at alpha = \
             {alpha} (p = {}), CE_A < CE_B",
            p_text(c.p_value)
        ),
        Verdict::BBetter => format!(
            "B is better calibrated than A by {statistic}: Delta = 0 is rejected at alpha = \
             {alpha} (p = {}), CE_B < CE_A",
            p_text(c.p_value)
        ),
        Verdict::NoDifference => format!(
            "no significant difference by {statistic} at alpha = {alpha} (p = {}): the data \
             do not show either model better calibrated, which is not evidence that they are \
             equal",
            p_text(c.p_value)
        ),
    }
}

/// Why Δ = 0 is not rejected although the interval excludes 0 (None otherwise): the
/// p-value is the larger of the interval's and the normal one on the bootstrap standard
/// error, and here the normal one decided. Said wherever the interval is shown, so the
/// two never seem to disagree.
pub fn interval_without_rejection_words(c: &Comparison) -> Option<String> {
    let excludes_zero = c.interval.lower > 0.0 || c.interval.upper < 0.0;
    (excludes_zero && !c.reject()).then(|| {
        format!(
            "the interval excludes 0, but Delta is only {:.2} bootstrap standard errors \
             from 0 (normal p = {}), and the test needs both",
            c.delta.abs() / c.se,
            p_text(c.p_normal)
        )
    })
}

/// How the interval was made, in words.
pub fn method_words(c: &Comparison) -> String {
    let rows = format!(
        "paired bootstrap, {} resamples of the rows",
        c.settings.resamples
    );
    match c.method {
        Method::Bca => format!("BCa, {rows}"),
        Method::Percentile => format!(
            "percentile ({rows}; BCa is undefined: every resample on one side of Delta or \
             the jackknife constant)"
        ),
    }
}

fn percent(x: f64) -> String {
    format!("{:.4}%", 100.0 * x)
}

fn estimate_text(e: &super::Estimate) -> String {
    match e.sweep_bins {
        Some(b) => format!("{} (b* = {b})", percent(e.value)),
        None => percent(e.value),
    }
}

/// The summary: both files, both estimates, Δ with its interval, the p-value and the
/// decision.
pub fn summary(file_a: &str, file_b: &str, c: &Comparison) -> String {
    let mut out = String::new();
    let level = 100.0 * (1.0 - c.settings.alpha);
    let _ = writeln!(out, "A                {file_a}");
    let _ = writeln!(out, "B                {file_b}");
    let _ = writeln!(out, "n                {} rows, paired", c.n);
    let _ = writeln!(out, "estimator        {}", c.settings.statistic);
    let _ = writeln!(out, "CE_A             {}", estimate_text(&c.a));
    let _ = writeln!(out, "CE_B             {}", estimate_text(&c.b));
    let _ = writeln!(
        out,
        "Delta = A - B    {} (bootstrap se {})",
        percent(c.delta),
        percent(c.se)
    );
    let _ = writeln!(
        out,
        "{:<17}[{}, {}] ({})",
        format!("{level}% interval"),
        percent(c.interval.lower),
        percent(c.interval.upper),
        method_words(c)
    );
    let _ = writeln!(
        out,
        "p-value          {} (H0: Delta = 0; the larger of the interval's {} and the \
         normal test's {} on the bootstrap se)",
        p_text(c.p_value),
        p_text(c.p_interval),
        p_text(c.p_normal)
    );
    let _ = writeln!(out, "decision         {}", decision_words(c));
    if let Some(words) = interval_without_rejection_words(c) {
        let _ = writeln!(out, "                 ({words})");
    }
    out
}
