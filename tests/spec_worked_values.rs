//! SPEC §9: the worked example, every row, p = 1 and p = 2, to 1e-12.

use tce::{BinStats, Binning, Closure, Histogram, InlineBuffer, Norm, SweepOptions};

const F: [f64; 20] = [
    0.955, 0.943, 0.892, 0.998, 0.78, 0.995, 0.227, 1.0, 0.916, 0.908, 0.997, 0.936, 0.965, 0.986,
    0.906, 0.734, 0.864, 0.976, 0.738, 0.851,
];
const Y: [u8; 20] = [1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0];
const TOLERANCE: f64 = 1e-12;

fn buffer() -> InlineBuffer<20> {
    let mut buffer = InlineBuffer::<20>::new();
    buffer.push_batch(&F, &Y).unwrap();
    buffer
}

fn assert_close(actual: f64, expected: f64, what: &str) {
    assert!((actual - expected).abs() <= TOLERANCE, "{what}: {actual} vs {expected}");
}

#[test]
fn ece_bin_rows() {
    let rows: [(Binning, usize, f64, f64); 6] = [
        (Binning::EQUAL_WIDTH, 2, 0.028350000000, 0.053671785198),
        (Binning::EQUAL_WIDTH, 5, 0.028350000000, 0.060490081832),
        (Binning::EQUAL_WIDTH, 15, 0.091050000000, 0.136057083608),
        (Binning::EQUAL_MASS, 2, 0.053250000000, 0.060326486720),
        (Binning::EQUAL_MASS, 5, 0.070850000000, 0.086229562796),
        (Binning::EQUAL_MASS, 15, 0.139250000000, 0.209971188500),
    ];
    let mut buffer = buffer();
    let sorted = buffer.sorted();
    for (binning, bins, l1, l2) in rows {
        let what = format!("{binning:?} B={bins}");
        let e1 = sorted.ece_bin(binning, bins, Norm::L1).unwrap();
        let e2 = sorted.ece_bin(binning, bins, Norm::L2).unwrap();
        assert_close(e1.value, l1, &what);
        assert_close(e2.value, l2, &what);
        assert_eq!((e2.samples, e2.bins), (20, bins));
    }
}

#[test]
fn streaming_histogram_matches_the_equal_width_rows() {
    for (bins, l1, l2) in [(2, 0.02835, 0.053671785198), (15, 0.09105, 0.136057083608)] {
        let mut storage = vec![BinStats::EMPTY; bins];
        let mut h = Histogram::with_storage(&mut storage, Closure::Left).unwrap();
        h.push_batch(&F, &Y).unwrap();
        assert_close(h.ece_bin(Norm::L1).unwrap().value, l1, "histogram l1");
        assert_close(h.ece_bin(Norm::L2).unwrap().value, l2, "histogram l2");
    }
}

#[test]
fn sweep_rows() {
    let mut buffer = buffer();
    let sorted = buffer.sorted();
    let options = SweepOptions::default();
    for (binning, b_star, l1, l2) in [
        (Binning::EQUAL_MASS, 9, 0.104650000000, 0.146112599274),
        (Binning::EQUAL_WIDTH, 11, 0.061650000000, 0.076884984939),
    ] {
        let e1 = sorted.ece_sweep(binning, Norm::L1, options).unwrap();
        let e2 = sorted.ece_sweep(binning, Norm::L2, options).unwrap();
        assert_eq!((e1.bins, e2.bins), (b_star, b_star), "{binning:?}");
        assert_close(e1.value, l1, "sweep l1");
        assert_close(e2.value, l2, "sweep l2");
    }
}

#[test]
fn debias_rows() {
    let mut buffer = buffer();
    let sorted = buffer.sorted();
    for (binning, bins, expected) in [
        (Binning::EQUAL_WIDTH, 2, 0.0),
        (Binning::EQUAL_WIDTH, 5, 0.0),
        (Binning::EQUAL_WIDTH, 15, 0.0),
        (Binning::EQUAL_MASS, 2, 0.0),
        (Binning::EQUAL_MASS, 5, 0.0),
        (Binning::EQUAL_MASS, 15, 0.108649206164),
    ] {
        let e = sorted.ece_debias(binning, bins, Norm::L2).unwrap();
        assert_close(e.value, expected, &format!("debias {binning:?} B={bins}"));
    }
}
