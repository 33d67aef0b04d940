//! The words of a report: estimator names, percentages, the recommendation in plain
//! words and the terminal summary (`tce report` prints it; the JSON and the page quote
//! the same words).

use std::fmt::Write as _;

use super::bootstrap::Interval;
use super::classwise::ClasswiseReport;
use super::{Basis, BiasRow, IntervalKind, Report, Target, FIT_CHECK_LEVEL};
use crate::decision::{self, Basis as DecisionBasis, CalibrationTest};
use crate::fit::{AtomAccuracy, FittedModel};
use crate::Binning;

/// A human name: "ECE_sweep, equal-mass".
pub fn display_name(target: &Target) -> String {
    use crate::sim::EstimatorKind as K;
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

/// An interval in percent: "1.23–4.56%".
pub fn interval_text(i: &Interval) -> String {
    format!("{:.2}–{:.2}%", 100.0 * i.lower, 100.0 * i.upper)
}

/// The recommendation in plain words, as the summary and the page give it.
pub fn recommendation_words(r: &Report) -> Vec<String> {
    let rec = &r.recommendation;
    let chosen = &r.estimators[rec.estimator];
    let mut lines = Vec::new();
    lines.push(format!(
        "Calibration error (TCE_{}): {}{}, by {}.",
        r.settings.norm.p(),
        pct(chosen.estimate),
        interval_words(chosen.interval(), r.settings.level),
        display_name(&chosen.target)
    ));
    lines.extend(interval_caveat(chosen.estimate, chosen.interval()));
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
            if let Some((plug, b)) = p
                .plug_in
                .as_ref()
                .and_then(|plug| Some((plug, plug.summary?)))
                .filter(|(plug, _)| plug.least_biased(&p.bias))
            {
                lines.push(format!(
                    "The fitted model's own TCE, {}, was the least biased estimate at this n: refitted to {} of the simulated data sets, it was off by {:+.2} points on average (Monte-Carlo se {:.2}), {:.2} points typically (RMSE). It has no bootstrap interval, so it is not the one reported above.",
                    pct(plug.estimate),
                    plug.refits - plug.failed,
                    100.0 * b.bias,
                    100.0 * b.se,
                    100.0 * b.rmse
                ));
            }
            if basis == Basis::LowestRmsePoorFit {
                lines.push(format!(
                    "Caveat: the fitted model does not reproduce your data (a real value falls outside the central {:.0}% of the simulated ones, see the fit check), so the bias figures, and the choice they make, are less certain.",
                    100.0 * FIT_CHECK_LEVEL
                ));
            }
        }
        (Err(super::ParametricError::Weighted), _) => lines.push(
            "The rows are weighted: no model is fitted and no bias is simulated (the simulations draw unweighted data sets, whose bias is not the weighted estimators'; docs/report.md, Weighted rows), so this is the paper's default estimator, on equal-weight bins, without a bias check at your n.".to_owned()
        ),
        (Err(super::ParametricError::NotSimulated { simulated, classes }), _) => lines.push(format!(
            "This class is not among the {simulated} of {classes} classes (a seeded sample) whose fitted models were simulated: this is the estimator recommended for the marginal over the classes, without a bias check of this class's own."
        )),
        (Err(e), _) => lines.push(format!(
            "No parametric model could be fitted ({e}); this is the paper's default estimator, without a bias check at your n."
        )),
    }
    lines
}

pub(crate) fn bias_of<'a>(r: &'a Report, target: &Target) -> Option<&'a BiasRow> {
    r.parametric
        .as_ref()
        .ok()?
        .bias
        .iter()
        .find(|b| b.target == *target)
}

/// One table line per estimator left out as undefined on the data, with why.
/// What the classwise report says of the calibration test it does not make.
pub const CLASSWISE_NO_TEST: &str = "Not tested: the classwise report has no calibration \
     test; `tce test` (or `tce report` without --classwise) tests the top-label confidences.";

/// What a weighted report says of the calibration test it does not make.
pub const WEIGHTED_NO_TEST: &str = "Not tested: the rows are weighted, and the calibration \
     test draws unweighted labels (docs/report.md, Weighted rows).";

