//! `tce simulate`: the bias of estimators on a synthetic model (SPEC §7), over a grid of
//! sample sizes, bin counts and estimators, as a table, JSON, CSV and an SVG figure.
//!
//! The numbers come from [`tce::sim::simulate`]; this module parses options and renders.
//! The cell rows, the CSV writer, the bias figures and the progress bar are shared with
//! `tce paper`.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use tce::sim::curve::CurveParams;
use tce::sim::estimator::EvaluationSettings;
use tce::sim::runner::Cell;
use tce::sim::{simulate, Beta, Curve, EstimatorSpec, Grid, Model, Simulation, SimulationError};
use tce::{Norm, SweepOptions};

use crate::plot::{self, Guide, HeatMap, LinePanel, Series, XScale};
use crate::{parse_bins, parse_norm, write_stdout, Failure};

/// Options of `tce simulate`.
#[derive(Args)]
pub struct SimulateArgs {
    /// α of the Beta score density.
    #[arg(long)]
    alpha: f64,
    /// β of the Beta score density.
    #[arg(long)]
    beta: f64,
    /// Calibration curve T(c): polynomial, flip_polynomial, two_param_polynomial,
    /// two_param_flip_polynomial, logistic_log_odds, logistic_flip_polynomial, logistic.
    #[arg(long, default_value = "polynomial")]
    curve: String,
    /// Exponent d of polynomial and flip_polynomial (d = 1: perfectly calibrated).
    #[arg(long, allow_hyphen_values = true)]
    d: Option<f64>,
    /// First parameter a of the two-parameter curves.
    #[arg(long, allow_hyphen_values = true)]
    a: Option<f64>,
    /// Second parameter b of the two-parameter curves.
    #[arg(long, allow_hyphen_values = true)]
    b: Option<f64>,
    /// Sample sizes, comma-separated.
    #[arg(long = "n", value_name = "N,...", required = true, value_delimiter = ',', value_parser = parse_size)]
    sizes: Vec<usize>,
    /// Bin counts of ece_bin, ece_debias and mce, comma-separated (the sweep and KDE take
    /// none).
    #[arg(long, value_name = "B,...", default_value = "15", value_delimiter = ',', value_parser = parse_bins)]
    bins: Vec<usize>,
    /// Estimators, comma-separated: estimator[:binning[:option]] with estimator ece_bin,
    /// ece_sweep, ece_debias, mce or kde, binning equal_width or equal_mass, option
    /// left/right (equal-width closure) or split/keep (equal-mass ties).
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        default_value = "ece_bin:equal_width,ece_bin:equal_mass,ece_sweep:equal_mass,ece_debias:equal_mass,kde"
    )]
    estimators: Vec<EstimatorSpec>,
    /// Number of repetitions m (data sets per cell; at most 100000,
    /// tce::sim::runner::MAX_REPETITIONS).
    #[arg(long, default_value_t = 1000, value_parser = parse_repetitions)]
    reps: usize,
    /// Seed of the data sets.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Exponent p of the l_p calibration error (p >= 1).
    #[arg(long, value_name = "P", default_value = "2", value_parser = parse_norm)]
    norm: Norm,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the cells as CSV to this file.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Also draw an SVG: bias heat maps (n × bins) when several bin counts are given,
    /// else bias against n.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
}

fn parse_size(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("the sample size n must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{text}` is not a whole number of samples")),
    }
}

fn parse_repetitions(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("the number of repetitions must be at least 1".to_owned()),
        Ok(m) => Ok(m),
        Err(_) => Err(format!("`{text}` is not a whole number of repetitions")),
    }
}

fn usage_error(message: String) -> Failure {
    Failure { code: 2, message }
}

