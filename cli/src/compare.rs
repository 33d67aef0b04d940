//! `tce compare A B`: is model A better calibrated than model B? The library's
//! [`tce::decision::compare::compare`] of two inputs on the same rows (paired by order, or
//! by `--id`), each with its own labels, printed by the library's renderers
//! ([`tce::decision::compare::text`], `--json` [`tce::decision::compare::json`]). This
//! module reads the options and the two inputs; nothing else.

use std::path::{Path, PathBuf};

use clap::Args;
use tce::decision::compare::{compare, CompareError, CompareSettings, Outputs, Paired};
use tce::decision::Statistic;
use tce::report::json::Source;

use crate::{input, parse_bins, parse_norm, ColumnArgs, Failure, InputArgs};

/// Options of `tce compare`.
#[derive(Args)]
pub struct CompareArgs {
    /// Model A's outputs with its own labels: a CSV file with a header (`-` reads
    /// stdin) of confidences and whether A's top label is correct (the `correct` column
    /// or --label-col), or of class outputs (--prob-cols) and the true class; or a
    /// `.npy` array of scores (then --labels-a names its labels).
    pub a: PathBuf,
    /// Model B's outputs on the same examples, in the same form, with B's own labels:
    /// two classifiers may be right on different rows. Class outputs of both must give
    /// the same true class on every row.
    pub b: PathBuf,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// CSV of class outputs (both files): the class columns, as a list or a glob, as in
    /// `tce test`; the top-label confidences are compared, each model's correctness its
    /// own argmax against the true class (--label-col, default `label`).
    #[arg(long, value_name = "LIST|GLOB")]
    pub prob_cols: Option<String>,
    /// The class columns (or the .npy arrays) hold logits, not probabilities.
    #[arg(long)]
    pub logits: bool,
    /// The labels of model A's .npy scores array.
    #[arg(long, value_name = "FILE")]
    pub labels_a: Option<PathBuf>,
    /// The labels of model B's .npy scores array.
    #[arg(long, value_name = "FILE")]
    pub labels_b: Option<PathBuf>,
    /// Join the two CSV files by this column (each id exactly once in each file; a
    /// missing or repeated id is an error). Without it, row i of A is row i of B.
    #[arg(long, value_name = "COLUMN")]
    pub id: Option<String>,
    /// The estimator whose difference Delta = CE_A - CE_B is compared:
    /// `ece_sweep:equal_mass` (default), `ece_debias:equal_mass`, `ece_bin:equal_width`,
    /// `ece_bin:equal_mass`, `smece`, or any estimator name of `tce estimate`.
    #[arg(long, value_name = "NAME", default_value = "ece_sweep:equal_mass", value_parser = parse_statistic)]
    pub statistic: Statistic,
    /// The level: a (1 - alpha) interval, and Delta = 0 rejected when p <= alpha.
    #[arg(long, default_value_t = tce::decision::DEFAULT_ALPHA)]
    pub alpha: f64,
    /// Paired bootstrap resamples (1 to 100000, tce::decision::MAX_RESAMPLES).
    #[arg(long, value_name = "B", default_value_t = tce::decision::DEFAULT_RESAMPLES)]
    pub resamples: usize,
    /// Seed of the resamples.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Bins of ECE_bin, ECE_debias and MCE.
    #[arg(long, default_value_t = 15, value_parser = parse_bins)]
    pub bins: usize,
    /// Exponent p of the binned estimators (smooth ECE is at p = 1).
    #[arg(long, value_name = "P", default_value = "2", value_parser = parse_norm)]
    pub norm: tce::Norm,
    /// Cap on the sweep's number of bins b*.
    #[arg(long, value_name = "N", value_parser = parse_bins)]
    pub max_bins: Option<usize>,
    /// Let the sweep try at most n - 1 bins, as the paper's released code does.
    #[arg(long)]
    pub paper_limit: bool,
    /// Print one JSON object (both estimates, Delta, its interval, the p-value, the
    /// decision and every setting).
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn parse_statistic(text: &str) -> Result<Statistic, String> {
    text.parse()
        .map_err(|e: tce::decision::ParseStatisticError| e.to_string())
}

/// A refused comparison, with the option it is about.
pub(crate) fn failure(e: CompareError) -> Failure {
    match e {
        CompareError::ResamplesOutOfRange(_) => Failure::input(format!("--resamples: {e}")),
        CompareError::InvalidAlpha(_) => Failure::input(format!("--alpha: {e}")),
        CompareError::BinsOutOfRange(_) => Failure::input(format!("--bins: {e}")),
        CompareError::NotAnEstimator(_) => Failure::input(format!("--statistic: {e}")),
        CompareError::OutOfMemory { .. } => Failure::internal(e.to_string()),
        _ => Failure::input(e.to_string()),
    }
}

impl CompareArgs {
    /// The library's settings, checked by the library before any input is read.
    fn settings(&self) -> Result<CompareSettings, Failure> {
        let settings = CompareSettings {
            statistic: self.statistic,
            resamples: self.resamples,
            alpha: self.alpha,
            seed: self.seed,
            bins: self.bins,
            norm: self.norm,
            sweep: crate::sweep_options(self.max_bins, self.paper_limit),
        };
        settings.check().map_err(failure)?;
        Ok(settings)
    }

