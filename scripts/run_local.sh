#!/usr/bin/env bash
# Installs what is needed, builds pstrain optimised, and runs the main job:
# a local cluster (coordinator, parameter server, 2 workers, evaluator as real
# processes on loopback) training an MLP on Fashion-MNIST, with progress and
# the final metrics printed. The same as
#   scripts/setup.sh && scripts/pstrain local examples/fashion_mnist_mlp.pbtxt
# Usage: scripts/run_local.sh [JOB.pbtxt] [pstrain local flags: --ps N --workers M
#        --noevaluator --run_dir DIR ..., see `pstrain local --help`]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
if [ $# -eq 0 ] || [[ "$1" == --* ]]; then
  set -- examples/fashion_mnist_mlp.pbtxt "$@"
fi
exec scripts/pstrain local "$@"
