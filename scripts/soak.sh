#!/usr/bin/env bash
# Soak test (not part of CI's default run): a local cluster of 1 coordinator,
# 2 parameter servers, 8 workers and an evaluator on loopback trains a
# wide-and-deep model on synthetic click logs, asynchronously, for
# --minutes (default 10), --examples records (default 100,000) read over and
# over. Its dynamic embedding tables run against a memory budget, so rows
# are admitted and evicted all along; checkpoints every minute (3 kept) and
# evaluations every 30 s run meanwhile.
#
# Every --interval_secs it samples each process's resident memory (VmRSS of
# /proc/<pid>/status) and open file descriptors (/proc/<pid>/fd). At the end
# it prints, per process, the peak RSS and fds after warm-up (the largest
# sample in [--warmup_secs, --warmup_secs + --window_secs) of training) and
# at the end (the largest in the last --window_secs of samples), the RSS
# growth in percent, and the ERROR/FATAL lines of its log. Peaks, not
# single samples: a process's RSS moves up and down with the buffers it holds
# at that moment (a batch being evaluated, a checkpoint being read, an
# epoch's order of records); a leak raises the peaks. It writes every sample
# to <out>/samples.csv, the table and the job's final status to
# <out>/summary.txt, RSS over time to <out>/rss.svg, and the job spec to
# <out>/job.pbtxt.
#
# Exits 1 when a process grew its RSS by more than --max_rss_growth_pct
# (default 5) after warm-up, holds more fds at the end than after warm-up,
# logged an ERROR or FATAL line, when the job did not end SUCCEEDED, or when
# a process did not exit cleanly.
#
# Usage: scripts/soak.sh [--minutes 10] [--warmup_secs 120] [--window_secs 60]
#          [--interval_secs 5] [--examples 100000] [--out bench/soak]
#          [--bin_dir DIR] [--run_dir DIR]
# --bin_dir: where pstrain and the four daemons are; default: build them
# optimised with Bazel ($BAZEL_STARTUP_FLAGS go before `build`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

minutes=10
warmup_secs=120
window_secs=60
interval_secs=5
examples=100000
max_rss_growth_pct=5
out="$root/bench/soak"
bin_dir=""
run_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --warmup_secs) warmup_secs="$2"; shift 2 ;;
    --window_secs) window_secs="$2"; shift 2 ;;
    --interval_secs) interval_secs="$2"; shift 2 ;;
    --examples) examples="$2"; shift 2 ;;
    --max_rss_growth_pct) max_rss_growth_pct="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --bin_dir) bin_dir="$2"; shift 2 ;;
    --run_dir) run_dir="$2"; shift 2 ;;
    -h|--help) sed -n '2,32p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scripts/soak.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
train_secs=$((minutes * 60))
if [ $((warmup_secs + 2 * window_secs)) -gt "$train_secs" ]; then
  echo "scripts/soak.sh: --warmup_secs plus two --window_secs must fit in the training" >&2
  exit 2
fi

