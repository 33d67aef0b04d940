//! Class outputs (a row of K probabilities or logits and the true class id) reduced to
//! binary samples: the top-label sample of each row by the core's rule
//! ([`tce::toplabel`]), or one one-vs-rest sample per class ([`Reduction::Classwise`]),
//! or kept whole after the same checks ([`Reduction::Rows`]).
//! Also the CSV form of class outputs: class columns by list or glob, a label column.

use std::io::Read;

use tce::toplabel::{self, PROBABILITY_SUM_TOLERANCE};
use tce::ReduceError;

use super::csv_rows::{find_column, list_header, no_rows, Rows};
use super::{excerpt, number, weights, ClassColumns, Data, InputError, Reduction};

/// One class's one-vs-rest samples: score p_k of every row, label 1 where k is the true
/// class.
#[derive(Clone, Debug, PartialEq)]
pub struct ClassSamples {
    /// The class id k.
    pub class: usize,
    /// The CSV column of the class, or `class k` for an array.
    pub name: String,
    pub scores: Vec<f64>,
    pub labels: Vec<u8>,
}

/// Reduced rows, as they come.
pub(super) enum Sink {
    TopLabel {
        scores: Vec<f64>,
        labels: Vec<u8>,
        /// Each row's true class, when asked for ([`super::InputSpec::true_classes`]).
        classes: Option<Vec<usize>>,
    },
    /// One column per class, and the one-vs-rest scores of the current row.
    Classwise {
        columns: Vec<ClassSamples>,
        scratch: Vec<f64>,
    },
    /// The rows as read.
    Rows {
        values: Vec<f64>,
        classes: usize,
        truth: Vec<usize>,
    },
}

impl Sink {
    /// An empty sink for classes named `names` (class k is `names[k]`); a top-label
    /// sink keeps each row's true class when `true_classes`.
    pub fn new(reduction: Reduction, names: &[String], true_classes: bool) -> Self {
        match reduction {
            Reduction::TopLabel => Sink::TopLabel {
                scores: Vec::new(),
                labels: Vec::new(),
                classes: true_classes.then(Vec::new),
            },
            Reduction::Classwise => Sink::Classwise {
                columns: names
                    .iter()
                    .enumerate()
                    .map(|(class, name)| ClassSamples {
                        class,
                        name: name.clone(),
                        scores: Vec::new(),
                        labels: Vec::new(),
                    })
                    .collect(),
                scratch: Vec::new(),
            },
            Reduction::Rows => Sink::Rows {
                values: Vec::new(),
                classes: names.len(),
                truth: Vec::new(),
            },
        }
    }

    /// Reduces one row with true class `class`. The core validates the row (finite
    /// values; probabilities in [0, 1] summing to 1 within its tolerance; the class an
    /// index of the row); a refusal is worded with the classes' names.
    #[inline]
    pub fn push(
        &mut self,
        row: &[f64],
        class: usize,
        logits: bool,
        names: &[String],
    ) -> Result<(), String> {
        match self {
            Sink::TopLabel {
                scores,
                labels,
                classes,
            } => {
                let top = if logits {
                    toplabel::from_logits(row, class)
                } else {
                    toplabel::from_probabilities(row, class)
                }
                .map_err(|e| refusal(e, row, logits, names))?;
                scores.push(top.score);
                labels.push(top.label);
                if let Some(classes) = classes {
                    classes.push(class);
                }
            }
            Sink::Classwise { columns, scratch } => {
                scratch.resize(row.len(), 0.0);
                toplabel::one_vs_rest(row, class, logits, scratch)
                    .map_err(|e| refusal(e, row, logits, names))?;
                for (column, &p) in columns.iter_mut().zip(scratch.iter()) {
                    column.scores.push(p);
                    column.labels.push(u8::from(column.class == class));
                }
            }
            Sink::Rows { values, truth, .. } => {
                // The top-label reduction checks the row; its result is not kept.
                if logits {
                    toplabel::from_logits(row, class)
                } else {
                    toplabel::from_probabilities(row, class)
                }
                .map_err(|e| refusal(e, row, logits, names))?;
                values.extend_from_slice(row);
                truth.push(class);
            }
        }
        Ok(())
    }

    /// The samples, and the true classes if kept.
    pub fn finish(self) -> (Data, Option<Vec<usize>>) {
        match self {
            Sink::TopLabel {
                scores,
                labels,
                classes,
            } => (Data::TopLabel { scores, labels }, classes),
            Sink::Classwise { columns, .. } => (Data::Classwise(columns), None),
            Sink::Rows {
                values,
                classes,
                truth,
            } => (
                Data::Rows {
                    values,
                    classes,
                    truth,
                },
                None,
            ),
        }
    }
}

