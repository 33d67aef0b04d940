//! The one input layer of the CLI: every form of model output a user has, read,
//! validated and reduced to what the estimators take, with errors that name the line
//! (CSV) or the index (`.npy`) and provenance for messages and JSON.
//!
//! The forms ([`Source`]):
//! - a CSV of (confidence, correct) rows;
//! - a CSV of class probabilities or logits (columns picked by a list or a glob) and a
//!   label column holding the true class id;
//! - `.npy` arrays: N×K probabilities or logits (or N confidences) and N labels.
//!
//! CSVs may come from stdin (`-`); a large (confidence, correct) CSV file is read on
//! two threads with the same result ([`halves`]). Class outputs are reduced to
//! top-label samples by the core's [`tce::toplabel`] rule, or, with
//! [`Reduction::Classwise`], to one one-vs-rest column per class ([`classes`]), or kept
//! whole ([`Reduction::Rows`]).
//!
//! The entry point is [`load`]; [`read_path`] and [`read_table`] are the
//! (confidence, correct) CSV readers the other subcommands use.
//!
//! Two bounds keep hostile files in check: no CSV line, and no record of lines joined by
//! a quoted field, may be longer than [`MAX_LINE_BYTES`] (a longer one is refused with
//! its first line's number before more of it is read into memory, so a record holds at
//! most that much), and an error quotes at most [`EXCERPT_CHARS`] characters of
//! any field or column name ([`excerpt`]). A `.npy` header's shape is checked against
//! the file's length before anything is allocated for its data.

mod classes;
mod csv_rows;
mod halves;
mod npy;
mod number;
mod weights;

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use classes::ClassSamples;
pub use weights::WeightSource;

/// The longest line (in bytes, without its `\n`) a CSV may have: 1 MiB; and the longest
/// record, its lines joined by a quoted field that holds line ends. A row of two numbers
/// needs a few dozen bytes; a header of thousands of columns still fits.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most characters of one field or column name an error message quotes.
pub const EXCERPT_CHARS: usize = 80;

/// `text` cut to its first [`EXCERPT_CHARS`] characters, with "…" if it was longer.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// What to read: the source and how class outputs are reduced.
#[derive(Clone, Debug)]
pub struct InputSpec {
    pub source: Source,
    pub reduction: Reduction,
    /// Keep each row's true class of class outputs reduced to top labels
    /// ([`Input::true_classes`]), for `tce compare` to check that two files are the
    /// same examples. Off elsewhere: it costs a word a row.
    pub true_classes: bool,
    /// Each row's weight, read with the rows ([`Input::weights`]); `None`: unweighted.
    pub weights: Option<WeightSource>,
}

/// Where the samples are and what their columns hold.
#[derive(Clone, Debug)]
pub enum Source {
    /// A CSV (or `-`, stdin) of (confidence, correct) rows.
    ConfidenceCsv {
        path: PathBuf,
        score_col: String,
        label_col: String,
    },
    /// A CSV (or `-`) with one column per class and a column of true class ids.
    ClassCsv {
        path: PathBuf,
        classes: ClassColumns,
        label_col: String,
        logits: bool,
    },
    /// Two `.npy` files: `scores` N×K class probabilities or logits (or N
    /// confidences, then `labels` are 0/1), `labels` N integers.
    Npy {
        scores: PathBuf,
        labels: PathBuf,
        logits: bool,
    },
}

/// Which CSV columns hold the classes, in class-id order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClassColumns {
    /// Named columns: column i of the list is class i.
    List(Vec<String>),
    /// Every header column the glob matches (`*` any run of characters, `?` one),
    /// case-sensitively, in header order; the label column is left out.
    Glob(String),
}

impl ClassColumns {
    /// Parses `--prob-cols`: a glob if it has `*` or `?`, else a comma-separated list.
    pub fn parse(text: &str) -> Self {
        if text.contains(['*', '?']) {
            ClassColumns::Glob(text.to_owned())
        } else {
            ClassColumns::List(text.split(',').map(|s| s.trim().to_owned()).collect())
        }
    }
}

