#!/usr/bin/env bash
# The cluster over shaped links (bench/cluster/links_bench.cc): makes six
# hosts with scripts/netns_hosts.sh (chief-0, ps-0, worker-0, worker-1,
# evaluator-0 and client), runs links_bench on `client` with the arguments
# given (see its --help), and removes the hosts when it ends, fails or is
# interrupted. Needs root, for network namespaces and tc.
#
#   bazel build -c opt //bench/cluster:links_bench
#   sudo bazel-bin/bench/cluster/links_bench --report=links.md
set -euo pipefail

runfiles="${RUNFILES_DIR:-$0.runfiles}/pstrain"
hosts="$runfiles/scripts/netns_hosts.sh"
binary="$runfiles/bench/cluster/links_bench_binary"
prefix="lb$$"

cleanup() { "$hosts" down "$prefix" || true; }
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

"$hosts" up "$prefix" chief-0 ps-0 worker-0 worker-1 evaluator-0 client
# In the background, so that a signal runs the trap at once.
RUNFILES_DIR="${RUNFILES_DIR:-$0.runfiles}" "$hosts" exec "$prefix" client "$binary" \
  --hosts_script="$hosts" --hosts_prefix="$prefix" "$@" &
wait $!
