//! Puts `memory.x` where cortex-m-rt's `link.x` finds it, links the binaries with
//! `link.x`, and compiles the bundled data set in: `data.rs` in OUT_DIR holds the rows of
//! `data/resnet50_birds_test.csv` (2 897 rows) as Rust arrays, generated here rather than
//! committed.

use std::fmt::Write as _;
use std::path::PathBuf;

/// The data set every firmware pushes (tests/firmware.rs reads the same file on the host).
const DATA: &str = "../../data/resnet50_birds_test.csv";

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("set by cargo"));
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));

    std::fs::copy(manifest.join("memory.x"), out.join("memory.x")).expect("copy memory.x");
    println!("cargo:rustc-link-search={}", out.display());
    println!("cargo:rustc-link-arg-bins=-Tlink.x");

    let text = std::fs::read_to_string(manifest.join(DATA)).expect("read the data set");
    let (mut scores, mut labels) = (String::new(), String::new());
    let mut rows = 0usize;
    // Skip the header; the first two columns are the confidence and whether it was right.
    for line in text.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let mut fields = line.split(',');
        let score: f64 = fields.next().unwrap().trim().parse().expect("a score");
        let label: u8 = fields
            .next()
            .expect("a label")
            .trim()
            .parse()
            .expect("a label");
        // The bits, not a decimal: the firmware gets exactly the double the host parses.
        write!(scores, "f64::from_bits({:#018x}),", score.to_bits()).unwrap();
        write!(labels, "{label},").unwrap();
        rows += 1;
    }
    let code = format!(
        "/// Rows of the data set.\npub const ROWS: usize = {rows};\n\
         /// The data set's file, relative to the repository.\npub const FILE: &str = \"{}\";\n\
         /// Its confidences.\npub static SCORES: [f64; ROWS] = [{scores}];\n\
         /// Whether each prediction was right (0 or 1).\npub static LABELS: [u8; ROWS] = [{labels}];\n",
        DATA.trim_start_matches("../../")
    );
    std::fs::write(out.join("data.rs"), code).expect("write data.rs");
    println!("cargo:rerun-if-changed={DATA}");
    println!("cargo:rerun-if-changed=memory.x");
    println!("cargo:rerun-if-changed=build.rs");
}
