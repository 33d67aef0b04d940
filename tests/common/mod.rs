//! Naive implementations written for the tests: obviously right, slow. Each follows
//! SPEC.md line by line, in plain `f64`, rebinning every sample from scratch.
#![allow(dead_code)]

/// Where each sample goes, as a vector of bin indices.
pub fn equal_width_bins(scores: &[f64], bins: usize, right_closed: bool) -> Vec<usize> {
    scores
        .iter()
        .map(|&f| {
            let x = f * bins as f64;
            let index = if right_closed {
                (x.ceil() as isize - 1).max(0) as usize
            } else {
                x.floor() as usize
            };
            index.min(bins - 1)
        })
        .collect()
}

/// Equal-mass bins by rank: stable sort by score, sorted position j → floor(j·B/n). With
/// `keep_ties`, every member of a group of equal scores takes the bin of the group's first
/// position.
pub fn equal_mass_bins(scores: &[f64], bins: usize, keep_ties: bool) -> Vec<usize> {
    let n = scores.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| scores[a].partial_cmp(&scores[b]).unwrap()); // stable
    let mut assignment = vec![0; n];
    let mut group_start = 0;
    for (j, &i) in order.iter().enumerate() {
        if j > 0 && scores[order[j - 1]] != scores[i] {
            group_start = j;
        }
        let rank = if keep_ties { group_start } else { j };
        assignment[i] = (rank as u128 * bins as u128 / n as u128) as usize;
    }
    assignment
}

/// (count, mean score, mean label) per bin.
pub fn bin_table(
    scores: &[f64],
    labels: &[u8],
    assignment: &[usize],
    bins: usize,
) -> Vec<(usize, f64, f64)> {
    let mut table = vec![(0usize, 0.0, 0.0); bins];
    for ((&f, &y), &k) in scores.iter().zip(labels).zip(assignment) {
        table[k].0 += 1;
        table[k].1 += f;
        table[k].2 += y as f64;
    }
    table
        .into_iter()
        .map(|(c, sf, sy)| {
            if c == 0 {
                (0, 0.0, 0.0)
            } else {
                (c, sf / c as f64, sy / c as f64)
            }
        })
        .collect()
}

pub fn ece(table: &[(usize, f64, f64)], p: f64) -> f64 {
    let n: usize = table.iter().map(|t| t.0).sum();
    let s: f64 = table
        .iter()
        .filter(|t| t.0 > 0)
        .map(|&(c, f, y)| c as f64 / n as f64 * (f - y).abs().powf(p))
        .sum();
    s.powf(1.0 / p)
}

pub fn mce(table: &[(usize, f64, f64)]) -> f64 {
    table
        .iter()
        .filter(|t| t.0 > 0)
        .map(|&(_, f, y)| (f - y).abs())
        .fold(0.0, f64::max)
}

/// ECE_debias by the literal leave-one-label-out jackknife in every bin, O(n_k²).
pub fn debias(scores: &[f64], labels: &[u8], assignment: &[usize], bins: usize, p: f64) -> f64 {
    let n = scores.len() as f64;
    let mut total = 0.0;
    for k in 0..bins {
        let members: Vec<usize> = (0..scores.len()).filter(|&i| assignment[i] == k).collect();
        let m = members.len();
        if m < 2 {
            continue;
        }
        let f = members.iter().map(|&i| scores[i]).sum::<f64>() / m as f64;
        let y = members.iter().map(|&i| labels[i] as f64).sum::<f64>() / m as f64;
        let plug_in = (f - y).abs().powf(p);
        let leave_one_out: f64 = members
            .iter()
            .map(|&left_out| {
                let y_without = members
                    .iter()
                    .filter(|&&i| i != left_out)
                    .map(|&i| labels[i] as f64)
                    .sum::<f64>()
                    / (m - 1) as f64;
                (f - y_without).abs().powf(p)
            })
            .sum::<f64>()
            / m as f64;
        let jackknifed = m as f64 * plug_in - (m - 1) as f64 * leave_one_out;
        total += m as f64 / n * jackknifed;
    }
    total.max(0.0).powf(1.0 / p)
}

/// The paper's sweep, rebinning all samples for every b: returns b*. When no b up to
/// `max_bins` fails, the smallest b whose bins group the samples as `max_bins` bins do
/// (the same estimate; tce reports that b, see `tce::sweep`'s module doc).
pub fn sweep_bins(
    scores: &[f64],
    labels: &[u8],
    max_bins: usize,
    binning: &dyn Fn(usize) -> Vec<usize>,
) -> usize {
    for b in 2..=max_bins {
        let table = bin_table(scores, labels, &binning(b), b);
        let heights: Vec<f64> = table.iter().filter(|t| t.0 > 0).map(|t| t.2).collect();
        if heights.windows(2).any(|w| w[1] < w[0]) {
            return b - 1;
        }
    }
    let max_bins = max_bins.max(1);
    let last = same_bin_relation(&binning(max_bins));
    (1..=max_bins)
        .find(|&b| same_bin_relation(&binning(b)) == last)
        .unwrap_or(max_bins)
}

/// Which samples share a bin, as each sample's bin renumbered in order of first
/// appearance: two assignments group the samples alike exactly when these are equal.
fn same_bin_relation(assignment: &[usize]) -> Vec<usize> {
    let mut renumbered = std::collections::HashMap::new();
    assignment
        .iter()
        .map(|&bin| {
            let next = renumbered.len();
            *renumbered.entry(bin).or_insert(next)
        })
        .collect()
}

/// The bundled file `data/FILE` (`confidence,correct`) as scores and labels.
pub fn read_bundled(file: &str) -> (Vec<f64>, Vec<u8>) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(file);
    let mut reader = csv::Reader::from_path(path).unwrap();
    let (mut scores, mut labels) = (Vec::new(), Vec::new());
    for record in reader.records() {
        let record = record.unwrap();
        scores.push(record[0].parse().unwrap());
        labels.push(record[1].parse().unwrap());
    }
    (scores, labels)
}
