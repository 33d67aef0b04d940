//! The words of a calibration test, and its terminal summary (`tce test` prints it,
//! Python's `str(result)` is it; the JSON quotes the same words).

use std::fmt::Write as _;

use super::{Basis, CalibrationTest, Outcome, Reference, Statistic, StatisticResult};

/// The statistic's value as the table shows it: an estimate with 6 decimals, `z = …`,
/// `C = …`.
pub fn value_text(statistic: &Statistic, outcome: &Outcome) -> String {
    match statistic {
        Statistic::Resampled(_) => format!("{:.6}", outcome.value),
        Statistic::Spiegelhalter => format!("z = {:.3}", outcome.value),
        Statistic::HosmerLemeshow => format!("C = {:.3}", outcome.value),
    }
}

/// A p-value: 4 decimals, or 3 significant digits below 10^-4; `0` when it is 0.
pub fn p_text(p: f64) -> String {
    if p == 0.0 {
        "0".to_owned()
    } else if p < 1e-4 {
        format!("{p:.2e}")
    } else {
        format!("{p:.4}")
    }
}

/// Where a p-value comes from, in words.
pub fn reference_text(reference: &Reference) -> String {
    match reference {
        Reference::Resampling { resamples, .. } => format!("{resamples} resamples"),
        Reference::Normal => "normal, two-sided".to_owned(),
        Reference::ChiSquare { degrees_of_freedom } => {
            format!("chi2, {degrees_of_freedom} df")
        }
    }
}

/// Why the deciding statistic, in one sentence.
pub fn basis_words(t: &CalibrationTest) -> String {
    let chosen = t.chosen().statistic;
    match &t.choice.basis {
        Basis::Given => format!("{chosen}, as asked."),
        Basis::HighestPower => {
            let best = t
                .choice
                .powers
                .iter()
                .find(|p| p.statistic == chosen)
                .expect("the chosen statistic has its power");
            format!(
                "{chosen}: the highest power at n = {} against the model fitted to the data \
                 ({:.3} ± {:.3} at alpha = {}, from {} label sets simulated from the fit).",
                t.n, best.power, best.se, t.settings.alpha, t.choice.simulations
            )
        }
        Basis::CalibratedFit => format!(
            "{chosen}, the default: the model fitted to the data is calibrated at its scores \
             (identity curve), so no statistic has power above alpha against it."
        ),
        Basis::NoFit(e) => format!("{chosen}, the default: no model could be fitted ({e})."),
    }
}

/// The decision at α in words.
pub fn decision_words(t: &CalibrationTest) -> String {
    let alpha = t.settings.alpha;
    match (t.decision(), &t.chosen().outcome) {
        (Some(d), _) if d.reject => format!(
            "Calibration rejected at alpha = {alpha}: p = {} <= {alpha}; the confidences do \
             not match the accuracy.",
            p_text(d.p_value)
        ),
        (Some(d), _) => {
            let chosen = t.chosen().statistic;
            let power = match t.choice.powers.iter().find(|p| p.statistic == chosen) {
                Some(p) => format!(
                    "against the model fitted to the data this test rejects with probability \
                     {:.2} at this n",
                    p.power
                ),
                None => "only no evidence against it".to_owned(),
            };
            format!(
                "Calibration not rejected at alpha = {alpha}: p = {} > {alpha}. This is not \
                 evidence of calibration: {power}.",
                p_text(d.p_value)
            )
        }
        (None, Err(reason)) => format!("No decision: {}: {reason}.", t.chosen().statistic),
        (None, Ok(_)) => unreachable!("a defined statistic decides"),
    }
}

fn row(r: &StatisticResult, chosen: bool, power: Option<(f64, f64)>) -> [String; 5] {
    let name = format!("{}{}", r.statistic, if chosen { " *" } else { "" });
    let power = power.map_or_else(|| "-".to_owned(), |(p, se)| format!("{p:.3} ± {se:.3}"));
    match &r.outcome {
        Ok(o) => [
            name,
            value_text(&r.statistic, o),
            p_text(o.p_value),
            reference_text(&o.reference),
            power,
        ],
        Err(_) => [
            name,
            "undefined".to_owned(),
            "-".to_owned(),
            "-".to_owned(),
            power,
        ],
    }
}

