//! The SVG of `tce fit --svg`: left, the reliability diagram (15 equal-width bins of the
//! data) with the fitted calibration curve and the diagonal; right, the score histogram
//! (as a density) with the fitted Beta density.

use std::path::Path;

use plotters::prelude::*;
use tce::fit::FittedModel;
use tce::{BinStats, Closure, Histogram};

const BINS: usize = 15;
const DENSITY_BINS: usize = 50;

/// Writes the two panels to `path`.
pub fn write(path: &Path, scores: &[f64], labels: &[u8], fit: &FittedModel) -> Result<(), String> {
    let error = |e: &dyn std::fmt::Display| format!("{}: {e}", path.display());
    let root = SVGBackend::new(path, (1000, 450)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| error(&e))?;
    let (left, right) = root.split_horizontally(500);

    // Reliability diagram from the core's histogram.
    let mut storage = [BinStats::EMPTY; BINS];
    let mut histogram = Histogram::with_storage(&mut storage, Closure::Left)
        .map_err(|e| error(&format!("{e:?}")))?;
    histogram
        .push_batch(scores, labels)
        .map_err(|e| error(&format!("{e:?}")))?;
    let points: Vec<(f64, f64)> = histogram
        .bins()
        .iter()
        .filter_map(|b| Some((b.mean_score()?, b.accuracy()?)))
        .collect();
    let mut chart = ChartBuilder::on(&left)
        .caption(
            format!("calibration: {}", fit.best_glm().spec.name()),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..1.0, 0.0..1.0)
        .map_err(|e| error(&e))?;
    chart
        .configure_mesh()
        .x_desc("confidence")
        .y_desc("accuracy")
        .draw()
        .map_err(|e| error(&e))?;
    chart
        .draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], &BLACK.mix(0.3)))
        .map_err(|e| error(&e))?;
    let curve = fit.model.curve;
    chart
        .draw_series(LineSeries::new(
            (0..=400).map(|i| {
                let c = f64::from(i) / 400.0;
                (c, curve.eval(c))
            }),
            &RED,
        ))
        .map_err(|e| error(&e))?
        .label("fitted curve")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 15, y)], RED));
    chart
        .draw_series(points.iter().map(|&p| Circle::new(p, 4, BLUE.filled())))
        .map_err(|e| error(&e))?
        .label("data, 15 EW bins")
        .legend(|(x, y)| Circle::new((x + 7, y), 4, BLUE.filled()));
    chart
        .configure_series_labels()
        .border_style(BLACK)
        .background_style(WHITE.mix(0.8))
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| error(&e))?;

    // Score histogram as a density, with the fitted Beta pdf (capped for display: it is
    // infinite at an endpoint whose exponent is below 1).
    let mut counts = [0usize; DENSITY_BINS];
    for &s in scores {
        counts[Closure::Left.bin_index(s, DENSITY_BINS)] += 1;
    }
    let width = 1.0 / DENSITY_BINS as f64;
    let heights: Vec<f64> = counts
        .iter()
        .map(|&c| c as f64 / scores.len() as f64 / width)
        .collect();
    let top = heights.iter().copied().fold(1.0, f64::max) * 1.1;
    let density = fit.model.density;
    let mut chart = ChartBuilder::on(&right)
        .caption(
            format!(
                "scores: Beta({:.3}, {:.4})",
                density.alpha(),
                density.beta()
            ),
            ("sans-serif", 18),
        )
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..1.0, 0.0..top)
        .map_err(|e| error(&e))?;
    chart
        .configure_mesh()
        .x_desc("confidence")
        .y_desc("density")
        .draw()
        .map_err(|e| error(&e))?;
    chart
        .draw_series(heights.iter().enumerate().map(|(k, &h)| {
            let x = k as f64 * width;
            Rectangle::new([(x, 0.0), (x + width, h)], BLUE.mix(0.4).filled())
        }))
        .map_err(|e| error(&e))?;
    chart
        .draw_series(LineSeries::new(
            (1..1000).map(|i| {
                let c = f64::from(i) / 1000.0;
                (c, density.pdf(c).min(top))
            }),
            &RED,
        ))
        .map_err(|e| error(&e))?;
    root.present().map_err(|e| error(&e))?;
    Ok(())
}
