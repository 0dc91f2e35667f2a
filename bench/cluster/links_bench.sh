#!/usr/bin/env bash
# The cluster over shaped links (bench/cluster/links_bench.cc):
# scripts/netns_hosts.sh makes six hosts (chief-0, ps-0, worker-0, worker-1,
# evaluator-0 and client), links_bench runs on `client` with the arguments
# given (see its --help), and the hosts are removed when it ends, fails or
# is interrupted. Needs root, for network namespaces and tc.
#
#   bazel build -c opt //bench/cluster:links_bench
#   sudo bazel-bin/bench/cluster/links_bench --report=links.md
set -euo pipefail

runfiles="${RUNFILES_DIR:-$0.runfiles}"
hosts="$runfiles/pstrain/scripts/netns_hosts.sh"
prefix="lb$$"
exec "$hosts" run "$prefix" chief-0 ps-0 worker-0 worker-1 evaluator-0 client -- \
  client env RUNFILES_DIR="$runfiles" "$runfiles/pstrain/bench/cluster/links_bench_binary" \
  --hosts_script="$hosts" --hosts_prefix="$prefix" "$@"