/// Runs `tce simulate`.
pub fn run(args: &SimulateArgs) -> Result<(), Failure> {
    let density = Beta::new(args.alpha, args.beta).map_err(|e| usage_error(e.to_string()))?;
    let params = CurveParams {
        d: args.d,
        a: args.a,
        b: args.b,
    };
    let curve = Curve::from_name(&args.curve, params).map_err(|e| usage_error(e.to_string()))?;
    let model = Model::new(density, curve);
    let grid = Grid {
        sizes: args.sizes.clone(),
        bins: args.bins.clone(),
        estimators: args.estimators.clone(),
        repetitions: args.reps,
        seed: args.seed,
        settings: EvaluationSettings {
            norm: args.norm,
            sweep: SweepOptions::default(),
        },
    };
    let simulation = run_with_progress(&model, &grid)?;
    let description = describe(&model, &grid);
    if let Some(path) = &args.csv {
        write_cells_csv(path, &simulation.cells)?;
    }
    if let Some(path) = &args.svg {
        draw_bias(
            path,
            &format!("Bias (%) — {description}"),
            &simulation,
            &grid,
        )?;
    }
    let text = if args.json {
        let report = JsonReport {
            tce_version: crate::VERSION,
            command: "simulate",
            settings: SimulateSettingsJson {
                alpha: args.alpha,
                beta: args.beta,
                curve: args.curve.clone(),
                d: args.d,
                a: args.a,
                b: args.b,
                n: args.sizes.clone(),
                bins: args.bins.clone(),
                estimators: args.estimators.iter().map(ToString::to_string).collect(),
                reps: args.reps,
                seed: args.seed,
                norm: args.norm.p(),
                csv: args.csv.as_ref().map(|p| p.display().to_string()),
                svg: args.svg.as_ref().map(|p| p.display().to_string()),
            },
            unit: "percent",
            tce: simulation.tce,
            p: args.norm.p(),
            repetitions: simulation.repetitions,
            seed: args.seed,
            model: description,
            cells: simulation.cells.iter().map(CellRow::from).collect(),
        };
        crate::json_line(&report)?
    } else {
        table(&simulation, &description, args.norm, args.seed)
    };
    write_stdout(&text)
}

/// "Beta(α, β), T = curve": the model as the outputs name it.
pub fn describe_model(model: &Model) -> String {
    format!(
        "Beta({}, {}), T = {}",
        model.density.alpha(),
        model.density.beta(),
        model.curve
    )
}

fn describe(model: &Model, grid: &Grid) -> String {
    format!("{}, m = {}", describe_model(model), grid.repetitions)
}

/// Runs a simulation with a progress bar on stderr when stderr is a terminal. Grid
/// errors are usage errors (exit 2); estimator failures are not (exit 1).
pub fn run_with_progress(model: &Model, grid: &Grid) -> Result<Simulation, Failure> {
    let bar = if std::io::stderr().is_terminal() {
        let bar = ProgressBar::new(grid.repetitions as u64);
        bar.set_style(
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} repetitions, eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(describe_model(model));
        bar
    } else {
        ProgressBar::hidden()
    };
    let result = simulate(model, grid, &|| bar.inc(1));
    bar.finish_and_clear();
    result.map_err(|e| Failure {
        code: match e {
            SimulationError::Evaluate { .. } | SimulationError::Tce(_) => 1,
            _ => 2,
        },
        message: e.to_string(),
    })
}

/// `x` with 6 significant digits, as CSV cells carry them (files stay small).
pub fn significant(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let decimals = 5 - x.abs().log10().floor() as i32;
    if (0..=17).contains(&decimals) {
        let text = format!("{x:.*}", decimals as usize);
        // Trailing zeros after the point carry no digits.
        if text.contains('.') {
            return text.trim_end_matches('0').trim_end_matches('.').to_owned();
        }
        return text;
    }
    format!("{x:.5e}")
}

/// One cell as JSON and CSV present it (values in percent).
#[derive(Serialize)]
pub struct CellRow {
    n: usize,
    bins: Option<usize>,
    estimator: &'static str,
    binning: Option<&'static str>,
    spec: String,
    mean: f64,
    bias: f64,
    sd: f64,
    rmse: f64,
    se: f64,
    mean_sweep_bins: Option<f64>,
}

impl From<&Cell> for CellRow {
    fn from(cell: &Cell) -> CellRow {
        let (key, s) = (cell.key, cell.summary);
        CellRow {
            n: key.n,
            bins: key.bins,
            estimator: key.estimator.kind().name(),
            binning: key.estimator.binning_name(),
            spec: key.estimator.to_string(),
            mean: s.mean,
            bias: s.bias,
            sd: s.sd,
            rmse: s.rmse,
            se: s.se,
            mean_sweep_bins: cell.mean_sweep_bins,
        }
    }
}

