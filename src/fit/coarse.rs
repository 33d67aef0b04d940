//! Cells of the log-odds for a first, cheap fit of a calibration curve.
//!
//! A GLM or spline fit costs one pass over the distinct rows per evaluation, and at
//! n = 10^6 continuous scores seventeen candidate curves take tens of seconds. Rows whose
//! log-odds z = ln(c / (1 − c)) fall in one cell of width [`CELL_WIDTH`] (and have the
//! same label) are therefore first merged into one row with their total weight and the
//! weighted means of their coordinates. Every curve's linear predictor is linear in
//! (ln c, ln(1 − c)) between knots, so a cell's mean row carries its rows' mean
//! predictor, and the cell likelihood differs from the rows' only at second order in the
//! cell's width. A fit on the cells is a start, never the answer: the fit then continues
//! on every distinct row from it, with the same convergence test as without cells, so
//! the maximum found is that of the rows. Newton's method converges quadratically from
//! such a start, in one to three passes over the rows.
//!
//! Used only above [`MIN_DISTINCT_ROWS`] distinct rows, below which the rows are cheap.

/// The width of a log-odds cell: 1/64, as the log-odds mixture's bins.
pub(crate) const CELL_WIDTH: f64 = 1.0 / 64.0;

/// Fewer distinct rows than this are fitted directly.
pub(crate) const MIN_DISTINCT_ROWS: usize = 8192;

/// One cell's rows of one label, merged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Cell<const D: usize> {
    pub label: u8,
    pub weight: f64,
    /// The weighted means of the rows' coordinates.
    pub mean: [f64; D],
}

#[derive(Clone, Copy)]
struct Sums<const D: usize> {
    weight: f64,
    weighted: [f64; D],
}

impl<const D: usize> Sums<D> {
    const ZERO: Self = Sums {
        weight: 0.0,
        weighted: [0.0; D],
    };

    fn cell(&self, label: u8) -> Option<Cell<D>> {
        (self.weight > 0.0).then(|| Cell {
            label,
            weight: self.weight,
            mean: self.weighted.map(|s| s / self.weight),
        })
    }
}

/// The cells of `rows`, each (z, label, weight, coordinates), in ascending z; rows of
/// weight 0 carry nothing. Within a cell, label 0 comes first.
pub(crate) fn cells<const D: usize>(
    rows: impl Iterator<Item = (f64, u8, f64, [f64; D])>,
) -> Vec<Cell<D>> {
    let mut out = Vec::new();
    let mut current: Option<i64> = None;
    let mut sums = [Sums::<D>::ZERO; 2];
    let flush = |sums: &mut [Sums<D>; 2], out: &mut Vec<Cell<D>>| {
        out.extend(sums[0].cell(0));
        out.extend(sums[1].cell(1));
        *sums = [Sums::ZERO; 2];
    };
    for (z, label, weight, values) in rows {
        if weight <= 0.0 {
            continue;
        }
        // z is finite (the endpoint rule bounds it by ±37), so the cast is exact.
        let index = (z / CELL_WIDTH).floor() as i64;
        if current != Some(index) {
            flush(&mut sums, &mut out);
            current = Some(index);
        }
        let s = &mut sums[usize::from(label == 1)];
        s.weight += weight;
        for (acc, v) in s.weighted.iter_mut().zip(values) {
            *acc += weight * v;
        }
    }
    flush(&mut sums, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_one_cell_and_label_merge_into_their_weighted_means() {
        let w = CELL_WIDTH;
        let rows = [
            (0.1 * w, 1, 1.0, [1.0]),
            (0.2 * w, 0, 2.0, [5.0]),
            (0.9 * w, 1, 3.0, [3.0]),
            (0.95 * w, 0, 0.0, [100.0]),
            (1.5 * w, 1, 1.0, [7.0]),
            (-0.5 * w, 1, 1.0, [9.0]),
        ];
        let mut sorted = rows.to_vec();
        sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
        let cells = cells(sorted.into_iter());
        assert_eq!(
            cells,
            vec![
                Cell {
                    label: 1,
                    weight: 1.0,
                    mean: [9.0]
                },
                Cell {
                    label: 0,
                    weight: 2.0,
                    mean: [5.0]
                },
                Cell {
                    label: 1,
                    weight: 4.0,
                    mean: [2.5]
                },
                Cell {
                    label: 1,
                    weight: 1.0,
                    mean: [7.0]
                },
            ]
        );
        assert!(super::cells::<1>(core::iter::empty()).is_empty());
    }
}
