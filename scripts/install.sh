#!/bin/sh
# Builds the C libraries of tce (the workspace member capi/, profile `dist`: optimised,
# without debug info) and installs them with the header, a pkg-config file and a CMake
# package config:
#
#   scripts/install.sh PREFIX
#
#   PREFIX/include/tce.h
#   PREFIX/lib/libtce.a                      (debug sections stripped)
#   PREFIX/lib/libtce.so.X.Y.Z               SONAME libtce.so.X (capi/build.rs), with the
#   PREFIX/lib/libtce.so.X -> libtce.so.X.Y.Z   symlinks the loader and `-ltce` look up
#   PREFIX/lib/libtce.so -> libtce.so.X
#   PREFIX/lib/pkgconfig/tce.pc              pkg-config --cflags --libs tce
#   PREFIX/lib/cmake/tce/tceConfig.cmake     find_package(tce) -> tce::tce (static),
#   PREFIX/lib/cmake/tce/tceConfigVersion.cmake                  tce::tce_shared
#
# Outside the loader's default paths, a program linked against libtce.so needs
# `-Wl,-rpath,PREFIX/lib` (or LD_LIBRARY_PATH=PREFIX/lib when it runs).
#
# Environment: CARGO (default cargo), CARGO_TARGET_DIR (default ./target), TCE_PROFILE
# (default dist; `release` keeps line tables), STRIP (default strip).
set -eu

if [ $# -ne 1 ]; then
    echo "usage: $0 PREFIX" >&2
    exit 2
fi
mkdir -p "$1"
prefix=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
cargo=${CARGO:-cargo}
target_dir=${CARGO_TARGET_DIR:-$root/target}
profile=${TCE_PROFILE:-dist}
strip=${STRIP:-strip}
for tool in readelf "$strip"; do
    command -v "$tool" >/dev/null || { echo "$0: $tool (binutils) is needed" >&2; exit 1; }
done

# The build also prints what the static library needs from the system
# (`--print native-static-libs`; cargo replays the note when the build is up to date).
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$cargo" rustc --manifest-path "$root/Cargo.toml" -p tce-capi --profile "$profile" \
    --target-dir "$target_dir" -- --print native-static-libs 2>"$log"; then
    cat "$log" >&2
    exit 1
fi
native=$(sed -n 's/.*native-static-libs: //p' "$log" | tail -n 1)
if [ -z "$native" ]; then
    cat "$log" >&2
    echo "$0: cargo printed no native-static-libs" >&2
    exit 1
fi
# For Libs.private: each library once, at its last place (a later -l serves the earlier
# ones), and without -lgcc_s: the C compiler driver adds the unwinder itself (libgcc_s
# as needed in a dynamic link, libgcc_eh with -static), and with -static an explicit
# -lgcc_s fails, as there is no libgcc_s.a.
private_libs=$(printf '%s\n' $native | grep -vx -- '-lgcc_s' |
    awk '{ seen[$0] = NR; line[NR] = $0 } END { for (i = 1; i <= NR; i++) if (seen[line[i]] == i) { printf "%s%s", sep, line[i]; sep = " " } }')

id=$("$cargo" pkgid --manifest-path "$root/Cargo.toml" -p tce-capi)
version=${id##*[#@]}
major=${version%%.*}
built="$target_dir/$profile"
soname=$(readelf -d "$built/libtce.so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [ -z "$soname" ]; then
    echo "$0: $built/libtce.so has no SONAME (capi/build.rs sets it)" >&2
    exit 1
fi

install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/tce"
install -m 644 "$root/include/tce.h" "$prefix/include/tce.h"
# The archive bundles the Rust standard library with its debug info; the profile's
# `strip` applies only to linked files (the .so).
install -m 644 "$built/libtce.a" "$prefix/lib/libtce.a"
"$strip" --strip-debug "$prefix/lib/libtce.a"
install -m 755 "$built/libtce.so" "$prefix/lib/libtce.so.$version"
# Replaces what an older install left (a plain file libtce.so included).
rm -f "$prefix/lib/$soname" "$prefix/lib/libtce.so"
ln -s "libtce.so.$version" "$prefix/lib/$soname"
ln -s "$soname" "$prefix/lib/libtce.so"

cat > "$prefix/lib/pkgconfig/tce.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: tce
Description: Calibration error estimation (Roelofs et al., AISTATS 2022)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -ltce
Libs.private: $private_libs
PC

sed -e "s/@VERSION@/$version/" -e "s/@SONAME@/$soname/" > "$prefix/lib/cmake/tce/tceConfig.cmake" <<'CMAKE'
# find_package(tce) -> imported targets tce::tce (static library) and tce::tce_shared.
get_filename_component(_tce_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
include(CMakeFindDependencyMacro)
find_dependency(Threads)
if(NOT TARGET tce::tce)
  add_library(tce::tce STATIC IMPORTED)
  set_target_properties(tce::tce PROPERTIES
    IMPORTED_LOCATION "${_tce_prefix}/lib/libtce.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_tce_prefix}/include"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m;rt;util")
endif()
if(NOT TARGET tce::tce_shared)
  add_library(tce::tce_shared SHARED IMPORTED)
  set_target_properties(tce::tce_shared PROPERTIES
    IMPORTED_LOCATION "${_tce_prefix}/lib/libtce.so.@VERSION@"
    IMPORTED_SONAME "@SONAME@"
    INTERFACE_INCLUDE_DIRECTORIES "${_tce_prefix}/include")
endif()
set(tce_INCLUDE_DIR "${_tce_prefix}/include")
unset(_tce_prefix)
CMAKE

cat > "$prefix/lib/cmake/tce/tceConfigVersion.cmake" <<CMAKE
# Compatible: the same major version (for 0.x, the same minor), not older than asked.
set(PACKAGE_VERSION "$version")
if(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(NOT PACKAGE_FIND_VERSION_MAJOR STREQUAL "$major")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif("$major" STREQUAL "0" AND NOT PACKAGE_FIND_VERSION_MINOR STREQUAL "$(echo "$version" | cut -d. -f2)")
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
CMAKE

echo "installed tce $version into $prefix ($soname; libtce.a and libtce.so built with profile $profile)"
