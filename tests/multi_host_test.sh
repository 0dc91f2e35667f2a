#!/usr/bin/env bash
# Runs tests/multi_host_test.cc on hosts of its own: makes seven hosts with
# scripts/netns_hosts.sh (chief-0, ps-0, ps-1, worker-0, worker-1,
# evaluator-0 and client) over links shaped to 1 Gbit/s, runs the test
# binary on `client`, and removes the hosts and every process on them when
# it ends, fails or is interrupted (Bazel's timeout sends SIGTERM).
# Needs root, for network namespaces and tc.
set -euo pipefail

runfiles="${TEST_SRCDIR:-$0.runfiles}/${TEST_WORKSPACE:-pstrain}"
hosts="$runfiles/scripts/netns_hosts.sh"
binary="$runfiles/tests/multi_host_test_binary"
prefix="mh$$"

cleanup() { "$hosts" down "$prefix" || true; }
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

"$hosts" up "$prefix" --rate 1gbit chief-0 ps-0 ps-1 worker-0 worker-1 evaluator-0 client
export PSTRAIN_HOSTS_SCRIPT="$hosts" PSTRAIN_HOSTS_PREFIX="$prefix" RUNFILES_DIR="${TEST_SRCDIR:-$0.runfiles}"
# In the background, so that a signal runs the trap at once.
"$hosts" exec "$prefix" client "$binary" "$@" &
wait $!
