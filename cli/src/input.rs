//! Reading (score, label) rows from a CSV file with a header, every row validated and
//! every error naming its line (line 1 is the header).
//!
//! Two bounds keep hostile files in check: no line may be longer than
//! [`MAX_LINE_BYTES`] (a longer one is refused with its line number before more of it is
//! read into memory), and an error quotes at most [`EXCERPT_CHARS`] characters of any
//! field or column name ([`excerpt`]).
//!
//! Columns are matched by name: exactly if the header has the name, else without regard
//! to case (the column taken is reported as a note on stderr); when nothing matches, the
//! error lists the header's columns and the option that picks another.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use tce::PushError;

/// The longest line (in bytes, without its `\n`) a CSV may have: 1 MiB. A row of two
/// numbers needs a few dozen bytes; a header of thousands of columns still fits.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most characters of one field or column name an error message quotes.
pub const EXCERPT_CHARS: usize = 80;

/// The most columns an error lists from a header.
const LISTED_COLUMNS: usize = 20;

/// `text` cut to its first [`EXCERPT_CHARS`] characters, with "…" if it was longer.
pub fn excerpt(text: &str) -> String {
    match text.char_indices().nth(EXCERPT_CHARS) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// The samples of a file, in row order.
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

/// Which columns were read.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Columns {
    /// The score column's name in the header.
    pub score: String,
    /// The label column's name in the header.
    pub label: String,
}

/// Which columns to read, by name, and the options that name them (for the hint of a
/// missing column).
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

/// Why a file could not be read. Displayed as `line N: problem` when a line is known.
#[derive(Debug)]
pub struct InputError {
    pub line: Option<u64>,
    pub problem: String,
    pub kind: InputErrorKind,
}

impl InputError {
    fn at(line: u64, problem: impl Into<String>) -> Self {
        InputError {
            line: Some(line),
            problem: problem.into(),
            kind: InputErrorKind::Invalid,
        }
    }

    fn general(problem: impl Into<String>) -> Self {
        InputError {
            line: None,
            problem: problem.into(),
            kind: InputErrorKind::Invalid,
        }
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
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.problem),
            None => f.write_str(&self.problem),
        }
    }
}

/// The error a [`LineLimit`] reader returns for a line over its limit.
#[derive(Debug)]
struct LineTooLong {
    line: u64,
}

impl fmt::Display for LineTooLong {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {} is longer than the limit of {MAX_LINE_BYTES} bytes (1 MiB)",
            self.line
        )
    }
}

impl std::error::Error for LineTooLong {}

/// A reader that fails, naming the line, as soon as a line grows past
/// [`MAX_LINE_BYTES`]: the CSV parser above it buffers a whole record, so without the
/// bound one newline-free gigabyte would be held (several times over) in memory.
struct LineLimit<R> {
    inner: R,
    /// The 1-based number of the line being read.
    line: u64,
    /// Bytes of that line seen so far.
    length: usize,
}

impl<R: Read> LineLimit<R> {
    fn new(inner: R) -> Self {
        LineLimit {
            inner,
            line: 1,
            length: 0,
        }
    }
}

impl<R: Read> Read for LineLimit<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let mut pieces = buf[..n].split(|&b| b == b'\n');
        // The first piece continues the current line; every later one starts a new line.
        if let Some(first) = pieces.next() {
            self.length += first.len();
        }
        for piece in pieces {
            if self.length > MAX_LINE_BYTES {
                break;
            }
            self.line += 1;
            self.length = piece.len();
        }
        if self.length > MAX_LINE_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                LineTooLong { line: self.line },
            ));
        }
        Ok(n)
    }
}

impl From<csv::Error> for InputError {
    fn from(err: csv::Error) -> Self {
        let line = err.position().map(|p| p.line());
        match err.kind() {
            csv::ErrorKind::Io(e) => {
                if let Some(long) = e.get_ref().and_then(|r| r.downcast_ref::<LineTooLong>()) {
                    return InputError::at(
                        long.line,
                        format!(
                            "the line is longer than the limit of {MAX_LINE_BYTES} bytes (1 MiB)"
                        ),
                    );
                }
                InputError {
                    line,
                    problem: format!("read error: {e}"),
                    kind: InputErrorKind::Io,
                }
            }
            csv::ErrorKind::Utf8 { err, .. } => InputError {
                line,
                problem: format!("invalid UTF-8 in field {}", err.field() + 1),
                kind: InputErrorKind::Invalid,
            },
            _ => InputError {
                line,
                problem: excerpt(&err.to_string()),
                kind: InputErrorKind::Invalid,
            },
        }
    }
}

