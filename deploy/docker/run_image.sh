#!/usr/bin/env bash
# Runs the dev overlay's cluster (deploy/k8s/overlays/dev) from the image
# with podman on this host, trains an example job on it with the image's
# `pstrain`, and takes the cluster down again. See --help.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: deploy/docker/run_image.sh [--image NAME:TAG] [--job FILE] [--base-port N]
                                  [--timeout SECS] [--keep] [--runtime NAME]

Runs what deploy/k8s/overlays/dev runs, as podman containers of the image
on the host's network: the coordinator, one parameter server, one worker
and the evaluator, with the manifests' arguments, user (the image's),
read-only root filesystem, no capabilities and a shared folder as the
model_dir volume. Then, with `pstrain` from the same image, it submits an
example job from the image's /etc/pstrain/jobs, follows it until it ends,
prints its status, and asks the cluster to shut down. The containers and
the temporary folder are removed at the end, also when the job fails or
the script is interrupted.

Every daemon listens on 127.0.0.1 only, on ports picked from --base-port
up that nothing listens on (gRPC, health, metrics for each; printed).

Options:
  --image NAME:TAG  the image (default: pstrain:dev, as build_image.sh tags it)
  --job FILE        a job spec in the image's /etc/pstrain/jobs (default:
                    clicks_logistic.pbtxt, synthetic data, a few seconds;
                    the model_dir volume starts empty, so a job that reads
                    data files from it fails at submit)
  --base-port N     the first port to try (default: 7070)
  --timeout SECS    how long the job may take before the run fails (default: 600)
  --keep            keep the model_dir folder (checkpoints, exports, the
                    coordinator's journal) and print where it is
  --runtime NAME    the OCI runtime podman uses (default: runc; Debian 12's
                    crun refuses hosts whose cgroup v2 hierarchy holds
                    controllers beside cgroup v1's)
  -h, --help        this text

Needs root and podman with the runtime (scripts/setup.sh --image installs
them). Exit code 0 when the job SUCCEEDED, 1 otherwise; the daemons' last
log lines are printed when something fails.
EOF
}

die() {
  echo "run_image: $*" >&2
  exit 1
}

# Microseconds since the epoch, for step durations.
now_us() { echo "${EPOCHREALTIME/./}"; }

# Prints the seconds since START_US with one decimal.
elapsed() {
  local tenths=$((($(now_us) - $1) / 100000))
  printf '%d.%d s' $((tenths / 10)) $((tenths % 10))
}

image="pstrain:dev"
job="clicks_logistic.pbtxt"
base_port=7070
timeout_secs=600
keep=false
runtime=runc
while [[ $# -gt 0 ]]; do
  case $1 in
    -h | --help)
      usage
      exit 0
      ;;
    --keep)
      keep=true
      shift
      ;;
    --image | --job | --base-port | --timeout | --runtime)
      [[ $# -ge 2 && -n $2 ]] || die "$1 needs a value (see --help)"
      case $1 in
        --image) image=$2 ;;
        --job) job=$2 ;;
        --base-port) base_port=$2 ;;
        --timeout) timeout_secs=$2 ;;
        --runtime) runtime=$2 ;;
      esac
      shift 2
      ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
[[ $base_port =~ ^[0-9]+$ && $base_port -ge 1024 && $base_port -le 65000 ]] ||
  die "--base-port wants a port from 1024 to 65000, got '$base_port'"
[[ $timeout_secs =~ ^[0-9]+$ && $timeout_secs -gt 0 ]] ||
  die "--timeout wants a number of seconds, got '$timeout_secs'"
[[ $job =~ ^[A-Za-z0-9._-]+$ ]] || die "--job wants a file name in /etc/pstrain/jobs, got '$job'"

[[ $(id -u) -eq 0 ]] || die "needs root (podman's root store, the model_dir's owner): sudo $0"
command -v podman >/dev/null ||
  die "podman not found: install podman, runc and mmdebstrap with scripts/setup.sh --image"
