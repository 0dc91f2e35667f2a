#!/usr/bin/env bash
# Builds pstrain's own code with clang-14 and its thread-safety analysis
# (-Wthread-safety as an error, .bazelrc's `thread_safety` config), so that
# every ABSL_GUARDED_BY, ABSL_EXCLUSIVE_LOCKS_REQUIRED and ABSL_LOCKS_EXCLUDED
# in the code is checked by a compiler; the gcc build ignores them.
#
# Usage: scripts/check_thread_safety.sh [extra bazel build flags]
#
# Uses its own Bazel output base (THREAD_SAFETY_OUTPUT_BASE, default
# ~/.cache/pstrain-bazel-clang), so the gcc build's cache stays as it is, and
# creates no bazel-* links. Nothing is run: compiling is the check.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v clang-14 >/dev/null; then
  echo "check_thread_safety: clang-14 is missing; run scripts/setup.sh" >&2
  exit 1
fi
readonly OUTPUT_BASE="${THREAD_SAFETY_OUTPUT_BASE:-$HOME/.cache/pstrain-bazel-clang}"

# Every top-level folder with a BUILD file, not //...: the gcc build's
# bazel-* links point into another output base, which this one would
# otherwise walk as packages.
packages=()
for dir in */; do
  dir="${dir%/}"
  [ -L "$dir" ] && continue
  if [ -n "$(find "$dir" -name BUILD.bazel -print -quit)" ]; then
    packages+=("//$dir/...")
  fi
done

echo "check_thread_safety: compiling ${packages[*]} with clang-14 -Wthread-safety" >&2
status=0
CC=clang-14 bazel --output_base="$OUTPUT_BASE" build --config=thread_safety \
  --symlink_prefix=/ "$@" -- "${packages[@]}" || status=$?
# Its Bazel server is not needed again soon: give its memory back to the
# tests that follow.
bazel --output_base="$OUTPUT_BASE" shutdown 2>/dev/null || true
if [ "$status" -ne 0 ]; then
  echo "check_thread_safety: failed (the errors above name each unguarded access)" >&2
fi
exit "$status"