/// Opens `path` (`-` is stdin).
fn open(path: &Path) -> Result<Box<dyn Read>, InputError> {
    let reader: Box<dyn Read> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        let file =
            File::open(path).map_err(|e| InputError::general(format!("cannot open: {e}")))?;
        Box::new(io::BufReader::new(file))
    };
    Ok(reader)
}

/// Opens `path` (`-` is stdin) and reads its rows; notes go to stderr.
pub fn read_path(path: &Path, names: ColumnNames<'_>) -> Result<Samples, InputError> {
    let samples = read(open(path)?, names)?;
    report_notes(path, &samples.notes);
    Ok(samples)
}

fn report_notes(path: &Path, notes: &[String]) {
    for note in notes {
        eprintln!("tce: note: {}: {note}", path.display());
    }
}

/// A file's samples with its header and every data row as read, for commands that
/// write the rows back out (`tce recalibrate`).
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
    let table = read_rows(open(path)?, names, true)?;
    report_notes(path, &table.samples.notes);
    Ok(table)
}

/// Reads a CSV with a header from `reader`, taking scores from column `names.score` and
/// labels from column `names.label`; no line may exceed [`MAX_LINE_BYTES`].
pub fn read<R: Read>(reader: R, names: ColumnNames<'_>) -> Result<Samples, InputError> {
    read_rows(reader, names, false).map(|t| t.samples)
}

/// The column named `wanted`: the exact name if the header has it, else the one column
/// equal to it without regard to case (with a note saying so).
fn find_column(
    header: &csv::StringRecord,
    wanted: &str,
    option: &str,
    line: u64,
    notes: &mut Vec<String>,
) -> Result<usize, InputError> {
    if let Some(index) = header.iter().position(|h| h == wanted) {
        return Ok(index);
    }
    let folded = wanted.to_lowercase();
    let matches: Vec<usize> = header
        .iter()
        .enumerate()
        .filter(|(_, h)| h.to_lowercase() == folded)
        .map(|(i, _)| i)
        .collect();
    let quoted = |i: usize| format!("`{}`", excerpt(&header[i]));
    match matches.as_slice() {
        [index] => {
            notes.push(format!(
                "no column is named exactly `{}`; using column {} (matched without regard to case)",
                excerpt(wanted),
                quoted(*index)
            ));
            Ok(*index)
        }
        [] => {
            let mut listed: Vec<String> =
                (0..header.len().min(LISTED_COLUMNS)).map(quoted).collect();
            if header.len() > LISTED_COLUMNS {
                listed.push(format!("… ({} more)", header.len() - LISTED_COLUMNS));
            }
            Err(InputError::at(
                line,
                format!(
                    "missing column `{}` (the header has: {}); name the column to read with {option} NAME",
                    excerpt(wanted),
                    listed.join(", ")
                ),
            ))
        }
        several => {
            let listed: Vec<String> = several
                .iter()
                .take(LISTED_COLUMNS)
                .map(|&i| quoted(i))
                .collect();
            Err(InputError::at(
                line,
                format!(
                    "no column is named exactly `{}`, and {} columns match it without regard to case ({}); pick one with {option} NAME",
                    excerpt(wanted),
                    several.len(),
                    listed.join(", ")
                ),
            ))
        }
    }
}