command -v "$runtime" >/dev/null ||
  die "the OCI runtime $runtime is not installed: scripts/setup.sh --image, or choose another with --runtime"

podman=(podman --runtime="$runtime")
"${podman[@]}" image exists "$image" ||
  die "no image $image in podman's store: build it with deploy/docker/build_image.sh"
user=$("${podman[@]}" image inspect --format '{{.Config.User}}' "$image")
[[ $user =~ ^[0-9]+:[0-9]+$ ]] || die "$image runs as '$user', not as a numeric uid:gid"

# shellcheck source=deploy/docker/podman_limits.sh
source "$(dirname "$0")/podman_limits.sh"
run_options=(--pull=never --network=host
  --ulimit "nofile=$podman_nofile:$podman_nofile" --ulimit "nproc=$podman_nproc:$podman_nproc")

# The TCP ports something listens on, one per line.
listening_ports() {
  local file address state
  for file in /proc/net/tcp /proc/net/tcp6; do
    [[ -r $file ]] || continue
    # "  0: 0100007F:1B9E 00000000:0000 0A ...": local address, remote, state
    while read -r _ address _ state _; do
      if [[ $state == 0A ]]; then echo $((16#${address##*:})); fi
    done < <(tail -n +2 "$file")
  done
}

declare -A taken=()
for port in $(listening_ports); do taken[$port]=1; done
roles=(coordinator ps-0 worker-0 evaluator)
ports=()
for ((port = base_port; ${#ports[@]} < 3 * ${#roles[@]}; port++)); do
  [[ $port -le 65535 ]] || die "not enough free ports from $base_port up"
  [[ -n ${taken[$port]:-} ]] || ports+=("$port")
done
declare -A grpc=() health=() metrics=()
for i in "${!roles[@]}"; do
  grpc[${roles[i]}]=${ports[3 * i]}
  health[${roles[i]}]=${ports[3 * i + 1]}
  metrics[${roles[i]}]=${ports[3 * i + 2]}
done
readonly coordinator="127.0.0.1:${grpc[coordinator]}"

work=$(mktemp -d "${TMPDIR:-/tmp}/pstrain-run.XXXXXX")
readonly model_dir="$work/model_dir" ready_dir="$work/ready"
mkdir "$model_dir" "$ready_dir"
# The pods' fsGroup: the volume belongs to the image's user.
chown "$user" "$model_dir" "$ready_dir"

# Every container of this run carries the label, the clients' too: an
# interrupted `podman run --rm` leaves its container behind.
readonly name_prefix="pstrain-run-$$"
run_options+=(--label "io.pstrain.run=$name_prefix")
containers=()
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  if [[ $status -ne 0 && ${#containers[@]} -gt 0 ]]; then print_logs; fi
  mapfile -t leftovers < <("${podman[@]}" ps --all --quiet --filter "label=io.pstrain.run=$name_prefix")
  if [[ ${#leftovers[@]} -gt 0 ]]; then
    "${podman[@]}" rm --force --ignore --time 10 "${leftovers[@]}" >/dev/null 2>&1 || true
  fi
  if $keep; then
    echo "run_image: model_dir kept in $model_dir"
  else
    rm -rf --one-file-system "$work"
  fi
  exit "$status"
}
print_logs() {
  local container
  for container in "${containers[@]}"; do
    echo "---- ${container#"$name_prefix"-}: last log lines" >&2
    "${podman[@]}" logs --tail 15 "$container" >&2 2>&1 || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Starts daemon ROLE as a container: the binary and the dev overlay's
# arguments, with loopback ports, as its manifest in deploy/k8s/base runs it.
start_daemon() {
  local role=$1 binary=$2 model_dir_mount=$3
  shift 3
  local container="$name_prefix-$role"
  containers+=("$container")
  "${podman[@]}" run --detach --name "$container" "${run_options[@]}" \
    --read-only --cap-drop=ALL --security-opt=no-new-privileges \
    --volume "$model_dir_mount" --volume "$ready_dir:/run/pstrain" \
    "$image" "$binary" \
    --listen="127.0.0.1:${grpc[$role]}" \
    --health_listen="127.0.0.1:${health[$role]}" \
    --metrics_listen="127.0.0.1:${metrics[$role]}" \
    --ready_file="/run/pstrain/$role" "$@" >/dev/null ||
    die "podman could not start the $role container (its error above; --help tells of --runtime)"
  printf 'run_image: %-11s gRPC %s, health %s, metrics http://127.0.0.1:%s/metrics\n' \
    "$role" "${grpc[$role]}" "${health[$role]}" "${metrics[$role]}"
}

# Runs `pstrain ARGS` from the image against the coordinator.
pstrain() {
  "${podman[@]}" run --rm "${run_options[@]}" "$image" pstrain "$@" --coordinator_address="$coordinator"
}

echo "run_image: $image, the dev overlay's cluster on 127.0.0.1, model_dir $model_dir"
start=$(now_us)
start_daemon coordinator pstrain-coordinator "$model_dir:/var/lib/pstrain" \
  --checkpoint_root=/var/lib/pstrain --num_ps=1 --shutdown_grace_secs=60
start_daemon ps-0 pstrain-ps "$model_dir:/var/lib/pstrain" \
  --coordinator_address="$coordinator" --task_index=0 \
  --ps_addresses="127.0.0.1:${grpc[ps-0]}" --checkpoint_root=/var/lib/pstrain \
  --shutdown_grace_secs=60
# Workers only read the volume (training data).
start_daemon worker-0 pstrain-worker "$model_dir:/var/lib/pstrain:ro" \
  --coordinator_address="$coordinator" --task_index=0
start_daemon evaluator pstrain-evaluator "$model_dir:/var/lib/pstrain" \
  --coordinator_address="$coordinator"

# Each daemon writes its ready file once it serves.
deadline=$((SECONDS + 60))
for role in "${roles[@]}"; do
  until [[ -s $ready_dir/$role ]]; do
    state=$("${podman[@]}" inspect --format '{{.State.Status}}' "$name_prefix-$role")
    [[ $state == running ]] || die "$role is $state before serving (logs below)"
    [[ $SECONDS -lt $deadline ]] || die "$role does not serve after 60 s (logs below)"
    sleep 0.2
  done
done
echo "run_image: 4 daemons serving: $(elapsed "$start")"

start=$(now_us)
submitted=$(pstrain submit "/etc/pstrain/jobs/$job") ||
  die "pstrain submit /etc/pstrain/jobs/$job failed (its message above)"
head -n 1 <<<"$submitted"
# "submitted job clicks-logistic-1 to 127.0.0.1:7070"
job_id=$(sed -n 's/^submitted job \([^ ]*\) to .*/\1/p' <<<"$submitted")
[[ -n $job_id ]] || die "no job id in the output of pstrain submit"
watch_status=0
pstrain watch "$job_id" --no-progress --watch_timeout_secs="$timeout_secs" || watch_status=$?
echo "run_image: job $job_id ended: $(elapsed "$start")"
status=$(pstrain status "$job_id") || true
echo "$status"
grep -Eq '^state +SUCCEEDED$' <<<"$status" ||
  die "job $job_id did not succeed (pstrain watch exit code $watch_status)"
[[ $watch_status -eq 0 ]] || die "pstrain watch exit code $watch_status for a job that SUCCEEDED"

# The daemons exit by themselves after a shutdown; each must exit 0.
start=$(now_us)
pstrain shutdown >/dev/null
timeout 90 "${podman[@]}" wait "${containers[@]}" >/dev/null ||
  die "the cluster did not shut down within 90 s"
for container in "${containers[@]}"; do
  code=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$container")
  [[ $code -eq 0 ]] || die "${container#"$name_prefix"-} exited with code $code after the shutdown"
done
echo "run_image: cluster shut down, every daemon exited 0: $(elapsed "$start")"
echo "run_image: job $job_id SUCCEEDED"
