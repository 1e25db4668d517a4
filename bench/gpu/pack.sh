#!/usr/bin/env bash
# Packs argus, argusd and libargus_capture.so for a GPU machine that lacks Argus's build
# dependencies (docs/capture/gpu-check.md): builds the three targets, copies them into
# .gpu-pack/bin (stripped) with every shared library they load that a bare image may lack
# into .gpu-pack/lib: all that ldd lists except glibc's own libraries, libstdc++ and
# libgcc_s. RUNPATHs ($ORIGIN/../lib on the binaries, $ORIGIN on the libraries) make the
# pack find its libraries with no LD_LIBRARY_PATH, also when the CUDA driver loads the shim
# into a training process. Then checks that nothing outside that base resolves outside the
# pack and that argus and argusd start with an empty environment.
#
# Usage (repository root): bash bench/gpu/pack.sh [BUILD_DIR=build-gpu]
#   BUILD_DIR is configured (RelWithDebInfo, Ninja) when it has no CMakeCache.txt; JOBS sets
#   the build's parallelism (default 1). Installs the build dependencies and patchelf with
#   scripts/install-deps.sh when they are missing (Debian 12).
#   Then, through the device tool: run(command="bash bench/gpu/check.sh", carry=[".gpu-pack"])
# Exit codes: 0 packed, 1 a step failed (its message says which).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build-gpu}
pack=.gpu-pack
max_bytes=$((56 * 1024 * 1024))  # the device tool carries 64 MiB with the working tree

bash scripts/install-deps.sh patchelf
[ -f "$build/CMakeCache.txt" ] || cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$build" -j "${JOBS:-1}" --target argus argusd argus_capture_shared
if ! nm -D --defined-only "$build/libargus_capture.so" | grep -qw InitializeInjection; then
  echo "pack.sh: $build/libargus_capture.so has no CUPTI source (no CUDA toolkit headers at configure time)" >&2
  exit 1
fi

rm -rf "$pack"
mkdir -p "$pack/bin" "$pack/lib"
cp "$build/argus" "$build/argusd" "$build/libargus_capture.so" "$pack/bin/"
strip --strip-unneeded "$pack"/bin/*

# The base every Linux image has; everything else ldd resolves travels.
base='^(linux-vdso|ld-linux[^ ]*|libc|libm|libdl|libpthread|librt|libresolv|libstdc\+\+|libgcc_s)\.so'
ldd "$pack"/bin/* | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
  while read -r soname path; do
    if ! [[ $soname =~ $base ]]; then cp -L "$path" "$pack/lib/$soname"; fi
  done
# shellcheck disable=SC2016  # $ORIGIN is for the dynamic loader, not the shell
for f in "$pack"/bin/*; do patchelf --set-rpath '$ORIGIN/../lib' "$f"; done
# shellcheck disable=SC2016
for f in "$pack"/lib/*; do patchelf --set-rpath '$ORIGIN' "$f"; done

# Every non-base library must now resolve inside the pack.
lib_dir=$(realpath "$pack/lib")
bad=$(env -i ldd "$pack"/bin/* "$pack"/lib/* | awk '$2 == "=>" {print $1, $3}' |
  while read -r soname path; do
    if [[ $path == "not" ]] || { ! [[ $soname =~ $base ]] && [[ $(realpath "$path") != "$lib_dir/"* ]]; }; then echo "$soname => $path"; fi
  done | sort -u)
if [ -n "$bad" ]; then
  echo "pack.sh: libraries resolved outside $pack/lib:" >&2
  echo "$bad" >&2
  exit 1
fi
env -i "$pack/bin/argusd" --help >/dev/null
env -i "$pack/bin/argus" --help >/dev/null

{
  echo "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' + uncommitted changes')"
  echo "built from $build ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$build/CMakeCache.txt")) on $(date -u +%FT%TZ)"
  (cd "$pack" && ls -l bin lib)
} >"$pack/PACK.txt"
bytes=$(du -sb "$pack" | cut -f1)
echo "pack.sh: $pack: $(cd "$pack/lib" && echo *) beside the binaries, $((bytes / 1024)) KiB"
if [ "$bytes" -gt "$max_bytes" ]; then
  echo "pack.sh: $pack is over $((max_bytes / 1024 / 1024)) MiB: it would not travel with the working tree" >&2
  exit 1
fi