fn read_rows<R: Read>(
    reader: R,
    names: ColumnNames<'_>,
    keep_records: bool,
) -> Result<Table, InputError> {
    let (score_col, label_col) = (names.score, names.label);
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        // Records end at '\n' only: with the default terminator, the '\n' of a "\r\n"
        // is read as the start of the next record, whose line then comes out one short.
        // The '\r' left at the end of the last field is trimmed like other whitespace.
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(LineLimit::new(reader));
    let header = csv.headers()?.clone();
    if header.is_empty() {
        return Err(InputError::at(
            1,
            format!(
                "empty file: expected a header with columns `{}` and `{}`",
                excerpt(score_col),
                excerpt(label_col)
            ),
        ));
    }
    let header_line = csv.position().line().saturating_sub(1).max(1);
    let mut samples = Samples::default();
    let score_index = find_column(
        &header,
        score_col,
        "--score-col",
        header_line,
        &mut samples.notes,
    )?;
    let label_index = find_column(
        &header,
        label_col,
        "--label-col",
        header_line,
        &mut samples.notes,
    )?;
    samples.columns = Columns {
        score: header[score_index].to_owned(),
        label: header[label_index].to_owned(),
    };
    let (score_name, label_name) = (excerpt(&header[score_index]), excerpt(&header[label_index]));

    let mut records = Vec::new();
    let mut record = csv::StringRecord::new();
    let mut last_line = header_line;
    while csv.read_record(&mut record)? {
        let line = record.position().map_or(last_line + 1, |p| p.line());
        last_line = line;
        if record.iter().all(str::is_empty) {
            continue; // A blank "\r\n" line, as blank "\n" lines are skipped by the reader.
        }
        let field = |index: usize, name: &str| {
            record.get(index).ok_or_else(|| {
                InputError::at(
                    line,
                    format!(
                        "missing field `{name}` (the row has {} of {} fields)",
                        record.len(),
                        header.len()
                    ),
                )
            })
        };
        let score = parse_score(field(score_index, &score_name)?, &score_name)
            .map_err(|p| InputError::at(line, p))?;
        let label = parse_label(field(label_index, &label_name)?, &label_name)
            .map_err(|p| InputError::at(line, p))?;
        samples.scores.push(score);
        samples.labels.push(label);
        if keep_records {
            records.push(record.clone());
        }
    }
    if samples.scores.is_empty() {
        return Err(InputError::at(
            header_line + 1,
            "no data rows: the file has only a header",
        ));
    }
    Ok(Table {
        samples,
        header,
        records,
        score_index,
    })
}

fn parse_score(text: &str, column: &str) -> Result<f64, String> {
    let quoted = excerpt(text);
    let score: f64 = text
        .parse()
        .map_err(|_| format!("cannot parse `{quoted}` in column `{column}` as a number"))?;
    // The library's own rule decides; this only words its verdict for a file, in the
    // library's terms (NaN and ±inf are non-finite, finite numbers off [0, 1] out of
    // range).
    match tce::sample::check(score, 0, 0) {
        Ok(()) => Ok(score),
        Err(PushError::NonFiniteScore { .. }) if score.is_nan() => Err(format!(
            "`{column}` is NaN, a non-finite score; scores must be finite numbers in [0, 1]"
        )),
        Err(PushError::NonFiniteScore { .. }) => Err(format!(
            "`{column}` {quoted} is a non-finite score; scores must be finite numbers in [0, 1]"
        )),
        Err(_) => Err(format!(
            "`{column}` {quoted} is out of range; scores must be in [0, 1]"
        )),
    }
}

