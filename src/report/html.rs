//! The page of `tce report --html` (and Python's `Report.html`): one self-contained HTML file, its figures inline SVG
//! (plotters' SVG backend, and hand-written SVG for the bias chart), no scripts, no
//! network. Figures (each a `<figure id=…>`):
//!
//! - `reliability-ew`, `reliability-em`: reliability diagrams of the equal-width bins and
//!   of the equal-mass bins at the sweep's b*, each bin a dot at (mean confidence,
//!   accuracy) with its Wilson interval and its count, the diagonal and the fitted curve;
//! - `scores`: the score histogram on a log-odds axis with saturated scores (exactly 0 or
//!   1) in bars of their own, beside the fitted Beta (the `tce fit --svg` panel);
//! - `curve`: the fitted calibration curve alone, with the TCE it implies;
//! - `bias`: each estimator's bias and RMSE at the data's n, as a chart.

pub mod chart;
pub mod scores;

use std::fmt::Write as _;

use super::classwise::ClasswiseReport;
use super::text::{display_name, pct, recommendation_words};
use super::{Interval, Reliability, Report};
use crate::sim::flexible::CalibrationCurve;
use crate::Binning;
use chart::{
    curve_points, draw_legend, unit_square, DrawResult, BLUE_DATA as BLUE, FONT, RED_FIT as RED,
};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// `text` with the five HTML metacharacters escaped.
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

fn reliability_svg(
    rel: &Reliability,
    curve: Option<&CalibrationCurve>,
    title: &str,
) -> Result<String, String> {
    let mut svg = String::new();
    let draw = |svg: &mut String| -> DrawResult {
        let root = SVGBackend::with_string(svg, (560, 480)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = unit_square(
            &root,
            title,
            16,
            "mean confidence in the bin",
            "accuracy (Wilson interval)",
        )?;
        if let Some(curve) = curve {
            chart
                .draw_series(LineSeries::new(curve_points(curve), RED.stroke_width(2)))?
                .label("fitted calibration curve")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], RED.stroke_width(2)));
        }
        let most = rel.bins.iter().map(|b| b.count).max().unwrap_or(1).max(1);
        let points: Vec<(f64, f64, f64, f64, u64)> = rel
            .bins
            .iter()
            .filter_map(|b| {
                let i = b.interval?;
                Some((b.mean_score?, b.accuracy?, i.lower, i.upper, b.count))
            })
            .collect();
        chart.draw_series(points.iter().map(|&(x, _, lo, hi, _)| {
            PathElement::new([(x, lo), (x, hi)], BLUE.stroke_width(1))
        }))?;
        chart
            .draw_series(points.iter().map(|&(x, y, _, _, n)| {
                let r = (2.5 + 6.0 * (n as f64 / most as f64).sqrt()).round() as i32;
                Circle::new((x, y), r, BLUE.mix(0.6).filled())
            }))?
            .label("bin (area ∝ rows; label: rows)")
            .legend(|(x, y)| Circle::new((x + 7, y), 4, BLUE.filled()));
        let label = (FONT, 10)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Bottom));
        chart.draw_series(points.iter().map(|&(x, y, _, _, n)| {
            EmptyElement::at((x, y)) + Text::new(n.to_string(), (5, -4), label.clone())
        }))?;
        draw_legend(&mut chart)?;
        root.present()?;
        Ok(())
    };
    draw(&mut svg).map_err(|e| e.to_string())?;
    Ok(svg)
}

fn scores_svg(scores: &[f64], report: &Report) -> Result<Option<String>, String> {
    let Ok(p) = &report.parametric else {
        return Ok(None);
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (600, 480)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| e.to_string())?;
        scores::draw_log_odds_density(&root, scores, &p.model).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(Some(svg))
}

fn curve_svg(report: &Report) -> Result<Option<String>, String> {
    let Ok(p) = &report.parametric else {
        return Ok(None);
    };
    let mut svg = String::new();
    let draw = |svg: &mut String| -> DrawResult {
        let root = SVGBackend::with_string(svg, (480, 420)).into_drawing_area();
        root.fill(&WHITE)?;
        let caption = format!(
            "fitted curve {}; TCE_{} = {}",
            p.fit.curve_name(),
            report.settings.norm.p(),
            pct(p.tce)
        );
        let mut chart = unit_square(&root, &caption, 14, "confidence c", "P(correct | c)")?;
        chart.draw_series(LineSeries::new(
            curve_points(&p.model.curve),
            RED.stroke_width(2),
        ))?;
        root.present()?;
        Ok(())
    };
    draw(&mut svg).map_err(|e| e.to_string())?;
    Ok(Some(svg))
}

