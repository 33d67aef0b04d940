//! What the CLI integration tests share: running the `tce` binary (with arguments, or
//! with bytes on stdin), reading what it printed (stdout of a success, one JSON object,
//! stderr of a failure with its exit code), the bundled data files, and scratch
//! directories.
//!
//! Every test file but report*.rs has `mod common;` (a directory module, so Cargo does
//! not build it as a test of its own) and uses part of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// The repository root, where `tce` runs (`tce paper` finds data/ there by default).
pub const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
/// The bundled classifier outputs.
pub const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../data");
/// The version every JSON output carries.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The bundled file `name`.
pub fn data(name: &str) -> String {
    format!("{DATA}/{name}")
}

/// ResNet-50 / Birds: no score is exactly 0 or 1.
pub fn birds() -> String {
    data("resnet50_birds_test.csv")
}

/// ResNet-110 / CIFAR-10: 2885 of its 10000 confidences are exactly 1.0.
pub fn c10() -> String {
    data("resnet110_c10_test.csv")
}

/// The `tce` command, to run at the repository root (for a test that drives the child
/// process itself).
pub fn tce_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tce"));
    command.current_dir(ROOT);
    command
}

/// Runs `tce` with `args`.
pub fn tce<S: AsRef<OsStr>>(args: &[S]) -> Output {
    tce_command().args(args).output().expect("run tce")
}

/// Runs `tce` with `args` and `input` on stdin.
pub fn tce_stdin(args: &[&str], input: &[u8]) -> Output {
    let mut child = tce_command()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tce");
    // tce may stop reading early (a line over the limit, bad input): a broken pipe is
    // expected then, and the exit code and stderr say what happened.
    let _ = child.stdin.take().unwrap().write_all(input);
    child.wait_with_output().unwrap()
}

/// Runs `script` with `sh -c` (arguments `args` as `$1`...; the `tce` binary as `$TCE`),
/// its address space limited to `memory_mib` MiB (`ulimit -v`, inherited by everything
/// the script starts), and kills its whole process group if it has not finished within
/// `seconds`: for the inputs that once made `tce` read or allocate without end. Returns
/// the output, or `None` when it had to be killed.
pub fn bounded_sh(script: &str, args: &[&str], memory_mib: u64, seconds: u64) -> Option<Output> {
    use std::os::unix::process::CommandExt;
    use std::time::Duration;
    let child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {}; {script}", memory_mib * 1024))
        .arg("sh")
        .args(args)
        .env("TCE", env!("CARGO_BIN_EXE_tce"))
        .current_dir(ROOT)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("spawn sh");
    let group = child.id();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished.recv_timeout(Duration::from_secs(seconds)) {
        Ok(output) => Some(output.expect("wait for sh")),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{group}")])
                .status();
            None
        }
    }
}

/// Runs `tce` with `args` as [`bounded_sh`] does, and asserts that it finished in time.
pub fn tce_bounded(args: &[&str], memory_mib: u64, seconds: u64) -> Output {
    bounded_sh(r#"exec "$TCE" "$@""#, args, memory_mib, seconds).unwrap_or_else(|| {
        panic!("tce {args:?} ran past {seconds} s (under {memory_mib} MiB) and was killed")
    })
}

/// The stdout of a run that must succeed.
pub fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "tce failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// The one JSON object a successful run printed.
pub fn json(output: &Output) -> Value {
    serde_json::from_str(&stdout(output)).expect("one JSON object")
}

/// Asserts exit code `code` (`what` names the case) and returns stderr.
pub fn exits(output: &Output, code: i32, what: &str) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        output.status.code(),
        Some(code),
        "{what}: expected exit {code}; stderr: {stderr}; stdout: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

/// The stderr of a run refused as bad input: exit 2, nothing printed on stdout.
pub fn refused(output: &Output, what: &str) -> String {
    let stderr = exits(output, 2, what);
    assert!(output.stdout.is_empty(), "{what}: printed before failing");
    stderr
}

/// A directory of its own for test `test` of this test file, under the system's
/// temporary directory, removed when the test is done (a [`TempDir`]).
pub fn scratch(test: &str) -> TempDir {
    TempDir::new(test)
}

/// A directory of its own, removed on drop (a counter keeps the directories of one test
/// file apart, the process id those of concurrent runs).
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tce-{}-{name}-{}-{}",
            env!("CARGO_CRATE_NAME"),
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Writes `contents` to the file `name` in the directory.
    pub fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

/// A `TempDir` reads as its path (`dir.join(..)`, `&dir` for a `&Path`).
impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `contents` to `dir/name` and returns the path as a string.
pub fn write(dir: &Path, name: &str, contents: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path_str(&path).to_owned()
}

/// A path as an argument.
pub fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// (confidences, labels) of a CSV text with `confidence` and `correct` columns (no
/// quoting, as in the bundled files).
pub fn csv_samples(text: &str) -> (Vec<f64>, Vec<u8>) {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    let c = header.iter().position(|h| *h == "confidence").unwrap();
    let y = header.iter().position(|h| *h == "correct").unwrap();
    lines
        .map(|l| {
            let fields: Vec<&str> = l.split(',').map(str::trim).collect();
            (
                fields[c].parse::<f64>().unwrap(),
                fields[y].parse::<u8>().unwrap(),
            )
        })
        .unzip()
}

/// (confidences, labels) of the bundled file `name`.
pub fn load(name: &str) -> (Vec<f64>, Vec<u8>) {
    csv_samples(&std::fs::read_to_string(data(name)).unwrap())
}