/// The core's refusal of a row, in the words of a file.
#[cold]
fn refusal(error: ReduceError, row: &[f64], logits: bool, names: &[String]) -> String {
    let name = |i: usize| excerpt(&names[i]);
    let hint = if logits {
        ""
    } else {
        "; pass --logits if these are logits"
    };
    match error {
        ReduceError::NonFinite { index } => {
            number::non_finite(row[index], &name(index), &row[index].to_string())
                .err()
                .unwrap_or_else(|| error.to_string())
        }
        ReduceError::ProbabilityOutOfRange { index } => format!(
            "`{}` {} is outside [0, 1]; class probabilities must be in [0, 1]{hint}",
            name(index),
            row[index]
        ),
        ReduceError::NotNormalized => format!(
            "the probabilities sum to {}, not to 1 within the tolerance {PROBABILITY_SUM_TOLERANCE} (tce::toplabel::PROBABILITY_SUM_TOLERANCE){hint}",
            row.iter().sum::<f64>()
        ),
        ReduceError::ClassOutOfRange { class, classes } => {
            number::out_of_classes(&class.to_string(), "label", classes)
        }
        ReduceError::EmptyRow | ReduceError::ShapeMismatch => error.to_string(),
    }
}

/// What [`read_csv`] read.
pub(super) struct ClassRead {
    pub data: Data,
    /// Each row's weight, when a weight column was named.
    pub weights: Option<Vec<f64>>,
    /// Each row's true class, when asked for.
    pub true_classes: Option<Vec<usize>>,
    pub rows: usize,
    /// The class columns' header names, class k first.
    pub columns: Vec<String>,
    pub label: String,
    pub notes: Vec<String>,
}

/// Whether `name` matches `glob` (`*` any run of characters, `?` any one).
fn glob_matches(glob: &str, name: &str) -> bool {
    let (glob, name): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    // Greedy matching with backtracking to the last `*`: linear in practice.
    let (mut g, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        if g < glob.len() && (glob[g] == '?' || glob[g] == name[n]) {
            g += 1;
            n += 1;
        } else if g < glob.len() && glob[g] == '*' {
            star = Some((g, n));
            g += 1;
        } else if let Some((sg, sn)) = star {
            g = sg + 1;
            n = sn + 1;
            star = Some((sg, sn + 1));
        } else {
            return false;
        }
    }
    glob[g..].iter().all(|&c| c == '*')
}

/// The header columns of the classes, in class order, and their indices.
fn class_columns(
    header: &csv::StringRecord,
    classes: &ClassColumns,
    label_index: usize,
    weight_index: Option<usize>,
    line: u64,
    notes: &mut Vec<String>,
) -> Result<Vec<usize>, InputError> {
    let indices = match classes {
        ClassColumns::List(names) => {
            let mut indices = Vec::with_capacity(names.len());
            for name in names {
                let index = find_column(header, name, "--prob-cols", line, notes)?;
                if index == label_index {
                    return Err(InputError::at(
                        line,
                        format!(
                            "column `{}` is both a class column (--prob-cols) and the label column (--label-col)",
                            excerpt(&header[index])
                        ),
                    ));
                }
                if Some(index) == weight_index {
                    return Err(InputError::at(
                        line,
                        format!(
                            "column `{}` is both a class column (--prob-cols) and the weight column (--weight-col)",
                            excerpt(&header[index])
                        ),
                    ));
                }
                if indices.contains(&index) {
                    return Err(InputError::at(
                        line,
                        format!(
                            "column `{}` is listed twice in --prob-cols",
                            excerpt(&header[index])
                        ),
                    ));
                }
                indices.push(index);
            }
            indices
        }
        ClassColumns::Glob(glob) => {
            let mut indices: Vec<usize> = (0..header.len())
                .filter(|&i| glob_matches(glob, &header[i]))
                .collect();
            if let Some(at) = indices.iter().position(|&i| i == label_index) {
                indices.remove(at);
                notes.push(format!(
                    "--prob-cols `{}` also matches the label column `{}`, which is not taken as a class",
                    excerpt(glob),
                    excerpt(&header[label_index])
                ));
            }
            if let Some(weight) = weight_index {
                if let Some(at) = indices.iter().position(|&i| i == weight) {
                    indices.remove(at);
                    notes.push(format!(
                        "--prob-cols `{}` also matches the weight column `{}`, which is not taken as a class",
                        excerpt(glob),
                        excerpt(&header[weight])
                    ));
                }
            }
            indices
        }
    };
    if indices.len() < 2 {
        let shown = match classes {
            ClassColumns::List(names) => names.join(","),
            ClassColumns::Glob(glob) => glob.clone(),
        };
        return Err(InputError::at(
            line,
            format!(
                "--prob-cols `{}` picks {} class column(s); at least 2 are needed (the header has: {})",
                excerpt(&shown),
                indices.len(),
                list_header(header)
            ),
        ));
    }
    Ok(indices)
}

