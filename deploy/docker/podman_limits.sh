# shellcheck shell=bash
# Sourced by run_image.sh and tests/k8s_podman_test.sh: the limits on open
# files and processes that podman's containers can be given on this host.
#
# By default podman asks for 1048576 open files and processes, more than a
# host without CAP_SYS_RESOURCE (one that is itself a container) can grant:
# the runtime then fails with "setrlimit `RLIMIT_NOFILE`: Operation not
# permitted" (runc: "error setting rlimit type 7"). The containers get what
# podman itself runs with: the hard limit on open files, and at most 32768
# processes (podman lowers its own limit to that; the host's hard limit on
# processes can be refused: "error setting rlimit type 6").

# Prints the hard limit `ulimit -H FLAG` reports, at most MAX.
podman_hard_limit() {
  local limit
  limit=$(ulimit -H "$1")
  if [[ $limit == unlimited || $limit -gt $2 ]]; then limit=$2; fi
  echo "$limit"
}

podman_nofile=$(podman_hard_limit -n 1048576)
podman_nproc=$(podman_hard_limit -u 32768)
export podman_nofile podman_nproc
