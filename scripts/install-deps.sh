#!/usr/bin/env bash
# Installs Argus's build and test dependencies from Debian 12's packages, plus any package
# named as an argument (scripts/fuzz.sh adds clang this way).
# Idempotent: packages already present are skipped, so a warm machine pays nothing.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build
  librocksdb-dev                 # storage engine
  capnproto libcapnp-dev         # wire schema compiler and runtime
  libxxhash-dev                  # signatures and chunk checksums
  libzstd-dev                    # record and chunk compression
  libboost-dev libboost-system-dev  # Asio (ingest) and Beast (HTTP)
  libcli11-dev                   # command lines
  doctest-dev                    # unit tests
  nlohmann-json3-dev             # JSON in the CLI and tests
  zlib1g-dev                     # gzipped traces (argus import)
  libjemalloc-dev                # argusd's and the CLI's allocator
  python3                        # the stack sampler's tests run CPython (3.11 on Debian 12)
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=""
[ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo_cmd apt-get update -qq
$sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
