//! The score panel shared by `tce report --html` and `tce fit --svg`: the histogram of
//! the scores on a log-odds axis with log counts, beside the counts the fitted model
//! predicts. On a linear confidence axis the scores of a confident model pile into the
//! last bar and hide everything else. Scores of exactly 0 or 1 (float32 softmax
//! saturation: 29% of ResNet-110's CIFAR-10 scores) have no finite log-odds; they get
//! bars of their own at the ends, marked `c = 0` and `c = 1`, and a model with point
//! masses there predicts them (n·π plus the Beta's tail beyond the drawn range).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::chart::{draw_legend, Area, DrawResult, BLUE_DATA, FONT, RED_FIT};
use crate::sim::flexible::{FlexibleModel, ScoreDensity};

/// Bars of the log-odds histogram between the smallest and largest finite log-odds.
const DENSITY_BINS: usize = 40;
/// Midpoint steps per bar when the fitted density is integrated.
const STEPS_PER_BAR: usize = 32;

fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

/// The log of the fitted density of z = logit c at z. For a Beta: ln f(c) + ln c +
/// ln(1 − c), with ln c = −softplus(−z) and ln(1 − c) = −softplus(z) formed directly, so
/// that it stays finite for any z (where c itself would round to 1). A log-odds mixture
/// is a density in z already.
fn ln_density_logit(density: &ScoreDensity, z: f64) -> f64 {
    match density {
        ScoreDensity::Beta(beta) => {
            -beta.alpha() * softplus(-z) - beta.beta() * softplus(z) - beta.ln_beta_function()
        }
        ScoreDensity::LogitMixture(mixture) => mixture.ln_pdf_logit(z),
    }
}

/// ∫ over [lo, hi] of the fitted density in z (midpoint rule).
fn mass(density: &ScoreDensity, lo: f64, hi: f64, steps: usize) -> f64 {
    let h = (hi - lo) / steps as f64;
    (0..steps)
        .map(|i| ln_density_logit(density, lo + (i as f64 + 0.5) * h).exp() * h)
        .sum()
}

/// The fitted mass above z (upper) or below z (lower). A Beta's numerically out to
/// |z| = 40, beyond which its density is e^(−βz)/B (upper) or e^(αz)/B (lower) to double
/// precision; a mixture's from its normal cdfs.
fn tail(density: &ScoreDensity, z: f64, upper: bool) -> f64 {
    const FAR: f64 = 40.0;
    let beta = match density {
        ScoreDensity::Beta(beta) => beta,
        ScoreDensity::LogitMixture(mixture) => {
            let below = mixture.cdf_logit(z);
            return if upper { 1.0 - below } else { below };
        }
    };
    let ln_b = beta.ln_beta_function();
    if upper {
        let from = z.max(FAR);
        let near = if z < FAR {
            mass(density, z, FAR, 4000)
        } else {
            0.0
        };
        near + (-beta.beta() * from - ln_b).exp() / beta.beta()
    } else {
        let to = z.min(-FAR);
        let near = if z > -FAR {
            mass(density, -FAR, z, 4000)
        } else {
            0.0
        };
        near + (beta.alpha() * to - ln_b).exp() / beta.alpha()
    }
}

fn logit(c: f64) -> f64 {
    c.ln() - (-c).ln_1p()
}

/// Draws the panel on `area`: the histogram of `scores` and the counts `model` predicts
/// (its density scaled by its continuous mass; its atoms at 0 and 1 in the end bars).
pub fn draw_log_odds_density(area: &Area<'_>, scores: &[f64], model: &FlexibleModel) -> DrawResult {
    let density = &model.density;
    let atoms = model.point_masses;
    let continuous = atoms.continuous_mass();
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
                n * continuous * mass(density, a, a + width, STEPS_PER_BAR),
            )
        })
        .collect();
    // The saturated bars sit one bar-width beyond the finite range, two wide.
    let gap = width;
    let one_bar = (hi + gap, hi + gap + 2.0 * width);
    let zero_bar = (lo - gap - 2.0 * width, lo - gap);
    let atom = |a: Option<crate::sim::PointMass>| a.map_or(0.0, |a| a.mass());
    let expected_ones = n * (atom(atoms.one()) + continuous * tail(density, hi, true));
    let expected_zeros = n * (atom(atoms.zero()) + continuous * tail(density, lo, false));
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
                "scores on a log-odds axis; fitted {}{}",
                match density {
                    ScoreDensity::Beta(beta) =>
                        format!("Beta({:.3}, {:.4})", beta.alpha(), beta.beta()),
                    ScoreDensity::LogitMixture(mixture) => {
                        format!("log-odds mixture of {}", mixture.len())
                    }
                },
                if atoms.is_none() {
                    ""
                } else {
                    " + point masses"
                }
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
        .label(if atoms.is_none() {
            "fitted Beta, expected rows per bar"
        } else {
            "fitted model, expected rows per bar"
        })
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
    draw_legend(&mut chart)
}
