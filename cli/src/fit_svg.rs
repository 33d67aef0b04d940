//! The SVG of `tce fit --svg`, under a title that states the best calibration GLM in
//! words with its coefficients:
//!
//! - top left, the reliability diagram (15 equal-width bins of the data) with the fitted
//!   calibration curve and the diagonal, each bin's dot sized by its row count and
//!   labelled with it;
//! - bottom left, the rows per bin on a log axis (a dot from 1 row and one from 5000 look
//!   different);
//! - right, the score histogram on a log-odds axis with log counts, beside the counts the
//!   fitted Beta density predicts: on a linear confidence axis the scores of a confident
//!   model pile into the last bar and hide everything else. Scores of exactly 0 or 1
//!   (float32 softmax saturation: 29% of ResNet-110's CIFAR-10 scores) have no finite
//!   log-odds; they get bars of their own at the ends, marked `c = 0` and `c = 1`.

use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use tce::fit::glm::{GlmSpec, Link, Predictor, Transform};
use tce::fit::FittedModel;
use tce::sim::Beta;
use tce::{BinStats, Closure, Histogram};

const BINS: usize = 15;
/// Bars of the log-odds histogram between the smallest and largest finite log-odds.
const DENSITY_BINS: usize = 40;
/// Midpoint steps per bar when the fitted density is integrated.
const STEPS_PER_BAR: usize = 32;
const FONT: &str = "sans-serif";
const SIZE: (u32, u32) = (1150, 680);
const TITLE_HEIGHT: u32 = 50;
const BLUE_DATA: RGBColor = RGBColor(0, 114, 178);
const RED_FIT: RGBColor = RGBColor(213, 94, 0);

/// The GLM in words and as a formula: e.g. ("logistic in log-odds", "σ(b0 + b1·logit c)").
pub fn glm_in_words(spec: &GlmSpec) -> (&'static str, &'static str) {
    use Predictor::{Full, Intercept, Slope};
    match (spec.link, spec.transform, spec.predictor) {
        (Link::Logit, _, Intercept) => ("constant accuracy", "σ(b0)"),
        (Link::Log, _, Intercept) => ("constant accuracy", "e^b0"),
        (Link::LogFlip, _, Intercept) => ("constant accuracy", "1 − e^b0"),
        (Link::Logit, Transform::Logit, Full) => ("logistic in log-odds", "σ(b0 + b1·logit c)"),
        (Link::Logit, Transform::Logit, Slope) => ("logistic in log-odds", "σ(b1·logit c)"),
        (Link::Log, Transform::Log, Full) => ("power law", "e^b0 · c^b1"),
        (Link::Log, Transform::Log, Slope) => ("power law", "c^b1"),
        (Link::LogFlip, Transform::LogFlip, Full) => ("flipped power law", "1 − e^b0 · (1 − c)^b1"),
        (Link::LogFlip, Transform::LogFlip, Slope) => ("flipped power law", "1 − (1 − c)^b1"),
        (Link::Logit, Transform::LogFlip, Full) => {
            ("logistic in ln(1 − c)", "σ(b0 + b1·ln(1 − c))")
        }
        (Link::Logit, Transform::LogFlip, Slope) => ("logistic in ln(1 − c)", "σ(b1·ln(1 − c))"),
        _ => ("calibration GLM", "g⁻¹(b0 + b1·h(c))"),
    }
}

/// The figure title: the best GLM in words, its formula and coefficients.
fn title(fit: &FittedModel) -> String {
    let best = fit.best_glm();
    let (family, formula) = glm_in_words(&best.spec);
    format!(
        "n = {}; best calibration curve (lowest AIC): {family}: {formula}, b0 = {:.4}, b1 = {:.4}",
        fit.n, best.b0, best.b1
    )
}

fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// The log of the fitted density of z = logit c at z: ln f(c) + ln c + ln(1 − c), with
/// ln c = −softplus(−z) and ln(1 − c) = −softplus(z) formed directly, so that it stays
/// finite for any z (where c itself would round to 1).
fn ln_density_logit(density: &Beta, z: f64) -> f64 {
    -density.alpha() * softplus(-z) - density.beta() * softplus(z) - density.ln_beta_function()
}

/// ∫ over [lo, hi] of the fitted density in z (midpoint rule).
fn mass(density: &Beta, lo: f64, hi: f64, steps: usize) -> f64 {
    let h = (hi - lo) / steps as f64;
    (0..steps)
        .map(|i| ln_density_logit(density, lo + (i as f64 + 0.5) * h).exp() * h)
        .sum()
}

