#!/usr/bin/env bash
# Runs pstrain's libFuzzer targets (tests/fuzz) and merges the inputs that
# reach new code into the committed corpus.
#
# Usage: scripts/fuzz.sh [TARGET] [SECONDS]
#        scripts/fuzz.sh --seeds
#   TARGET   job_spec, checkpoint_reader, parameter_server, coordinator,
#            onnx_graph, tfrecord, criteo, or all (default: all, one after the other)
#   SECONDS  how long each target runs (default 600)
#   --seeds  rewrites the seed inputs made by the project's own writers
#            (tests/fuzz/make_seed_corpus.cc) and exits
#
# Needs clang-14 (scripts/setup.sh installs it; CI runs the fuzz targets'
# replay tests with gcc). Builds with its own Bazel output base, so the gcc
# build stays as it is. A crash stops
# the target:
# the input is saved under $FUZZ_OUT (default /tmp/pstrain-fuzz/<target>/)
# and the script fails; fix it, then add the input to the target's corpus
# folder as a regression input (see tests/fuzz/README.md).
set -euo pipefail
cd "$(dirname "$0")/.."

readonly TARGETS=(job_spec checkpoint_reader parameter_server coordinator onnx_graph tfrecord criteo)
readonly OUTPUT_BASE="${FUZZ_OUTPUT_BASE:-$HOME/.cache/pstrain-bazel-fuzz}"
readonly OUT="${FUZZ_OUT:-/tmp/pstrain-fuzz}"
# Inputs kept in the repository stay small.
readonly MAX_LEN=4096

if [ "${1:-}" = "--seeds" ]; then
  exec bazel run //tests/fuzz:make_seed_corpus -- "$PWD/tests/fuzz/corpus"
fi

target="${1:-all}"
seconds="${2:-600}"
if [ "$target" = "all" ]; then
  targets=("${TARGETS[@]}")
elif [[ " ${TARGETS[*]} " == *" $target "* ]]; then
  targets=("$target")
else
  echo "fuzz: unknown target '$target'; one of: ${TARGETS[*]} all" >&2
  exit 2
fi
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "fuzz: SECONDS must be a whole number, got '$seconds'" >&2
  exit 2
fi
if ! command -v clang-14 >/dev/null; then
  echo "fuzz: clang-14 is missing; install it: sudo apt-get install -y clang-14" >&2
  exit 1
fi

bazel_fuzz() {
  CC=clang-14 bazel --output_base="$OUTPUT_BASE" "$1" --config=fuzz "${@:2}"
}

labels=()
for t in "${targets[@]}"; do labels+=("//tests/fuzz:${t}_fuzzer"); done
bazel_fuzz build --symlink_prefix=/ "${labels[@]}"
bin="$(bazel_fuzz info bazel-bin 2>/dev/null)/tests/fuzz"

for t in "${targets[@]}"; do
  corpus="tests/fuzz/corpus/$t"
  work="$OUT/$t/corpus"
  mkdir -p "$work" "$OUT/$t/artifacts"
  # Regression inputs of bugs not fixed yet (*.crash) would stop the run.
  find "$corpus" -maxdepth 1 -type f ! -name '*.crash' -exec cp -t "$work" {} +
  # The request-handler targets cover so much code that libFuzzer's
  # entropic scheduling spent 70% of their time updating its feature
  # counts (78 inputs/s against 375 without it).
  flags=()
  case "$t" in parameter_server | coordinator) flags+=(-entropic=0) ;; esac
  echo "fuzz: $t for ${seconds}s (log: $OUT/$t/fuzz.log)"
  status=0
  "$bin/${t}_fuzzer" "${flags[@]}" -max_total_time="$seconds" -max_len="$MAX_LEN" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$OUT/$t/artifacts/" \
    "$work" >"$OUT/$t/fuzz.log" 2>&1 || status=$?
  grep -aE '^#[0-9]+[[:space:]]+DONE|^stat::' "$OUT/$t/fuzz.log" || tail -n 5 "$OUT/$t/fuzz.log"
  if [ "$status" -ne 0 ]; then
    echo "fuzz: $t failed (exit $status); the input is in $OUT/$t/artifacts/:" >&2
    ls "$OUT/$t/artifacts/" >&2
    grep -m 20 -E 'ERROR|Check failed|runtime error|SUMMARY' "$OUT/$t/fuzz.log" >&2 || true
    exit 1
  fi
  # Only inputs that reach code (edges; hit counts left out, which would
  # keep three times as many) the committed corpus does not.
  before=$(find "$corpus" -type f | wc -l)
  "$bin/${t}_fuzzer" "${flags[@]}" -merge=1 -use_counters=0 -max_len="$MAX_LEN" \
    "$corpus" "$work" >"$OUT/$t/merge.log" 2>&1
  after=$(find "$corpus" -type f | wc -l)
  echo "fuzz: $t: $((after - before)) new inputs merged into $corpus"
done