/// What `tce simulate` was run with: every option, so that the JSON reproduces its run.
#[derive(Serialize)]
struct SimulateSettingsJson {
    alpha: f64,
    beta: f64,
    curve: String,
    d: Option<f64>,
    a: Option<f64>,
    b: Option<f64>,
    n: Vec<usize>,
    bins: Vec<usize>,
    estimators: Vec<String>,
    reps: usize,
    seed: u64,
    norm: f64,
    csv: Option<String>,
    svg: Option<String>,
}

#[derive(Serialize)]
struct JsonReport {
    tce_version: &'static str,
    command: &'static str,
    settings: SimulateSettingsJson,
    unit: &'static str,
    tce: f64,
    p: f64,
    repetitions: usize,
    seed: u64,
    model: String,
    cells: Vec<CellRow>,
}

fn write_failure(path: &Path) -> impl Fn(csv::Error) -> Failure + '_ {
    move |e| Failure {
        code: 1,
        message: format!("{}: {e}", path.display()),
    }
}

/// Writes CSV rows `header` + `rows` to `path`.
pub fn write_csv(path: &Path, header: &[&str], rows: &[Vec<String>]) -> Result<(), Failure> {
    let mut writer = csv::Writer::from_path(path).map_err(write_failure(path))?;
    writer.write_record(header).map_err(write_failure(path))?;
    for row in rows {
        writer.write_record(row).map_err(write_failure(path))?;
    }
    writer.flush().map_err(|e| Failure {
        code: 1,
        message: format!("{}: {e}", path.display()),
    })
}

/// The CSV columns of a cell (values in percent).
pub const CELL_COLUMNS: [&str; 11] = [
    "n",
    "bins",
    "estimator",
    "binning",
    "spec",
    "mean_percent",
    "bias_percent",
    "sd_percent",
    "rmse_percent",
    "se_percent",
    "mean_sweep_bins",
];

/// A cell as a CSV record of [`CELL_COLUMNS`], values with 6 significant digits.
pub fn cell_record(cell: &Cell) -> Vec<String> {
    let optional = |v: Option<String>| v.unwrap_or_default();
    let r = CellRow::from(cell);
    vec![
        r.n.to_string(),
        optional(r.bins.map(|b| b.to_string())),
        r.estimator.to_owned(),
        optional(r.binning.map(str::to_owned)),
        r.spec,
        significant(r.mean),
        significant(r.bias),
        significant(r.sd),
        significant(r.rmse),
        significant(r.se),
        optional(r.mean_sweep_bins.map(significant)),
    ]
}

/// Writes the cells as CSV (values in percent, 6 significant digits).
pub fn write_cells_csv(path: &Path, cells: &[Cell]) -> Result<(), Failure> {
    let rows: Vec<Vec<String>> = cells.iter().map(cell_record).collect();
    write_csv(path, &CELL_COLUMNS, &rows)
}

fn table(simulation: &Simulation, description: &str, norm: Norm, seed: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{description}, seed {seed}: TCE = {:.4} % (p = {})",
        simulation.tce,
        norm.p()
    );
    let _ = writeln!(
        out,
        "{:>7} {:>5}  {:<28} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "n", "bins", "estimator", "mean %", "bias %", "sd %", "rmse %", "se %", "mean b*"
    );
    for cell in &simulation.cells {
        let s = cell.summary;
        let bins = cell.key.bins.map_or("-".to_owned(), |b| b.to_string());
        let sweep = cell
            .mean_sweep_bins
            .map_or("-".to_owned(), |b| format!("{b:.1}"));
        let _ = writeln!(
            out,
            "{:>7} {:>5}  {:<28} {:>9.4} {:>9.4} {:>9.4} {:>9.4} {:>8.4} {:>8}",
            cell.key.n,
            bins,
            cell.key.estimator.to_string(),
            s.mean,
            s.bias,
            s.sd,
            s.rmse,
            s.se,
            sweep
        );
    }
    out
}

fn labels(values: &[usize]) -> Vec<String> {
    values.iter().map(ToString::to_string).collect()
}

