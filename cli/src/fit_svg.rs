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

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use tce::fit::glm::{GlmSpec, Link, Predictor, Transform};
use tce::fit::FittedModel;
use tce::report::html::chart::{
    curve_points, draw_legend, unit_square, Area, DrawResult, BLUE_DATA, FONT, RED_FIT,
};
use tce::report::html::scores::draw_log_odds_density;
use tce::{BinStats, Closure, Histogram};

const BINS: usize = 15;
const SIZE: (u32, u32) = (1150, 680);
const TITLE_HEIGHT: u32 = 50;

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
    draw_log_odds_density(&right, scores, &tce::sim::FlexibleModel::from(fit.model))
        .map_err(|e| error(&e))?;
    root.present().map_err(|e| error(&e))?;
    Ok(())
}

/// The radius of a bin's dot: its area grows with the bin's row count.
fn radius(count: u64, most: u64) -> i32 {
    (3.0 + 9.0 * (count as f64 / most.max(1) as f64).sqrt()).round() as i32
}

fn draw_reliability(area: &Area<'_>, bins: &[(usize, BinStats)], fit: &FittedModel) -> DrawResult {
    let most = bins.iter().map(|(_, b)| b.count()).max().unwrap_or(1);
    let caption = format!("reliability: {BINS} equal-width bins, dot area ∝ rows");
    let mut chart = unit_square(area, &caption, 16, "confidence", "accuracy")?;
    chart
        .draw_series(LineSeries::new(
            curve_points(&tce::sim::CalibrationCurve::Paper(fit.model.curve)),
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
    draw_legend(&mut chart)
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
