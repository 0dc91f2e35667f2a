#!/usr/bin/env bash
# Runs the dev overlay (deploy/k8s/overlays/dev), and the TFJob `pstrain k8s`
# writes, as pods with `podman kube play`, from the image
# deploy/docker/build_image.sh builds, and trains through both. See --help.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: tests/k8s_podman_test.sh    (bazel test //tests:k8s_podman_test)

Runs the Kubernetes dev overlay, then one training run as `pstrain k8s`
writes it (a Kubeflow TFJob), as real pods on this host with podman:

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
     on its health port 7071 with SERVING, for the server ("", the
     liveness probe's) and for the service "readiness" (the readiness
     probe's: a member while the coordinator answers its heartbeats);
     podman 4.3 runs no gRPC probes: the test sends them itself, from the
     host, to each pod's IP;
  5. submits /etc/pstrain/jobs/clicks_logistic.pbtxt with the image's
     `pstrain` in the coordinator's container and checks it SUCCEEDED;
  6. submits a longer copy of it, kills the worker's process while the job
     trains, checks that podman's restart policy (Always) starts it again
     and that the job still SUCCEEDED;
  7. takes the dev overlay's pods and volumes down;
  8. one-shot TFJob: writes `pstrain k8s` of a longer copy of
     deploy/k8s/shared/jobs/clicks_logistic.pbtxt (2 parameter servers,
     2 workers, the evaluator) with the test's `pstrain`, renders it with
     deploy/k8s/shared (the claim) and converts the TFJob into one pod per
     replica with the operator's names, labels and TF_CONFIG; plays them,
     waits until every daemon's readiness is SERVING, then until every
     container exits by itself (the chief runs the job and ends the
     cluster): each with exit code 0 and no restart, the chief's log with
     "one-shot: job clicks-logistic-1 SUCCEEDED", and the job's final
     checkpoint (ckpt-N with its MANIFEST) on the claim's volume;
  9. takes everything down (pods, volumes, network, image), also when a
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

# kube play has no --ulimit: the limits podman can give go into a
# containers.conf of the test's own.
# shellcheck source=deploy/docker/podman_limits.sh
source "$runfiles/deploy/docker/podman_limits.sh"
cat >"$work/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$podman_nofile:$podman_nofile", "nproc=$podman_nproc:$podman_nproc"]
EOF
export CONTAINERS_CONF="$work/containers.conf"
# runc: Debian 12's crun refuses hosts whose cgroup v2 hierarchy holds
# controllers beside cgroup v1's (see deploy/README.md).
podman=(podman --runtime runc --cgroup-manager cgroupfs)

# What the test made, for the cleanup: the converted folders played, pod
# ids, volumes, the network and the image once they exist.
played=()
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