/// The bias chart, hand-written: one row per estimator, a bar from 0 to its bias and a
/// diamond at its RMSE, on one percentage-point axis.
fn bias_svg(report: &Report) -> Option<String> {
    let p = report.parametric.as_ref().ok()?;
    let rows = &p.bias;
    let (width, row_h, left, right, top) = (640.0, 26.0, 190.0, 30.0, 40.0);
    let height = top + row_h * rows.len() as f64 + 50.0;
    let lo = rows
        .iter()
        .map(|r| 100.0 * r.summary.bias)
        .fold(0.0f64, f64::min);
    let hi = rows
        .iter()
        .map(|r| 100.0 * r.summary.bias.max(r.summary.rmse))
        .fold(0.0f64, f64::max);
    let span = (hi - lo).max(1e-3) * 1.1;
    let (lo, hi) = (lo - 0.05 * span, lo + span);
    let x = |v: f64| left + (v - lo) / (hi - lo) * (width - left - right);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">"##
    );
    let _ = write!(
        s,
        r##"<rect width="{width}" height="{height}" fill="white"/><text x="{}" y="20" text-anchor="middle" font-size="14">error at n = {} on the fitted model (percentage points; {} simulations)</text>"##,
        width / 2.0,
        report.n,
        p.simulations
    );
    let zero = x(0.0);
    let bottom = top + row_h * rows.len() as f64;
    let _ = write!(
        s,
        r##"<line x1="{zero:.1}" y1="{top}" x2="{zero:.1}" y2="{bottom}" stroke="black" stroke-opacity="0.5"/>"##
    );
    let best = report.recommendation.bias_row;
    for (i, r) in rows.iter().enumerate() {
        let y = top + row_h * i as f64;
        let (b, rmse) = (100.0 * r.summary.bias, 100.0 * r.summary.rmse);
        let (x0, x1) = (x(b.min(0.0)), x(b.max(0.0)));
        let weight = if Some(i) == best { "bold" } else { "normal" };
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-weight="{weight}">{}</text><rect x="{x0:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="#0072b2" fill-opacity="0.6"><title>bias {b:+.3}</title></rect><path d="M {:.1} {:.1} l 6 6 l -6 6 l -6 -6 z" fill="#d55e00"><title>RMSE {rmse:.3}</title></path>"##,
            left - 8.0,
            y + row_h * 0.65,
            escape(&display_name(&r.target)),
            y + 5.0,
            (x1 - x0).max(0.5),
            row_h - 10.0,
            x(rmse),
            y + row_h / 2.0 - 6.0
        );
    }
    // Axis ticks at round values.
    let step = nice_step((hi - lo) / 6.0);
    let mut t = (lo / step).ceil() * step;
    while t <= hi {
        let _ = write!(
            s,
            r##"<line x1="{0:.1}" y1="{bottom}" x2="{0:.1}" y2="{1}" stroke="black"/><text x="{0:.1}" y="{2}" text-anchor="middle">{3}</text>"##,
            x(t),
            bottom + 5.0,
            bottom + 18.0,
            trim(t)
        );
        t += step;
    }
    let _ = write!(
        s,
        r##"<rect x="{left}" y="{0}" width="14" height="10" fill="#0072b2" fill-opacity="0.6"/><text x="{1}" y="{2}">bias (mean estimate − TCE)</text><path d="M {3} {0} l 5 5 l -5 5 l -5 -5 z" fill="#d55e00"/><text x="{4}" y="{2}">RMSE</text></svg>"##,
        bottom + 26.0,
        left + 20.0,
        bottom + 35.0,
        left + 240.0,
        left + 250.0
    );
    Some(s)
}

fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    let f = raw / magnitude;
    magnitude
        * if f < 1.5 {
            1.0
        } else if f < 3.5 {
            2.0
        } else if f < 7.5 {
            5.0
        } else {
            10.0
        }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

fn figure(out: &mut String, id: &str, svg: &str, caption: &str) {
    let _ = writeln!(
        out,
        "<figure id=\"{id}\">{svg}<figcaption>{}</figcaption></figure>",
        escape(caption)
    );
}

/// A table row per estimator left out as undefined on the data: its name, and why
/// across the `span` other columns.
fn unavailable_rows(out: &mut String, unavailable: &[super::Unavailable], span: usize) {
    for u in unavailable {
        let _ = write!(
            out,
            "<tr class=\"unavailable\"><td>{}</td><td colspan=\"{span}\">unavailable: {}</td></tr>",
            escape(&display_name(&u.target)),
            escape(&u.to_string())
        );
    }
}

/// The whole page.
pub fn page(file: &str, scores: &[f64], report: &Report) -> String {
    let mut out = String::new();
    head(&mut out, file);
    let _ = writeln!(
        out,
        "<h1>Calibration report</h1><p>{}: n = {}, accuracy {}, p = {}, {} bootstrap resamples, seed {}; tce {}.</p>",
        escape(file),
        report.n,
        pct(report.hits as f64 / report.n as f64),
        report.settings.norm.p(),
        report.settings.resamples,
        report.settings.seed,
        super::json::VERSION
    );
    if let Some(line) = super::text::weights_words(report) {
        let _ = writeln!(out, "<p id=\"weights\">{}</p>", escape(&line));
    }
    let words = recommendation_words(report);
    let _ = write!(out, "<section id=\"recommendation\"><h2>In short</h2>");
    for (i, w) in words.iter().enumerate() {
        let class = if i == 0 { " class=\"lead\"" } else { "" };
        let _ = write!(out, "<p{class}>{}</p>", escape(w));
    }
    out.push_str("</section>\n<section id=\"calibration-test\"><h2>Is it calibrated?</h2>");
    for (i, w) in super::text::calibration_test_words(report)
        .iter()
        .enumerate()
    {
        let class = if i == 0 { " class=\"lead\"" } else { "" };
        let _ = write!(out, "<p{class}>{}</p>", escape(w));
    }
    out.push_str("</section>\n<h2>Figures</h2>\n");
    let curve = report.parametric.as_ref().ok().map(|p| &p.model.curve);
    let level = format!("{:.0}%", 100.0 * report.settings.level);
    for rel in &report.reliability {
        let (id, title) = match rel.binning {
            Binning::EqualWidth(_) => (
                "reliability-ew",
                format!("{} equal-width bins", rel.bins.len()),
            ),
            Binning::EqualMass(_) => (
                "reliability-em",
                format!("{} equal-mass bins (b* of the sweep)", rel.bins.len()),
            ),
        };
        match reliability_svg(rel, curve, &title) {
            Ok(svg) => figure(
                &mut out,
                id,
                &svg,
                &format!("Reliability diagram, {title}: each dot is a bin at its mean confidence and accuracy, its bar the {level} Wilson interval of the accuracy, its label the rows in it. A calibrated model sits on the diagonal."),
            ),
            Err(e) => {
                let _ = write!(out, "<p>reliability diagram failed: {}</p>", escape(&e));
            }
        }
    }
    match scores_svg(scores, report) {
        Ok(Some(svg)) => figure(&mut out, "scores", &svg, "Scores on a log-odds axis (log counts), so that the confident end is visible; scores of exactly 0 or 1 have bars of their own at the ends. The line is what the fitted model expects: its Beta density, and, when it has point masses at 0 or 1, their share of rows in the end bars."),
        Ok(None) => {}
        Err(e) => {
            let _ = write!(out, "<p>score histogram failed: {}</p>", escape(&e));
        }
    }
    match curve_svg(report) {
        Ok(Some(svg)) => figure(&mut out, "curve", &svg, "The fitted calibration curve P(correct | confidence) (the GLM with the lowest AIC of twelve): its distance from the diagonal, weighted by the fitted score density, is the fit's true calibration error."),
        Ok(None) => {}
        Err(e) => {
            let _ = write!(out, "<p>curve failed: {}</p>", escape(&e));
        }
    }
    if let Some(svg) = bias_svg(report) {
        figure(&mut out, "bias", &svg, "How far each estimator is off on data sets of your size simulated from the fitted model: the bar is its bias, the diamond its RMSE (typical error). The recommended estimator (bold) has the smallest RMSE.");
    }
    out.push_str(
        "<h2>Every estimator</h2><table><tr><th>estimator</th><th>bins</th><th>estimate</th>",
    );
    let _ = write!(
        out,
        "<th>percentile {level}</th><th>BCa {level}</th><th>bias</th><th>sd</th><th>RMSE</th></tr>"
    );
    for (i, e) in report.estimators.iter().enumerate() {
        let boot = e.bootstrap.as_ref().and_then(|b| b.as_ref().ok());
        let iv = |i: &super::Interval| format!("{}–{}", pct(i.lower), pct(i.upper));
        let bias = report
            .parametric
            .as_ref()
            .ok()
            .and_then(|p| p.bias.iter().find(|b| b.target == e.target));
        let class = if i == report.recommendation.estimator {
            " class=\"best\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&display_name(&e.target)),
            e.sweep_bins.or(e.target.bins).map_or("–".into(), |b| b.to_string()),
            pct(e.estimate),
            boot.map_or("–".into(), |b| iv(&b.percentile)),
            boot.and_then(|b| b.bca.as_ref()).map_or("–".into(), iv),
            bias.map_or("–".into(), |b| format!("{:+.2}", 100.0 * b.summary.bias)),
            bias.map_or("–".into(), |b| format!("{:.2}", 100.0 * b.summary.sd)),
            bias.map_or("–".into(), |b| format!("{:.2}", 100.0 * b.summary.rmse)),
        );
    }
    unavailable_rows(&mut out, &report.unavailable, 7);
    out.push_str("</table><p>Bias, sd and RMSE in percentage points against the fitted model's TCE. MCE estimates the largest bin gap, not TCE, and has no bias row.</p>\n");
    for note in report
        .ties
        .notes(report.settings.bins, report.settings.ties)
    {
        let _ = writeln!(out, "<p class=\"note\">Note: {}.</p>", escape(&note));
    }
    match &report.parametric {
        Ok(p) => {
            out.push_str("<h2>Does the fitted model reproduce the data?</h2>");
            let _ = write!(
                out,
                "<p>The fitted model: {}.</p><ul>",
                escape(&super::text::fit_words(p)),
            );
            for c in &p.checks {
                let _ = write!(
                    out,
                    "<li>{}: real {}, simulated mean {}, central {:.0}% of the simulated values {}–{}: <b>{}</b></li>",
                    escape(&display_name(&c.target)),
                    pct(c.real),
                    pct(c.simulated_mean),
                    100.0 * super::FIT_CHECK_LEVEL,
                    pct(c.interval.lower),
                    pct(c.interval.upper),
                    if c.reproduces { "reproduced" } else { "not reproduced" }
                );
            }
            out.push_str("</ul>");
            let _ = write!(
                out,
                "<p>The {}.</p>",
                escape(&super::text::plug_in_words(p))
            );
        }
        Err(e) => {
            let _ = write!(out, "<p>No fit: {}</p>", escape(&e.to_string()));
        }
    }
    out.push_str("<p>How to read this page: docs/report.md of tce.</p></body></html>\n");
    out
}