if [ -z "$bin_dir" ]; then
  # shellcheck disable=SC2086
  (cd "$root" && bazel ${BAZEL_STARTUP_FLAGS:-} build -c opt --noshow_progress \
    //client:pstrain //server/coordinator:pstrain-coordinator //server/ps:pstrain-ps \
    //worker:pstrain-worker //evaluator:pstrain-evaluator)
  # shellcheck disable=SC2086
  bazel_bin="$(cd "$root" && bazel ${BAZEL_STARTUP_FLAGS:-} info -c opt bazel-bin 2>/dev/null)"
  mkdir -p "${TMPDIR:-/tmp}/pstrain-soak-bin"
  bin_dir="$(mktemp -d "${TMPDIR:-/tmp}/pstrain-soak-bin/XXXXXX")"
  # Copies: a build in the same output tree during the run must not swap
  # the binaries under the running processes.
  cp "$bazel_bin/client/pstrain" "$bazel_bin/server/coordinator/pstrain-coordinator" \
    "$bazel_bin/server/ps/pstrain-ps" "$bazel_bin/worker/pstrain-worker" \
    "$bazel_bin/evaluator/pstrain-evaluator" "$bin_dir/"
fi
[ -n "$run_dir" ] || run_dir="$(mktemp -d "${TMPDIR:-/tmp}/pstrain-soak-XXXXXX")"
mkdir -p "$run_dir/logs" "$out"
checkpoint_root="$run_dir/checkpoints"
mkdir -p "$checkpoint_root"

# Dynamic embedding tables (ids of 8 fields x 200,000 ranks, Zipf) under a
# budget of 8 MiB per table and shard: far more ids than the budget holds,
# so admission and eviction run for the whole soak and memory must stay
# bounded by the budget, not by the ids seen. Every worker holds the order
# of records of the current epoch and of the previous one (8 bytes a record,
# worker/training_data.h): with the default 100,000 records that is
# 0.8 MiB each, below the noise of the other buffers.
cat >"$run_dir/soak_job.pbtxt" <<EOF
name: "soak"
mode: JOB_MODE_TRAIN_AND_EVAL
model {
  wide_and_deep {
    embedding { dim: 16 max_bytes_per_shard: 8388608 }
    hidden_units: [64, 32]
  }
}
train_data {
  synthetic_clicks { num_examples: $examples vocabulary_per_field: 200000 seed: 11 }
  batch_size: 256
}
eval_data {
  synthetic_clicks { num_examples: 5000 vocabulary_per_field: 200000 seed: 11 }
  batch_size: 1000
}
optimizer {
  adagrad {}
  learning_rate: 0.05
}
training { update_mode: UPDATE_MODE_ASYNC steps_per_loop: 50 }
stop { max_seconds: $train_secs }
checkpoint { model_dir: "soak" every_seconds: 60 max_to_keep: 3 }
eval { metrics: ["loss", "auc"] throttle_secs: 30 }
EOF

echo "soak: ${minutes} min of async training, 2 ps, 8 workers, 1 evaluator; logs in $run_dir/logs"
# --restart=never: a process that dies during a soak is a failure to see,
# not one to heal.
"$bin_dir/pstrain" local "$run_dir/soak_job.pbtxt" --ps 2 --workers 8 --bin_dir "$bin_dir" \
  --run_dir "$run_dir/logs" --checkpoint_root "$checkpoint_root" --coordinator_address 127.0.0.1:0 \
  --job_timeout_secs $((train_secs + 600)) --restart=never \
  >"$run_dir/pstrain-local.out" 2>&1 &
local_pid=$!

# The processes, from their ready files (role-index.ready: grpc, metrics,
# pid, role), once all twelve serve.
declare -A pid_of=()
deadline=$((SECONDS + 120))
while :; do
  for ready in "$run_dir"/logs/*.ready; do
    [ -e "$ready" ] || continue
    name="$(basename "$ready" .ready)"
    pid="$(sed -n 's/^pid=//p' "$ready")"
    [ -n "$pid" ] && pid_of["$name"]="$pid"
  done
  [ "${#pid_of[@]}" -ge 12 ] && break
  if ! kill -0 "$local_pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
    echo "soak: the cluster did not come up (${#pid_of[@]} of 12 processes ready):" >&2
    tail -n 30 "$run_dir/pstrain-local.out" >&2
    kill "$local_pid" 2>/dev/null || true
    exit 1
  fi
  sleep 1
done
mapfile -t names < <(printf '%s\n' "${!pid_of[@]}" | sort -t- -k1,1 -k2,2n)

# Time 0 is when training starts: the coordinator logs the job's start.
# Sampling runs until `pstrain local` reports the job's end (it then stops
# the cluster, which is not part of the soak).
samples="$out/samples.csv"
echo "elapsed_s,process,pid,rss_kib,open_fds" >"$samples"
start_epoch=""
while kill -0 "$local_pid" 2>/dev/null; do
  if [ -z "$start_epoch" ]; then
    if grep -q "^submitted job" "$run_dir/pstrain-local.out" 2>/dev/null; then
      start_epoch=$(date +%s)
    else
      sleep 1
      continue
    fi
  fi
  if grep -q "Stopping the cluster" "$run_dir/pstrain-local.out"; then break; fi
  now=$(($(date +%s) - start_epoch))
  for name in "${names[@]}"; do
    pid="${pid_of[$name]}"
    rss="$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)"
    [ -n "$rss" ] || continue
    fds="$(find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)"
    echo "$now,$name,$pid,$rss,$fds" >>"$samples"
  done
  sleep "$interval_secs"
done
local_exit=0
wait "$local_pid" || local_exit=$?

# ERROR (E) and FATAL (F) lines of glog, per process.
declare -A errors_of=()
for name in "${names[@]}"; do
  errors_of["$name"]=$(grep -cE '^[EF][0-9]{4} ' "$run_dir/logs/$name.log" || true)
done

summary="$out/summary.txt"
{
  echo "soak: $(date -u +%FT%TZ), ${minutes} min, ${examples} records, sample every" \
    "${interval_secs} s, peaks over ${window_secs} s from ${warmup_secs} s and at the end"
  printf '%-14s %12s %12s %8s %9s %8s %7s\n' PROCESS "RSS_WARM_MiB" "RSS_END_MiB" "GROWTH%" \
    "FDS_WARM" "FDS_END" "ERRORS"
  for name in "${names[@]}"; do
    awk -F, -v name="$name" -v warm="$warmup_secs" -v window="$window_secs" \
        -v errors="${errors_of[$name]}" '
      NR > 1 && $2 == name { n++; t[n] = $1; rss[n] = $4; fds[n] = $5 }
      END {
        last = t[n]
        for (i = 1; i <= n; i++) {
          if (t[i] >= warm && t[i] < warm + window) {
            w++; if (rss[i] > rw) rw = rss[i]; if (fds[i] > fw) fw = fds[i]
          }
          if (t[i] > last - window) {
            e++; if (rss[i] > re) re = rss[i]; if (fds[i] > fe) fe = fds[i]
          }
        }
        if (w == 0 || e == 0) { printf "%-14s no samples after warm-up\n", name; exit }
        printf "%-14s %12.1f %12.1f %8.2f %9d %8d %7d\n", name, rw / 1024, re / 1024,
               (re - rw) / rw * 100, fw, fe, errors
      }' "$samples"
  done
} | tee "$summary"

# RSS over time, one line per process.
awk -F, -v warm="$warmup_secs" '
  NR == 1 { next }
  {
    if (!($2 in seen)) { seen[$2] = 1; order[++count] = $2 }
    points[$2] = points[$2] sprintf(" %s,%s", $1, $4 / 1024)
    if ($1 > tmax) tmax = $1
    if ($4 / 1024 > ymax) ymax = $4 / 1024
  }
  END {
    W = 960; H = 540; L = 70; R = 170; T = 40; B = 50
    step = 25; while (ymax * 1.1 / step > 10) step *= 2
    ytop = (int(ymax * 1.1 / step) + 1) * step
    if (tmax == 0) tmax = 1
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"12\">\n", W, H
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
    printf "<text x=\"%d\" y=\"24\" font-size=\"15\">pstrain soak: resident memory per process (MiB) over training time (s)</text>\n", L
    for (y = 0; y <= ytop; y += step) {
      py = H - B - y / ytop * (H - T - B)
      printf "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", L, W - R, py, py
      printf "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%d</text>\n", L - 6, py + 4, y
    }
    for (x = 0; x <= tmax; x += 60) {
      px = L + x / tmax * (W - L - R)
      printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#eee\"/>\n", px, px, T, H - B
      printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", px, H - B + 16, x
    }
    px = L + warm / tmax * (W - L - R)
    printf "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" stroke=\"#888\" stroke-dasharray=\"4 4\"/>\n", px, px, T, H - B
    printf "<text x=\"%.1f\" y=\"%d\" fill=\"#555\">warm-up</text>\n", px + 4, T + 12
    printf "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">seconds of training</text>\n", (L + W - R) / 2, H - 12
    split("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf #393b79 #ad494a", colors, " ")
    for (i = 1; i <= count; i++) {
      name = order[i]; path = ""
      n = split(points[name], pts, " ")
      for (j = 1; j <= n; j++) {
        split(pts[j], xy, ",")
        path = path sprintf("%.1f,%.1f ", L + xy[1] / tmax * (W - L - R), H - B - xy[2] / ytop * (H - T - B))
      }
      printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"%s\"/>\n", colors[i], path
      printf "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"3\" fill=\"%s\"/>\n", W - R + 12, T + 16 * i - 4, colors[i]
      printf "<text x=\"%d\" y=\"%d\">%s</text>\n", W - R + 32, T + 16 * i, name
    }
    print "</svg>"
  }' "$samples" >"$out/rss.svg"

# The verdict.
failures=()
if [ "$local_exit" -ne 0 ]; then
  failures+=("pstrain local exited with $local_exit")
fi
if ! grep -q "SUCCEEDED" "$run_dir/pstrain-local.out"; then
  failures+=("the job did not end SUCCEEDED")
fi
if ! grep -q "Every process exited cleanly" "$run_dir/pstrain-local.out"; then
  failures+=("not every process exited cleanly")
fi
while read -r name _ _ growth fds_warm fds_end errors; do
  [ "$name" = PROCESS ] && continue
  if [ -z "$errors" ]; then failures+=("$name: no samples after warm-up"); continue; fi
  if awk -v g="$growth" -v max="$max_rss_growth_pct" 'BEGIN { exit !(g > max) }'; then
    failures+=("$name: RSS grew ${growth}% after warm-up")
  fi
  if awk -v a="$fds_warm" -v b="$fds_end" 'BEGIN { exit !(b > a) }'; then
    failures+=("$name: open fds grew from $fds_warm to $fds_end")
  fi
  if [ "$errors" -gt 0 ]; then
    failures+=("$name: $errors ERROR/FATAL log lines (see $run_dir/logs/$name.log)")
  fi
done < <(tail -n +2 "$summary")

cp "$run_dir/soak_job.pbtxt" "$out/job.pbtxt"
grep -A 12 "SUCCEEDED\|FAILED\|STOPPED" "$run_dir/pstrain-local.out" | tail -n 14 |
  sed 's/^/pstrain local: /' | tee -a "$summary"
echo "samples: $samples; plot: $out/rss.svg; logs: $run_dir/logs"
if [ "${#failures[@]}" -gt 0 ]; then
  printf 'soak FAILED: %s\n' "${failures[@]}" >&2
  exit 1
fi
echo "soak PASSED"
