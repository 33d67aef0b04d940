//! Issue #35 for the fitting commands: a huge or zero count given to `tce fit
//! --bootstrap`, `tce fit-check --reps`, `tce table1 --reps/--calibration/--test` or
//! `tce paper --table1-reps/--reps` is an exit-2 error naming the option and the
//! library's bound, at once: before any input is read and any work is done. Before the
//! bounds, `table1 --calibration 18446744073709551615` panicked (an add overflow, exit
//! 101), `--calibration 17179869184` aborted on a failed allocation, and the others ran
//! on without end.

mod common;
use common::{birds, refused, scratch, tce_bounded};

/// 2^64 − 1, 2^34 and just past each bound.
const HUGE: &str = "18446744073709551615";
const LARGE: &str = "17179869184";

/// Runs `args` under 512 MiB of address space and 20 s, and asserts a refusal (exit 2,
/// nothing on stdout, no panic) whose message holds `message`.
fn refused_with(args: &[&str], message: &str) -> String {
    let out = tce_bounded(args, 512, 20);
    let stderr = refused(&out, &format!("{args:?}"));
    assert!(stderr.contains(message), "{args:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    stderr
}

#[test]
fn fit_bootstrap_is_bounded_before_the_file_is_read() {
    let file = birds();
    let bound = "replicates: a fit's bootstrap takes at most 100000 \
                 (tce::fit::bootstrap::MAX_REPLICATES)";
    for count in [HUGE, LARGE, "100001"] {
        refused_with(
            &["fit", &file, "--bootstrap", count],
            &format!("--bootstrap: {count} {bound}"),
        );
        // Before the input: a file that does not exist is not what is reported.
        refused_with(
            &["fit", "no-such-file.csv", "--bootstrap", count],
            &format!("--bootstrap: {count} {bound}"),
        );
    }
}

#[test]
fn fit_check_repetitions_are_bounded_before_the_files_are_read() {
    let file = birds();
    for count in [HUGE, LARGE, "100001", "1", "0"] {
        for input in [file.as_str(), "no-such-file.csv"] {
            refused_with(
                &["fit-check", input, "--reps", count],
                &format!(
                    "--reps: {count} repetitions: a fit check takes at least 2 (one has no \
                     standard deviation) and at most 100000 (tce::fit::check::MAX_REPETITIONS)"
                ),
            );
        }
    }
}

#[test]
fn table1_counts_are_bounded_before_any_work() {
    let file = birds();
    let reps = "repetitions: the Table 1 experiment takes 1 to 100000 \
                (tce::recalibrate::table1::MAX_REPETITIONS)";
    let size = "rows: the Table 1 experiment takes 1 to 2147483647 \
                (tce::recalibrate::table1::MAX_SET_SIZE)";
    for count in [HUGE, LARGE, "100001", "0"] {
        refused_with(
            &["table1", "--reps", count],
            &format!("--reps: {count} {reps}"),
        );
        refused_with(
            &["table1", "no-such-file.csv", "--reps", count],
            &format!("--reps: {count} {reps}"),
        );
    }
    for count in [HUGE, LARGE, "2147483648", "0"] {
        refused_with(
            &["table1", "--reps", "1", "--calibration", count],
            &format!("--calibration: a calibration set of {count} {size}"),
        );
        refused_with(
            &["table1", "--reps", "1", "--test", count],
            &format!("--test: a test set of {count} {size}"),
        );
        refused_with(
            &["table1", &file, "--reps", "1", "--calibration", count],
            &format!("--calibration: a calibration set of {count} {size}"),
        );
    }
    // Within the bound, what the sets cost is estimated and asked of the allocator before
    // any work: 2^31 − 1 rows (about 275 GB at 128 bytes a row) is refused as memory,
    // not met by an abort part way through.
    for option in ["--calibration", "--test"] {
        refused_with(
            &["table1", "--reps", "1", option, "2147483647"],
            "bytes for the Table 1 experiment's repetitions (smaller sets or fewer \
             repetitions need less)",
        );
    }
}

#[test]
fn paper_counts_are_bounded_before_any_figure() {
    let dir = scratch("paper-counts");
    let out = dir.join("out");
    let out = out.to_str().unwrap();
    for count in [HUGE, LARGE, "100001"] {
        refused_with(
            &["paper", "--out", out, "--reps", "2", "--table1-reps", count],
            &format!(
                "--table1-reps: {count} repetitions: the Table 1 experiment takes 1 to \
                 100000 (tce::recalibrate::table1::MAX_REPETITIONS)"
            ),
        );
        refused_with(
            &["paper", "--out", out, "--reps", count],
            &format!(
                "--reps: {count} repetitions: a simulation takes at most 100000 \
                 (tce::sim::runner::MAX_REPETITIONS)"
            ),
        );
    }
    // Refused before any figure was computed or written.
    assert!(
        !dir.join("out").exists(),
        "paper wrote files before refusing"
    );
}