fn parse_label(text: &str, column: &str) -> Result<u8, String> {
    let quoted = excerpt(text);
    // 0 and 1, also as written by tools that store labels as floats (`1.0`).
    match text.parse::<f64>() {
        Ok(x) if x == 0.0 || x == 1.0 => Ok(u8::from(x == 1.0)),
        Ok(_) => Err(format!(
            "`{column}` {quoted} is not a label; labels must be 0 or 1"
        )),
        Err(_) => Err(format!(
            "cannot parse `{quoted}` in column `{column}` as a label 0 or 1"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NAMES: ColumnNames<'static> = ColumnNames {
        score: "confidence",
        label: "correct",
    };

    fn err(text: &str) -> String {
        read(text.as_bytes(), NAMES).unwrap_err().to_string()
    }

    #[test]
    fn reads_named_columns_in_any_order() {
        let s = read("correct,x,confidence\n1,a,0.5\n0,b,1\n".as_bytes(), NAMES).unwrap();
        assert_eq!(s.scores, [0.5, 1.0]);
        assert_eq!(s.labels, [1, 0]);
        assert!(s.notes.is_empty());
    }

    #[test]
    fn columns_match_without_regard_to_case_with_a_note() {
        let s = read("Correct,CONFIDENCE\n1,0.5\n".as_bytes(), NAMES).unwrap();
        assert_eq!(s.scores, [0.5]);
        assert_eq!(
            s.columns,
            Columns {
                score: "CONFIDENCE".into(),
                label: "Correct".into()
            }
        );
        assert_eq!(s.notes.len(), 2, "{:?}", s.notes);
        assert!(s.notes[0].contains("`CONFIDENCE`"), "{:?}", s.notes);
        // An exact match wins over a case-insensitive one.
        let s = read(
            "Confidence,confidence,correct\n0.1,0.5,1\n".as_bytes(),
            NAMES,
        )
        .unwrap();
        assert_eq!(s.scores, [0.5]);
        assert!(s.notes.is_empty());
        // Two case-insensitive matches and no exact one: ambiguous.
        let e = err("Confidence,CONFIDENCE,correct\n0.1,0.5,1\n");
        assert!(
            e.contains("2 columns match") && e.contains("--score-col"),
            "{e}"
        );
        let e = err("p,y\n0.5,1\n");
        assert!(
            e.starts_with("line 1: missing column `confidence` (the header has: `p`, `y`)")
                && e.contains("--score-col NAME"),
            "{e}"
        );
        let e = err("confidence,y\n0.5,1\n");
        assert!(e.contains("--label-col NAME"), "{e}");
    }

    #[test]
    fn errors_quote_bounded_excerpts() {
        let long = "x".repeat(10_000);
        let e = err(&format!("confidence,correct\n{long},1\n"));
        assert!(
            e.len() < 200 && e.contains(&format!("{}…", "x".repeat(80))),
            "{e}"
        );
        let many: Vec<String> = (0..1000).map(|i| format!("column{i}")).collect();
        let e = err(&format!("{}\n1\n", many.join(",")));
        assert!(e.len() < 600 && e.contains("(980 more)"), "{e}");
        assert_eq!(
            excerpt("é".repeat(81).as_str()),
            format!("{}…", "é".repeat(80))
        );
        assert_eq!(excerpt("short"), "short");
    }

    #[test]
    fn a_line_over_the_limit_is_refused_with_its_number() {
        let ok = format!(
            "confidence,correct\n0.5,1\n{},1\n",
            "0".repeat(MAX_LINE_BYTES - 2)
        );
        assert!(read(ok.as_bytes(), NAMES).is_ok());
        let long = format!(
            "confidence,correct\n0.5,1\n0{},1\n",
            "0".repeat(MAX_LINE_BYTES)
        );
        let e = err(&long);
        assert!(
            e.starts_with("line 3: the line is longer than the limit"),
            "{e}"
        );
        let header = "c".repeat(MAX_LINE_BYTES + 1);
        assert!(
            err(&header).starts_with("line 1: the line is longer"),
            "{}",
            err(&header)
        );
    }

    #[test]
    fn errors_name_the_line() {
        assert!(err("").starts_with("line 1: empty file"), "{}", err(""));
        assert!(err("confidence,correct\n").starts_with("line 2: no data rows"));
        assert!(err("confidence,label\n0.5,1\n").starts_with("line 1: missing column `correct`"));
        assert!(
            err("confidence,correct\n0.5,1\n0.5\n").starts_with("line 3: missing field `correct`")
        );
        assert!(
            err("confidence,correct\n0.5,1\nnan,1\n").starts_with("line 3: `confidence` is NaN")
        );
        assert!(err("confidence,correct\n-0.1,1\n")
            .starts_with("line 2: `confidence` -0.1 is out of range"));
        assert!(err("confidence,correct\ninf,1\n")
            .starts_with("line 2: `confidence` inf is a non-finite score"));
        assert!(err("confidence,correct\n-inf,1\n")
            .starts_with("line 2: `confidence` -inf is a non-finite score"));
        assert!(
            err("confidence,correct\n0.5,2\n").starts_with("line 2: `correct` 2 is not a label")
        );
        let crlf = "confidence,correct\r\n0.5,1\r\n\r\n0.5,0\r\nnan,1\r\n";
        assert!(
            err(crlf).starts_with("line 5: `confidence` is NaN"),
            "{}",
            err(crlf)
        );
        assert!(err("confidence,correct\n0.5,1\n\n0.5,0\nnan,1\n").starts_with("line 5: "));
        assert!(err("confidence,correct\r\n").starts_with("line 2: no data rows"));
        assert!(err("confidence,x\r\n").starts_with("line 1: missing column `correct`"));
        assert!(err("confidence,correct\n0.5,yes\n").starts_with("line 2: cannot parse `yes`"));
        assert!(err("confidence,correct\n0.x,1\n").starts_with("line 2: cannot parse `0.x`"));
    }
}
