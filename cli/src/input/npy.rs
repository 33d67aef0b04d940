//! `.npy` arrays (NumPy's format, NEP 1, versions 1.0 to 3.0): a strict reader of the
//! few dtypes model outputs come in.
//!
//! Why not a crate: the format is a magic string, a length and a Python dict literal
//! of three fixed keys, then raw little- or big-endian elements. `npyz`, the maintained
//! crate, parses the dict with a general Python-literal parser (py_literal, pest,
//! num-bigint) and sizes its output from the header's shape before reading; this reader
//! checks the shape against the file's length before allocating anything, names every
//! refusal, and is ~150 lines.
//!
//! Scores: float32 or float64, shape (N, K) with K ≥ 2 (probabilities or logits, C or
//! Fortran order) or (N,) (confidences). Labels: shape (N,), any integer dtype of 1 to
//! 8 bytes (class ids, or 0/1 with confidences, where bool is also taken).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use super::classes::Sink;
use super::{Data, Input, InputError, NpyDtypes, Provenance, Reduction, Values};

const MAGIC: &[u8] = b"\x93NUMPY";

/// The most bytes a header may have (NumPy writes a few hundred at most).
const MAX_HEADER_BYTES: usize = 1 << 16;

/// An element type: kind and size in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Float,
    Int,
    Uint,
    Bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Header {
    /// The dtype as written (`<f4`).
    descr: String,
    kind: Kind,
    size: usize,
    big_endian: bool,
    fortran_order: bool,
    shape: Vec<u64>,
}

/// An opened array: its header and the reader positioned at its data.
struct Array {
    header: Header,
    data: BufReader<File>,
    /// Elements in the file.
    len: usize,
}

/// A refusal about the file as a whole.
fn bad(problem: impl Into<String>) -> InputError {
    InputError::general(problem)
}

/// One value of the header dict.
#[derive(Debug, PartialEq)]
enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
}

/// Parses NumPy's header, a Python dict literal such as
/// `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`.
fn parse_dict(text: &str) -> Result<Vec<(String, Value)>, String> {
    let mut s = text.trim_start();
    let take = |prefix: &str, s: &mut &str| -> bool {
        let found = s.starts_with(prefix);
        if found {
            *s = s[prefix.len()..].trim_start();
        }
        found
    };
    fn string(s: &mut &str) -> Option<String> {
        let quote = s.chars().next().filter(|&c| c == '\'' || c == '"')?;
        let end = s[1..].find(quote)? + 1;
        let value = s[1..end].to_owned();
        *s = s[end + 1..].trim_start();
        Some(value)
    }
    if !take("{", &mut s) {
        return Err("the header is not a dict".into());
    }
    let mut entries = Vec::new();
    while !take("}", &mut s) {
        let key = string(&mut s).ok_or("a header key is not a string")?;
        if !take(":", &mut s) {
            return Err(format!("no `:` after the header key '{key}'"));
        }
        let value = if take("True", &mut s) {
            Value::Bool(true)
        } else if take("False", &mut s) {
            Value::Bool(false)
        } else if take("(", &mut s) {
            let mut items = Vec::new();
            while !take(")", &mut s) {
                let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
                let item = s[..digits]
                    .parse()
                    .map_err(|_| format!("the header's '{key}' is not a tuple of integers"))?;
                items.push(item);
                s = s[digits..].trim_start();
                if !take(",", &mut s) && !s.starts_with(')') {
                    return Err(format!("the header's '{key}' is not a tuple of integers"));
                }
            }
            Value::Tuple(items)
        } else {
            Value::Str(
                string(&mut s).ok_or(format!("the header's '{key}' has an unsupported value"))?,
            )
        };
        entries.push((key, value));
        if !take(",", &mut s) && !s.starts_with('}') {
            return Err("the header dict is malformed".into());
        }
    }
    if !s.trim().is_empty() {
        return Err("text after the header dict".into());
    }
    Ok(entries)
}

