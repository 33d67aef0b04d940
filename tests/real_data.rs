//! The 15-bin equal-width l1 and l2 ECE of each bundled data file equals the value that
//! the data README publishes (to 1e-6, the README's precision), for both closures (the
//! README says they agree on these files).

use std::path::Path;

use tce::{Closure, InlineHistogram, Norm};

/// (file, ECE15 l1, ECE15 l2) from the README's table.
fn published() -> Vec<(String, f64, f64)> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("data/README.md"))
            .unwrap();
    let rows: Vec<(String, f64, f64)> = readme
        .lines()
        .filter(|line| line.starts_with("| `") && line.contains(".csv`"))
        .filter_map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            // | file | model | data | split | rows | bytes | accuracy | mean conf | rows 1.0 | l1 | l2 |
            let l1 = cells.get(10)?.parse().ok()?;
            let l2 = cells.get(11)?.parse().ok()?;
            let file = cells[1].split('`').nth(1)?.to_string();
            Some((file, l1, l2))
        })
        .collect();
    assert_eq!(rows.len(), 6, "the README's table changed shape");
    rows
}

fn read(file: &str) -> (Vec<f64>, Vec<u8>) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("data")
            .join(file),
    )
    .unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("confidence,correct"));
    lines
        .map(|line| {
            let mut cells = line.split(',');
            (
                cells.next().unwrap().parse::<f64>().unwrap(),
                cells.next().unwrap().parse::<u8>().unwrap(),
            )
        })
        .unzip()
}

#[test]
fn equal_width_ece_of_every_bundled_file_matches_the_readme() {
    for (file, l1, l2) in published() {
        let (scores, labels) = read(&file);
        for closure in [Closure::Left, Closure::Right] {
            let mut h = InlineHistogram::<15>::new(closure);
            h.push_batch(&scores, &labels).unwrap();
            let e1 = h.ece_bin(Norm::L1).unwrap();
            let e2 = h.ece_bin(Norm::L2).unwrap();
            assert_eq!(e1.samples as usize, scores.len());
            assert!(
                (e1.value - l1).abs() <= 1e-6,
                "{file} {closure:?} l1: {} vs {l1}",
                e1.value
            );
            assert!(
                (e2.value - l2).abs() <= 1e-6,
                "{file} {closure:?} l2: {} vs {l2}",
                e2.value
            );
        }
    }
}