const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:1em auto;padding:0 1em;color:#222}figure{display:inline-block;margin:0.5em;vertical-align:top}figcaption{max-width:560px;font-size:0.9em;color:#444}table{border-collapse:collapse;font-size:0.9em}td,th{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}.lead{font-size:1.3em}.best{font-weight:bold}";

fn head(out: &mut String, file: &str) {
    let _ = writeln!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tce report: {}</title><style>{STYLE}</style></head><body>",
        escape(file)
    );
}

/// Per class, the recommended marginal estimator's value on that class with its
/// interval: a dot and a bar per class, hand-written SVG.
fn classes_svg(report: &ClasswiseReport) -> String {
    let chosen = report.marginal[report.recommendation.estimator].target;
    let rows: Vec<(String, f64, Option<Interval>)> = report
        .classes
        .iter()
        .map(|c| {
            let e = c.report.estimators.iter().find(|e| e.target == chosen);
            (
                c.name.clone(),
                e.map_or(f64::NAN, |e| e.estimate),
                e.and_then(|e| e.interval()).map(|(i, _)| i),
            )
        })
        .collect();
    let (width, row_h, left, right, top) = (640.0, 18.0, 150.0, 30.0, 40.0);
    let height = top + row_h * rows.len() as f64 + 40.0;
    let hi = rows
        .iter()
        .flat_map(|(_, v, i)| [*v, i.map_or(0.0, |i| i.upper)])
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-4)
        * 100.0
        * 1.1;
    let x = |v: f64| left + v * 100.0 / hi * (width - left - right);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11"><rect width="{width}" height="{height}" fill="white"/><text x="{}" y="20" text-anchor="middle" font-size="14">{} per class (%), with its interval</text>"##,
        width / 2.0,
        escape(&display_name(&chosen))
    );
    for (i, (name, v, interval)) in rows.iter().enumerate() {
        let y = top + row_h * i as f64 + row_h / 2.0;
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
            left - 8.0,
            y + 4.0,
            escape(&name.chars().take(20).collect::<String>())
        );
        if let Some(i) = interval {
            let _ = write!(
                s,
                r##"<line x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#0072b2" stroke-width="2"/>"##,
                x(i.lower),
                x(i.upper)
            );
        }
        if v.is_finite() {
            let _ = write!(
                s,
                r##"<circle cx="{:.1}" cy="{y:.1}" r="4" fill="#d55e00"><title>{}</title></circle>"##,
                x(*v),
                pct(*v)
            );
        }
    }
    let marginal = report.marginal[report.recommendation.estimator].value;
    let bottom = top + row_h * rows.len() as f64;
    let _ = write!(
        s,
        r##"<line x1="{0:.1}" y1="{top}" x2="{0:.1}" y2="{bottom}" stroke="black" stroke-dasharray="4 3"/><text x="{0:.1}" y="{1}" text-anchor="middle">over the classes {2}</text>"##,
        x(marginal),
        bottom + 16.0,
        pct(marginal)
    );
    let step = nice_step(hi / 6.0);
    let mut t = 0.0;
    while t <= hi {
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{}" text-anchor="middle" fill="#666">{}</text>"##,
            x(t / 100.0),
            bottom + 32.0,
            trim(t)
        );
        t += step;
    }
    s.push_str("</svg>");
    s
}

