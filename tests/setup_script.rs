//! The set-up logic of `scripts/test`: `scripts/test --check` run on a machine made to lack
//! things (a PATH of symlinks with some tools left out, stand-ins for gcc and rustc that
//! fail the way a missing runtime or target does, a venv that is not there) must report
//! exactly what is missing, in its order, and change nothing (Java for pyspark included:
//! missing, or older than 17 by `java -version`).
#![cfg(unix)]

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A directory of its own under the system's temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir =
            std::env::temp_dir().join(format!("tce-setup-{name}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Where `tool` is on the real PATH.
fn which(tool: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{tool}` is not on PATH; run the suite with scripts/test"))
}

/// A PATH directory with every program of the real PATH (the first of each name) except
/// `without`.
fn stripped_path(dir: &Path, without: &[&str]) {
    for entry in std::env::split_paths(&std::env::var_os("PATH").unwrap()) {
        let Ok(read) = std::fs::read_dir(&entry) else {
            continue;
        };
        for file in read.flatten() {
            let name = file.file_name();
            let link = dir.join(&name);
            if without.iter().any(|w| name == *w) || link.symlink_metadata().is_ok() {
                continue;
            }
            symlink(file.path(), link).unwrap();
        }
    }
}

/// Replaces `name` in the PATH directory by a shell script.
fn stand_in(dir: &Path, name: &str, script: &str) {
    let path = dir.join(name);
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, format!("#!/bin/sh\n{script}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The lines `scripts/test --check` prints with this PATH and venv.
fn check(path: &Path, venv: &Path) -> Vec<String> {
    check_with(path, venv, &[])
}

/// The same, with more environment variables set.
fn check_with(path: &Path, venv: &Path, env: &[(&str, &Path)]) -> Vec<String> {
    let output = Command::new(which("bash"))
        .current_dir(root())
        .arg("scripts/test")
        .arg("--check")
        .env("PATH", path)
        .env("TCE_TEST_VENV", venv)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "scripts/test --check failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn venv_lines(venv: &Path) -> Vec<String> {
    let v = venv.display();
    vec![
        format!("scripts/test: would install a Python venv ({v}) because the venv {v} is missing"),
        "scripts/test: would install the packages of scripts/requirements-test.txt into the venv \
         because the venv is new"
            .to_owned(),
    ]
}

/// What the real machine lacks besides the venv (nothing when run by scripts/test, which
/// installed it all first; else whatever this machine lacks, which every stripped run
/// must report too).
fn baseline(real_path: &Path, venv: &Path) -> Vec<String> {
    let full = check(real_path, venv);
    let expected_venv = venv_lines(venv);
    assert!(
        full.ends_with(&expected_venv),
        "a missing venv is reported last: {full:#?}"
    );
    let rest = full[..full.len() - expected_venv.len()].to_vec();
    if std::env::var_os("TCE_TEST_PYTHON").is_some() {
        assert!(
            rest.is_empty(),
            "scripts/test left things missing: {rest:#?}"
        );
    }
    rest
}

/// `got` holds every line of `base` and, apart from them, exactly `extra` in order.
fn assert_reports(got: &[String], base: &[String], extra: &[String]) {
    for line in base {
        assert!(got.contains(line), "{line:?} missing from {got:#?}");
    }
    let rest: Vec<&String> = got.iter().filter(|l| !base.contains(l)).collect();
    let extra: Vec<&String> = extra.iter().collect();
    assert_eq!(rest, extra);
}

#[test]
fn check_reports_exactly_what_is_missing() {
    let tmp = TempDir::new("check");
    let venv = tmp.0.join("venv");
    let real_path = std::env::var_os("PATH").unwrap();
    let base = baseline(Path::new(&real_path), &venv);

    // No valgrind, cmake, pkg-config, setarch, chromium, promtool, QEMU, ARM
    // cross-compiler; a gcc that cannot link TSan; a toolchain without the bare-metal target.
    let bin = tmp.0.join("bin");
    std::fs::create_dir(&bin).unwrap();
    stripped_path(
        &bin,
        &[
            "valgrind",
            "cmake",
            "pkg-config",
            "setarch",
            "chromium",
            "promtool",
            "qemu-system-arm",
            "arm-none-eabi-gcc",
        ],
    );
    let gcc = which("gcc");
    stand_in(
        &bin,
        "gcc",
        &format!(
            "for a in \"$@\"; do [ \"$a\" = -fsanitize=thread ] && exit 1; done\nexec {} \"$@\"\n",
            gcc.display()
        ),
    );
    let empty_sysroot = tmp.0.join("sysroot");
    std::fs::create_dir(&empty_sysroot).unwrap();
    stand_in(
        &bin,
        "rustc",
        &format!(
            "[ \"$1 $2\" = '--print sysroot' ] && {{ echo {}; exit 0; }}\nexec {} \"$@\"\n",
            empty_sysroot.display(),
            which("rustc").display()
        ),
    );
    let major = String::from_utf8(
        Command::new(&gcc)
            .arg("-dumpversion")
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let major = major.trim().split('.').next().unwrap().to_owned();
    let mut expected: Vec<String> = [
        "valgrind (apt) because `valgrind` is missing",
        "pkg-config (apt) because `pkg-config` is missing",
        "cmake (apt) because `cmake` is missing",
        "util-linux (apt) because `setarch` is missing",
        "chromium (apt) because `chromium` is missing",
        "prometheus (apt) because `promtool` is missing",
        "qemu-system-arm (apt) because `qemu-system-arm` is missing",
        "gcc-arm-none-eabi (apt) because `arm-none-eabi-gcc` is missing",
        "libnewlib-arm-none-eabi (apt) because `arm-none-eabi-gcc` is missing, and it comes \
         without newlib",
    ]
    .iter()
    .map(|s| format!("scripts/test: would install {s}"))
    .collect();
    expected.push(format!(
        "scripts/test: would install libgcc-{major}-dev (apt) because gcc cannot link a \
         -fsanitize=thread program"
    ));
    expected.push(
        "scripts/test: would install thumbv7em-none-eabihf (rustup target) because the Rust \
         target thumbv7em-none-eabihf is missing"
            .to_owned(),
    );
    expected.extend(venv_lines(&venv));
    assert_reports(&check(&bin, &venv), &base, &expected);
    assert!(!venv.exists(), "--check created the venv");

    // No compilers and no python3: the sanitizers are not asked (gcc brings them), nor
    // is python3 about venvs.
    let bin2 = tmp.0.join("bin2");
    std::fs::create_dir(&bin2).unwrap();
    stripped_path(&bin2, &["gcc", "g++", "python3"]);
    let mut expected: Vec<String> = ["gcc", "g++", "python3"]
        .iter()
        .map(|t| format!("scripts/test: would install {t} (apt) because `{t}` is missing"))
        .collect();
    expected.extend(venv_lines(&venv));
    assert_reports(&check(&bin2, &venv), &base, &expected);

    // No java, then a Java 11: pyspark needs 17 or later (`java -version` is asked).
    let bin3 = tmp.0.join("bin3");
    std::fs::create_dir(&bin3).unwrap();
    stripped_path(&bin3, &["java"]);
    let mut expected = vec![
        "scripts/test: would install openjdk-17-jre-headless (apt) because `java` is missing"
            .to_owned(),
    ];
    expected.extend(venv_lines(&venv));
    assert_reports(&check(&bin3, &venv), &base, &expected);
    stand_in(
        &bin3,
        "java",
        "[ \"$1\" = -version ] || exit 1\n\
         echo 'openjdk version \"11.0.2\" 2019-01-15' >&2\n\
         echo 'OpenJDK Runtime Environment (build 11.0.2+9)' >&2\n",
    );
    let mut expected = vec![
        "scripts/test: would install openjdk-17-jre-headless (apt) because `java -version` \
         reports 11, and pyspark needs 17 or later"
            .to_owned(),
    ];
    expected.extend(venv_lines(&venv));
    assert_reports(&check(&bin3, &venv), &base, &expected);
    // Java 8 reports "1.8.0_392": its major version is 8, not 1.
    stand_in(&bin3, "java", "echo 'java version \"1.8.0_392\"' >&2\n");
    let mut expected = vec![
        "scripts/test: would install openjdk-17-jre-headless (apt) because `java -version` \
         reports 8, and pyspark needs 17 or later"
            .to_owned(),
    ];
    expected.extend(venv_lines(&venv));
    assert_reports(&check(&bin3, &venv), &base, &expected);
    // A Java 21 is enough.
    stand_in(
        &bin3,
        "java",
        "echo 'openjdk version \"21\" 2023-09-19' >&2\n",
    );
    assert_reports(&check(&bin3, &venv), &base, &venv_lines(&venv));

    // An ARM cross-compiler without newlib: gcc echoes a library it cannot find by name.
    let bin4 = tmp.0.join("bin4");
    std::fs::create_dir(&bin4).unwrap();
    stripped_path(&bin4, &[]);
    stand_in(
        &bin4,
        "arm-none-eabi-gcc",
        "for a in \"$@\"; do case $a in -print-file-name=*) echo \"${a#*=}\";; esac; done\n",
    );
    let mut expected = vec![
        "scripts/test: would install libnewlib-arm-none-eabi (apt) because arm-none-eabi-gcc \
         has no newlib (librdimon.a)"
            .to_owned(),
    ];
    expected.extend(venv_lines(&venv));
    assert_reports(&check(&bin4, &venv), &base, &expected);

    // The firmware's crates missing from cargo's cache (an empty CARGO_HOME): fetched.
    let cargo_home = tmp.0.join("cargo-home");
    std::fs::create_dir(&cargo_home).unwrap();
    let mut expected = vec![
        "scripts/test: would install the crates of firmware/rust/Cargo.lock (cargo fetch) \
         because crates of firmware/rust/Cargo.lock are not in cargo's cache"
            .to_owned(),
    ];
    expected.extend(venv_lines(&venv));
    let real = Path::new(&real_path);
    assert_reports(
        &check_with(real, &venv, &[("CARGO_HOME", &cargo_home)]),
        &base,
        &expected,
    );
}

#[test]
fn check_compares_the_venvs_requirements() {
    let tmp = TempDir::new("venv");
    let venv = tmp.0.join("venv");
    let real_path = std::env::var_os("PATH").unwrap();
    let base = baseline(Path::new(&real_path), &venv);

    // A venv (its python a stand-in) whose installed requirements are older.
    std::fs::create_dir_all(venv.join("bin")).unwrap();
    stand_in(&venv.join("bin"), "python", "exit 0\n");
    std::fs::write(venv.join("requirements-test.txt"), "old==1\n").unwrap();
    let stale = vec![
        "scripts/test: would install the packages of scripts/requirements-test.txt into the \
         venv because the venv's requirements differ from scripts/requirements-test.txt"
            .to_owned(),
    ];
    assert_reports(&check(Path::new(&real_path), &venv), &base, &stale);

    // Up to date: nothing to do for the venv.
    std::fs::copy(
        root().join("scripts/requirements-test.txt"),
        venv.join("requirements-test.txt"),
    )
    .unwrap();
    let got = check(Path::new(&real_path), &venv);
    if base.is_empty() {
        assert_eq!(got, ["scripts/test: nothing to install"]);
    } else {
        assert_eq!(got, base);
    }
}
