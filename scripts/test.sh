#!/usr/bin/env bash
# Installs what is needed, then builds everything once with clang-14 and its
# thread-safety analysis as errors (.bazelrc's `thread_safety` config) and
# runs every test from that build.
# Usage: scripts/test.sh [extra bazel test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
# The build takes every core. Tests run half as many at once as there are
# cores (at least two: CI has two cores and runs two), since an end-to-end
# test starts several processes of its own. A lock annotation violated
# anywhere fails the build, before any test runs.
cores="$(nproc)"
test_jobs=$((cores / 2 > 2 ? cores / 2 : 2))
exec bazel test --config=thread_safety --local_test_jobs="$test_jobs" //... "$@"