# Takes down the pods played so far and the volumes the test added.
take_down() {
  local dir file volume
  for dir in "${played[@]}"; do
    while IFS=$'\t' read -r file _; do
      "${podman[@]}" kube down "$dir/$file" >/dev/null 2>&1 || true
    done <"$dir/plan.tsv"
  done
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
  played=()
  pods=()
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ $status -ne 0 && ${#pods[@]} -gt 0 ]]; then print_logs; fi
  local start
  start=$(now_us)
  take_down
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

# Converts the rendered manifests RENDERED into the folder DIR.
convert() {
  "$python" "$runfiles/tests/k8s_podman_convert.py" "$1" "$2" --image "pstrain=$tag" ||
    die "tests/k8s_podman_convert.py $1 failed"
  echo "    $(grep -c '^kind:' "$1") objects rendered; pod files, components and network aliases:"
  indent <"$2/plan.tsv"
}

# Pod ids by the workload name of their file (NN-NAME.yaml) and by their
# component label; the latter only where a component has one pod.
declare -A pod_of=()

# Plays the converted folder DIR on the network: its claims, then each pod
# with the aliases its Services give it (a Pod's network options apply to
# all the pods of a file, hence one file per pod).
play() {
  local dir=$1 claim file component aliases network_option output pod name
  for claim in $("$python" -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    print(d["metadata"]["name"])' "$dir/volumes.yaml"); do
    if "${podman[@]}" volume exists "$claim"; then
      die "a podman volume $claim exists already, which the claim would reuse: remove it (podman volume rm $claim)"
    fi
  done
  played+=("$dir")
  "${podman[@]}" kube play --network "$network" "$dir/volumes.yaml" >/dev/null
  while IFS=$'\t' read -r file component aliases; do
    network_option=$network
    if [[ -n $aliases ]]; then network_option+=":alias=${aliases//,/,alias=}"; fi
    output=$("${podman[@]}" kube play --network "$network_option" "$dir/$file" 2>&1) ||
      die "podman kube play $file failed: $output"
    pod=$(awk '/^Pod:$/ { getline; print; exit }' <<<"$output")
    [[ -n $pod ]] || die "no pod id in the output of podman kube play $file: $output"
    pods+=("$pod")
    pod_of[$component]=$pod
    name=${file#*-}
    pod_of[${name%.yaml}]=$pod
    echo "    $file: pod $("${podman[@]}" pod inspect --format '{{.Name}}' "$pod"), aliases ${aliases:-(none)}"
  done <"$dir/plan.tsv"
}

# The main container of the pod of COMPONENT or workload NAME.
container_of() {
  "${podman[@]}" ps --all --filter "pod=${pod_of[$1]}" --format '{{.Names}} {{.IsInfra}}' |
    awk '$2 == "false" { print $1; exit }'
}

# ---- the dev overlay's manifests
start=$(now_us)
# kustomize refuses files that are links out of the tree: render a copy.
cp -rL "$runfiles/deploy/k8s" "$work/k8s"
kubectl kustomize "$work/k8s/overlays/dev" >"$work/dev.yaml" ||
  die "kubectl kustomize deploy/k8s/overlays/dev failed"
convert "$work/dev.yaml" "$work/dev"
step_done "render and convert the dev overlay" "$start"

# ---- the pods
start=$(now_us)
if [[ -n $("${podman[@]}" pod ps --quiet --filter label=app.kubernetes.io/part-of=pstrain) ]]; then
  die "pods of pstrain run already on this host (podman pod ps): take them down first"
fi
volumes_before=$("${podman[@]}" volume ls --quiet; echo "(none)")
made_network=true
"${podman[@]}" network create "$network" >/dev/null
play "$work/dev"
step_done "play ${#pods[@]} pods on network $network" "$start"

# The pod's IP address on the test's network.
pod_ip() {
  local infra
  infra=$("${podman[@]}" pod inspect --format '{{.InfraContainerID}}' "${pod_of[$1]}")
  "${podman[@]}" inspect --format "{{(index .NetworkSettings.Networks \"$network\").IPAddress}}" "$infra"
}

# grpc.health.v1.Health/Check of each ADDRESS for SERVICE ("": the server
# as a whole, what the liveness probes ask; "readiness": what the readiness
# probes ask), every 0.2 s until each answered SERVING once or TIMEOUT
# seconds passed. Prints a line per address: when it was SERVING, or its
# last answer (NOT_SERVING, ... or the gRPC error); fails unless all were.
# The messages are built by hand (HealthCheckRequest's field 1 is the
# service name, the response's field 1 the status) so that no generated
# code is needed.
health_wait() {
  "$python" - "$@" <<'EOF'
import sys
import time

import grpc

names = {0: "UNKNOWN", 1: "SERVING", 2: "NOT_SERVING", 3: "SERVICE_UNKNOWN"}
timeout, service, addresses = float(sys.argv[1]), sys.argv[2].encode(), sys.argv[3:]
request = bytes([0x0A, len(service)]) + service if service else b""
channels = {address: grpc.insecure_channel(address) for address in addresses}
last = {address: "no answer" for address in addresses}
serving = {}
start = time.monotonic()
while True:
    for address in addresses:
        if address in serving:
            continue
        try:
            response = channels[address].unary_unary("/grpc.health.v1.Health/Check")(
                request, timeout=2)
            status = response[1] if len(response) >= 2 and response[0] == 0x08 else 0
            last[address] = names.get(status, f"status {status}")
            if status == 1:
                serving[address] = time.monotonic() - start
        except grpc.RpcError as error:
            last[address] = f"{error.code().name}: {error.details()}"
    if len(serving) == len(addresses) or time.monotonic() - start >= timeout:
        break
    time.sleep(0.2)
for address in addresses:
    print(f"{address} SERVING after {serving[address]:.1f} s" if address in serving
          else f"{address} {last[address]} after {time.monotonic() - start:.1f} s")
sys.exit(0 if len(serving) == len(addresses) else 1)
EOF
}

# Waits until the daemons of the pods of NAMES are SERVING for SERVICE;
# fails after TIMEOUT seconds.
wait_serving() {
  local timeout=$1 service=$2 name addresses=() answers
  shift 2
  for name in "$@"; do addresses+=("$(pod_ip "$name"):7071"); done
  answers=$(health_wait "$timeout" "$service" "${addresses[@]}") || {
    indent <<<"$answers"
    die "not every daemon is SERVING for the health service \"$service\" after $timeout s"
  }
  indent <<<"$answers"
}

mapfile -t components < <(cut -f2 "$work/dev/plan.tsv")

start=$(now_us)
# Alive (the process serves), then ready (the coordinator answers each
# member's heartbeats).
wait_serving 120 "" "${components[@]}"
wait_serving 60 readiness "${components[@]}"
step_done "every pod running, live and ready on its health port" "$start"

# ---- what podman made of the manifests
start=$(now_us)
for component in "${components[@]}"; do
  container=$(container_of "$component")
  printf '    %-11s %s %s: %s\n' "$component" "$container" "$(pod_ip "$component")" \
    "$("${podman[@]}" inspect --format 'user {{.Config.User}}, restart {{.HostConfig.RestartPolicy.Name}}, read-only root {{.HostConfig.ReadonlyRootfs}}, memory limit {{.HostConfig.Memory}}, cpu quota {{.HostConfig.CpuQuota}}/{{.HostConfig.CpuPeriod}}, healthcheck {{if .Config.Healthcheck}}{{.Config.Healthcheck.Test}}{{else}}none{{end}}, stop timeout {{.Config.StopTimeout}} s, volumes{{range .Mounts}} {{.Name}}:{{.Destination}}{{end}}' "$container")"
  printf '    %-11s health %s: server %s, readiness %s\n' "$component" "$(pod_ip "$component"):7071" \
    "$(health_wait 0 "" "$(pod_ip "$component"):7071" | cut -d' ' -f2-)" \
    "$(health_wait 0 readiness "$(pod_ip "$component"):7071" | cut -d' ' -f2-)"
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

start=$(now_us)
take_down
step_done "take the dev overlay's pods and volumes down" "$start"

# ---- one run as `pstrain k8s` writes it: a TFJob, played as the operator would
start=$(now_us)
# Long enough (some 20 s) for every member to be seen ready before the
# chief ends the cluster: at 1500 steps the margin was down to 9 s on a busy
# machine. The name, and so the TFJob's and the job's, stays clicks-logistic.
readonly oneshot_steps=3000
readonly tfjob=clicks-logistic
readonly model_claim=pstrain-model-dir
sed "s/max_steps: 300/max_steps: $oneshot_steps/" "$work/k8s/shared/jobs/clicks_logistic.pbtxt" \
  >"$work/clicks_logistic.pbtxt"
grep -q "max_steps: $oneshot_steps" "$work/clicks_logistic.pbtxt" ||
  die "deploy/k8s/shared/jobs/clicks_logistic.pbtxt has no 'max_steps: 300' to raise"
"$runfiles/client/pstrain" k8s "$work/clicks_logistic.pbtxt" --ps=2 --workers=2 --image="$tag" \
  --namespace=pstrain-tfjob >"$work/tfjob-run.yaml" 2>"$work/pstrain-k8s.log" || {
  cat "$work/pstrain-k8s.log"
  die "pstrain k8s failed"
}
indent <"$work/pstrain-k8s.log"
# The claim and the ServiceAccount the TFJob's pods need are deploy/k8s/shared's.
{
  kubectl kustomize "$work/k8s/shared" || die "kubectl kustomize deploy/k8s/shared failed"
  echo "---"
  cat "$work/tfjob-run.yaml"
} >"$work/tfjob.yaml"
convert "$work/tfjob.yaml" "$work/tfjob"
step_done "pstrain k8s (max_steps $oneshot_steps), render with deploy/k8s/shared and convert" "$start"

start=$(now_us)
play "$work/tfjob"
mapfile -t tfjob_pods < <(cut -f1 "$work/tfjob/plan.tsv" | sed 's/^[0-9]*-//; s/\.yaml$//')
chief=$(container_of "$tfjob-chief-0")
[[ -n $chief ]] || die "no pod $tfjob-chief-0 among ${tfjob_pods[*]}"
echo "    $chief: restart $("${podman[@]}" inspect --format '{{.HostConfig.RestartPolicy.Name}}' "$chief"), $("${podman[@]}" inspect --format '{{range .Config.Env}}{{println .}}{{end}}' "$chief" | grep '^TF_CONFIG=')"
step_done "play ${#tfjob_pods[@]} pods of TFJob $tfjob" "$start"

start=$(now_us)
# Ready = a member of the chief's cluster; seen before the job ends it.
wait_serving 120 readiness "${tfjob_pods[@]}"
step_done "every daemon of the TFJob ready" "$start"

# Waits until every container of the TFJob has exited by itself; fails at
# once on a non-zero exit code or a restart, and after TIMEOUT seconds.
wait_all_exited() {
  local timeout=$1 deadline=$((SECONDS + $1)) name state status code restarts running
  while true; do
    running=()
    for name in "${tfjob_pods[@]}"; do
      state=$("${podman[@]}" inspect --format '{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}}' \
        "$(container_of "$name")")
      read -r status code restarts <<<"$state"
      [[ $restarts -eq 0 ]] || die "$name's container was restarted (state, exit code, restarts: $state)"
      if [[ $status != exited ]]; then
        running+=("$name")
      elif [[ $code -ne 0 ]]; then
        die "$name's container exited with code $code"
      fi
    done
    [[ ${#running[@]} -gt 0 ]] || return 0
    [[ $SECONDS -lt $deadline ]] || die "still running after $timeout s: ${running[*]}"
    sleep 0.5
  done
}

start=$(now_us)
wait_all_exited 300
step_done "every container of the TFJob exited 0 by itself" "$start"

start=$(now_us)
# OnFailure must leave a container that exited 0 alone: give podman the
# moment it takes to restart one before looking.
sleep 2
for name in "${tfjob_pods[@]}"; do
  container=$(container_of "$name")
  state=$("${podman[@]}" inspect --format '{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}} {{.HostConfig.RestartPolicy.Name}}' "$container")
  read -r status code restarts policy <<<"$state"
  printf '    %-28s %s, exit code %s, %s restarts, restart policy %s\n' "$container" "$status" "$code" "$restarts" "$policy"
  [[ $status == exited && $code -eq 0 && $restarts -eq 0 ]] ||
    die "$container: $status, exit code $code, $restarts restarts"
done
"${podman[@]}" logs "$chief" >"$work/chief.log" 2>&1
# What `kubectl logs` of the chief would show: the one-shot lines, and of
# the progress (a checkpoint and its evaluation every 100 steps) the last.
echo "    podman logs $chief: $(grep -c ': saved ' "$work/chief.log") checkpoints saved, $(grep -c 'evaluated ckpt-' "$work/chief.log") evaluated; the one-shot lines and the last progress:"
grep -E 'one-shot: |: saved |evaluated ckpt-' "$work/chief.log" | sed 's/^[^]]*] //' |
  awk '/one-shot: / || NR > count - 4' count="$(grep -Ec 'one-shot: |: saved |evaluated ckpt-' "$work/chief.log")" |
  indent
grep -q "one-shot: job $tfjob-1 SUCCEEDED" "$work/chief.log" ||
  die "the chief's log has no 'one-shot: job $tfjob-1 SUCCEEDED'"
grep -Eq "job $tfjob-1: saved " "$work/chief.log" || die "the chief's log has no checkpoint line"
# The final checkpoint, on the claim's volume (a folder on this host).
volume_dir=$("${podman[@]}" volume inspect --format '{{.Mountpoint}}' "$model_claim")/$tfjob
final=$(find "$volume_dir" -maxdepth 1 -name 'ckpt-*' -printf '%f\n' | sed 's/^ckpt-//' | grep -E '^[0-9]+$' |
  sort -n | tail -n 1)
[[ -n $final && $final -ge $oneshot_steps ]] ||
  die "no checkpoint at step $oneshot_steps or later in the volume $model_claim: $(find "$volume_dir" -mindepth 1 -maxdepth 1 -printf '%f ' 2>&1)"
[[ -f $volume_dir/ckpt-$final/MANIFEST ]] || die "ckpt-$final in the volume $model_claim has no MANIFEST"
echo "    volume $model_claim: $tfjob/ckpt-$final with $(find "$volume_dir/ckpt-$final" -type f | wc -l) files, MANIFEST among them"
step_done "no restarts; the chief's log and the final checkpoint" "$start"

echo "k8s_podman_test: PASSED"