/// How rows of class outputs become binary samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reduction {
    /// One sample a row: the largest probability, and whether its class is the true one
    /// (SPEC §1, [`tce::toplabel`]).
    TopLabel,
    /// One sample a row for every class k: p_k, and whether k is the true class.
    Classwise,
    /// Class outputs kept whole, each row checked by the same rule ([`Data::Rows`];
    /// `tce recalibrate`'s multiclass methods). (confidence, correct) inputs are read as
    /// top-label samples.
    Rows,
}

/// What the read values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Values {
    Confidences,
    Probabilities,
    Logits,
}

/// The samples [`load`] returns.
#[derive(Debug)]
pub enum Data {
    /// (confidence, correct) pairs: read as such, or the top-label reduction.
    TopLabel { scores: Vec<f64>, labels: Vec<u8> },
    /// One one-vs-rest column per class, in class-id order.
    Classwise(Vec<ClassSamples>),
    /// The rows as read (probabilities or logits, row major, `classes` a row) and each
    /// row's true class.
    Rows {
        values: Vec<f64>,
        classes: usize,
        truth: Vec<usize>,
    },
}

/// What was read, resolved: the columns actually taken, the dtypes and shape of
/// `.npy` arrays. It goes into every JSON output (with the path, which the caller
/// prints as `file`, so that stdin and a file differ only there).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Provenance {
    /// `csv` or `npy`.
    pub format: &'static str,
    pub values: Values,
    pub reduction: Reduction,
    /// The rows read.
    pub rows: usize,
    /// The number of classes (absent for confidences).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes: Option<usize>,
    /// CSV: the header names of the columns taken (JSON outputs print them as
    /// `settings.columns`, beside `settings.file`).
    #[serde(skip)]
    pub columns: Option<ReadColumns>,
    /// CSV of classes: `--prob-cols` as given (a list or a glob).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prob_cols: Option<String>,
    /// `.npy`: the labels file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub labels_file: Option<String>,
    /// `.npy`: the dtypes (`<f4`, `<i8`, …) and the scores' shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtypes: Option<NpyDtypes>,
}

/// The dtypes and shape of a pair of `.npy` arrays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NpyDtypes {
    pub scores: String,
    pub labels: String,
    pub shape: Vec<u64>,
}

/// Which CSV columns were read, by their names in the header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ReadColumns {
    /// (confidence, correct) rows.
    Binary(Columns),
    /// Class columns (class i is `probs[i]`) and the label column.
    Classes { probs: Vec<String>, label: String },
}

/// The score and label columns of a (confidence, correct) CSV.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Columns {
    /// The score column's name in the header.
    pub score: String,
    /// The label column's name in the header.
    pub label: String,
}

/// Everything [`load`] read.
#[derive(Debug)]
pub struct Input {
    pub data: Data,
    /// Each row's weight (finite, ≥ 0, not all 0), when [`InputSpec::weights`] names them:
    /// one per row read, whatever the reduction (a class table's classwise columns all
    /// have the rows' weights).
    pub weights: Option<Vec<f64>>,
    /// Each row's true class, for class outputs reduced to top labels when
    /// [`InputSpec::true_classes`] asks; `None` otherwise.
    pub true_classes: Option<Vec<usize>>,
    pub provenance: Provenance,
    /// What the reader decided on the caller's behalf (a column matched without regard
    /// to case, the label column left out of a glob), one sentence each, for stderr.
    pub notes: Vec<String>,
}

/// Reads and validates `spec`'s input and its weights; errors carry the file they are
/// about. Notes are returned, not printed ([`report_notes`] prints them).
pub fn load(spec: &InputSpec) -> Result<Input, InputError> {
    let mut input = load_rows(spec)?;
    if let Some(WeightSource::Npy(path)) = &spec.weights {
        let rows = input.provenance.rows;
        input.weights = Some(weights::read_npy(path, rows, spec.source.path())?);
    }
    Ok(input)
}

impl Source {
    /// The file the rows are read from (the scores of `.npy` arrays).
    pub fn path(&self) -> &Path {
        match self {
            Source::ConfidenceCsv { path, .. } | Source::ClassCsv { path, .. } => path,
            Source::Npy { scores, .. } => scores,
        }
    }
}

