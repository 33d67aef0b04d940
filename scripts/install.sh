#!/bin/sh
# Builds the C libraries of tce and installs them with the header, a pkg-config file and
# a CMake package config:
#
#   scripts/install.sh PREFIX
#
#   PREFIX/include/tce.h
#   PREFIX/lib/libtce.a, PREFIX/lib/libtce.so
#   PREFIX/lib/pkgconfig/tce.pc              pkg-config --cflags --libs tce
#   PREFIX/lib/cmake/tce/tceConfig.cmake     find_package(tce) -> tce::tce (static),
#   PREFIX/lib/cmake/tce/tceConfigVersion.cmake                  tce::tce_shared
#
# Environment: CARGO (default cargo), CARGO_TARGET_DIR (default ./target),
# TCE_FEATURES (default std,ffi).
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
features=${TCE_FEATURES:-std,ffi}

"$cargo" rustc --manifest-path "$root/Cargo.toml" --release --lib --no-default-features \
    --features "$features" --crate-type staticlib,cdylib --target-dir "$target_dir"

version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -n 1)
major=${version%%.*}
# What a Rust staticlib needs from the system on Linux (`--print native-static-libs`).
private_libs="-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc"

install -d "$prefix/include" "$prefix/lib/pkgconfig" "$prefix/lib/cmake/tce"
install -m 644 "$root/include/tce.h" "$prefix/include/tce.h"
install -m 644 "$target_dir/release/libtce.a" "$prefix/lib/libtce.a"
install -m 755 "$target_dir/release/libtce.so" "$prefix/lib/libtce.so"

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

cat > "$prefix/lib/cmake/tce/tceConfig.cmake" <<'CMAKE'
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
    IMPORTED_LOCATION "${_tce_prefix}/lib/libtce.so"
    IMPORTED_NO_SONAME TRUE
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

echo "installed tce $version into $prefix"