    fn input(&self, file: &Path, labels: &Option<PathBuf>) -> InputArgs {
        InputArgs {
            file: file.to_owned(),
            columns: self.columns.clone(),
            prob_cols: self.prob_cols.clone(),
            logits: self.logits,
            labels: labels.clone(),
            classwise: false,
        }
    }
}

/// The id column of a CSV file, in row order (the rows the input layer read).
fn read_ids(path: &Path, column: &str, rows: usize) -> Result<Vec<String>, Failure> {
    let name = path.display();
    if path.as_os_str() == "-" {
        return Err(Failure::input(
            "--id reads the id column from the files themselves: give files, not stdin (-)",
        ));
    }
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npy"))
    {
        return Err(Failure::input(format!(
            "{name}: --id names a CSV column; a .npy array has none"
        )));
    }
    let mut reader =
        csv::Reader::from_path(path).map_err(|e| Failure::internal(format!("{name}: {e}")))?;
    let headers = reader
        .headers()
        .map_err(|e| Failure::input(format!("{name}: {e}")))?
        .clone();
    let at = headers
        .iter()
        .position(|h| h == column)
        .or_else(|| headers.iter().position(|h| h.eq_ignore_ascii_case(column)))
        .ok_or_else(|| Failure::input(format!("{name}: no id column {column:?}")))?;
    let mut ids = Vec::with_capacity(rows);
    for record in reader.records() {
        let record = record.map_err(|e| Failure::input(format!("{name}: {e}")))?;
        ids.push(record.get(at).unwrap_or_default().to_owned());
    }
    if ids.len() != rows {
        return Err(Failure::input(format!(
            "{name}: {} ids for {rows} rows read",
            ids.len()
        )));
    }
    Ok(ids)
}

/// One input as read: its top-label scores, its own labels and, for class outputs, each
/// row's true class.
struct Loaded {
    scores: Vec<f64>,
    labels: Vec<u8>,
    classes: Option<Vec<usize>>,
    provenance: input::Provenance,
}

impl Loaded {
    fn outputs(&self) -> Outputs<'_> {
        let outputs = Outputs::new(&self.scores, &self.labels);
        match &self.classes {
            Some(classes) => outputs.with_classes(classes),
            None => outputs,
        }
    }
}

pub fn run(args: &CompareArgs) -> Result<(), Failure> {
    let settings = args.settings()?;
    if args.a.as_os_str() == "-" && args.b.as_os_str() == "-" {
        return Err(Failure::input("A and B cannot both be stdin (-)"));
    }
    let load = |file: &Path, labels: &Option<PathBuf>| -> Result<Loaded, Failure> {
        let input = args.input(file, labels);
        // Class outputs keep each row's true class, which the library checks is the
        // same in both inputs.
        let mut spec = input.spec()?;
        spec.true_classes = true;
        let input = input.load_spec(&spec)?;
        let input::Data::TopLabel { scores, labels } = input.data else {
            unreachable!("a top-label input without --classwise");
        };
        Ok(Loaded {
            scores,
            labels,
            classes: input.true_classes,
            provenance: input.provenance,
        })
    };
    let (a, b) = (
        load(&args.a, &args.labels_a)?,
        load(&args.b, &args.labels_b)?,
    );
    let paired = match &args.id {
        None => Paired::by_order(a.outputs(), b.outputs()),
        Some(column) => {
            let ids_a = read_ids(&args.a, column, a.scores.len())?;
            let ids_b = read_ids(&args.b, column, b.scores.len())?;
            Paired::by_id((&ids_a, a.outputs()), (&ids_b, b.outputs()))
        }
    }
    .map_err(failure)?;
    let result = compare(&paired, &settings).map_err(failure)?;
    let (provenance_a, provenance_b) = (a.provenance, b.provenance);
    let (file_a, file_b) = (args.a.display().to_string(), args.b.display().to_string());
    crate::write_stdout(&if args.json {
        let source = |file: String, input| Source { file, input };
        tce::decision::compare::json::json(
            &source(file_a, provenance_a),
            &source(file_b, provenance_b),
            &result,
        ) + "\n"
    } else {
        tce::decision::compare::text::summary(&file_a, &file_b, &result)
    })
}
