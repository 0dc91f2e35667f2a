#!/usr/bin/env bash
# Installs every Debian package pstrain needs to build, test and run, and
# the npm packages of tests/onnx (ONNX Runtime for the ONNX tests).
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
# Node runs ONNX Runtime (npm onnxruntime-node) for tests/onnx. The machine
# image may already have a newer Node than Debian's; Debian 12's nodejs 18
# works as well, so it is installed only when there is no node at all. A
# copy of this script outside a checkout (the image's build stage) has no
# tests/onnx and installs only the packages above.
onnx_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/onnx"
onnx_tests=false
[ -f "$onnx_dir/package.json" ] && onnx_tests=true
if $onnx_tests && ! command -v node >/dev/null; then
  missing+=(nodejs npm)
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

# ONNX Runtime for tests/onnx (@onnxruntime_node in WORKSPACE), reinstalled
# whenever package-lock.json is newer than it. Its install script only
# fetches GPU parts, so it is skipped. npm runs without sudo: the tree
# belongs to whoever owns the checkout.
runtime="$onnx_dir/node_modules/onnxruntime-node"
if $onnx_tests && { [ ! -d "$runtime" ] || [ "$onnx_dir/package-lock.json" -nt "$runtime" ]; }; then
  if ! command -v npm >/dev/null; then
    echo "setup: node is $(command -v node) but there is no npm to install $onnx_dir/node_modules" >&2
    exit 1
  fi
  if ! (cd "$onnx_dir" &&
        ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm ci --ignore-scripts --no-audit --no-fund \
          --loglevel=error) >"$log" 2>&1; then
    cat "$log" >&2
    # A half-installed tree would look current next time; start over then.
    rm -rf "$onnx_dir/node_modules"
    echo "setup: npm ci in $onnx_dir failed (output above)" >&2
    exit 1
  fi
fi
