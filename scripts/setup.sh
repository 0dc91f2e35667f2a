#!/usr/bin/env bash
# Installs every Debian package pstrain needs to build, test and run, and
# the npm packages of tests/onnx (ONNX Runtime for the ONNX tests) and
# tests/console (Playwright, driving Chromium for the console's tests).
# Idempotent and non-interactive; prints nothing unless something fails.
# Run as root or with sudo available (a fresh Debian 12 machine needs no more).
#
# Usage: scripts/setup.sh [--image]
#   --image  also install what deploy/docker/build_image.sh and run_image.sh
#            use to build the image from Debian's packages and run it
#            without a registry: mmdebstrap, podman and the runc runtime,
#            catatonit (the pause process of the pods `podman kube play`
#            makes, tests/k8s_podman_test.sh) and python3-yaml (that test's
#            manifest conversion).
set -euo pipefail

PACKAGES=(
  # Build (clang-14 checks the thread-safety annotations)
  bazel-bootstrap g++ clang-14 pkg-config
  # Libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libeigen3-dev libdnnl-dev libgoogle-glog-dev libgflags-dev
  prometheus-cpp-dev zlib1g-dev libonnx-dev
  # Tests and benchmarks
  libgtest-dev libgmock-dev libbenchmark-dev
  # Real data and real peers; hosts in network namespaces, links shaped
  # with tc (scripts/netns_hosts.sh)
  dataset-fashion-mnist prometheus iproute2
  # The Python client (python/): its runtime, and pandas for its DataFrames
  python3-grpcio python3-protobuf python3-pandas
  python3-venv python3-pip python3-setuptools python3-wheel
)

for argument in "$@"; do
  case $argument in
    --image) PACKAGES+=(mmdebstrap podman runc catatonit python3-yaml) ;;
    *)
      echo "setup: unknown argument $argument (usage: scripts/setup.sh [--image])" >&2
      exit 2
      ;;
  esac
done

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
# Node runs the tests' npm packages: ONNX Runtime (onnxruntime-node) in
# tests/onnx, and Playwright (playwright-core) in tests/console, which drives
# Debian's Chromium through the console's pages. The machine image may
# already have a newer Node than Debian's; Debian 12's nodejs 18 works as
# well, so it is installed only when there is no node at all. A copy of this
# script outside a checkout (the image's build stage) has no tests and
# installs only the packages above.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
node_trees=()
for dir in "$root/tests/onnx" "$root/tests/console"; do
  [ -f "$dir/package.json" ] && node_trees+=("$dir")
done
if [ ${#node_trees[@]} -gt 0 ] && ! command -v node >/dev/null; then
  missing+=(nodejs npm)
fi
if [ -f "$root/tests/console/package.json" ] &&
   ! dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed"; then
  missing+=(chromium)
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "setup: need root to install: ${missing[*]}" >&2
      exit 1
    fi
    sudo="sudo"
  fi
  if ! { $sudo apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
           "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: installing ${missing[*]} failed (output above)" >&2
    exit 1
  fi
fi

# Each tree (@onnxruntime_node and @playwright_core in WORKSPACE) is
# installed again whenever its package-lock.json is newer than what npm ci
# last wrote. Install scripts are skipped: onnxruntime-node's only fetches
# GPU parts, and Playwright's would download a browser (Debian's Chromium is
# used). npm runs without sudo: the tree belongs to whoever owns the
# checkout.
for dir in "${node_trees[@]}"; do
  installed="$dir/node_modules/.package-lock.json"
  if [ -f "$installed" ] && [ ! "$dir/package-lock.json" -nt "$installed" ]; then
    continue
  fi
  if ! command -v npm >/dev/null; then
    echo "setup: node is $(command -v node) but there is no npm to install $dir/node_modules" >&2
    exit 1
  fi
  if ! (cd "$dir" &&
        ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm ci --ignore-scripts --no-audit --no-fund \
          --loglevel=error) >"$log" 2>&1; then
    cat "$log" >&2
    # A half-installed tree would look current next time; start over then.
    rm -rf "$dir/node_modules"
    echo "setup: npm ci in $dir failed (output above)" >&2
    exit 1
  fi
done