/// The fitted mass above z (upper) or below z (lower): numerically out to |z| = 40,
/// beyond which the density is e^(−βz)/B (upper) or e^(αz)/B (lower) to double precision.
fn tail(density: &Beta, z: f64, upper: bool) -> f64 {
    const FAR: f64 = 40.0;
    let ln_b = density.ln_beta_function();
    if upper {
        let from = z.max(FAR);
        let near = if z < FAR {
            mass(density, z, FAR, 4000)
        } else {
            0.0
        };
        near + (-density.beta() * from - ln_b).exp() / density.beta()
    } else {
        let to = z.min(-FAR);
        let near = if z > -FAR {
            mass(density, -FAR, z, 4000)
        } else {
            0.0
        };
        near + (density.alpha() * to - ln_b).exp() / density.alpha()
    }
}

pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Writes the three panels to `path`.
pub fn write(path: &Path, scores: &[f64], labels: &[u8], fit: &FittedModel) -> Result<(), String> {
    let error = |e: &dyn std::fmt::Display| format!("{}: cannot draw: {e}", path.display());
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| error(&e))?;
    let heading = title(fit);
    let font = (f64::from(SIZE.0 - 20) / (0.55 * heading.chars().count() as f64)).clamp(10.0, 20.0);
    let (top, body) = root.split_vertically(TITLE_HEIGHT);
    top.draw(&Text::new(
        heading,
        (SIZE.0 as i32 / 2, TITLE_HEIGHT as i32 / 2),
        (FONT, font)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center)),
    ))
    .map_err(|e| error(&e))?;
    let (left, right) = body.split_horizontally(SIZE.0 / 2);
    let (reliability, counts) = left.split_vertically((SIZE.1 - TITLE_HEIGHT) * 2 / 3);

    let mut storage = [BinStats::EMPTY; BINS];
    let mut histogram = Histogram::with_storage(&mut storage, Closure::Left)
        .map_err(|e| error(&format!("{e:?}")))?;
    histogram
        .push_batch(scores, labels)
        .map_err(|e| error(&format!("{e:?}")))?;
    let bins: Vec<(usize, BinStats)> = histogram.bins().iter().copied().enumerate().collect();
    draw_reliability(&reliability, &bins, fit).map_err(|e| error(&e))?;
    draw_counts(&counts, &bins).map_err(|e| error(&e))?;
    draw_log_odds_density(&right, scores, &fit.model.density).map_err(|e| error(&e))?;
    root.present().map_err(|e| error(&e))?;
    Ok(())
}

pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// The radius of a bin's dot: its area grows with the bin's row count.
fn radius(count: u64, most: u64) -> i32 {
    (3.0 + 9.0 * (count as f64 / most.max(1) as f64).sqrt()).round() as i32
}

fn draw_reliability(area: &Area<'_>, bins: &[(usize, BinStats)], fit: &FittedModel) -> DrawResult {
    let most = bins.iter().map(|(_, b)| b.count()).max().unwrap_or(1);
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!("reliability: {BINS} equal-width bins, dot area ∝ rows"),
            (FONT, 16),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc("confidence")
        .y_desc("accuracy")
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    chart.draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], BLACK.mix(0.3)))?;
    let curve = fit.model.curve;
    chart
        .draw_series(LineSeries::new(
            (0..=400).map(|i| {
                let c = f64::from(i) / 400.0;
                (c, curve.eval(c))
            }),
            RED_FIT.stroke_width(2),
        ))?
        .label("fitted curve")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], RED_FIT.stroke_width(2)));
    let points: Vec<(f64, f64, u64)> = bins
        .iter()
        .filter_map(|(_, b)| Some((b.mean_score()?, b.accuracy()?, b.count())))
        .collect();
    chart
        .draw_series(
            points.iter().map(|&(x, y, n)| {
                Circle::new((x, y), radius(n, most), BLUE_DATA.mix(0.6).filled())
            }),
        )?
        .label("data (label: rows in the bin)")
        .legend(|(x, y)| Circle::new((x + 7, y), 4, BLUE_DATA.filled()));
    let label = (FONT, 11)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Bottom));
    chart.draw_series(points.iter().map(|&(x, y, n)| {
        EmptyElement::at((x, y))
            + Text::new(
                n.to_string(),
                (radius(n, most) - 1, -radius(n, most) + 1),
                label.clone(),
            )
    }))?;
    chart
        .configure_series_labels()
        .border_style(BLACK.mix(0.3))
        .background_style(WHITE.mix(0.85))
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 12))
        .draw()?;
    Ok(())
}

fn draw_counts(area: &Area<'_>, bins: &[(usize, BinStats)]) -> DrawResult {
    let most = bins
        .iter()
        .map(|(_, b)| b.count())
        .max()
        .unwrap_or(1)
        .max(1);
    let mut chart = ChartBuilder::on(area)
        .caption("rows per bin (log scale)", (FONT, 14))
        .margin(10)
        .x_label_area_size(30)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..1.0, (0.8..most as f64 * 2.0).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("confidence")
        .y_desc("rows")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let width = 1.0 / BINS as f64;
    chart.draw_series(bins.iter().filter(|(_, b)| b.count() > 0).map(|&(k, b)| {
        let x = k as f64 * width;
        Rectangle::new(
            [(x + 0.1 * width, 0.8), (x + 0.9 * width, b.count() as f64)],
            BLUE_DATA.mix(0.6).filled(),
        )
    }))?;
    Ok(())
}

