#!/usr/bin/env bash
# Runs the dev overlay (deploy/k8s/overlays/dev) as pods with `podman kube
# play`, from the image deploy/docker/build_image.sh builds, and trains
# through it. See --help.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: tests/k8s_podman_test.sh    (bazel test //tests:k8s_podman_test)

Runs the Kubernetes dev overlay as real pods on this host with podman:

  1. builds the image with deploy/docker/build_image.sh from the five
     binaries of the test's runfiles, under a tag of its own;
  2. renders deploy/k8s/overlays/dev with `kubectl kustomize` and turns it
     into what `podman kube play` runs with tests/k8s_podman_convert.py
     (StatefulSets become one Pod per ordinal, Services become DNS aliases
     on a podman network, the kinds podman has no use for are dropped:
     the script says which and why);
  3. creates a podman network with DNS and plays the volumes, then each
     pod with the aliases its Services give it;
  4. waits until every pod's daemon answers grpc.health.v1.Health/Check
     on its health port 7071 with SERVING (podman 4.3 runs no gRPC
     probes: the test sends them itself, from the host, to each pod's IP);
  5. submits /etc/pstrain/jobs/clicks_logistic.pbtxt with the image's
     `pstrain` in the coordinator's container and checks it SUCCEEDED;
  6. submits a longer copy of it, kills the worker's process while the job
     trains, checks that podman's restart policy (Always) starts it again
     and that the job still SUCCEEDED;
  7. takes everything down (pods, volumes, network, image), also when a
     step fails or the test is interrupted.

Prints one line per step with its duration, and every container's last
log lines when a step fails.

Skips (exit 0, "SKIPPED: reason") when not run as root, when podman,
runc, catatonit, mmdebstrap, kubectl or Python's yaml and grpc modules
are missing (scripts/setup.sh --image installs them), or when the Debian
mirror cannot be reached to build the image.
EOF
}

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  usage
  exit 0
fi

# Bazel's test PATH leaves out the sbin folders, where runc and chroot are.
export PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
readonly python=/usr/bin/python3
readonly runfiles="${TEST_SRCDIR:-$0.runfiles}/${TEST_WORKSPACE:-pstrain}"

skip() {
  echo "SKIPPED: k8s_podman_test: $*"
  if [[ -n ${TEST_UNDECLARED_OUTPUTS_DIR:-} ]]; then
    echo "$*" >"$TEST_UNDECLARED_OUTPUTS_DIR/skipped.txt"
  fi
  exit 0
}

die() {
  echo "k8s_podman_test: FAILED: $*" >&2
  exit 1
}

# Indents what a step shows under its line.
indent() { sed 's/^/    /'; }

# Microseconds since the epoch, for step durations.
now_us() { echo "${EPOCHREALTIME/./}"; }

# Prints the seconds since START_US with one decimal.
elapsed() {
  local tenths=$((($(now_us) - $1) / 100000))
  printf '%d.%d s' $((tenths / 10)) $((tenths % 10))
}

# Prints "step NAME: S.s s" for a step that began at START_US.
step_done() { echo "k8s_podman_test: step $1: $(elapsed "$2")"; }

[[ $(id -u) -eq 0 ]] || skip "needs root (podman's root store and bridge networks, mmdebstrap's root mode)"
for tool in podman runc catatonit mmdebstrap kubectl; do
  command -v "$tool" >/dev/null || skip "$tool not found (scripts/setup.sh --image installs it)"
done
"$python" -c 'import yaml' 2>/dev/null || skip "$python has no yaml module (Debian's python3-yaml)"
"$python" -c 'import grpc' 2>/dev/null || skip "$python has no grpc module (Debian's python3-grpcio)"

test_start=$(now_us)
readonly tag="localhost/pstrain:podman-test-$$"
readonly network="pstrain-podman-test-$$"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/k8s_podman.XXXXXX")
readonly work
readonly converted="$work/converted"

# podman's default limits on open files and processes (1048576 each) are
# more than a host without CAP_SYS_RESOURCE can grant ("error setting
# rlimit type 7: operation not permitted"), and kube play has no --ulimit:
# the pods get the host's hard limit on open files, and at most 32768
# processes, the limit podman lowers itself to.
hard_limit() {
  local limit
  limit=$(ulimit -H "$1")
  if [[ $limit == unlimited || $limit -gt $2 ]]; then limit=$2; fi
  echo "$limit"
}
nofile=$(hard_limit -n 1048576)
nproc=$(hard_limit -u 32768)
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
EOF
export CONTAINERS_CONF="$work/containers.conf"
# runc: Debian 12's crun refuses hosts whose cgroup v2 hierarchy holds
# controllers beside cgroup v1's (see deploy/README.md).
podman=(podman --runtime runc --cgroup-manager cgroupfs)

