#!/usr/bin/env bash
# The main job on the embedded default: installs what it needs, builds, and runs
# `argus demo` (a local argusd on a temporary data dir, records sent, queried back, printed).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target argus argusd
exec build/argus demo "$@"