fn logit(c: f64) -> f64 {
    c.ln() - (-c).ln_1p()
}

pub fn draw_log_odds_density(area: &Area<'_>, scores: &[f64], density: &Beta) -> DrawResult {
    let (zeros, ones) = (
        scores.iter().filter(|&&s| s == 0.0).count(),
        scores.iter().filter(|&&s| s == 1.0).count(),
    );
    let finite: Vec<f64> = scores
        .iter()
        .filter(|&&s| s > 0.0 && s < 1.0)
        .map(|&s| logit(s))
        .collect();
    let (mut lo, mut hi) = finite
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &z| {
            (lo.min(z), hi.max(z))
        });
    // No finite log-odds (lo = +inf, hi = −inf), or only one value.
    if lo >= hi {
        let centre = if lo.is_finite() { lo } else { 0.0 };
        (lo, hi) = (centre - 1.0, centre + 1.0);
    }
    let width = (hi - lo) / DENSITY_BINS as f64;
    let mut counts = vec![0u64; DENSITY_BINS];
    for &z in &finite {
        let k = (((z - lo) / width) as usize).min(DENSITY_BINS - 1);
        counts[k] += 1;
    }
    let n = scores.len() as f64;
    let expected: Vec<(f64, f64)> = (0..DENSITY_BINS)
        .map(|k| {
            let a = lo + k as f64 * width;
            (
                a + 0.5 * width,
                n * mass(density, a, a + width, STEPS_PER_BAR),
            )
        })
        .collect();
    // The saturated bars sit one bar-width beyond the finite range, two wide.
    let gap = width;
    let one_bar = (hi + gap, hi + gap + 2.0 * width);
    let zero_bar = (lo - gap - 2.0 * width, lo - gap);
    let expected_ones = n * tail(density, hi, true);
    let expected_zeros = n * tail(density, lo, false);
    let x_range =
        (if zeros > 0 { zero_bar.0 } else { lo })..(if ones > 0 { one_bar.1 } else { hi });
    let top = counts
        .iter()
        .map(|&c| c as f64)
        .chain(expected.iter().map(|&(_, e)| e))
        .chain([ones as f64, zeros as f64, expected_ones, expected_zeros])
        .fold(1.0, f64::max)
        * 4.0;
    let mut chart = ChartBuilder::on(area)
        .caption(
            format!(
                "scores on a log-odds axis; fitted Beta({:.3}, {:.4})",
                density.alpha(),
                density.beta()
            ),
            (FONT, 16),
        )
        .margin(10)
        .x_label_area_size(40)
        .y_label_area_size(55)
        .build_cartesian_2d(x_range, (0.5..top).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("log-odds ln(c / (1 − c))")
        .y_desc("rows per bar (log scale)")
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    let bar = |(a, b): (f64, f64), count: u64| {
        Rectangle::new([(a, 0.5), (b, count as f64)], BLUE_DATA.mix(0.5).filled())
    };
    chart
        .draw_series(
            counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c > 0)
                .map(|(k, &c)| {
                    let a = lo + k as f64 * width;
                    bar((a, a + width), c)
                }),
        )?
        .label("data")
        .legend(|(x, y)| {
            Rectangle::new([(x, y - 5), (x + 14, y + 5)], BLUE_DATA.mix(0.5).filled())
        });
    // Where the fit expects less than a tenth of a row, the log axis has no room.
    chart
        .draw_series(LineSeries::new(
            expected.iter().copied().filter(|&(_, e)| e >= 0.1),
            RED_FIT.stroke_width(2),
        ))?
        .label("fitted Beta, expected rows per bar")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], RED_FIT.stroke_width(2)));
    let note = |anchor| {
        (FONT, 12)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(anchor, VPos::Bottom))
    };
    for (count, bar_at, expect, name, anchor, x) in [
        (
            ones,
            one_bar,
            expected_ones,
            "c = 1",
            HPos::Right,
            one_bar.1,
        ),
        (
            zeros,
            zero_bar,
            expected_zeros,
            "c = 0",
            HPos::Left,
            zero_bar.0,
        ),
    ] {
        if count == 0 {
            continue;
        }
        chart.draw_series([bar(bar_at, count as u64)])?;
        if expect >= 0.1 {
            chart.draw_series(LineSeries::new(
                [(bar_at.0, expect), (bar_at.1, expect)],
                RED_FIT.stroke_width(2),
            ))?;
        }
        chart.draw_series([Text::new(
            format!("{name}: {count} rows"),
            (x, (count as f64).max(expect) * 1.5),
            note(anchor),
        )])?;
    }
    chart
        .configure_series_labels()
        .border_style(BLACK.mix(0.3))
        .background_style(WHITE.mix(0.85))
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 12))
        .draw()?;
    Ok(())
}