/// The rows [`load`] reads, with the weights of a CSV column (a `.npy` file of weights
/// is [`load`]'s to read).
fn load_rows(spec: &InputSpec) -> Result<Input, InputError> {
    let file = |path: &Path, e: InputError| e.in_file(path);
    let weight_col = match &spec.weights {
        Some(WeightSource::Column(name)) => Some(name.as_str()),
        _ => None,
    };
    match &spec.source {
        Source::ConfidenceCsv {
            path,
            score_col,
            label_col,
        } => {
            if spec.reduction == Reduction::Classwise {
                return Err(InputError::general(
                    "--classwise needs class outputs: class columns (--prob-cols) or a .npy array of N×K",
                ));
            }
            let names = ColumnNames {
                score: score_col,
                label: label_col,
            };
            let (samples, weights) = match weight_col {
                Some(weight_col) => {
                    let (samples, weights) = open(path)
                        .and_then(|reader| weights::read_binary(reader, names, weight_col))
                        .map_err(|e| file(path, e))?;
                    (samples, Some(weights))
                }
                None => (read_csv_path(path, names).map_err(|e| file(path, e))?, None),
            };
            let rows = samples.scores.len();
            Ok(Input {
                provenance: Provenance {
                    format: "csv",
                    values: Values::Confidences,
                    reduction: Reduction::TopLabel,
                    rows,
                    classes: None,
                    columns: Some(ReadColumns::Binary(samples.columns)),
                    prob_cols: None,
                    labels_file: None,
                    dtypes: None,
                },
                data: Data::TopLabel {
                    scores: samples.scores,
                    labels: samples.labels,
                },
                weights,
                true_classes: None,
                notes: samples.notes,
            })
        }
        Source::ClassCsv {
            path,
            classes,
            label_col,
            logits,
        } => {
            let reader = open(path).map_err(|e| file(path, e))?;
            let read = classes::read_csv(
                reader,
                classes,
                label_col,
                weight_col,
                *logits,
                spec.reduction,
                spec.true_classes,
            )
            .map_err(|e| file(path, e))?;
            Ok(Input {
                provenance: Provenance {
                    format: "csv",
                    values: values(*logits),
                    reduction: spec.reduction,
                    rows: read.rows,
                    classes: Some(read.columns.len()),
                    prob_cols: Some(match classes {
                        ClassColumns::List(names) => names.join(","),
                        ClassColumns::Glob(glob) => glob.clone(),
                    }),
                    columns: Some(ReadColumns::Classes {
                        probs: read.columns,
                        label: read.label,
                    }),
                    labels_file: None,
                    dtypes: None,
                },
                data: read.data,
                weights: read.weights,
                true_classes: read.true_classes,
                notes: read.notes,
            })
        }
        Source::Npy {
            scores,
            labels,
            logits,
        } => {
            if weight_col.is_some() {
                return Err(InputError::general(
                    "--weight-col names a CSV column; the weights of .npy arrays are a .npy file (--weights FILE)",
                ));
            }
            npy::load(scores, labels, *logits, spec.reduction, spec.true_classes)
        }
    }
}

impl InputSpec {
    /// About how many rows a (confidence, correct) CSV file of at least
    /// [`halves::MIN_SPLIT_BYTES`] holds: its length times the lines of its first
    /// [`HINT_SAMPLE_BYTES`] over their bytes, plus 1/32 and 64 rows. `None` for stdin,
    /// smaller files, other inputs, weighted rows, or a file that cannot be read (which [`load`] then
    /// reports). A guess made before the file is read, for memory that is best prepared
    /// ahead (`tce estimate`'s sort storage): what is read never depends on it.
    pub fn rows_hint(&self) -> Option<usize> {
        let Source::ConfidenceCsv { path, .. } = &self.source else {
            return None;
        };
        // Weighted rows are not sorted in that storage.
        if self.weights.is_some() {
            return None;
        }
        if path.as_os_str() == "-" {
            return None;
        }
        let file = File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        if len < halves::MIN_SPLIT_BYTES {
            return None;
        }
        rows_estimate(&file, len)
    }
}

