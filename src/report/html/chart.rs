//! What the report's figures and `tce fit --svg` draw alike: their fonts and colours,
//! the unit-square frame of a calibration chart (confidence against accuracy, with the
//! diagonal), a calibration curve's points, and the legend box.

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::sim::flexible::CalibrationCurve;

/// The font of every figure.
pub const FONT: &str = "sans-serif";
/// The data's colour (Okabe–Ito blue).
pub const BLUE_DATA: RGBColor = RGBColor(0, 114, 178);
/// The fitted model's colour (Okabe–Ito vermillion).
pub const RED_FIT: RGBColor = RGBColor(213, 94, 0);

/// A drawing area of plotters' SVG backend.
pub type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// What drawing failed with.
pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// A chart over [0, 1] × [0, 1].
pub type UnitChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// A calibration chart on `area`: [0, 1] on both axes with their descriptions, no minor
/// grid lines, and the diagonal of perfect calibration.
pub fn unit_square<'a, 'b>(
    area: &'a Area<'b>,
    caption: &str,
    caption_size: u32,
    x_desc: &str,
    y_desc: &str,
) -> Result<UnitChart<'a, 'b>, Box<dyn std::error::Error>> {
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, caption_size))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(45)
        .build_cartesian_2d(0.0..1.0, 0.0..1.0)?;
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    chart.draw_series(LineSeries::new([(0.0, 0.0), (1.0, 1.0)], BLACK.mix(0.3)))?;
    Ok(chart)
}

/// The curve at 401 evenly spaced confidences, enough for a smooth line at figure size.
pub fn curve_points(curve: &CalibrationCurve) -> impl Iterator<Item = (f64, f64)> + '_ {
    (0..=400).map(move |i| {
        let c = f64::from(i) / 400.0;
        (c, curve.eval(c))
    })
}

/// The legend of the chart's labelled series, in its upper left corner.
pub fn draw_legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
) -> DrawResult {
    chart
        .configure_series_labels()
        .border_style(BLACK.mix(0.3))
        .background_style(WHITE.mix(0.85))
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 12))
        .draw()?;
    Ok(())
}