/// The line on a weighted report's weights (`None` for unweighted rows): what the
/// summary and the page print under their first line.
pub fn weights_words(r: &Report) -> Option<String> {
    let w = r.weights.as_ref()?;
    Some(format!(
        "Rows weighted (frequency weights): {} rows, {} of weight 0 left out; total weight {}, Kish's effective n {:.1}; weighted accuracy {}, weighted mean confidence {}{}.",
        w.rows,
        w.zero_rows,
        // Whole totals as they are, others to 6 significant digits.
        if w.total.fract() == 0.0 {
            format!("{}", w.total)
        } else {
            format!("{:.*}", 5usize.saturating_sub(w.total.abs().log10().floor().max(0.0) as usize), w.total)
        },
        w.effective_n,
        pct(w.accuracy),
        pct(w.mean_confidence),
        if w.integer {
            "; whole weights: each estimate is that of the rows repeated"
        } else {
            ""
        }
    ))
}

/// The power of the deciding statistic at n against the alternative it is measured
/// against: (power, Monte-Carlo se, simulations), or `None` when it was not measured.
pub fn chosen_power(t: &CalibrationTest) -> Option<(f64, f64, usize)> {
    let chosen = t.chosen().statistic;
    t.choice
        .powers
        .iter()
        .find(|p| p.statistic == chosen)
        .map(|p| (p.power, p.se, t.choice.simulations))
}

/// The alternative the test's power is against, in words: the report's fitted model.
pub fn alternative_words(r: &Report, t: &CalibrationTest) -> String {
    let model = r.settings.model.name();
    match (&t.choice.basis, &t.choice.fit) {
        (DecisionBasis::NoFit(e), _) => format!("no model could be fitted ({e})"),
        (_, Some(fit)) => {
            let tce = t.choice.fit_tce.map_or_else(|| "unknown".to_owned(), pct);
            format!(
                "the report's fitted {model} model ({}, curve {}; its TCE_{} {tce})",
                fit.model().density.describe(),
                fit.curve_name(),
                t.settings.norm.p()
            )
        }
        (_, None) => format!("the report's fitted {model} model"),
    }
}

/// "Is it calibrated?" in words, one line each: the decision with its p-value, the
/// statistic and why it, its power at n against the report's fitted model, and where the
/// p-value comes from (the JSON's `calibration_test.words`, the page's lines).
pub fn calibration_test_words(r: &Report) -> Vec<String> {
    let t = match &r.calibration_test {
        None if r.weights.is_some() => return vec![WEIGHTED_NO_TEST.to_owned()],
        None => return vec!["Not tested (no calibration test was asked for).".to_owned()],
        Some(Err(e)) => return vec![format!("No test: {e}.")],
        Some(Ok(t)) => t,
    };
    let mut words = vec![decision::text::decision_words(t)];
    words.push(format!("Statistic: {}", decision::text::basis_words(t)));
    let alternative = alternative_words(r, t);
    words.push(match (&t.choice.basis, chosen_power(t)) {
        (_, Some((power, se, m))) => format!(
            "Power at n = {} against {alternative}: {power:.3} ± {se:.3} (Monte-Carlo se, \
             {m} label sets simulated from it).",
            t.n
        ),
        (DecisionBasis::CalibratedFit, None) => format!(
            "Power at n = {} against {alternative}: alpha = {}, as for every test: that model \
             is calibrated at these scores.",
            t.n, t.settings.alpha
        ),
        (_, None) => format!("Power: not measured: {alternative}."),
    });
    if let Ok(o) = &t.chosen().outcome {
        let source = decision::text::reference_text(&o.reference);
        let smallest = match o.reference {
            decision::Reference::Resampling { resamples, .. } => format!(
                " (the smallest possible {})",
                decision::text::p_text(1.0 / (resamples as f64 + 1.0))
            ),
            _ => String::new(),
        };
        words.push(format!(
            "p-value {} from {source}{smallest}, seed {}; every statistic's p-value: `tce \
             test`; what a p-value says and does not: docs/decisions.md.",
            decision::text::p_text(o.p_value),
            t.settings.seed
        ));
    }
    words
}