/// The dtype of a `descr` such as `<f8`, `|u1`, `>i4`.
fn dtype(descr: &str) -> Result<(Kind, usize, bool), String> {
    let unsupported = || {
        format!("dtype '{descr}' is not supported (floats: <f4, <f8; labels: integers of 1 to 8 bytes or bool)")
    };
    let mut chars = descr.chars();
    let big_endian = match chars.next() {
        Some('<') | Some('|') => false,
        Some('>') => true,
        Some('=') => cfg!(target_endian = "big"),
        _ => return Err(unsupported()),
    };
    let kind = match chars.next() {
        Some('f') => Kind::Float,
        Some('i') => Kind::Int,
        Some('u') => Kind::Uint,
        Some('b') => Kind::Bool,
        _ => return Err(unsupported()),
    };
    let size: usize = chars.as_str().parse().map_err(|_| unsupported())?;
    match (kind, size) {
        (Kind::Float, 4 | 8) | (Kind::Int | Kind::Uint, 1 | 2 | 4 | 8) | (Kind::Bool, 1) => {
            Ok((kind, size, big_endian))
        }
        _ => Err(unsupported()),
    }
}

/// Reads and checks the header; the data's length must be the shape's exactly.
fn open(path: &Path) -> Result<Array, InputError> {
    let file = File::open(path).map_err(|e| bad(format!("cannot open: {e}")))?;
    let file_len = file
        .metadata()
        .map_err(|e| InputError::io(None, format!("read error: {e}")))?
        .len();
    let mut data = BufReader::with_capacity(1 << 16, file);
    let not_npy = || bad("not a .npy file (it does not start with \\x93NUMPY)");
    let mut preamble = [0u8; 8];
    data.read_exact(&mut preamble).map_err(|_| not_npy())?;
    if &preamble[..6] != MAGIC {
        return Err(not_npy());
    }
    let (major, minor) = (preamble[6], preamble[7]);
    let header_len = match major {
        1 => {
            let mut len = [0u8; 2];
            data.read_exact(&mut len)
                .map_err(|_| bad("the .npy header is cut short"))?;
            usize::from(u16::from_le_bytes(len))
        }
        2 | 3 => {
            let mut len = [0u8; 4];
            data.read_exact(&mut len)
                .map_err(|_| bad("the .npy header is cut short"))?;
            usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX)
        }
        _ => {
            return Err(bad(format!(
                ".npy version {major}.{minor} is not supported (1.0 to 3.0 are)"
            )))
        }
    };
    if header_len > MAX_HEADER_BYTES {
        return Err(bad(format!(
            "the .npy header of {header_len} bytes is over the limit of {MAX_HEADER_BYTES}"
        )));
    }
    let mut text = vec![0u8; header_len];
    data.read_exact(&mut text)
        .map_err(|_| bad("the .npy header is cut short"))?;
    let text = String::from_utf8(text).map_err(|_| bad("the .npy header is not text"))?;
    let entries = parse_dict(&text).map_err(|p| bad(format!("bad .npy header: {p}")))?;
    let get = |key: &str| entries.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let (Some(Value::Str(descr)), Some(Value::Bool(fortran_order)), Some(Value::Tuple(shape))) =
        (get("descr"), get("fortran_order"), get("shape"))
    else {
        return Err(bad("bad .npy header: it needs 'descr' (a string), 'fortran_order' (a bool) and 'shape' (a tuple)"));
    };
    if entries.len() != 3 {
        return Err(bad(
            "bad .npy header: keys other than 'descr', 'fortran_order' and 'shape'",
        ));
    }
    let (kind, size, big_endian) = dtype(descr).map_err(bad)?;
    let len = shape
        .iter()
        .try_fold(1u64, |n, &d| n.checked_mul(d))
        .and_then(|n| n.checked_mul(size as u64))
        .and_then(|bytes| {
            usize::try_from(bytes / size as u64)
                .ok()
                .map(|n| (n, bytes))
        });
    let prefix = (if major == 1 { 10 } else { 12 }) + header_len as u64;
    let shown = shape_text(shape);
    match len {
        Some((len, bytes)) if prefix.checked_add(bytes) == Some(file_len) => Ok(Array {
            header: Header {
                descr: descr.clone(),
                kind,
                size,
                big_endian,
                fortran_order: *fortran_order,
                shape: shape.clone(),
            },
            data,
            len,
        }),
        _ => Err(bad(format!(
            "the data do not fit the header: shape {shown} of '{descr}' needs a different length than the file's {} bytes after the header",
            file_len.saturating_sub(prefix)
        ))),
    }
}