/// About how many rows `file` (`len` bytes, read from where its cursor is, the start)
/// holds: `len` times the lines of its first [`HINT_SAMPLE_BYTES`] over their bytes,
/// plus 1/32 and 64 rows (`None` if they cannot be read or that overflows). Memory for
/// them can be prepared ahead; what is read never depends on it.
pub fn rows_estimate(mut file: &File, len: u64) -> Option<usize> {
    let mut start = vec![0; HINT_SAMPLE_BYTES];
    let mut filled = 0;
    while filled < start.len() {
        match file.read(start.get_mut(filled..)?) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
    let start = start.get(..filled)?;
    let lines = memchr::memchr_iter(b'\n', start).count().max(1);
    let rows = u128::from(len) * lines as u128 / start.len().max(1) as u128;
    let rows = usize::try_from(rows).ok()?;
    rows.checked_add(rows / 32)?.checked_add(64)
}

/// The bytes [`InputSpec::rows_hint`] reads from the start of a file.
pub const HINT_SAMPLE_BYTES: usize = 1 << 16;

fn values(logits: bool) -> Values {
    if logits {
        Values::Logits
    } else {
        Values::Probabilities
    }
}

/// The samples of a (confidence, correct) CSV, in row order.
#[derive(Debug, Default)]
pub struct Samples {
    pub scores: Vec<f64>,
    pub labels: Vec<u8>,
    /// The header names of the score and label columns taken (they may differ in case
    /// from the names asked for).
    pub columns: Columns,
    /// What the reader decided on the caller's behalf (a column matched without regard
    /// to case), one sentence each, for stderr.
    pub notes: Vec<String>,
}

impl Samples {
    /// No samples yet, with room for about `rows` of them: the scores' column zero-filled
    /// (`tce::storage::zeroed`: fresh pages, in huge pages where the system gives them),
    /// so that growing into it costs fewer page faults than a column grown by doubling.
    /// Room it cannot have is left out: the columns then grow as they go.
    pub fn reserving(rows: usize) -> Samples {
        let mut scores = tce::storage::zeroed::<f64>(rows).map_or_else(|_| Vec::new(), Vec::from);
        scores.clear();
        Samples {
            scores,
            labels: Vec::new(),
            ..Samples::default()
        }
    }
}

/// Which columns to read, by name.
#[derive(Clone, Copy, Debug)]
pub struct ColumnNames<'a> {
    pub score: &'a str,
    pub label: &'a str,
}

/// What kind of failure an [`InputError`] is: the file's content (or a path that
/// cannot be opened) is bad input, a failing read is an I/O error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputErrorKind {
    /// The file is missing, malformed or holds invalid rows (exit 2).
    Invalid,
    /// Reading failed part way (exit 1).
    Io,
}

/// Where in a file an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Location {
    /// A CSV line (1-based; line 1 is the header).
    Line(u64),
    /// A row of a `.npy` array (0-based, as numpy indexes).
    Index(u64),
}

/// Why an input could not be read. Displayed as `[file: ]line N: problem` (CSV) or
/// `[file: ]index N: problem` (`.npy`) when the place is known.
#[derive(Debug)]
pub struct InputError {
    /// The file, when the error was made by [`load`] (the older readers leave it to the
    /// caller).
    pub file: Option<String>,
    pub location: Option<Location>,
    pub problem: String,
    pub kind: InputErrorKind,
}

impl InputError {
    fn at(line: u64, problem: impl Into<String>) -> Self {
        InputError {
            file: None,
            location: Some(Location::Line(line)),
            problem: problem.into(),
            kind: InputErrorKind::Invalid,
        }
    }

    fn at_index(index: u64, problem: impl Into<String>) -> Self {
        InputError {
            file: None,
            location: Some(Location::Index(index)),
            problem: problem.into(),
            kind: InputErrorKind::Invalid,
        }
    }

    fn general(problem: impl Into<String>) -> Self {
        InputError {
            file: None,
            location: None,
            problem: problem.into(),
            kind: InputErrorKind::Invalid,
        }
    }

    fn io(line: Option<u64>, problem: impl Into<String>) -> Self {
        InputError {
            file: None,
            location: line.map(Location::Line),
            problem: problem.into(),
            kind: InputErrorKind::Io,
        }
    }

    pub fn in_file(mut self, path: &Path) -> Self {
        self.file = Some(path.display().to_string());
        self
    }

    /// The exit code of this failure: 2 for bad input, 1 for an I/O error.
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            InputErrorKind::Invalid => 2,
            InputErrorKind::Io => 1,
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{file}: ")?;
        }
        match self.location {
            Some(Location::Line(line)) => write!(f, "line {line}: {}", self.problem),
            Some(Location::Index(index)) => write!(f, "index {index}: {}", self.problem),
            None => f.write_str(&self.problem),
        }
    }
}

