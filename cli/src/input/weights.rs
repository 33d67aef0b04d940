//! Each row's weight (`tce estimate --weight-col NAME` or `--weights FILE.npy`): a CSV
//! column read with the rows, or a 1-D `.npy` array of one weight per row. Frequency
//! weights (docs/estimators.md, Weights): finite numbers ≥ 0, not all 0. A bad weight is
//! refused where it is read, naming its line (CSV) or index (`.npy`); the library checks
//! the same rules again ([`tce::weights::check`]).

use std::io::Read;
use std::path::Path;

use super::csv_rows::{find_column, no_rows, BinaryColumns, Rows};
use super::{excerpt, number, ColumnNames, InputError, Samples};

/// Where the weights are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WeightSource {
    /// A column of the CSV input, by name (matched as the other columns are).
    Column(String),
    /// A `.npy` file of N weights, one per row of the input (CSV or `.npy`).
    Npy(std::path::PathBuf),
}

/// The weight column of a CSV header: found as the other columns are, and refused if it
/// is also a column read as something else (`taken`: each with its option).
pub(super) fn weight_column(
    header: &csv::StringRecord,
    name: &str,
    line: u64,
    taken: &[(usize, &str)],
    notes: &mut Vec<String>,
) -> Result<usize, InputError> {
    let index = find_column(header, name, "--weight-col", line, notes)?;
    if let Some((_, option)) = taken.iter().find(|(i, _)| *i == index) {
        return Err(InputError::at(
            line,
            format!(
                "column `{}` is both the weight column (--weight-col) and read by {option}",
                excerpt(&header[index])
            ),
        ));
    }
    Ok(index)
}

/// Reads (confidence, correct) rows and each row's weight from the column `weight_col`.
/// (The one-thread reader: the fast two-thread path reads two columns only.)
pub(super) fn read_binary<R: Read>(
    reader: R,
    names: ColumnNames<'_>,
    weight_col: &str,
) -> Result<(Samples, Vec<f64>), InputError> {
    let mut rows = Rows::new(reader, || {
        format!(
            "{} and a weight column `{}`",
            super::csv_rows::binary_expected(names),
            excerpt(weight_col)
        )
    })?;
    let mut samples = Samples::default();
    let columns = BinaryColumns::find(&rows, names, &mut samples)?;
    let (score, label) = columns.indices();
    let header_line = rows.header_line;
    let weight = weight_column(
        &rows.header,
        weight_col,
        header_line,
        &[(score, "--score-col"), (label, "--label-col")],
        &mut samples.notes,
    )?;
    let weight_name = excerpt(&rows.header[weight]);
    let (score_name, label_name) = columns.names();
    let needed = [score, label, weight];
    let mut weights = Vec::new();
    while let Some((line, record)) = rows.next(&needed)? {
        let at = |p| InputError::at(line, p);
        samples
            .scores
            .push(number::score(&record[score], score_name).map_err(at)?);
        samples
            .labels
            .push(number::label(&record[label], label_name).map_err(at)?);
        weights.push(number::weight(&record[weight], &weight_name).map_err(at)?);
    }
    if samples.scores.is_empty() {
        return Err(no_rows(header_line));
    }
    not_all_zero(&weights, &format!("in `{weight_name}` (--weight-col)"))?;
    Ok((samples, weights))
}

/// Refuses weights that are all 0: nothing to average over.
pub(super) fn not_all_zero(weights: &[f64], which: &str) -> Result<(), InputError> {
    if weights.iter().all(|&w| w == 0.0) {
        return Err(InputError::general(format!(
            "every weight {which} is 0: there is nothing to average over"
        )));
    }
    Ok(())
}

/// The weights of a `.npy` file for an input of `rows` rows: one dimension of `rows`
/// numbers (float, or integer counts), each finite and ≥ 0, not all 0. Errors name the
/// file (and the index of a bad weight).
pub(super) fn read_npy(path: &Path, rows: usize, input: &Path) -> Result<Vec<f64>, InputError> {
    let weights = super::npy::weights(path).map_err(|e| e.in_file(path))?;
    if weights.len() != rows {
        return Err(InputError::general(format!(
            "{} has {} weights (--weights) but {} has {rows} rows",
            path.display(),
            weights.len(),
            input.display()
        )));
    }
    for (i, &w) in weights.iter().enumerate() {
        if let Some(problem) = number::weight_problem(w, "the weight") {
            return Err(InputError::at_index(i as u64, problem).in_file(path));
        }
    }
    not_all_zero(&weights, "(--weights)").map_err(|e| e.in_file(path))?;
    Ok(weights)
}
