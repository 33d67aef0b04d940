//! SVG figures of simulation results (plotters, SVG backend): bias heat maps, line charts
//! and histograms, each a grid of panels in one file. The callers decide what to draw;
//! this module only draws it.

use std::ops::Range;
use std::path::Path;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Distinct, colour-blind-friendly series colours (Okabe–Ito), in series order.
const SERIES_COLORS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
    RGBColor(240, 228, 66),
];

const FONT: &str = "sans-serif";
const PANEL_WIDTH: u32 = 520;
const PANEL_HEIGHT: u32 = 400;
/// The height of the figure's title band.
const TITLE_HEIGHT: u32 = 40;
/// The largest font of a figure title, and of a panel caption.
const TITLE_FONT: f64 = 22.0;
const CAPTION_FONT: f64 = 17.0;
/// The legend beside a line chart: its font, line spacing and sample length.
const LEGEND_FONT: f64 = 12.0;
const LEGEND_ROW: i32 = 18;
const LEGEND_SAMPLE: i32 = 18;

/// The font size at which `text` fits in `width` pixels, at most `largest`: sans-serif
/// glyphs average about 0.55 em, so a long title shrinks instead of being clipped.
fn fitting_font(text: &str, width: u32, largest: f64) -> f64 {
    let chars = text.chars().count().max(1) as f64;
    let fits = (f64::from(width) - 20.0) / (0.55 * chars);
    fits.clamp(10.0, largest)
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

fn failed<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> String + '_ {
    move |e| format!("{}: cannot draw: {e}", path.display())
}

