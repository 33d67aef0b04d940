//! The shared library's SONAME, `libtce.so.<major>`: programs linked against it record
//! that name, so an install keeps `libtce.so.<major>.<minor>.<patch>` with the symlinks
//! `libtce.so.<major>` (what the loader looks up) and `libtce.so` (what `-ltce` finds).
//! Only for ELF targets; elsewhere the linker's defaults stay.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let elf = matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly" | "illumos"
    );
    if elf {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("set by cargo");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libtce.so.{major}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
