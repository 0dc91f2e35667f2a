#!/usr/bin/env bash
# Runs client_test.py with Debian's Python (the one python3-grpcio and
# python3-protobuf install into), the built package on its path and the
# pstrain binaries in the test's runfiles.
set -euo pipefail
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
export PYTHONPATH="${runfiles}/python/lib"
export PSTRAIN_BINARY="${runfiles}/client/pstrain"
# `pstrain local` finds the daemons in these runfiles.
export RUNFILES_DIR="${TEST_SRCDIR}"
# -P: not the script's own folder first, which holds the unbuilt sources.
exec /usr/bin/python3 -P "$1" -v
