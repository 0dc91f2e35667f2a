#!/usr/bin/env bash
# Installs what is needed, then builds everything once with clang-14 and its
# thread-safety analysis as errors (.bazelrc's `thread_safety` config) and
# runs every test from that build.
# Usage: scripts/test.sh [extra bazel test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
# Two jobs: the end-to-end tests start several processes each, and CI has
# two cores. A lock annotation violated anywhere fails the build, before any
# test runs.
exec bazel test --config=thread_safety --jobs=2 --local_test_jobs=2 //... "$@"
