#!/usr/bin/env bash
# Installs what is needed, builds everything once, and runs every test.
# Usage: scripts/test.sh [extra bazel test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
# Two jobs: the end-to-end tests start several processes each, and CI has
# two cores.
exec bazel test --jobs=2 --local_test_jobs=2 //... "$@"
