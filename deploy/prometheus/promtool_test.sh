#!/bin/sh
# Checks the Prometheus configuration and rules with the real promtool
# (Debian's prometheus package): the config and rule files load, and the
# alerts' unit tests pass.
set -eu
cd deploy/prometheus
if ! command -v promtool >/dev/null; then
  echo "promtool not found: install Debian's prometheus package (scripts/setup.sh does)" >&2
  exit 1
fi
promtool check config prometheus.yml
promtool check rules pstrain_recording_rules.yml pstrain_alerts.yml
promtool test rules pstrain_alerts_test.yml
