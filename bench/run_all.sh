#!/usr/bin/env bash
# Builds pstrain optimised, runs every benchmark and rewrites
# bench/RESULTS.md: the machine, then each benchmark's section (what it
# measures, the command that reproduces it, its figures beside a reference
# measured in the same run, its targets met or not, the load average).
# The soak (scripts/soak.sh, 10 minutes and more) is not part of it.
#
# Usage: bench/run_all.sh [--only NAME[,NAME...]] [--list]
#   --only   run only these benchmarks and print their sections; RESULTS.md
#            is rewritten by a full run alone, so it never mixes two runs
#   --list   print the benchmarks' names and commands
#
# A full run takes about 35 minutes on 2 cores. Run it on a quiet machine:
# every figure is a ratio to a reference measured in the same run, but a
# busy machine still lowers the ratios where two processes share the cores.
set -euo pipefail
cd "$(dirname "$0")/.."

names=()
commands=()
benchmark() {
  names+=("$1")
  commands+=("$2")
}
# Each command gets --report=FILE appended: its section of RESULTS.md.
benchmark wire "bazel-bin/bench/ps/push_pull_bench"
benchmark cluster "bazel-bin/bench/cluster/cluster_bench --svg=bench/step_breakdown.svg --backup_svg=bench/backup_workers.svg"
benchmark sparse "bazel-bin/bench/sparse/sparse_cluster_bench"
# Needs root: it makes network namespaces and shapes their links.
benchmark links "bazel-bin/bench/cluster/links_bench"
benchmark sparse_shard "bazel-bin/bench/ps/sparse_bench"
benchmark apply "bazel-bin/bench/ps/apply_bench"
benchmark training "bazel-bin/bench/compute/training_benchmark"
benchmark layers "bazel-bin/bench/compute/layer_benchmark"
benchmark readers "bazel-bin/bench/data/reader_bench"
# Hundreds to 10,000 light workers against a real coordinator and shard.
benchmark sim "bazel-bin/bench/sim/sim_bench"

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only="${2:-}"; shift 2 || { echo "bench/run_all.sh: --only needs a name" >&2; exit 2; } ;;
    --only=*) only="${1#--only=}"; shift ;;
    --list)
      for i in "${!names[@]}"; do printf '%-13s %s\n' "${names[$i]}" "${commands[$i]}"; done
      exit 0 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "bench/run_all.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

selected=()
if [ -n "$only" ]; then
  IFS=',' read -r -a wanted <<< "$only"
  for want in "${wanted[@]}"; do
    found=""
    for i in "${!names[@]}"; do [ "${names[$i]}" = "$want" ] && found="$i"; done
    if [ -z "$found" ]; then
      echo "bench/run_all.sh: no benchmark named '$want'; there are: ${names[*]}" >&2
      exit 2
    fi
    selected+=("$found")
  done
else
  selected=("${!names[@]}")
fi

if ! command -v bazel >/dev/null; then
  echo "bench/run_all.sh: bazel is not installed; run scripts/setup.sh first" >&2
  exit 2
fi
echo "bench/run_all.sh: building optimised (-c opt) ..." >&2
bazel build -c opt --noshow_progress //bench/... //client:pstrain //server/... //worker/... \
  //evaluator/... >&2
# The optimised outputs, wherever the bazel-bin link points after other builds.
bin="$(bazel info -c opt bazel-bin 2>/dev/null)"

run_dir="$(mktemp -d "${TMPDIR:-/tmp}/pstrain-bench.XXXXXX")"
trap 'rm -rf "$run_dir"' EXIT
started=$(date +%s)
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
failed=0
durations=()
for i in "${selected[@]}"; do
  name="${names[$i]}"
  echo "bench/run_all.sh: [$name] ${commands[$i]}" >&2
  t0=$(date +%s)
  set +e
  # The benchmark's progress goes to the terminal and to its log.
  eval "${bin}/${commands[$i]#bazel-bin/} --report=$run_dir/$name.md" \
    2> >(tee "$run_dir/$name.log" >&2) >&2
  code=$?
  set -e
  durations[$i]=$(( $(date +%s) - t0 ))
  if [ $code -ne 0 ] || [ ! -s "$run_dir/$name.md" ]; then
    failed=$((failed + 1))
    {
      echo "## $name: failed"
      echo
      echo "\`${commands[$i]}\` exited with status $code after ${durations[$i]} s. The last lines it printed:"
      echo
      tail -n 20 "$run_dir/$name.log" | sed 's/^/    /'
      echo
    } >> "$run_dir/$name.md"
    echo "bench/run_all.sh: [$name] FAILED (exit $code)" >&2
  fi
done

machine() {
  local cpu cores memory
  cpu="$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)"
  cores="$(nproc)"
  memory="$(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
  local simd=""
  grep -qw avx2 /proc/cpuinfo && simd="AVX2"
  grep -qw fma /proc/cpuinfo && simd="$simd + FMA"
  grep -qw avx512f /proc/cpuinfo && simd="$simd + AVX-512"
  local commit
  commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  if [ -n "$(git status --porcelain --untracked-files=no -- . ':!bench/RESULTS.md' ':!bench/*.svg' 2>/dev/null)" ]; then
    commit="$commit with uncommitted changes"
  fi
  local os
  os="$(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  local versions
  versions="$(dpkg-query -W -f='${Package} ${Version}, ' libgrpc++-dev libprotobuf-dev libdnnl-dev \
    2>/dev/null | sed 's/, $//')"
  echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit $commit"
  echo "- CPU: $cpu, $cores cores ($simd); memory $memory"
  echo "- System: $os, Linux $(uname -r), $(g++ --version | head -1)"
  echo "- Libraries: $versions"
  echo "- Build: \`bazel build -c opt\` (-O2, no -march: the binaries run on any x86-64)"
}

render() {
  echo "# Benchmark results"
  echo
  echo "Written by \`bench/run_all.sh\`, which rebuilds optimised, runs every benchmark"
  echo "below and rewrites this file; do not edit it by hand. Earlier measurements and"
  echo "the investigations behind them are in [HISTORY.md](HISTORY.md); the soak runs in"
  echo "[soak/](soak/)."
  echo
  echo "## Machine"
  echo
  machine
  echo "- Load average before the run: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- Run time: $(( ($(date +%s) - started) / 60 )) min $(( ($(date +%s) - started) % 60 )) s"
  echo
  echo "Every figure is given beside a reference measured in the same run (raw"
  echo "loopback TCP, memcpy, the single-process trainer): the machine may be shared,"
  echo "and absolute figures move with its load."
  echo
  echo "## Targets"
  echo
  for i in "${selected[@]}"; do
    # Not every benchmark states a target: no match is not an error.
    { grep -h '^Target: ' "$run_dir/${names[$i]}.md" || true; } | sed "s/^Target: /- ${names[$i]}: /"
  done
  echo
  echo "| benchmark | command | seconds |"
  echo "|---|---|---|"
  for i in "${selected[@]}"; do
    echo "| ${names[$i]} | \`${commands[$i]}\` | ${durations[$i]} |"
  done
  echo
  for i in "${selected[@]}"; do
    # A benchmark that echoes its command line names the temporary report
    # file too; the reader's command has no --report.
    sed "s# --report=$run_dir/[a-z_]*\.md##" "$run_dir/${names[$i]}.md"
    echo
  done
}
if [ -n "$only" ]; then
  render
else
  render > bench/RESULTS.md
  echo "bench/run_all.sh: wrote bench/RESULTS.md" >&2
fi
echo "bench/run_all.sh: ${#selected[@]} benchmarks, $failed failed" >&2
[ $failed -eq 0 ]
