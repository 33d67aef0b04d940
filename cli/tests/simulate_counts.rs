//! Issue #35 for `tce simulate`'s lists: each size and bin count is bounded, but their
//! number is not, and every cell keeps every repetition's estimate. A grid whose results
//! the allocator cannot hold is an exit-2 error at once (the library's
//! `Grid::results_bytes`, asked of the allocator before any work), where it ran on and
//! would have aborted when the allocator gave out.

mod common;
use common::{refused, tce_bounded};

#[test]
fn a_grid_whose_results_cannot_be_held_is_a_named_error_at_once() {
    let sizes = vec!["100"; 10_000].join(",");
    let bins: Vec<String> = (0..10_000).map(|i| (i % 50 + 1).to_string()).collect();
    let bins = bins.join(",");
    // The default estimators: three take bins, two do not.
    let cells = 10_000 * (3 * 10_000 + 2);
    for reps in ["100000", "1"] {
        let args = [
            "simulate", "--alpha", "1.1", "--beta", "0.1", "--d", "2", "--n", &sizes, "--bins",
            &bins, "--reps", reps,
        ];
        let out = tce_bounded(&args, 512, 20);
        let stderr = refused(&out, &format!("--reps {reps}"));
        assert!(
            stderr.contains(&format!(
                "bytes for the results of {cells} cells over {reps} repetitions (fewer sizes, \
                 bin counts, estimators or repetitions need less)"
            )),
            "{stderr}"
        );
        assert!(stderr.contains("cannot allocate"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
