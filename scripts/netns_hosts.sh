#!/usr/bin/env bash
# Hosts for a multi-host rehearsal on one machine: each host is a network
# namespace with one address in 198.18.0.0/24 (the benchmarking range, RFC
# 2544, never routed), joined to the others by a bridge that lives in a
# namespace of its own. No host has a default route or any link to this
# machine's interfaces, so no packet leaves the rehearsal. Every host
# resolves every other by the name a TFJob's pods use,
# pstrain-<host>.pstrain.svc ("pstrain-ps-1.pstrain.svc"), from its own
# /etc/hosts (iproute2 mounts /etc/netns/<namespace>/hosts there for every
# command run by `ip netns exec`).
#
# Links are shaped with tc's token bucket filter (tbf), in both directions;
# this kernel has no netem, so there is no delay emulation.
#
# Usage (as root; namespaces are named <prefix>-<host>):
#   scripts/netns_hosts.sh up PREFIX [--rate RATE] HOST...
#       Creates the hosts (names of letters, digits and '-', at most 13
#       characters: chief-0 ps-0 worker-1 client). RATE: a tc rate such as
#       1gbit, 10gbit or 500mbit; default unshaped. Leftovers of an earlier
#       rehearsal with the same prefix are removed first.
#   scripts/netns_hosts.sh down PREFIX
#       Kills every process left in the hosts and removes them.
#   scripts/netns_hosts.sh exec PREFIX HOST COMMAND...
#       Runs COMMAND on HOST (in its namespace, with its /etc/hosts).
#   scripts/netns_hosts.sh cut PREFIX HOST     Takes HOST's link down.
#   scripts/netns_hosts.sh mend PREFIX HOST    Brings it back up.
#   scripts/netns_hosts.sh shape PREFIX RATE|none   Reshapes every link.
#   scripts/netns_hosts.sh list PREFIX         Prints "HOST ADDRESS NAME" lines.
#   scripts/netns_hosts.sh run PREFIX [--rate RATE] HOST... -- HOST COMMAND...
#       `up`, then COMMAND on the HOST after "--" (with PSTRAIN_HOSTS_SCRIPT
#       and PSTRAIN_HOSTS_PREFIX set, to cut, mend or shape), then `down`
#       however it ends (Ctrl-C and SIGTERM too). Exits as COMMAND does.
#       tests/multi_host_test.sh and bench/cluster/links_bench.sh run so.
set -euo pipefail

die() {
  echo "netns_hosts.sh: $*" >&2
  exit 2
}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
}

readonly kSubnet="198.18.0"
readonly kDomain="pstrain.svc"

# The namespace holding the bridge, and HOST's namespace.
switch_of() { echo "$1-switch"; }
namespace_of() { echo "$1-$2"; }
# The bridge's end of HOST's link (interface names have 15 characters).
port_of() { echo "h-$1"; }
dns_name_of() { echo "pstrain-$1.$kDomain"; }
# What `up` wrote for `down`, `list` and the others: not under /etc/netns,
# whose every file `ip netns exec` mounts over /etc.
state_dir_of() { echo "/run/pstrain-rehearsal/$1"; }

require_root() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces and tc); run it with sudo"
  command -v ip >/dev/null || die "needs ip and tc from Debian's iproute2 (apt-get install iproute2)"
  command -v tc >/dev/null || die "needs tc from Debian's iproute2 (apt-get install iproute2)"
}

check_prefix() {
  [[ "$1" =~ ^[a-z][a-z0-9]{0,11}$ ]] ||
    die "prefix '$1' must be a lower-case letter and at most 11 more letters or digits"
}

# The hosts of a rehearsal, in the order they were made (the order of their
# addresses), from the list written at `up`.
hosts_of() {
  local list="$(state_dir_of "$1")/hosts.list"
  [ -f "$list" ] || die "no rehearsal named '$1' is up (no $list)"
  cat "$list"
}

# "1gbit" -> bits per second.
rate_bits() {
  local rate="$1" number unit
  [[ "$rate" =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] ||
    die "rate '$rate' is not a number with bit, kbit, mbit or gbit (1gbit, 500mbit)"
  number="${BASH_REMATCH[1]}"
  unit="${BASH_REMATCH[2]}"
  case "$unit" in
    bit) echo "$number" ;;
    kbit) echo $((number * 1000)) ;;
    mbit) echo $((number * 1000000)) ;;
    gbit) echo $((number * 1000000000)) ;;
  esac
}

# Shapes the egress of `dev` in namespace `ns` to `rate` ("none": unshaped).
# The bucket holds 10 ms at the rate (at least 64 KiB, a GSO segment), so
# the timer's granularity does not cap the rate below what is asked.
shape_link() {
  local ns="$1" dev="$2" rate="$3"
  tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null || true
  [ "$rate" = none ] && return 0
  local burst=$(($(rate_bits "$rate") / 8 / 100))
  [ "$burst" -ge 65536 ] || burst=65536
  tc -n "$ns" qdisc add dev "$dev" root tbf rate "$rate" burst "$burst" latency 100ms
}

cmd_down() {
  local prefix="$1" ns
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^$prefix-" || true); do
    # Processes first: a namespace with processes in it outlives `ip netns del`.
    ip netns pids "$ns" 2>/dev/null | xargs -r kill -9 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "/etc/netns/$ns"
  done
  rm -rf "$(state_dir_of "$prefix")"
}