# What the test made, for the cleanup: pod ids, volumes, the network and
# the image once they exist.
pods=()
volumes_before=""
made_network=false
made_image=false

# Every container of the test's pods but the infra ones, as NAME lines.
test_containers() {
  local pod
  for pod in "${pods[@]}"; do
    "${podman[@]}" ps --all --filter "pod=$pod" --format '{{.Names}} {{.IsInfra}}' |
      awk '$2 == "false" { print $1 }'
  done
}

print_logs() {
  local container
  while read -r container; do
    echo "---- $container: last log lines ($("${podman[@]}" inspect --format \
      'state {{.State.Status}}, exit code {{.State.ExitCode}}, {{.RestartCount}} restarts' \
      "$container" 2>/dev/null))" >&2
    "${podman[@]}" logs --tail 20 "$container" 2>&1 | indent >&2 || true
  done < <(test_containers)
}

cleanup() {
  local status=$? file volume
  trap - EXIT INT TERM
  if [[ $status -ne 0 && ${#pods[@]} -gt 0 ]]; then print_logs; fi
  local start
  start=$(now_us)
  if [[ -f $converted/plan.tsv ]]; then
    while IFS=$'\t' read -r file _; do
      "${podman[@]}" kube down "$converted/$file" >/dev/null 2>&1 || true
    done <"$converted/plan.tsv"
  fi
  if [[ ${#pods[@]} -gt 0 ]]; then
    "${podman[@]}" pod rm --force --ignore "${pods[@]}" >/dev/null 2>&1 || true
  fi
  # The claim's volume, and the named volumes podman 4.3 makes of
  # ConfigMap volumes, outlive `kube down`: remove what the test added.
  if [[ -n $volumes_before ]]; then
    while read -r volume; do
      grep -qxF "$volume" <<<"$volumes_before" ||
        "${podman[@]}" volume rm --force "$volume" >/dev/null 2>&1 || true
    done < <("${podman[@]}" volume ls --quiet)
  fi
  if $made_network; then "${podman[@]}" network rm --force "$network" >/dev/null 2>&1 || true; fi
  if $made_image; then "${podman[@]}" rmi --force "$tag" >/dev/null 2>&1 || true; fi
  rm -rf --one-file-system "$work"
  step_done "teardown (pods, volumes, network $network, image $tag)" "$start"
  step_done "whole test" "$test_start"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- the image
start=$(now_us)
mkdir "$work/binaries"
for binary in client/pstrain server/coordinator/pstrain-coordinator server/ps/pstrain-ps \
  worker/pstrain-worker evaluator/pstrain-evaluator; do
  [[ -x $runfiles/$binary ]] || die "$binary is not in the runfiles"
  ln -s "$(readlink -f "$runfiles/$binary")" "$work/binaries/${binary##*/}"
done
# mmdebstrap's apt downloads as user _apt, who must reach its folder:
# build_image.sh works in TMPDIR, and the test's own is private to root.
made_image=true
if ! TMPDIR=/tmp "$runfiles/deploy/docker/build_image.sh" "$work/binaries" --tag "$tag" \
  >"$work/build_image.log" 2>&1; then
  cat "$work/build_image.log"
  if grep -Eq 'Could not resolve|Temporary failure resolving|Failed to fetch|Could not connect|Unable to connect|Connection timed out|Network is unreachable' \
    "$work/build_image.log"; then
    skip "the Debian mirror cannot be reached to build the image (network; build_image.sh's output above)"
  fi
  die "deploy/docker/build_image.sh failed (its output above)"
fi
indent <"$work/build_image.log"
step_done "build the image $tag" "$start"

# ---- the manifests
start=$(now_us)
# kustomize refuses files that are links out of the tree: render a copy.
cp -rL "$runfiles/deploy/k8s" "$work/k8s"
kubectl kustomize "$work/k8s/overlays/dev" >"$work/rendered.yaml" ||
  die "kubectl kustomize deploy/k8s/overlays/dev failed"
"$python" "$runfiles/tests/k8s_podman_convert.py" "$work/rendered.yaml" "$converted" \
  --image "pstrain=$tag" || die "tests/k8s_podman_convert.py failed"
echo "    $(grep -c '^kind:' "$work/rendered.yaml") objects rendered; pod files and network aliases:"
indent <"$converted/plan.tsv"
step_done "render and convert the dev overlay" "$start"

# ---- the pods
start=$(now_us)
if [[ -n $("${podman[@]}" pod ps --quiet --filter label=app.kubernetes.io/part-of=pstrain) ]]; then
  die "pods of pstrain run already on this host (podman pod ps): take them down first"
fi
volumes_before=$("${podman[@]}" volume ls --quiet; echo "(none)")
for claim in $("$python" -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    print(d["metadata"]["name"])' "$converted/volumes.yaml"); do
  if grep -qxF "$claim" <<<"$volumes_before"; then
    die "a podman volume $claim exists already, which the claim would reuse: remove it (podman volume rm $claim)"
  fi
done
made_network=true
"${podman[@]}" network create "$network" >/dev/null
"${podman[@]}" kube play --network "$network" "$converted/volumes.yaml" >/dev/null
# Services are DNS names on the network: each pod joins it with the
# aliases its Services give it (a Pod's network options apply to all the
# pods of a file, hence one file per pod).
declare -A pod_of=()
while IFS=$'\t' read -r file component aliases; do
  network_option=$network
  if [[ -n $aliases ]]; then network_option+=":alias=${aliases//,/,alias=}"; fi
  output=$("${podman[@]}" kube play --network "$network_option" "$converted/$file" 2>&1) ||
    die "podman kube play $file failed: $output"
  pod=$(awk '/^Pod:$/ { getline; print; exit }' <<<"$output")
  [[ -n $pod ]] || die "no pod id in the output of podman kube play $file: $output"
  pods+=("$pod")
  pod_of[$component]=$pod
  echo "    $file: pod $("${podman[@]}" pod inspect --format '{{.Name}}' "$pod"), aliases ${aliases:-(none)}"
done <"$converted/plan.tsv"
step_done "play ${#pods[@]} pods on network $network" "$start"

# The main container of the pod of COMPONENT.
container_of() {
  "${podman[@]}" ps --all --filter "pod=${pod_of[$1]}" --format '{{.Names}} {{.IsInfra}}' |
    awk '$2 == "false" { print $1; exit }'
}

# The pod's IP address on the test's network.
pod_ip() {
  local infra
  infra=$("${podman[@]}" pod inspect --format '{{.InfraContainerID}}' "${pod_of[$1]}")
  "${podman[@]}" inspect --format "{{(index .NetworkSettings.Networks \"$network\").IPAddress}}" "$infra"
}

# grpc.health.v1.Health/Check of ADDRESS: prints SERVING, NOT_SERVING,
# ... or the gRPC error. The messages are built by hand (an empty
# HealthCheckRequest asks for the server as a whole; the response's field
# 1 is the status) so that no generated code is needed.
health_check() {
  "$python" - "$1" <<'EOF'
import sys
import grpc

names = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
with grpc.insecure_channel(sys.argv[1]) as channel:
    check = channel.unary_unary("/grpc.health.v1.Health/Check")
    try:
        response = check(b"", timeout=3)
    except grpc.RpcError as error:
        print(f"{error.code().name}: {error.details()}")
        sys.exit(1)
status = response[1] if len(response) >= 2 and response[0] == 0x08 else 0
print(names.get(status, f"status {status}"))
sys.exit(0 if status == 1 else 1)
EOF
}

mapfile -t components < <(cut -f2 "$converted/plan.tsv")

# Waits until every pod's main container runs and its daemon answers its
# health check with SERVING; fails after TIMEOUT seconds.
wait_serving() {
  local timeout=$1 component container state answer deadline=$((SECONDS + $1))
  for component in "${components[@]}"; do
    container=$(container_of "$component")
    while true; do
      state=$("${podman[@]}" inspect --format '{{.State.Status}}' "$container")
      if [[ $state == running ]] && answer=$(health_check "$(pod_ip "$component"):7071" 2>&1); then
        break
      fi
      [[ $SECONDS -lt $deadline ]] ||
        die "$component ($container) is not serving after $timeout s: state $state, health ${answer:-none}"
      sleep 0.5
    done
  done
}

start=$(now_us)
wait_serving 120
step_done "every pod running and SERVING on its health port" "$start"

# ---- what podman made of the manifests
start=$(now_us)
for component in "${components[@]}"; do
  container=$(container_of "$component")
  printf '    %-11s %s %s: %s\n' "$component" "$container" "$(pod_ip "$component")" \
    "$("${podman[@]}" inspect --format 'user {{.Config.User}}, restart {{.HostConfig.RestartPolicy.Name}}, read-only root {{.HostConfig.ReadonlyRootfs}}, memory limit {{.HostConfig.Memory}}, cpu quota {{.HostConfig.CpuQuota}}/{{.HostConfig.CpuPeriod}}, healthcheck {{if .Config.Healthcheck}}{{.Config.Healthcheck.Test}}{{else}}none{{end}}, stop timeout {{.Config.StopTimeout}} s, volumes{{range .Mounts}} {{.Name}}:{{.Destination}}{{end}}' "$container")"
  printf '    %-11s health %s: %s\n' "$component" "$(pod_ip "$component"):7071" \
    "$(health_check "$(pod_ip "$component"):7071")"
done
coordinator=$(container_of coordinator)
# The claim's volume must be writable by the pods' user: the coordinator
# keeps its journal there, and the check is the same for every pod.
"${podman[@]}" exec "$coordinator" sh -c 'touch /var/lib/pstrain/.write-check && rm /var/lib/pstrain/.write-check' ||
  die "the coordinator cannot write the pstrain-model-dir volume"
echo "    pstrain-model-dir: $("${podman[@]}" exec "$coordinator" stat -c '%U:%G (%u:%g) %A' /var/lib/pstrain), writable by the pods' user"
step_done "inspect the pods" "$start"

# `pstrain ARGS` in the coordinator's container, against the coordinator.
pstrain() {
  "${podman[@]}" exec "$coordinator" pstrain "$@" --coordinator_address=localhost:7070
}

# Submits the spec at PATH in the coordinator's container; prints the job id.
submit() {
  local submitted job_id
  submitted=$(pstrain submit "$1") || die "pstrain submit $1 failed: $submitted"
  job_id=$(sed -n 's/^submitted job \([^ ]*\) to .*/\1/p' <<<"$submitted")
  [[ -n $job_id ]] || die "no job id in the output of pstrain submit: $submitted"
  echo "$job_id"
}

# Follows job ID until it ends; fails unless it SUCCEEDED.
expect_success() {
  local job_id=$1 watch_status=0 status
  # Its state changes and results; not every step, checkpoint and evaluation.
  pstrain watch "$job_id" --no-progress --watch_timeout_secs=300 |
    grep -Ev '^(step|eval at|checkpoint at) ' | indent || watch_status=$?
  status=$(pstrain status "$job_id") || true
  grep -Eq '^state +SUCCEEDED$' <<<"$status" || {
    indent <<<"$status"
    die "job $job_id did not succeed (pstrain watch exit code $watch_status)"
  }
}

# ---- a job
start=$(now_us)
job_id=$(submit /etc/pstrain/jobs/clicks_logistic.pbtxt)
expect_success "$job_id"
step_done "job $job_id (clicks_logistic.pbtxt) SUCCEEDED" "$start"

# ---- a worker killed while a job trains
start=$(now_us)
worker=$(container_of worker)
old_pid=$("${podman[@]}" inspect --format '{{.State.Pid}}' "$worker")
old_restarts=$("${podman[@]}" inspect --format '{{.RestartCount}}' "$worker")
# The example job, long enough to be killed during, under names of its own
# (a job of the same model_dir would start from the first one's checkpoint).
readonly restart_steps=5000
"${podman[@]}" exec "$coordinator" sh -c "sed -e 's/max_steps: 300/max_steps: $restart_steps/' \\
  -e 's/clicks-logistic/clicks-logistic-restart/g' /etc/pstrain/jobs/clicks_logistic.pbtxt \
  >/tmp/clicks_logistic_restart.pbtxt"
job_id=$(submit /tmp/clicks_logistic_restart.pbtxt)
deadline=$((SECONDS + 60))
until [[ $(pstrain status "$job_id" | awk '$1 == "step" { print $2 + 0; exit }') -gt 0 ]]; do
  [[ $SECONDS -lt $deadline ]] || die "job $job_id trains no step within 60 s"
  sleep 0.2
done
# Outright, as a crash or the OOM killer would: `podman kill` or `stop`
# would count as the user's stop, which no restart policy undoes.
kill -KILL "$old_pid"
killed=$(now_us)
killed_at=$(pstrain status "$job_id" | awk '$1 == "step" { print $2 + 0; exit }')
echo "    killed the worker's process $old_pid at step $killed_at of $restart_steps"
[[ $killed_at -lt $restart_steps ]] || die "job $job_id ended before the worker was killed"
deadline=$((SECONDS + 60))
while true; do
  state=$("${podman[@]}" inspect --format '{{.State.Status}} {{.State.Pid}} {{.RestartCount}}' "$worker")
  read -r status pid restarts <<<"$state"
  if [[ $status == running && $pid != "$old_pid" && $restarts -gt $old_restarts ]]; then break; fi
  [[ $SECONDS -lt $deadline ]] || die "the worker was not restarted within 60 s (state, pid, restarts: $state)"
  sleep 0.2
done
echo "    podman restarted the worker: process $pid, restart count $old_restarts -> $restarts, $(elapsed "$killed") after the kill"
# The only worker: every step after the kill is the restarted one's.
expect_success "$job_id"
"${podman[@]}" logs "$coordinator" 2>&1 | grep -E 'worker/0' | tail -n 4 | indent || true
step_done "worker killed during job $job_id, restarted by podman, job SUCCEEDED" "$start"

echo "k8s_podman_test: PASSED"
