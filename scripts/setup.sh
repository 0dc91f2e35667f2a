#!/usr/bin/env bash
# Installs every Debian package pstrain needs to build, test and run.
# Idempotent and non-interactive; prints nothing unless something fails.
# Run as root or with sudo available (a fresh Debian 12 machine needs no more).
set -euo pipefail

PACKAGES=(
  # Build (clang-14 checks the thread-safety annotations)
  bazel-bootstrap g++ clang-14 pkg-config
  # Libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libeigen3-dev libdnnl-dev libgoogle-glog-dev libgflags-dev
  prometheus-cpp-dev zlib1g-dev
  # Tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # Real data and real peers
  dataset-fashion-mnist prometheus
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null; then
    echo "setup: need root to install: ${missing[*]}" >&2
    exit 1
  fi
  sudo="sudo"
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { $sudo apt-get update -qq &&
       DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
         "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup: installing ${missing[*]} failed (output above)" >&2
  exit 1
fi