fn shape_text(shape: &[u64]) -> String {
    match shape {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl Array {
    /// Every element, in file order, converted by `convert` from its bytes
    /// (little-endian order).
    fn elements<T>(mut self, convert: impl Fn(&[u8]) -> T) -> Result<Vec<T>, InputError> {
        let size = self.header.size;
        let mut out = Vec::new();
        out.try_reserve_exact(self.len)
            .map_err(|_| bad(format!("cannot allocate storage for {} elements", self.len)))?;
        let mut block = vec![0u8; size * 8192];
        let mut left = self.len;
        while left > 0 {
            let take = left.min(8192);
            let bytes = &mut block[..take * size];
            self.data
                .read_exact(bytes)
                .map_err(|e| InputError::io(None, format!("read error: {e}")))?;
            for element in bytes.chunks_exact_mut(size) {
                if self.header.big_endian {
                    element.reverse();
                }
                out.push(convert(element));
            }
            left -= take;
        }
        Ok(out)
    }

    /// The converter of a float dtype's element bytes (little-endian order).
    fn float_converter(&self) -> Result<fn(&[u8]) -> f64, InputError> {
        match (self.header.kind, self.header.size) {
            (Kind::Float, 4) => Ok(|b| f64::from(f32::from_le_bytes(b.try_into().unwrap()))),
            (Kind::Float, 8) => Ok(|b| f64::from_le_bytes(b.try_into().unwrap())),
            _ => Err(bad(format!(
                "dtype '{}' is not a float dtype; scores must be float32 or float64",
                self.header.descr
            ))),
        }
    }

    fn floats(self) -> Result<Vec<f64>, InputError> {
        let convert = self.float_converter()?;
        self.elements(convert)
    }

    /// Each row of a C-order (rows × k) float array, in order, read a block of rows at a
    /// time: the array is never held whole, so a report's memory beyond the file stays
    /// O(rows + k) for a top-label reduction.
    /// Its own errors (the dtype, a failed read) go through `own`; `each`'s pass as they
    /// are.
    fn for_each_row(
        mut self,
        k: usize,
        own: impl Fn(InputError) -> InputError,
        mut each: impl FnMut(usize, &[f64]) -> Result<(), InputError>,
    ) -> Result<(), InputError> {
        let convert = self.float_converter().map_err(&own)?;
        let size = self.header.size;
        let rows = self.len / k;
        // About 1 MB of bytes a block, at least one row.
        let per_block = (1 << 20) / (size * k).max(1);
        let per_block = per_block.max(1);
        let mut block = vec![0u8; per_block * k * size];
        let mut row = vec![0.0; k];
        let mut done = 0;
        while done < rows {
            let take = (rows - done).min(per_block);
            let bytes = &mut block[..take * k * size];
            self.data
                .read_exact(bytes)
                .map_err(|e| own(InputError::io(None, format!("read error: {e}"))))?;
            for (r, values) in bytes.chunks_exact_mut(k * size).enumerate() {
                for (slot, element) in row.iter_mut().zip(values.chunks_exact_mut(size)) {
                    if self.header.big_endian {
                        element.reverse();
                    }
                    *slot = convert(element);
                }
                each(done + r, &row)?;
            }
            done += take;
        }
        Ok(())
    }

    /// Integers as i128 (every 1- to 8-byte integer fits).
    fn integers(self) -> Result<Vec<i128>, InputError> {
        let (kind, size) = (self.header.kind, self.header.size);
        if kind == Kind::Float {
            return Err(bad(format!(
                "dtype '{}' is a float dtype; labels must be integers",
                self.header.descr
            )));
        }
        self.elements(move |b| {
            let mut wide = [0u8; 16];
            wide[..size].copy_from_slice(b);
            if kind == Kind::Int && b[size - 1] & 0x80 != 0 {
                wide[size..].fill(0xff);
            }
            i128::from_le_bytes(wide)
        })
    }
}

/// The weights of `path`: shape (N,), a float dtype (or integer counts), as f64. Their
/// values are the caller's to check.
pub(super) fn weights(path: &Path) -> Result<Vec<f64>, InputError> {
    let array = open(path)?;
    if array.header.shape.len() != 1 {
        return Err(bad(format!(
            "weights of shape {}: expected (N,), one weight per row",
            shape_text(&array.header.shape)
        )));
    }
    match array.header.kind {
        Kind::Float => array.floats(),
        Kind::Int | Kind::Uint => Ok(array.integers()?.into_iter().map(|w| w as f64).collect()),
        Kind::Bool => Err(bad(format!(
            "dtype '{}' is not a weight dtype; weights must be floats (or integer counts)",
            array.header.descr
        ))),
    }
}

/// Loads `scores` and `labels` and reduces them.
pub(super) fn load(
    scores_path: &Path,
    labels_path: &Path,
    logits: bool,
    reduction: Reduction,
    true_classes: bool,
) -> Result<Input, InputError> {
    let in_scores = |e: InputError| e.in_file(scores_path);
    let in_labels = |e: InputError| e.in_file(labels_path);
    let scores = open(scores_path).map_err(in_scores)?;
    let labels = open(labels_path).map_err(in_labels)?;
    let shape = scores.header.shape.clone();
    let (rows, classes) = match shape[..] {
        [n] => (n, None),
        [n, k] if k >= 2 => (n, Some(k)),
        _ => {
            return Err(in_scores(bad(format!(
                "scores of shape {}: expected (N, K) class probabilities or logits with K ≥ 2, or (N,) confidences",
                shape_text(&shape)
            ))))
        }
    };
    let [label_rows] = labels.header.shape[..] else {
        return Err(in_labels(bad(format!(
            "labels of shape {}: expected (N,)",
            shape_text(&labels.header.shape)
        ))));
    };
    if label_rows != rows {
        return Err(bad(format!(
            "{} has {rows} rows but {} has {label_rows} labels",
            scores_path.display(),
            labels_path.display()
        )));
    }
    if rows == 0 {
        return Err(in_scores(bad("no rows: the arrays are empty")));
    }
    if labels.header.kind == Kind::Bool && classes.is_some() {
        return Err(in_labels(bad(
            "dtype '|b1' labels are 0/1: class outputs need integer class ids",
        )));
    }
    let dtypes = NpyDtypes {
        scores: scores.header.descr.clone(),
        labels: labels.header.descr.clone(),
        shape: shape.clone(),
    };
    let fortran = scores.header.fortran_order;
    let ids = labels.integers().map_err(in_labels)?;
    let provenance = |values, reduction, classes| Provenance {
        format: "npy",
        values,
        reduction,
        rows: ids.len(),
        classes,
        columns: None,
        prob_cols: None,
        labels_file: Some(labels_path.display().to_string()),
        dtypes: Some(dtypes.clone()),
    };
    let Some(k) = classes else {
        // Confidences and 0/1 labels.
        let values = scores.floats().map_err(in_scores)?;
        if logits || reduction == Reduction::Classwise {
            return Err(in_scores(bad(
                "scores of shape (N,) are confidences: --logits and --classwise need (N, K) class outputs",
            )));
        }
        let mut labels = Vec::with_capacity(ids.len());
        for (i, (&score, &id)) in values.iter().zip(&ids).enumerate() {
            let at = |p: String| InputError::at_index(i as u64, p);
            let label = u8::try_from(id).ok().filter(|&l| l <= 1);
            let label = label.ok_or_else(|| {
                in_labels(at(format!(
                    "label {id} is not a label; labels must be 0 or 1"
                )))
            })?;
            if let Err(e) = tce::sample::check(score, label, i) {
                let problem = match e {
                    tce::PushError::NonFiniteScore { .. } => format!("score {score} is a non-finite score; scores must be finite numbers in [0, 1]"),
                    _ => format!("score {score} is out of range; scores must be in [0, 1]"),
                };
                return Err(in_scores(at(problem)));
            }
            labels.push(label);
        }
        return Ok(Input {
            provenance: provenance(Values::Confidences, Reduction::TopLabel, None),
            data: Data::TopLabel {
                scores: values,
                labels,
            },
            weights: None,
            true_classes: None,
            notes: Vec::new(),
        });
    };
    let k = usize::try_from(k).map_err(|_| in_scores(bad("too many classes")))?;
    let n = ids.len();
    let names: Vec<String> = (0..k).map(|j| format!("class {j}")).collect();
    let mut sink = Sink::new(reduction, &names, true_classes);
    let class_of = |i: usize| {
        let id = ids[i];
        usize::try_from(id).ok().filter(|&c| c < k).ok_or_else(|| {
            in_labels(InputError::at_index(
                i as u64,
                super::number::out_of_classes(&id.to_string(), "label", k),
            ))
        })
    };
    if fortran {
        // Column-major: a row's values are n apart, so the array is read whole.
        let values = scores.floats().map_err(in_scores)?;
        let mut row = vec![0.0; k];
        for i in 0..n {
            let class = class_of(i)?;
            for (j, value) in row.iter_mut().enumerate() {
                *value = values[j * n + i];
            }
            sink.push(&row, class, logits, &names)
                .map_err(|p| in_scores(InputError::at_index(i as u64, p)))?;
        }
    } else {
        scores.for_each_row(k, in_scores, |i, row| {
            let class = class_of(i)?;
            sink.push(row, class, logits, &names)
                .map_err(|p| in_scores(InputError::at_index(i as u64, p)))
        })?;
    }
    let (data, true_classes) = sink.finish();
    Ok(Input {
        provenance: provenance(super::values(logits), reduction, Some(k)),
        data,
        weights: None,
        true_classes,
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_dicts() {
        let d = parse_dict("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }    \n")
            .unwrap();
        assert_eq!(
            d,
            [
                ("descr".into(), Value::Str("<f8".into())),
                ("fortran_order".into(), Value::Bool(false)),
                ("shape".into(), Value::Tuple(vec![3, 4]))
            ]
        );
        let d =
            parse_dict("{\"shape\": (5,), \"descr\": \"|u1\", \"fortran_order\": True}").unwrap();
        assert_eq!(d[0].1, Value::Tuple(vec![5]));
        assert_eq!(
            parse_dict("{'shape': (), }").unwrap()[0].1,
            Value::Tuple(vec![])
        );
        for bad in [
            "",
            "[1]",
            "{'shape': (3, x)}",
            "{'a' 1}",
            "{'a': 1}",
            "{'a': 'b'} tail",
            "{'a': 'b",
        ] {
            assert!(parse_dict(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dtypes() {
        assert_eq!(dtype("<f4"), Ok((Kind::Float, 4, false)));
        assert_eq!(dtype(">i8"), Ok((Kind::Int, 8, true)));
        assert_eq!(dtype("|u1"), Ok((Kind::Uint, 1, false)));
        assert_eq!(dtype("|b1"), Ok((Kind::Bool, 1, false)));
        for bad in ["<f2", "<c16", "<U3", "|O", "f8", "<i3", ""] {
            assert!(dtype(bad).is_err(), "{bad}");
        }
    }
}
