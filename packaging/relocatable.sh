#!/bin/sh
# Builds a relocatable ciq tarball from a configured and built tree: the
# install prefix (bin/, share/ciq, lib/cmake/CompileIQ) plus every shared
# library the binaries need except glibc's, in lib/ciq, found through the
# binaries' $ORIGIN/../lib/ciq run path. It runs on any x86-64 Linux with a
# glibc at least as new as the build machine's, beside a CUDA toolkit
# (README, "Installing on another machine").
#
#   packaging/relocatable.sh <build dir> <output dir>
#   -> <output dir>/ciq-<version>-linux-<arch>.tar.gz (and the unpacked folder)
set -eu
build=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")
name="ciq-$version-linux-$(uname -m)"
stage="$out/$name"
rm -rf "$stage" "$out/$name.tar.gz"
cmake --install "$build" --prefix "$stage" --strip > /dev/null
cmake --install "$build" --prefix "$stage" --component bundle > /dev/null
python3 "$(dirname "$0")/check_relocatable.py" "$stage"
tar -C "$out" -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