fn unavailable_lines(out: &mut String, unavailable: &[super::Unavailable]) {
    for u in unavailable {
        let _ = writeln!(out, " {:<23} unavailable: {u}", display_name(&u.target));
    }
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
    if let Some(line) = weights_words(r) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    for line in recommendation_words(r) {
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
    for (i, line) in calibration_test_words(r).iter().enumerate() {
        let head = if i == 0 { "is it calibrated? " } else { "  " };
        let _ = writeln!(out, "{head}{line}");
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
    unavailable_lines(&mut out, &r.unavailable);
    let _ = writeln!(
        out,
        "bias, sd, RMSE: percentage points against the fitted model's TCE; MCE estimates the largest gap, not TCE."
    );
    for note in r.ties.notes(r.settings.bins, r.settings.ties) {
        let _ = writeln!(out, "note: {note}.");
    }
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
            let _ = writeln!(
                out,
                "\nfit ({} model): {}; TCE_{} of the fit {}",
                p.fit.kind().name(),
                fit_words(p),
                r.settings.norm.p(),
                pct(p.tce)
            );
            let _ = writeln!(out, "{}", plug_in_words(p));
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

/// The fitted model's TCE as an estimator, in one line: its error at n from refits, or
/// why it was not measured.
pub fn plug_in_words(p: &super::Parametric) -> String {
    let Some(plug) = &p.plug_in else {
        return "fit's TCE as an estimator (plug-in): error at this n not measured (0 refits; --refits N measures it, one fit each)".into();
    };
    let failed = if plug.failed > 0 {
        format!(", {} refits failed and are left out", plug.failed)
    } else {
        String::new()
    };
    match plug.summary {
        Some(b) => format!(
            "fit's TCE as an estimator (plug-in), from {} refits of simulated data sets{failed}: bias {:+.2} (Monte-Carlo se {:.2}), sd {:.2}, RMSE {:.2} points{}",
            plug.refits,
            100.0 * b.bias,
            100.0 * b.se,
            100.0 * b.sd,
            100.0 * b.rmse,
            if plug.least_biased(&p.bias) {
                "; the least biased of all estimators here"
            } else {
                ""
            }
        ),
        None => format!(
            "fit's TCE as an estimator (plug-in): every one of {} refits failed; its error is unknown",
            plug.refits
        ),
    }
}

/// The fitted model in words: its density, atoms and curve, and how each was chosen.
pub fn fit_words(p: &super::Parametric) -> String {
    match &p.fit {
        super::ParametricFit::Paper(fit) => {
            let best = fit.best_glm();
            format!(
                "Beta({:.4}, {:.4}) scores{}, curve {} (lowest AIC of 12 GLMs: b0 = {:.4}, b1 = {:.4})",
                fit.model.density.alpha(),
                fit.model.density.beta(),
                point_masses_text(fit),
                best.spec.name(),
                best.b0,
                best.b1
            )
        }
        super::ParametricFit::Flexible(fit) => {
            use crate::fit::flexible::DensityChoice;
            let density = match (&fit.model.density, fit.density) {
                (crate::sim::ScoreDensity::Beta(beta), _) => format!(
                    "Beta({:.4}, {:.4}) scores (a lower AIC than a log-odds mixture)",
                    beta.alpha(),
                    beta.beta()
                ),
                (crate::sim::ScoreDensity::LogitMixture(mixture), DensityChoice::LogitMixture)
                | (crate::sim::ScoreDensity::LogitMixture(mixture), DensityChoice::Beta) => {
                    format!(
                        "scores a mixture of {} normals in log-odds (a lower AIC than a Beta)",
                        mixture.len()
                    )
                }
            };
            let atoms: String = [
                (0, fit.model.point_masses.zero()),
                (1, fit.model.point_masses.one()),
            ]
            .into_iter()
            .filter_map(|(at, atom)| {
                let atom = atom?;
                Some(format!(
                    " + point mass at {at}: {} of rows, accuracy {} (its rows' own)",
                    pct(atom.mass()),
                    pct(atom.accuracy())
                ))
            })
            .collect();
            format!(
                "{density}{atoms}, curve {} (lowest AIC of 12 GLMs and {} monotone splines in log-odds; the identity unless a likelihood-ratio test rejects it)",
                fit.curve_name(),
                fit.curves.monotone.len()
            )
        }
    }
}

/// The fit's point masses in words (empty for a pure Beta fit): " + point mass at 1:
/// 28.70% of rows, accuracy 99.12% (fitted)".
pub fn point_masses_text(fit: &FittedModel) -> String {
    let Some(saturation) = &fit.saturation else {
        return String::new();
    };
    let from = match saturation.chosen {
        AtomAccuracy::Fitted => "its own accuracy, by AIC",
        _ => "accuracy from the curve, by AIC",
    };
    let atoms = &saturation.point_masses;
    [(0, atoms.zero()), (1, atoms.one())]
        .into_iter()
        .filter_map(|(at, atom)| {
            let atom = atom?;
            Some(format!(
                " + point mass at {at}: {} of rows, accuracy {} ({from})",
                pct(atom.mass()),
                pct(atom.accuracy())
            ))
        })
        .collect()
}

/// Summary statistics of the resamples' b* (nearest-rank order statistics).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "render", derive(serde::Serialize))]
pub struct BinsDistribution {
    /// The smallest b*.
    pub min: usize,
    /// The 2.5% order statistic.
    pub p025: usize,
    /// The median.
    pub median: usize,
    /// The 97.5% order statistic.
    pub p975: usize,
    /// The largest b*.
    pub max: usize,
    /// The mean.
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

/// When the quoted interval does not contain the estimate, why, in words: the resamples
/// read on one side of the data's value (the estimator is biased that way under
/// resampling by more than its spread; with many classes each class's small upward bias
/// adds up in the marginal). The interval is still what the bootstrap says; the estimate's
/// own bias at n is in the bias table.
fn interval_caveat(estimate: f64, interval: Option<(Interval, IntervalKind)>) -> Option<String> {
    let (i, kind) = interval?;
    let side = if estimate < i.lower {
        "above"
    } else if estimate > i.upper {
        "below"
    } else {
        return None;
    };
    let why = match kind {
        IntervalKind::Percentile => format!(
            "so many resamples read {side} the data's value that BCa is undefined and the percentile interval lies {side} the estimate"
        ),
        IntervalKind::Bca => format!(
            "nearly all resamples read {} the data's value and BCa moves the interval past the estimate",
            if side == "above" { "below" } else { "above" }
        ),
    };
    Some(format!(
        "The interval does not contain the estimate: {why} (the estimator is biased under resampling by more than its spread). It brackets what the estimator would read on more data like yours, not the TCE; the bias at your n is the figure for that (docs/report.md, \"The intervals\")."
    ))
}

fn interval_words(interval: Option<(Interval, IntervalKind)>, level: f64) -> String {
    match interval {
        Some((i, kind)) => format!(
            " ({:.0}% {} interval {})",
            100.0 * level,
            match kind {
                IntervalKind::Bca => "BCa",
                IntervalKind::Percentile => "percentile",
            },
            interval_text(&i)
        ),
        None => String::new(),
    }
}

/// The classwise recommendation in plain words.
pub fn classwise_words(r: &ClasswiseReport) -> Vec<String> {
    let rec = &r.recommendation;
    let chosen = &r.marginal[rec.estimator];
    let k = r.classes.len();
    let mut lines = vec![format!(
        "Marginal calibration error over {k} classes (each one-vs-rest, TCE_{} averaged as Kumar et al.): {}{}, by {}.",
        r.settings.norm.p(),
        pct(chosen.value),
        interval_words(chosen.interval(), r.settings.level),
        display_name(&chosen.target)
    )];
    lines.extend(interval_caveat(chosen.value, chosen.interval()));
    let s = r.simulated.len();
    match (rec.basis, chosen.bias) {
        _ if s == 0 => lines.push(
            "No class was fitted or simulated (--simulated-classes 0); this is the paper's default estimator, without a bias check at your n.".to_owned(),
        ),
        (Basis::NoFit, _) | (_, None) => lines.push(format!(
            "No parametric model could be fitted for {} of the {s} simulated classes; this is the paper's default estimator, without a bias check at your n.",
            r.unfitted
        )),
        (basis, Some(b)) => {
            let sims = r.settings.simulations.unwrap_or(0);
            let which = if r.sampled() {
                format!("the fitted models of {s} of the {k} classes (a seeded random sample)")
            } else {
                "each class's fitted model".to_owned()
            };
            lines.push(format!(
                "Why this estimator: {sims} data sets of your size were simulated from {which} and combined over the classes; it was off by {:.2} points on average (RMSE), the least of all estimators; its bias there was {:+.2} points (Monte-Carlo se {:.2}{}). (The classes were simulated independently.)",
                100.0 * b.rmse,
                100.0 * b.bias,
                100.0 * b.se,
                if r.sampled() {
                    ", with the sampling of classes"
                } else {
                    ""
                }
            ));
            if let Some(u) = rec.usual.and_then(|u| r.marginal.get(u)) {
                if let Some(ub) = u.bias {
                    lines.push(format!(
                        "The usual {}-bin equal-width ECE_bin over the classes is {}; at this n it is expected to be off by {:+.2} points (bias), {:.2} points typically (RMSE).",
                        r.settings.bins,
                        pct(u.value),
                        100.0 * ub.bias,
                        100.0 * ub.rmse
                    ));
                }
            }
            if basis == Basis::LowestRmsePoorFit {
                lines.push(format!(
                    "Caveat: the fitted model of {} of the {s} simulated classes does not reproduce that class's data (see the per-class fit checks), so the bias figures, and the choice they make, are less certain.",
                    r.flagged
                ));
            }
        }
    }
    lines
}

/// How the classwise report was made, and what it reduced, in plain words: the summary
/// and the page print them, the JSON has them (`method.words`).
pub fn classwise_method_words(r: &ClasswiseReport) -> Vec<String> {
    let k = r.classes.len();
    let mut lines = Vec::new();
    if r.settings.resamples > 0 {
        lines.push(format!(
            "Intervals: every class's and the marginal's come from the same {} resamples of the {} rows (one count per row, each class weighing its own samples by it); for one class that is a bootstrap of its samples alone, the same distribution from other draws. BCa's jackknife leaves out the same {} groups of rows.",
            r.settings.resamples,
            r.n,
            super::JACKKNIFE_GROUPS.min(r.n)
        ));
    }
    let s = r.simulated.len();
    let m = r.settings.simulations.unwrap_or(0);
    let se = r
        .marginal
        .get(r.recommendation.estimator)
        .and_then(|c| c.bias)
        .map(|b| {
            format!(
                " ({:.2} points for the recommended estimator)",
                100.0 * b.se
            )
        });
    if s == 0 {
        lines.push(
            "Bias figures: none; no class was fitted or simulated (--simulated-classes 0)."
                .to_owned(),
        );
    } else if r.sampled() {
        let ids: Vec<String> = r
            .simulated
            .iter()
            .map(|&i| r.classes[i].class.to_string())
            .collect();
        lines.push(format!(
            "Bias figures: {s} of the {k} classes, a seeded random sample (classes {}), were fitted and simulated, {m} data sets each from the class's own seed; the other {} were not, and their recommended estimator is the marginal's. The marginal's bias, sd and RMSE are estimated from the sample: the Monte-Carlo se of its bias{} includes the sampling of classes.{} (--simulated-classes {k} simulates every class, at about a second a class at n = 10^4.)",
            ids.join(", "),
            k - s,
            se.unwrap_or_default(),
            match (r.tce, r.tce_se) {
                (Some(t), Some(e)) => format!(
                    " The l_p mean of the classes' fitted TCEs, {}, is the sample's (se {:.2} points).",
                    pct(t),
                    100.0 * e
                ),
                _ => String::new(),
            }
        ));
    } else {
        lines.push(format!(
            "Bias figures: every class was fitted and simulated, {m} data sets each from the class's own seed{}.",
            se.map(|se| format!("; the Monte-Carlo se of the marginal's bias{se}"))
                .unwrap_or_default()
        ));
    }
    lines
}

/// The classwise terminal summary: the marginal recommendation, the marginal table, then
/// one line per class (its own recommendation and fit check).
pub fn classwise_summary(file: &str, r: &ClasswiseReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "tce report --classwise: {file}: n = {}, {} classes, p = {}, seed {}",
        r.n,
        r.classes.len(),
        r.settings.norm.p(),
        r.settings.seed
    );
    out.push('\n');
    for line in classwise_words(r) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(out, "is it calibrated? {CLASSWISE_NO_TEST}");
    out.push('\n');
    let level = format!("{:.0}%", 100.0 * r.settings.level);
    let _ = writeln!(out, "over the classes (l_p mean; MCE: maximum):");
    let _ = writeln!(
        out,
        "{:<24} {:>8} {:>17} {:>17} {:>8} {:>7} {:>7}",
        "estimator",
        "value",
        format!("percentile {level}"),
        format!("BCa {level}"),
        "bias",
        "sd",
        "RMSE"
    );
    for (i, m) in r.marginal.iter().enumerate() {
        let boot = m.bootstrap.as_ref().and_then(|b| b.as_ref().ok());
        let percentile = boot.map_or("-".into(), |b| interval_text(&b.percentile));
        let bca = boot
            .and_then(|b| b.bca.as_ref())
            .map_or("-".into(), interval_text);
        let (bias, sd, rmse) = m.bias.map_or(("-".into(), "-".into(), "-".into()), |b| {
            (
                format!("{:+.2}", 100.0 * b.bias),
                format!("{:.2}", 100.0 * b.sd),
                format!("{:.2}", 100.0 * b.rmse),
            )
        });
        let mark = if i == r.recommendation.estimator {
            "*"
        } else {
            " "
        };
        let _ = writeln!(
            out,
            "{mark}{:<23} {:>8} {percentile:>17} {bca:>17} {bias:>8} {sd:>7} {rmse:>7}",
            display_name(&m.target),
            pct(m.value)
        );
        if let Some(Err(err)) = &m.bootstrap {
            let _ = writeln!(out, "  (no interval: {err})");
        }
    }
    unavailable_lines(&mut out, &r.unavailable);
    if let Some(tce) = r.tce {
        let _ = writeln!(
            out,
            "bias, sd, RMSE: percentage points against the l_p mean of the {}classes' fitted TCEs, {}.",
            if r.sampled() { "simulated " } else { "" },
            pct(tce)
        );
    }
    out.push('\n');
    for line in classwise_method_words(r) {
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "\nper class (one-vs-rest; intervals from the joint resamples; the fit check of the simulated classes):"
    );
    let _ = writeln!(
        out,
        "{:>5}  {:<14} {:>9}  {:<24} {:>8} {:>17}  fit check",
        "class", "name", "frequency", "recommended", "value", "interval"
    );
    for c in &r.classes {
        let rep = &c.report;
        let chosen = &rep.estimators[rep.recommendation.estimator];
        let name: String = c.name.chars().take(14).collect();
        let _ = writeln!(
            out,
            "{:>5}  {name:<14} {:>9}  {:<24} {:>8} {:>17}  {}",
            c.class,
            pct(rep.hits as f64 / rep.n as f64),
            display_name(&chosen.target),
            pct(chosen.estimate),
            chosen
                .interval()
                .map_or("-".into(), |(i, _)| interval_text(&i)),
            match &rep.parametric {
                Ok(p) if p.reproduces => "reproduced".to_owned(),
                Ok(_) => "NOT reproduced".to_owned(),
                Err(super::ParametricError::NotSimulated { .. }) => "not simulated".to_owned(),
                Err(e) => format!("no fit: {e}"),
            }
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_past_the_estimate_is_explained() {
        let i = |lower, upper| Interval { lower, upper };
        // The 5e4 x 1000 marginal: every resample above, BCa undefined, percentile quoted.
        let above =
            interval_caveat(0.0072, Some((i(0.0076, 0.0079), IntervalKind::Percentile))).unwrap();
        assert!(
            above.contains("read above the data's value that BCa is undefined"),
            "{above}"
        );
        assert!(
            above.contains("percentile interval lies above the estimate"),
            "{above}"
        );
        let bca = interval_caveat(0.05, Some((i(0.01, 0.04), IntervalKind::Bca))).unwrap();
        assert!(bca.contains("nearly all resamples read above"), "{bca}");
        // An interval that contains the estimate, even at an end, needs no words.
        assert_eq!(
            interval_caveat(0.02, Some((i(0.01, 0.04), IntervalKind::Bca))),
            None
        );
        assert_eq!(
            interval_caveat(0.01, Some((i(0.01, 0.04), IntervalKind::Percentile))),
            None
        );
        assert_eq!(interval_caveat(0.01, None), None);
    }
}
