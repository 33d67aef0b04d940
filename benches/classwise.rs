//! Timings of the classwise report (docs/performance.md, "Report"): `classwise_report`
//! with the default settings on synthetic softmax outputs written by
//! `benches/classwise_data.py` (numpy, seed 0).
//!
//!   python benches/classwise_data.py 10000 100 /tmp/k100
//!   cargo bench --bench classwise -- /tmp/k100              (the report)
//!   cargo bench --bench classwise -- /tmp/k100 intervals    (no class fitted or simulated)
//!   cargo bench --bench classwise -- /tmp/k100 classes=20   (the first 20 classes only)
//!   cargo bench --bench classwise -- /tmp/k100 resamples=R  (R joint resamples)
//!   cargo bench --bench classwise -- /tmp/k100 phases       (the flexible fit of 3 classes)

use std::path::Path;
use std::time::Instant;

use tce::report::classwise::{classwise_report_with, ClassColumn, ClasswiseOptions};
use tce::report::ReportSettings;

/// The data of a `.npy` file (little-endian, C order): its shape and the bytes after the
/// header.
fn npy(path: &Path) -> (Vec<usize>, String, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let (len, start) = if bytes[6] == 1 {
        (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10)
    } else {
        (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        )
    };
    let header = std::str::from_utf8(&bytes[start..start + len]).unwrap();
    let descr = header.split("'descr': '").nth(1).unwrap();
    let descr = descr[..descr.find('\'').unwrap()].to_owned();
    assert!(header.contains("'fortran_order': False"));
    let shape = header.split("'shape': (").nth(1).unwrap();
    let shape: Vec<usize> = shape[..shape.find(')').unwrap()]
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    (shape, descr, bytes[start + len..].to_vec())
}

/// Every class's one-vs-rest scores and labels, from `dir`/logits.npy (N×K `<f4`) and
/// `dir`/labels.npy (`<i4`), as `tce report --logits --classwise` reads them.
fn columns(dir: &Path) -> Vec<(Vec<f64>, Vec<u8>)> {
    let (shape, descr, logits) = npy(&dir.join("logits.npy"));
    assert_eq!(descr, "<f4");
    let (rows, k) = (shape[0], shape[1]);
    let logits: Vec<f64> = logits
        .chunks_exact(4)
        .map(|b| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])))
        .collect();
    let (_, descr, labels) = npy(&dir.join("labels.npy"));
    assert_eq!(descr, "<i4");
    let labels: Vec<usize> = labels
        .chunks_exact(4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
        .collect();
    let mut out: Vec<(Vec<f64>, Vec<u8>)> = (0..k)
        .map(|_| (Vec::with_capacity(rows), Vec::with_capacity(rows)))
        .collect();
    let mut row_out = vec![0.0; k];
    for (row, &class) in logits.chunks_exact(k).zip(&labels) {
        tce::toplabel::one_vs_rest(row, class, true, &mut row_out).unwrap();
        for (j, (scores, labels)) in out.iter_mut().enumerate() {
            scores.push(row_out[j]);
            labels.push(u8::from(j == class));
        }
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let dir = Path::new(args.first().expect("a directory from classwise_data.py"));
    let phases = args.iter().any(|a| a == "phases");
    println!("threads: {}", rayon::current_num_threads());
    let start = Instant::now();
    let mut data = columns(dir);
    // `classes=K`: the first K classes only (a part of a large case, to time it).
    if let Some(k) = args.iter().find_map(|a| a.strip_prefix("classes=")) {
        data.truncate(k.parse().expect("classes=K"));
    }
    let names: Vec<String> = (0..data.len()).map(|k| format!("class {k}")).collect();
    let views: Vec<ClassColumn<'_>> = data
        .iter()
        .zip(&names)
        .enumerate()
        .map(|(class, ((scores, labels), name))| ClassColumn {
            class,
            name,
            scores,
            labels,
        })
        .collect();
    println!(
        "read {} rows x {} classes: {:.2} s",
        data[0].0.len(),
        data.len(),
        start.elapsed().as_secs_f64()
    );
    if phases {
        for k in [0, 1, 2] {
            let c = &views[k];
            let start = Instant::now();
            let fit = tce::fit::flexible::fit_flexible(
                c.scores,
                c.labels,
                &tce::fit::EndpointRule::default(),
            );
            println!(
                "class {k} ({} hits): flexible fit {:.3} s ({})",
                c.labels.iter().filter(|&&l| l == 1).count(),
                start.elapsed().as_secs_f64(),
                fit.map_or_else(|e| e.to_string(), |f| f.curve_name())
            );
        }
        return;
    }
    // `intervals`: no class fitted or simulated (the estimates and their intervals only).
    let options = ClasswiseOptions {
        simulated_classes: args.iter().any(|a| a == "intervals").then_some(0),
    };
    let start = Instant::now();
    // `resamples=R`: another number of resamples.
    let settings = ReportSettings {
        resamples: args
            .iter()
            .find_map(|a| a.strip_prefix("resamples="))
            .map_or(1000, |r| r.parse().expect("resamples=R")),
        ..ReportSettings::default()
    };
    let r = classwise_report_with(&views, &settings, &options, &|_| {}).unwrap();
    println!(
        "classwise report, {} rows x {} classes: {:.2} s ({} resamples, {} simulations)",
        r.n,
        r.classes.len(),
        start.elapsed().as_secs_f64(),
        r.settings.resamples,
        r.settings.simulations.unwrap_or(0)
    );
}
