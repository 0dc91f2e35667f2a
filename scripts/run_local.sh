#!/usr/bin/env bash
# Installs what is needed, builds pstrain optimised, and runs the main job on
# a local cluster (coordinator, parameter server, worker, evaluator as real
# processes on loopback).
# Usage: scripts/run_local.sh [pstrain local flags, see `pstrain --help`]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
echo "Building pstrain (first build takes a few minutes)..."
bazel build -c opt --noshow_progress //client:pstrain
exec bazel-bin/client/pstrain local "$@"