/// One bias heat map (rows n, columns bins) per binned estimator of the grid.
pub fn bias_heat_maps(simulation: &Simulation, grid: &Grid) -> Vec<HeatMap> {
    grid.estimators
        .iter()
        .filter(|e| e.uses_bins())
        .map(|&estimator| HeatMap {
            title: format!("{estimator} bias (%)"),
            rows: labels(&grid.sizes),
            rows_desc: "n".to_owned(),
            columns: labels(&grid.bins),
            columns_desc: "bins".to_owned(),
            values: grid
                .sizes
                .iter()
                .map(|&n| {
                    grid.bins
                        .iter()
                        .map(|&b| {
                            simulation
                                .cell(n, Some(b), estimator)
                                .map_or(f64::NAN, |c| c.summary.bias)
                        })
                        .collect()
                })
                .collect(),
        })
        .collect()
}

/// One bias heat map (rows n, one column per estimator) of the estimators that take no
/// bin count (the sweeps choose theirs, KDE has none), if the grid has any: beside the
/// binned estimators' maps, so that every estimator of the CSV and JSON is drawn.
pub fn unbinned_heat_map(simulation: &Simulation, grid: &Grid) -> Option<HeatMap> {
    let estimators: Vec<EstimatorSpec> = grid
        .estimators
        .iter()
        .copied()
        .filter(|e| !e.uses_bins())
        .collect();
    if estimators.is_empty() {
        return None;
    }
    Some(HeatMap {
        title: "bias (%) of the estimators without a bin count".to_owned(),
        rows: labels(&grid.sizes),
        rows_desc: "n".to_owned(),
        columns: estimators.iter().map(ToString::to_string).collect(),
        columns_desc: "estimator".to_owned(),
        values: grid
            .sizes
            .iter()
            .map(|&n| {
                estimators
                    .iter()
                    .map(|&e| {
                        simulation
                            .cell(n, None, e)
                            .map_or(f64::NAN, |c| c.summary.bias)
                    })
                    .collect()
            })
            .collect(),
    })
}

/// The name of a series of cells: the estimator, with its bin count if it takes one.
pub fn series_name(estimator: EstimatorSpec, bins: Option<usize>) -> String {
    match bins {
        Some(b) => format!("{estimator} ({b} bins)"),
        None => estimator.to_string(),
    }
}

/// One series per (estimator, bins) of a simulation: `value(cell)` against n.
pub fn series_against_n(simulation: &Simulation, value: impl Fn(&Cell) -> f64) -> Vec<Series> {
    let mut series: Vec<Series> = Vec::new();
    for cell in simulation.cells.iter() {
        let name = series_name(cell.key.estimator, cell.key.bins);
        let point = (cell.key.n as f64, value(cell));
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push(point),
            None => series.push(Series {
                name,
                points: vec![point],
            }),
        }
    }
    series
}

/// A bias-against-n chart of every (estimator, bins) of the simulation.
pub fn bias_against_n(simulation: &Simulation, title: String) -> LinePanel {
    LinePanel {
        title,
        x_desc: "n".to_owned(),
        y_desc: "bias (%)".to_owned(),
        x_scale: XScale::Log2,
        guide: Guide::Zero,
        series: series_against_n(simulation, |c| c.summary.bias),
    }
}

/// A figure that could not be drawn (exit 1).
pub fn draw_failure(message: String) -> Failure {
    Failure { code: 1, message }
}

/// Draws the bias figure of a simulation: heat maps when there are several bin counts
/// (and binned estimators), else bias against n.
pub fn draw_bias(
    path: &Path,
    title: &str,
    simulation: &Simulation,
    grid: &Grid,
) -> Result<(), Failure> {
    let mut maps = bias_heat_maps(simulation, grid);
    if grid.bins.len() > 1 && !maps.is_empty() {
        maps.extend(unbinned_heat_map(simulation, grid));
        plot::heat_maps(path, title, &maps, 2).map_err(draw_failure)
    } else {
        let panel = bias_against_n(simulation, format!("TCE = {:.3} %", simulation.tce));
        plot::line_charts(path, title, &[panel], 1).map_err(draw_failure)
    }
}