cmd_up() {
  local prefix="$1"
  shift
  local rate=none
  local hosts=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --rate) rate="${2:?--rate needs a value}"; shift 2 ;;
      *) hosts+=("$1"); shift ;;
    esac
  done
  [ "${#hosts[@]}" -ge 1 ] || die "up: name at least one host"
  [ "${#hosts[@]}" -le 250 ] || die "up: at most 250 hosts"
  [ "$rate" = none ] || rate_bits "$rate" >/dev/null
  local host
  for host in "${hosts[@]}"; do
    [[ "$host" =~ ^[a-z][a-z0-9-]{0,12}$ ]] ||
      die "host '$host' must be a lower-case letter and at most 12 more letters, digits or '-'"
  done
  [ "$(printf '%s\n' "${hosts[@]}" | sort | uniq -d)" = "" ] || die "up: a host is named twice"

  cmd_down "$prefix"
  local switch
  switch="$(switch_of "$prefix")"
  ip netns add "$switch"
  ip -n "$switch" link add br0 type bridge
  ip -n "$switch" link set br0 up
  local state
  state="$(state_dir_of "$prefix")"
  mkdir -p "$state"

  local hosts_file="$state/hosts"
  echo "127.0.0.1 localhost" >"$hosts_file"
  local i=0
  for host in "${hosts[@]}"; do
    i=$((i + 1))
    echo "$kSubnet.$i $(dns_name_of "$host") pstrain-$host" >>"$hosts_file"
  done
  printf '%s\n' "${hosts[@]}" >"$state/hosts.list"

  i=0
  for host in "${hosts[@]}"; do
    i=$((i + 1))
    local ns port
    ns="$(namespace_of "$prefix" "$host")"
    port="$(port_of "$host")"
    ip netns add "$ns"
    mkdir -p "/etc/netns/$ns"
    cp "$hosts_file" "/etc/netns/$ns/hosts"
    ip -n "$switch" link add "$port" type veth peer name eth0 netns "$ns"
    ip -n "$switch" link set "$port" master br0 up
    ip -n "$ns" addr add "$kSubnet.$i/24" dev eth0
    ip -n "$ns" link set lo up
    ip -n "$ns" link set eth0 up
    shape_link "$switch" "$port" "$rate"
    shape_link "$ns" eth0 "$rate"
    # The rehearsal's promise: nothing routes off the bridge.
    if [ -n "$(ip -n "$ns" route show default)" ]; then
      die "host $host has a default route; refusing to go on"
    fi
  done
}

cmd_link() {
  local prefix="$1" host="$2" state="$3"
  hosts_of "$prefix" | grep -qx "$host" || die "no host '$host' in rehearsal '$prefix'"
  ip -n "$(switch_of "$prefix")" link set "$(port_of "$host")" "$state"
}

cmd_shape() {
  local prefix="$1" rate="$2" host
  [ "$rate" = none ] || rate_bits "$rate" >/dev/null
  for host in $(hosts_of "$prefix"); do
    shape_link "$(switch_of "$prefix")" "$(port_of "$host")" "$rate"
    shape_link "$(namespace_of "$prefix" "$host")" eth0 "$rate"
  done
}

cmd_list() {
  local prefix="$1" host i=0
  for host in $(hosts_of "$prefix"); do
    i=$((i + 1))
    echo "$host $kSubnet.$i $(dns_name_of "$host")"
  done
}

cmd_run() {
  local prefix="$1"
  shift
  local up_args=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    up_args+=("$1")
    shift
  done
  [ $# -ge 3 ] || die "run: after the hosts give -- HOST COMMAND (see --help)"
  shift
  local host="$1"
  shift
  printf '%s\n' "${up_args[@]}" | grep -qx -- "$host" ||
    die "run: '$host' after -- is not one of the hosts given"
  local self
  self="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
  # Expanded now: the function's locals are gone when the trap runs.
  trap "cmd_down $prefix" EXIT
  trap 'exit 143' TERM
  trap 'exit 130' INT
  cmd_up "$prefix" "${up_args[@]}"
  # In the background, so that a signal runs the traps at once.
  PSTRAIN_HOSTS_SCRIPT="$self" PSTRAIN_HOSTS_PREFIX="$prefix" \
    ip netns exec "$(namespace_of "$prefix" "$host")" "$@" &
  wait $!
}

main() {
  [ $# -ge 1 ] || { usage >&2; exit 2; }
  local command="$1"
  shift
  case "$command" in
    -h|--help|help) usage; exit 0 ;;
  esac
  [ $# -ge 1 ] || die "$command: name the rehearsal's prefix (see --help)"
  local prefix="$1"
  shift
  check_prefix "$prefix"
  require_root
  case "$command" in
    up) cmd_up "$prefix" "$@" ;;
    down) [ $# -eq 0 ] || die "down takes only the prefix"; cmd_down "$prefix" ;;
    exec)
      [ $# -ge 2 ] || die "exec: name a host and a command"
      hosts_of "$prefix" | grep -qx "$1" || die "no host '$1' in rehearsal '$prefix'"
      local ns
      ns="$(namespace_of "$prefix" "$1")"
      shift
      exec ip netns exec "$ns" "$@"
      ;;
    cut) [ $# -eq 1 ] || die "cut: name one host"; cmd_link "$prefix" "$1" down ;;
    mend) [ $# -eq 1 ] || die "mend: name one host"; cmd_link "$prefix" "$1" up ;;
    shape) [ $# -eq 1 ] || die "shape: give one rate or none"; cmd_shape "$prefix" "$1" ;;
    list) [ $# -eq 0 ] || die "list takes only the prefix"; cmd_list "$prefix" ;;
    run) cmd_run "$prefix" "$@" ;;
    *) die "unknown command '$command' (up, down, exec, cut, mend, shape, list, run; see --help)" ;;
  esac
}

main "$@"
