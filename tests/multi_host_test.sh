#!/usr/bin/env bash
# Runs tests/multi_host_test.cc on hosts of its own: scripts/netns_hosts.sh
# makes nine hosts (chief-0, ps-0 .. ps-3, worker-0, worker-1, evaluator-0
# and client) over links shaped to 1 Gbit/s, runs the test binary on
# `client`, and removes the hosts and every process on them when it ends,
# fails or is interrupted (Bazel's timeout sends SIGTERM).
# Needs root, for network namespaces and tc.
set -euo pipefail

if [[ "$(id -u)" -ne 0 ]]; then
  reason="multi_host_test needs root: network namespaces and tc (scripts/netns_hosts.sh)"
  if [[ "${CI:-}" == true ]]; then
    echo "$reason (CI runs every test, so this fails)" >&2
    exit 1
  fi
  echo "skipped: $reason" >&2
  exit 0
fi

runfiles="${TEST_SRCDIR:-$0.runfiles}"
exec "$runfiles/pstrain/scripts/netns_hosts.sh" run "mh$$" --rate 1gbit \
  chief-0 ps-0 ps-1 ps-2 ps-3 worker-0 worker-1 evaluator-0 client -- \
  client env RUNFILES_DIR="$runfiles" "$runfiles/pstrain/tests/multi_host_test_binary" "$@"
