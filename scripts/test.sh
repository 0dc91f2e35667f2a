#!/usr/bin/env bash
# Installs what is needed, checks the lock annotations with clang, builds
# everything once, and runs every test.
# Usage: scripts/test.sh [extra bazel test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
# Clang's thread-safety analysis checks every lock annotation; a violation
# fails here, before the tests.
scripts/check_thread_safety.sh
# Two jobs: the end-to-end tests start several processes each, and CI has
# two cores.
exec bazel test --jobs=2 --local_test_jobs=2 //... "$@"