/// Reads a CSV of class columns and a label column of class ids (and each row's weight
/// from the column `weight_col`, if given).
pub(super) fn read_csv<R: Read>(
    reader: R,
    classes: &ClassColumns,
    label_col: &str,
    weight_col: Option<&str>,
    logits: bool,
    reduction: Reduction,
    true_classes: bool,
) -> Result<ClassRead, InputError> {
    let mut rows = Rows::new(reader, || {
        format!(
            "a header with class columns and a label column `{}`",
            excerpt(label_col)
        )
    })?;
    let line = rows.header_line;
    let mut notes = Vec::new();
    let label_index = find_column(&rows.header, label_col, "--label-col", line, &mut notes)?;
    let weight_index = weight_col
        .map(|name| {
            weights::weight_column(
                &rows.header,
                name,
                line,
                &[(label_index, "--label-col")],
                &mut notes,
            )
        })
        .transpose()?;
    let indices = class_columns(
        &rows.header,
        classes,
        label_index,
        weight_index,
        line,
        &mut notes,
    )?;
    let names: Vec<String> = indices.iter().map(|&i| rows.header[i].to_owned()).collect();
    let label = rows.header[label_index].to_owned();
    let shown: Vec<String> = names.iter().map(|n| excerpt(n)).collect();
    let label_shown = excerpt(&label);
    let mut needed = indices.clone();
    needed.push(label_index);
    needed.extend(weight_index);
    let weight_shown = weight_index.map(|i| excerpt(&rows.header[i]));
    let mut weights = weight_index.map(|_| Vec::new());
    let mut sink = Sink::new(reduction, &names, true_classes);
    let mut row = vec![0.0; indices.len()];
    let mut count = 0usize;
    while let Some((line, record)) = rows.next(&needed)? {
        let at = |p| InputError::at(line, p);
        for ((value, &index), name) in row.iter_mut().zip(&indices).zip(&shown) {
            *value = number::value(&record[index], name).map_err(at)?;
        }
        let class =
            number::class_id(&record[label_index], &label_shown, indices.len()).map_err(at)?;
        if let (Some(weights), Some(index), Some(name)) =
            (&mut weights, weight_index, &weight_shown)
        {
            weights.push(number::weight(&record[index], name).map_err(at)?);
        }
        sink.push(&row, class, logits, &shown).map_err(at)?;
        count += 1;
    }
    if count == 0 {
        return Err(no_rows(rows.header_line));
    }
    if let (Some(weights), Some(name)) = (&weights, &weight_shown) {
        weights::not_all_zero(weights, &format!("in `{name}` (--weight-col)"))?;
    }
    let (data, true_classes) = sink.finish();
    Ok(ClassRead {
        data,
        weights,
        true_classes,
        rows: count,
        columns: names,
        label,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(
        text: &str,
        cols: &str,
        logits: bool,
        reduction: Reduction,
    ) -> Result<ClassRead, String> {
        read_csv(
            text.as_bytes(),
            &ClassColumns::parse(cols),
            "label",
            None,
            logits,
            reduction,
            false,
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn globs() {
        assert!(glob_matches("p*", "p0") && glob_matches("p*", "p"));
        assert!(glob_matches("*_prob", "cat_prob") && !glob_matches("*_prob", "cat_probs"));
        assert!(glob_matches("p?", "p1") && !glob_matches("p?", "p10"));
        assert!(glob_matches("a*b*c", "axxbyyc") && !glob_matches("a*b*c", "axxbyy"));
        assert!(glob_matches("*", "") && !glob_matches("?", ""));
    }

    #[test]
    fn top_label_and_classwise() {
        let csv = "id,p0,p1,p2,label\na,0.2,0.5,0.3,1\nb,0.6,0.3,0.1,2\n";
        let r = read(csv, "p*", false, Reduction::TopLabel).unwrap();
        assert_eq!(r.columns, ["p0", "p1", "p2"]);
        let Data::TopLabel { scores, labels } = r.data else {
            panic!()
        };
        assert_eq!((scores, labels), (vec![0.5, 0.6], vec![1, 0]));
        let r = read(csv, "p2,p0,p1", false, Reduction::Classwise).unwrap();
        let Data::Classwise(columns) = r.data else {
            panic!()
        };
        assert_eq!(columns[0].name, "p2");
        assert_eq!(columns[0].scores, [0.3, 0.1]);
        // Class i is the i-th listed column: 0 is p2, 1 is p0, 2 is p1.
        assert_eq!(columns[0].labels, [0, 0]);
        assert_eq!(columns[1].labels, [1, 0]);
        assert_eq!(columns[2].labels, [0, 1]);
    }

    #[test]
    fn classwise_logits_match_the_core_top_label_bit_for_bit() {
        let rows = [[1.0, 3.0, 2.0], [-700.0, 700.0, 0.5], [0.25, 0.25, -1.0]];
        for row in rows {
            let names = vec!["a".into(), "b".into(), "c".into()];
            let mut sink = Sink::new(Reduction::Classwise, &names, false);
            sink.push(&row, 0, true, &names).unwrap();
            let (Data::Classwise(columns), None) = sink.finish() else {
                panic!()
            };
            let top = toplabel::from_logits(&row, 0).unwrap();
            assert_eq!(
                columns[top.predicted].scores[0].to_bits(),
                top.score.to_bits()
            );
            let total: f64 = columns.iter().map(|c| c.scores[0]).sum();
            assert!((total - 1.0).abs() < 1e-15, "{total}");
        }
    }

    #[test]
    fn bad_rows_name_their_line() {
        let header = "p0,p1,label\n";
        let cases = [
            (
                "0.5,0.5,0\n0.5,0.5\n",
                "line 3: missing field `label` (the row has 2 of 3 fields)",
            ),
            (
                "0.5,0.5,0\n0.5,0.5,0,9\n",
                "line 3: a ragged row: it has 4 fields where the header has 3",
            ),
            (
                "0.5,0.6,0\n",
                "line 2: the probabilities sum to 1.1, not to 1 within the tolerance 0.001",
            ),
            ("nan,0.5,0\n", "line 2: `p0` is NaN"),
            ("0.5,inf,0\n", "line 2: `p1` inf is a non-finite value"),
            ("1.5,-0.5,0\n", "line 2: `p0` 1.5 is outside [0, 1]"),
            (
                "0.5,0.5,2\n",
                "line 2: `label` 2 is not a class id: labels must be whole numbers in 0..2",
            ),
            ("0.5,0.5,-1\n", "line 2: `label` -1 is not a class id"),
            (
                "0.5,0.5,x\n",
                "line 2: cannot parse `x` in column `label` as a class id",
            ),
            ("", "line 2: no data rows"),
        ];
        for (rows, expected) in cases {
            let e = read(
                &format!("{header}{rows}"),
                "p0,p1",
                false,
                Reduction::TopLabel,
            )
            .err()
            .unwrap_or_default();
            assert!(e.starts_with(expected), "{rows:?}: {e}");
        }
        let e = read("p0,p1,label\n0.5,0.6,0\n", "p*", false, Reduction::TopLabel)
            .err()
            .unwrap();
        assert!(e.contains("pass --logits"), "{e}");
        // Logits need not sum to 1.
        assert!(read("p0,p1,label\n5,6,0\n", "p*", true, Reduction::TopLabel).is_ok());
        let e = read("p0,q,label\n0.5,0.5,0\n", "p*", false, Reduction::TopLabel)
            .err()
            .unwrap();
        assert!(
            e.starts_with("line 1: --prob-cols `p*` picks 1 class column(s)"),
            "{e}"
        );
        let e = read(
            "p0,p1,label\n0.5,0.5,0\n",
            "p0,p0",
            false,
            Reduction::TopLabel,
        )
        .err()
        .unwrap();
        assert!(e.contains("listed twice"), "{e}");
        let e = read(
            "p0,p1,label\n0.5,0.5,0\n",
            "p0,p2",
            false,
            Reduction::TopLabel,
        )
        .err()
        .unwrap();
        assert!(
            e.contains("missing column `p2`") && e.contains("--prob-cols NAME"),
            "{e}"
        );
        // A glob that matches the label column leaves it out, with a note.
        let r = read("p0,p1,label\n0.5,0.5,0\n", "*", false, Reduction::TopLabel).unwrap();
        assert_eq!(r.columns, ["p0", "p1"]);
        assert_eq!(r.notes.len(), 1);
    }
}