/// The terminal summary of a test of `file`'s samples.
pub fn summary(file: &str, t: &CalibrationTest) -> String {
    let mut out = String::new();
    let chosen = t.chosen();
    let _ = writeln!(out, "file             {file}");
    let _ = writeln!(out, "n                {} (hits {})", t.n, t.hits);
    let _ = writeln!(
        out,
        "H0               E[Y | f(X)] = f(X): the confidences are calibrated"
    );
    let _ = writeln!(out, "test             {}", basis_words(t));
    if let Ok(o) = &chosen.outcome {
        let _ = writeln!(
            out,
            "p-value          {} ({})",
            p_text(o.p_value),
            reference_text(&o.reference)
        );
    }
    let _ = writeln!(out, "decision         {}", decision_words(t));
    if let Some(fit) = &t.choice.fit {
        let tce = t
            .choice
            .fit_tce
            .map_or_else(|| "unknown".to_owned(), |x| format!("{:.2}%", 100.0 * x));
        let _ = writeln!(
            out,
            "fitted model     {}, curve {}; its TCE_{} {tce}",
            fit.model().density.describe(),
            fit.curve_name(),
            t.settings.norm.p()
        );
    }
    out.push('\n');
    let header = [
        "statistic".to_owned(),
        "value".to_owned(),
        "p-value".to_owned(),
        "reference".to_owned(),
        "power vs fit".to_owned(),
    ];
    let rows: Vec<[String; 5]> = t
        .results
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let power = t
                .choice
                .powers
                .iter()
                .find(|p| p.statistic == r.statistic)
                .map(|p| (p.power, p.se));
            row(r, i == t.choice.statistic, power)
        })
        .collect();
    let widths: Vec<usize> = (0..5)
        .map(|c| {
            rows.iter()
                .map(|r| r[c].chars().count())
                .chain([header[c].len()])
                .max()
                .unwrap_or(0)
        })
        .collect();
    for line in core::iter::once(&header).chain(&rows) {
        let mut text = String::new();
        for (c, cell) in line.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            if c == 0 {
                let _ = write!(text, "{cell}{}", " ".repeat(pad));
            } else {
                let _ = write!(text, "  {}{cell}", " ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    }
    out.push('\n');
    for note in notes(t) {
        let _ = writeln!(out, "note: {note}");
    }
    out
}

/// What the reader should know besides the table.
pub fn notes(t: &CalibrationTest) -> Vec<String> {
    let mut notes = vec![format!(
        "the decision is the starred statistic's; the other p-values are for information \
         (taking the smallest of several is not a test at alpha = {}).",
        t.settings.alpha
    )];
    for r in &t.results {
        if let Err(reason) = &r.outcome {
            notes.push(format!("{}: {reason}.", r.statistic));
        }
    }
    let c = &t.contradictions;
    if c.total() > 0 {
        notes.push(format!(
            "{} rows have a confidence of exactly 1 and label 0, and {} a confidence of \
             exactly 0 and label 1: H0 rules such rows out (a float32 softmax rounds \
             confidences near 1 to exactly 1, so a saturated model that errs is \
             miscalibrated at 1).",
            c.wrong_at_one, c.right_at_zero
        ));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{calibration_test, StatisticChoice, TestSettings};

    #[test]
    fn undefined_statistics_are_short_cells_with_their_reasons_in_notes() {
        // Certain scores only: Z and C are undefined, no model can be fitted.
        let t = calibration_test(
            &[1.0, 1.0, 0.0],
            &[1, 1, 0],
            &TestSettings {
                resamples: 19,
                ..TestSettings::default()
            },
        )
        .unwrap();
        let text = summary("certain.csv", &t);
        assert!(text.lines().all(|l| l.chars().count() < 200), "{text}");
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == ["spiegelhalter", "undefined", "-", "-", "-"]),
            "{text}"
        );
        assert!(
            text.contains("note: spiegelhalter: Spiegelhalter's Z is 0/0"),
            "{text}"
        );
        assert!(
            text.contains("p = 1.0000 > 0.05. This is not evidence of calibration: only no evidence against it."),
            "{text}"
        );
        // Deciding by an undefined statistic: no decision, and why.
        let t = calibration_test(
            &[1.0, 1.0, 0.0],
            &[1, 1, 0],
            &TestSettings {
                resamples: 19,
                statistic: StatisticChoice::Given(crate::decision::Statistic::HosmerLemeshow),
                ..TestSettings::default()
            },
        )
        .unwrap();
        assert_eq!(t.decision(), None);
        assert_eq!(
            decision_words(&t),
            "No decision: hosmer_lemeshow: Hosmer-Lemeshow is undefined: no group has a mean \
             score strictly between 0 and 1."
        );
    }
}