/// Opens `path` (`-` is stdin).
fn open(path: &Path) -> Result<Box<dyn Read>, InputError> {
    let reader: Box<dyn Read> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        // No BufReader: the CSV reader reads in blocks of its own.
        Box::new(open_file(path)?)
    };
    Ok(reader)
}

/// Opens the file `path`.
fn open_file(path: &Path) -> Result<File, InputError> {
    File::open(path).map_err(|e| InputError::general(format!("cannot open: {e}")))
}

/// Reads the (confidence, correct) rows of `path` (`-` is stdin): a large file on two
/// threads ([`halves`]), with the same result.
fn read_csv_path(path: &Path, names: ColumnNames<'_>) -> Result<Samples, InputError> {
    if path == Path::new("-") {
        return read(open(path)?, names);
    }
    halves::read_file(open_file(path)?, names)
}

/// Opens `path` (`-` is stdin) and reads its (confidence, correct) rows; notes go to
/// stderr.
pub fn read_path(path: &Path, names: ColumnNames<'_>) -> Result<Samples, InputError> {
    let samples = read_csv_path(path, names)?;
    report_notes(&path.display().to_string(), &samples.notes);
    Ok(samples)
}

/// Prints `notes` about `file` on stderr.
pub fn report_notes(file: &str, notes: &[String]) {
    for note in notes {
        eprintln!("tce: note: {file}: {note}");
    }
}

/// A file's samples with its header and every data row as read (trimmed), for commands
/// that write the rows back out (`tce recalibrate`).
pub struct Table {
    pub samples: Samples,
    pub header: csv::StringRecord,
    /// The data rows (blank lines left out), in order.
    pub records: Vec<csv::StringRecord>,
    /// The score column's index in the header.
    pub score_index: usize,
}

/// Like [`read_path`], keeping the rows.
pub fn read_table(path: &Path, names: ColumnNames<'_>) -> Result<Table, InputError> {
    let table = csv_rows::read_binary(open(path)?, names, true)?;
    report_notes(&path.display().to_string(), &table.samples.notes);
    Ok(table)
}

/// Reads a CSV with a header from `reader`, taking scores from column `names.score` and
/// labels from column `names.label`; no line may exceed [`MAX_LINE_BYTES`].
pub fn read<R: Read>(reader: R, names: ColumnNames<'_>) -> Result<Samples, InputError> {
    csv_rows::read_binary(reader, names, false).map(|t| t.samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confidence_csv(path: PathBuf) -> InputSpec {
        InputSpec {
            source: Source::ConfidenceCsv {
                path,
                score_col: "confidence".into(),
                label_col: "correct".into(),
            },
            reduction: Reduction::TopLabel,
            true_classes: false,
            weights: None,
        }
    }

    /// The hint brackets the true row count from above (by at most 1/32 and 64 rows
    /// more, with rows alike), and there is none for small files, stdin, missing files
    /// or class outputs.
    #[test]
    fn rows_hint_of_a_large_file() {
        let dir = std::env::temp_dir().join(format!("tce-rows-hint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (large, small) = (dir.join("large.csv"), dir.join("small.csv"));
        let mut text = String::from("confidence,correct\n");
        let rows = 120_000;
        for i in 0..rows {
            // Rows of 9 to 11 bytes, so that the sample's mean row is not exactly the
            // file's.
            text.push_str(&format!("0.{},{}\n", 1000 + i % 101 * 3701, i % 2));
        }
        std::fs::write(&large, &text).unwrap();
        std::fs::write(&small, &text[..50_000]).unwrap();
        let hint = confidence_csv(large.clone()).rows_hint().unwrap();
        assert!(hint >= rows, "{hint} < {rows}");
        assert!(hint <= rows + rows / 16 + 64, "{hint}");
        assert_eq!(confidence_csv(small.clone()).rows_hint(), None);
        assert_eq!(confidence_csv("-".into()).rows_hint(), None);
        assert_eq!(confidence_csv(dir.join("missing.csv")).rows_hint(), None);
        let classes = InputSpec {
            source: Source::ClassCsv {
                path: large,
                classes: ClassColumns::parse("p*"),
                label_col: "label".into(),
                logits: false,
            },
            reduction: Reduction::TopLabel,
            true_classes: false,
            weights: None,
        };
        assert_eq!(classes.rows_hint(), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
