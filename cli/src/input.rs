//! Reading (score, label) rows from a CSV file with a header, every row validated and
//! every error naming its line (line 1 is the header).

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use tce::PushError;

/// The samples of a file, in row order.
#[derive(Debug, Default)]
pub struct Samples {
    pub scores: Vec<f64>,
    pub labels: Vec<u8>,
}

/// Why a file could not be read. Displayed as `line N: problem` when a line is known.
#[derive(Debug)]
pub struct InputError {
    pub line: Option<u64>,
    pub problem: String,
}

impl InputError {
    fn at(line: u64, problem: impl Into<String>) -> Self {
        InputError {
            line: Some(line),
            problem: problem.into(),
        }
    }

    fn general(problem: impl Into<String>) -> Self {
        InputError {
            line: None,
            problem: problem.into(),
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

impl From<csv::Error> for InputError {
    fn from(err: csv::Error) -> Self {
        let line = err.position().map(|p| p.line());
        let problem = match err.kind() {
            csv::ErrorKind::Io(e) => format!("read error: {e}"),
            csv::ErrorKind::Utf8 { err, .. } => {
                format!("invalid UTF-8 in field {}", err.field() + 1)
            }
            _ => err.to_string(),
        };
        InputError { line, problem }
    }
}

/// Opens `path` (`-` is stdin) and reads its rows.
pub fn read_path(path: &Path, score_col: &str, label_col: &str) -> Result<Samples, InputError> {
    if path == Path::new("-") {
        read(io::stdin().lock(), score_col, label_col)
    } else {
        let file =
            File::open(path).map_err(|e| InputError::general(format!("cannot open: {e}")))?;
        read(io::BufReader::new(file), score_col, label_col)
    }
}

/// Reads a CSV with a header from `reader`, taking scores from column `score_col` and
/// labels from column `label_col`.
pub fn read<R: Read>(reader: R, score_col: &str, label_col: &str) -> Result<Samples, InputError> {
    let mut csv = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        // Records end at '\n' only: with the default terminator, the '\n' of a "\r\n"
        // is read as the start of the next record, whose line then comes out one short.
        // The '\r' left at the end of the last field is trimmed like other whitespace.
        .terminator(csv::Terminator::Any(b'\n'))
        .from_reader(reader);
    let header = csv.headers()?.clone();
    if header.is_empty() {
        return Err(InputError::at(
            1,
            format!("empty file: expected a header with columns `{score_col}` and `{label_col}`"),
        ));
    }
    let header_line = csv.position().line().saturating_sub(1).max(1);
    let column = |name: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| {
            let found: Vec<&str> = header.iter().collect();
            InputError::at(
                header_line,
                format!(
                    "missing column `{name}` (the header has: {})",
                    found.join(", ")
                ),
            )
        })
    };
    let (score_index, label_index) = (column(score_col)?, column(label_col)?);

    let mut samples = Samples::default();
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
        let score = parse_score(field(score_index, score_col)?, score_col)
            .map_err(|p| InputError::at(line, p))?;
        let label = parse_label(field(label_index, label_col)?, label_col)
            .map_err(|p| InputError::at(line, p))?;
        samples.scores.push(score);
        samples.labels.push(label);
    }
    if samples.scores.is_empty() {
        return Err(InputError::at(
            header_line + 1,
            "no data rows: the file has only a header",
        ));
    }
    Ok(samples)
}

fn parse_score(text: &str, column: &str) -> Result<f64, String> {
    let score: f64 = text
        .parse()
        .map_err(|_| format!("cannot parse `{text}` in column `{column}` as a number"))?;
    // The library's own rule decides; this only words its verdict for a file.
    match tce::sample::check(score, 0, 0) {
        Ok(()) => Ok(score),
        Err(PushError::NonFiniteScore { .. }) if score.is_nan() => Err(format!(
            "`{column}` is NaN; scores must be numbers in [0, 1]"
        )),
        Err(_) => Err(format!(
            "`{column}` {text} is out of range; scores must be in [0, 1]"
        )),
    }
}

fn parse_label(text: &str, column: &str) -> Result<u8, String> {
    // 0 and 1, also as written by tools that store labels as floats (`1.0`).
    match text.parse::<f64>() {
        Ok(x) if x == 0.0 || x == 1.0 => Ok(u8::from(x == 1.0)),
        Ok(_) => Err(format!(
            "`{column}` {text} is not a label; labels must be 0 or 1"
        )),
        Err(_) => Err(format!(
            "cannot parse `{text}` in column `{column}` as a label 0 or 1"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        read(text.as_bytes(), "confidence", "correct")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn reads_named_columns_in_any_order() {
        let s = read(
            "correct,x,confidence\n1,a,0.5\n0,b,1\n".as_bytes(),
            "confidence",
            "correct",
        )
        .unwrap();
        assert_eq!(s.scores, [0.5, 1.0]);
        assert_eq!(s.labels, [1, 0]);
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
            .starts_with("line 2: `confidence` inf is out of range"));
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