/// Lays out `panels` panels of `panel_width` pixels in rows of `columns` under a title
/// (its font shrunk to fit the width), draws each with `draw`, and writes the SVG to
/// `path`.
fn panel_grid<T>(
    path: &Path,
    title: &str,
    panels: &[T],
    columns: usize,
    panel_width: u32,
    mut draw: impl FnMut(&Area<'_>, &T) -> Result<(), String>,
) -> Result<(), String> {
    let columns = columns.clamp(1, panels.len().max(1));
    let rows = panels.len().div_ceil(columns).max(1);
    let size = (
        panel_width * columns as u32,
        PANEL_HEIGHT * rows as u32 + TITLE_HEIGHT,
    );
    let root = SVGBackend::new(path, size).into_drawing_area();
    root.fill(&WHITE).map_err(failed(path))?;
    let root = root
        .titled(title, (FONT, fitting_font(title, size.0, TITLE_FONT)))
        .map_err(failed(path))?;
    for (area, panel) in root.split_evenly((rows, columns)).iter().zip(panels) {
        draw(area, panel)?;
    }
    root.present().map_err(failed(path))
}

/// One heat map: `values[row][column]`, rows and columns labelled.
pub struct HeatMap {
    /// The panel title.
    pub title: String,
    /// The row labels (bottom to top), e.g. sample sizes.
    pub rows: Vec<String>,
    /// The row axis description.
    pub rows_desc: String,
    /// The column labels (left to right), e.g. bin counts or estimator names.
    pub columns: Vec<String>,
    /// The column axis description.
    pub columns_desc: String,
    /// The cell values; one row per row label.
    pub values: Vec<Vec<f64>>,
}

/// A diverging colour: white at 0, red for positive, blue for negative, full at ±limit.
fn diverging(value: f64, limit: f64) -> RGBColor {
    let t = if limit > 0.0 {
        (value / limit).clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let fade = (255.0 - 200.0 * t.abs()).round() as u8;
    if t >= 0.0 {
        RGBColor(255, fade, fade)
    } else {
        RGBColor(fade, fade, 255)
    }
}

/// Heat maps sharing one colour scale (symmetric about 0), each cell annotated with its
/// value to two decimals.
pub fn heat_maps(path: &Path, title: &str, maps: &[HeatMap], columns: usize) -> Result<(), String> {
    let limit = maps
        .iter()
        .flat_map(|m| m.values.iter().flatten())
        .fold(0.0f64, |acc, v| acc.max(v.abs()));
    panel_grid(path, title, maps, columns, PANEL_WIDTH, |area, map| {
        let (n_rows, n_columns) = (map.rows.len(), map.columns.len());
        let mut chart = ChartBuilder::on(area)
            .caption(
                &map.title,
                (FONT, fitting_font(&map.title, PANEL_WIDTH, CAPTION_FONT)),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(
                // Integer ranges include their end: 0..=len − 1 gives one segment per value.
                (0..n_columns.max(1) - 1).into_segmented(),
                (0..n_rows.max(1) - 1).into_segmented(),
            )
            .map_err(failed(path))?;
        let label = |labels: &[String], v: &SegmentValue<usize>| match v {
            SegmentValue::CenterOf(i) if *i < labels.len() => labels[*i].clone(),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(&map.columns_desc)
            .y_desc(&map.rows_desc)
            .x_labels(n_columns)
            .y_labels(n_rows)
            .x_label_formatter(&|v| label(&map.columns, v))
            .y_label_formatter(&|v| label(&map.rows, v))
            .label_style((FONT, 14))
            .draw()
            .map_err(failed(path))?;
        let cells = (0..n_rows).flat_map(|r| (0..n_columns).map(move |c| (r, c)));
        chart
            .draw_series(cells.clone().map(|(r, c)| {
                Rectangle::new(
                    [
                        (SegmentValue::Exact(c), SegmentValue::Exact(r)),
                        (SegmentValue::Exact(c + 1), SegmentValue::Exact(r + 1)),
                    ],
                    diverging(map.values[r][c], limit).filled(),
                )
            }))
            .map_err(failed(path))?;
        let centred = (FONT, 13)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center));
        chart
            .draw_series(cells.map(|(r, c)| {
                Text::new(
                    format!("{:.2}", map.values[r][c]),
                    (SegmentValue::CenterOf(c), SegmentValue::CenterOf(r)),
                    centred.clone(),
                )
            }))
            .map_err(failed(path))?;
        Ok(())
    })
}

/// How the x axis of a line chart is scaled.
#[derive(Clone, Copy, PartialEq)]
pub enum XScale {
    /// Linear.
    Linear,
    /// Logarithmic in base 2, ticks at the smallest x times powers of 2 (sample sizes).
    Log2,
}

/// A reference line drawn behind the series.
#[derive(Clone, Copy, PartialEq)]
pub enum Guide {
    /// y = 0 (no bias).
    Zero,
    /// y = x (estimate equals truth).
    Diagonal,
    /// y = α, a test's level (what a calibrated model's rejection rate should be).
    Level(f64),
    /// None.
    None,
}

/// One named series of (x, y) points, drawn as a line with markers.
pub struct Series {
    /// The legend entry.
    pub name: String,
    /// The points, in x order.
    pub points: Vec<(f64, f64)>,
}

/// One line chart.
pub struct LinePanel {
    /// The panel title.
    pub title: String,
    /// The x axis description.
    pub x_desc: String,
    /// The y axis description.
    pub y_desc: String,
    /// The x axis scale.
    pub x_scale: XScale,
    /// The reference line.
    pub guide: Guide,
    /// The series.
    pub series: Vec<Series>,
}

/// A range covering `values` with 5% room on each side (and some room if they are equal).
fn padded(values: impl Iterator<Item = f64>) -> Range<f64> {
    let (lo, hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if !lo.is_finite() {
        return 0.0..1.0;
    }
    let pad = if hi > lo { 0.05 * (hi - lo) } else { 0.5 };
    lo - pad..hi + pad
}

/// The width of a legend beside the plot that holds `names` on one line each.
fn legend_width<'a>(names: impl Iterator<Item = &'a str>) -> u32 {
    let longest = names.map(|n| n.chars().count()).max().unwrap_or(0) as f64;
    // About 0.5 em a glyph at this size, plus the sample line and margins.
    (longest * 0.5 * LEGEND_FONT + f64::from(LEGEND_SAMPLE) + 30.0).ceil() as u32
}

/// The guide's legend entry, if it has one.
fn guide_label(guide: Guide) -> Option<&'static str> {
    match guide {
        Guide::Zero => Some("no bias"),
        Guide::Diagonal => Some("estimate = TCE"),
        Guide::Level(_) => Some("level α"),
        Guide::None => None,
    }
}

/// Draws a legend of (name, colour, marker) entries from the top left of `area`.
fn legend(
    path: &Path,
    area: &Area<'_>,
    entries: &[(String, RGBColor, bool)],
) -> Result<(), String> {
    let font = (FONT, LEGEND_FONT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (name, color, marker)) in entries.iter().enumerate() {
        let y = 50 + LEGEND_ROW * i as i32;
        let (x0, x1) = (8, 8 + LEGEND_SAMPLE);
        area.draw(&PathElement::new([(x0, y), (x1, y)], color.stroke_width(2)))
            .map_err(failed(path))?;
        if *marker {
            area.draw(&Circle::new(((x0 + x1) / 2, y), 3, color.filled()))
                .map_err(failed(path))?;
        }
        area.draw(&Text::new(name.clone(), (x1 + 6, y), font.clone()))
            .map_err(failed(path))?;
    }
    Ok(())
}

/// Line charts, one per panel, each with its legend beside the plot (outside the plot
/// area, so that it never covers a line).
pub fn line_charts(
    path: &Path,
    title: &str,
    panels: &[LinePanel],
    columns: usize,
) -> Result<(), String> {
    let names = panels.iter().flat_map(|p| {
        p.series
            .iter()
            .map(|s| s.name.as_str())
            .chain(guide_label(p.guide))
    });
    let legend_width = legend_width(names);
    panel_grid(
        path,
        title,
        panels,
        columns,
        PANEL_WIDTH + legend_width,
        |area, panel| {
            let (area, legend_area) = area.split_horizontally(PANEL_WIDTH);
            let points = || panel.series.iter().flat_map(|s| s.points.iter().copied());
            // Log2 axes plot log2(x / smallest x) linearly, so that integer ticks land on the
            // data's doubling sizes and are labelled with the sizes themselves.
            let base = points().map(|p| p.0).fold(f64::INFINITY, f64::min);
            let to_x = |x: f64| match panel.x_scale {
                XScale::Linear => x,
                XScale::Log2 => (x / base).log2(),
            };
            let x_range = padded(points().map(|p| to_x(p.0)));
            let mut y_values: Vec<f64> = points().map(|p| p.1).collect();
            match panel.guide {
                Guide::Zero | Guide::None => y_values.push(0.0),
                Guide::Diagonal => y_values.extend(points().map(|p| p.0)),
                Guide::Level(level) => y_values.extend([0.0, level]),
            }
            let y_range = padded(y_values.into_iter());
            let mut chart = ChartBuilder::on(&area)
                .caption(
                    &panel.title,
                    (FONT, fitting_font(&panel.title, PANEL_WIDTH, CAPTION_FONT)),
                )
                .margin(12)
                .x_label_area_size(40)
                .y_label_area_size(55)
                .build_cartesian_2d(x_range.clone(), y_range)
                .map_err(failed(path))?;
            let x_ticks = match panel.x_scale {
                XScale::Linear => 10,
                XScale::Log2 => (x_range.end - x_range.start).floor() as usize + 1,
            };
            let x_label = |x: &f64| match panel.x_scale {
                XScale::Linear => format!("{x:.3}")
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                    .to_owned(),
                XScale::Log2 => format!("{:.0}", base * x.exp2()),
            };
            chart
                .configure_mesh()
                .x_desc(&panel.x_desc)
                .y_desc(&panel.y_desc)
                .x_labels(x_ticks)
                .x_label_formatter(&x_label)
                .label_style((FONT, 13))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(failed(path))?;
            let guide = match panel.guide {
                Guide::Zero => Some([(x_range.start, 0.0), (x_range.end, 0.0)]),
                Guide::Diagonal => {
                    Some([(x_range.start, x_range.start), (x_range.end, x_range.end)])
                }
                Guide::Level(level) => Some([(x_range.start, level), (x_range.end, level)]),
                Guide::None => None,
            };
            let grey = RGBColor(150, 150, 150);
            let mut entries = Vec::new();
            if let (Some(line), Some(label)) = (guide, guide_label(panel.guide)) {
                chart
                    .draw_series(LineSeries::new(line, grey.stroke_width(1)))
                    .map_err(failed(path))?;
                entries.push((label.to_owned(), grey, false));
            }
            for (series, &color) in panel.series.iter().zip(SERIES_COLORS.iter().cycle()) {
                let xy: Vec<(f64, f64)> =
                    series.points.iter().map(|&(x, y)| (to_x(x), y)).collect();
                chart
                    .draw_series(LineSeries::new(xy.clone(), color.stroke_width(2)))
                    .map_err(failed(path))?;
                chart
                    .draw_series(xy.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                    .map_err(failed(path))?;
                entries.push((series.name.clone(), color, true));
            }
            legend(path, &legend_area, &entries)
        },
    )
}

/// One histogram with a marked reference value.
pub struct HistogramPanel {
    /// The panel title.
    pub title: String,
    /// The x axis description.
    pub x_desc: String,
    /// Bin edges, one more than the counts.
    pub edges: Vec<f64>,
    /// The count of each bin.
    pub counts: Vec<usize>,
    /// The marked value's legend entry and position (e.g. the TCE).
    pub marker: (String, f64),
}

/// Histograms, one per panel.
pub fn histograms(
    path: &Path,
    title: &str,
    panels: &[HistogramPanel],
    columns: usize,
) -> Result<(), String> {
    panel_grid(path, title, panels, columns, PANEL_WIDTH, |area, panel| {
        let x_range = padded(panel.edges.iter().copied().chain([panel.marker.1]));
        // Counts are whole numbers: an integer axis gets integer ticks ("100", not
        // "100.0").
        let highest = panel.counts.iter().copied().max().unwrap_or(0) as u64;
        let top = (highest + highest / 10).max(highest + 1);
        let mut chart = ChartBuilder::on(area)
            .caption(
                &panel.title,
                (FONT, fitting_font(&panel.title, PANEL_WIDTH, CAPTION_FONT)),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(55)
            .build_cartesian_2d(x_range, 0u64..top)
            .map_err(failed(path))?;
        chart
            .configure_mesh()
            .x_desc(&panel.x_desc)
            .y_desc("repetitions")
            .label_style((FONT, 13))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(failed(path))?;
        let color = SERIES_COLORS[0];
        chart
            .draw_series(
                panel
                    .edges
                    .windows(2)
                    .zip(&panel.counts)
                    .map(|(edge, &count)| {
                        Rectangle::new(
                            [(edge[0], 0), (edge[1], count as u64)],
                            color.mix(0.6).filled(),
                        )
                    }),
            )
            .map_err(failed(path))?;
        let red = SERIES_COLORS[1];
        chart
            .draw_series(LineSeries::new(
                [(panel.marker.1, 0), (panel.marker.1, top)],
                red.stroke_width(3),
            ))
            .map_err(failed(path))?
            .label(&panel.marker.0)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], red.stroke_width(3)));
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.3))
            .label_font((FONT, 12))
            .draw()
            .map_err(failed(path))?;
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| {
                let body = &t[t.find('>')? + 1..];
                Some(body[..body.find("</text>")?].trim().to_owned())
            })
            .collect()
    }

    #[test]
    fn histogram_counts_are_labelled_as_integers() {
        let path = std::env::temp_dir().join(format!("tce-plot-{}.svg", std::process::id()));
        let panel = HistogramPanel {
            title: "counts".into(),
            x_desc: "x".into(),
            edges: vec![0.0, 1.0, 2.0, 3.0],
            counts: vec![100, 250, 7],
            marker: ("marker".into(), 1.5),
        };
        histograms(&path, "Figure", &[panel], 1).unwrap();
        let labels = texts(&std::fs::read_to_string(&path).unwrap());
        let _ = std::fs::remove_file(&path);
        assert!(labels.iter().any(|t| t == "100"), "{labels:?}");
        assert!(
            !labels.iter().any(|t| t == "100.0" || t == "200.0"),
            "{labels:?}"
        );
    }

    #[test]
    fn long_titles_shrink_to_fit() {
        assert_eq!(fitting_font("short", 520, TITLE_FONT), TITLE_FONT);
        let long = "x".repeat(60);
        let size = fitting_font(&long, 520, TITLE_FONT);
        assert!(size < TITLE_FONT && 60.0 * 0.55 * size <= 500.0, "{size}");
    }
}