/// Up to this many classes, the classwise page draws each class's reliability diagram
/// (beyond it the page would hold hundreds of figures; the JSON has every bin).
pub const PER_CLASS_FIGURES: usize = 20;

/// The classwise page: the marginal recommendation, a figure of every class's value,
/// the marginal table, and every class's recommendation and fit check.
pub fn classwise_page(file: &str, report: &ClasswiseReport) -> String {
    let mut out = String::new();
    head(&mut out, file);
    let level = format!("{:.0}%", 100.0 * report.settings.level);
    let _ = writeln!(
        out,
        "<h1>Classwise calibration report</h1><p>{}: n = {}, {} classes (each one-vs-rest), p = {}, {} bootstrap resamples, seed {}; tce {}.</p>",
        escape(file),
        report.n,
        report.classes.len(),
        report.settings.norm.p(),
        report.settings.resamples,
        report.settings.seed,
        super::json::VERSION
    );
    out.push_str("<section id=\"recommendation\"><h2>In short</h2>");
    for (i, w) in super::text::classwise_words(report).iter().enumerate() {
        let class = if i == 0 { " class=\"lead\"" } else { "" };
        let _ = write!(out, "<p{class}>{}</p>", escape(w));
    }
    let _ = write!(
        out,
        "<p>Is it calibrated? {}</p>",
        escape(super::text::CLASSWISE_NO_TEST)
    );
    out.push_str("</section>\n<section id=\"method\"><h2>How it was made</h2>");
    for w in super::text::classwise_method_words(report) {
        let _ = write!(out, "<p>{}</p>", escape(&w));
    }
    out.push_str("</section>\n<h2>Figures</h2>\n");
    figure(
        &mut out,
        "classes",
        &classes_svg(report),
        &format!("Each class's value of the recommended estimator on its one-vs-rest samples, with its {level} interval; the dashed line is their l_p mean, the marginal calibration error."),
    );
    let _ = write!(
        out,
        "<h2>Over the classes</h2><table><tr><th>estimator</th><th>value</th><th>percentile {level}</th><th>BCa {level}</th><th>bias</th><th>sd</th><th>RMSE</th></tr>"
    );
    let iv = |i: &Interval| format!("{}–{}", pct(i.lower), pct(i.upper));
    for (i, m) in report.marginal.iter().enumerate() {
        let boot = m.bootstrap.as_ref().and_then(|b| b.as_ref().ok());
        let class = if i == report.recommendation.estimator {
            " class=\"best\""
        } else {
            ""
        };
        let _ = write!(
            out,
            "<tr{class}><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&display_name(&m.target)),
            pct(m.value),
            boot.map_or("–".into(), |b| iv(&b.percentile)),
            boot.and_then(|b| b.bca.as_ref()).map_or("–".into(), iv),
            m.bias.map_or("–".into(), |b| format!("{:+.2}", 100.0 * b.bias)),
            m.bias.map_or("–".into(), |b| format!("{:.2}", 100.0 * b.sd)),
            m.bias.map_or("–".into(), |b| format!("{:.2}", 100.0 * b.rmse)),
        );
    }
    unavailable_rows(&mut out, &report.unavailable, 6);
    let _ = write!(
        out,
        "</table><p>The l_p mean of the per-class values (MCE: the maximum); intervals from rows resampled jointly; bias, sd and RMSE in percentage points on the {} fitted models, simulated independently and combined{}.</p>",
        if report.sampled() {
            format!("{} sampled classes'", report.simulated.len())
        } else {
            "per-class".to_owned()
        },
        if report.sampled() {
            " (scaled to all the classes; see above)"
        } else {
            ""
        }
    );
    out.push_str("<h2>Per class</h2><table><tr><th>class</th><th>frequency</th><th>recommended</th><th>value</th><th>interval</th><th>fit check</th></tr>");
    for c in &report.classes {
        let r = &c.report;
        let chosen = &r.estimators[r.recommendation.estimator];
        let _ = write!(
            out,
            "<tr><td>{} {}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            c.class,
            escape(&c.name),
            pct(r.hits as f64 / r.n as f64),
            escape(&display_name(&chosen.target)),
            pct(chosen.estimate),
            chosen.interval().map_or("–".into(), |(i, _)| iv(&i)),
            match &r.parametric {
                Ok(p) if p.reproduces => "reproduced".to_owned(),
                Ok(_) => "not reproduced".to_owned(),
                Err(super::ParametricError::NotSimulated { .. }) => "not simulated".to_owned(),
                Err(e) => escape(&format!("no fit: {e}")),
            }
        );
    }
    out.push_str("</table><p>Each class's full report (every estimator with its intervals; for a simulated class its fit and bias table) is in the JSON (`--json`, `classes`).</p>");
    if report.classes.len() <= PER_CLASS_FIGURES {
        out.push_str("<h2>Per-class reliability diagrams</h2>\n");
        for c in &report.classes {
            let curve = c.report.parametric.as_ref().ok().map(|p| &p.model.curve);
            let Some(rel) = c
                .report
                .reliability
                .iter()
                .find(|r| matches!(r.binning, Binning::EqualMass(_)))
            else {
                continue;
            };
            let title = format!(
                "class {} ({}): {} equal-mass bins",
                c.class,
                c.name,
                rel.bins.len()
            );
            match reliability_svg(rel, curve, &title) {
                Ok(svg) => figure(
                    &mut out,
                    &format!("reliability-class-{}", c.class),
                    &svg,
                    &format!("Class {} one-vs-rest: each dot a bin of p_k at its mean and the share of rows of class {} in it, with its {level} Wilson interval; the line is the class's fitted curve.", c.class, c.class),
                ),
                Err(e) => {
                    let _ = write!(out, "<p>reliability diagram failed: {}</p>", escape(&e));
                }
            }
        }
    }
    out.push_str("<p>How to read this page: docs/report.md of tce.</p></body></html>\n");
    out
}
