#!/usr/bin/env python3
"""A stand-in for the coordinator's console endpoints, for working on the
console's pages without a cluster.

It serves server/console/assets and the /api/ endpoints with JSON in the
shapes the coordinator prints (protobuf's JSON mapping, snake_case names,
int64 as strings). One job trains while it runs: a progress event every
--tick seconds, a checkpoint every 100 steps and its evaluation a tick
later, at most --keep checkpoints kept, and the job succeeds at --max_steps.

  python3 fake_coordinator.py --port=8090 [--token=secret] [--stop_enabled]

What a real cluster shows and a page must cope with, on request:
  --long_paths       model_dir deep in a build sandbox, so checkpoint and
                     export paths (and status reasons quoting them) are long
  --skip_eval=300    the evaluator skips ckpt-300 (a newer one came first)
  --duplicate_final  the final status event is sent twice
  --no_history       the events endpoint keeps no event of any job, as after
                     a coordinator restart; the job's status still tells
  --rough            all of the above but --no_history
"""

import argparse
import copy
import json
import math
import os
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

ASSETS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                      "server", "console", "assets")
TERMINAL = ("JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED", "JOB_STATE_STOPPED")


def now_ms():
    return int(time.time() * 1000)


LONG_ROOT = ("/root/.cache/bazel/_bazel_root/835165e65df656dc9abbd58e53cf243e/"
             "sandbox/linux-sandbox/277/execroot/pstrain/_tmp/"
             "6c93527757143bb42e2bd239f940ae8e/"
             "FollowsAJobInChromiumAndAgreesWithTheCli")
MODEL_ROOT = "/models"
SKIPPED = ("a newer checkpoint came before its turn and the evaluator takes "
           "the newest (eval.throttle_secs spaces evaluations)")


def spec(name, max_steps):
    model_dir = MODEL_ROOT + "/" + name
    return {
        "name": name,
        "mode": "JOB_MODE_TRAIN_AND_EVAL",
        "model": {"mlp": {"input_dim": "784", "num_classes": 10,
                          "hidden_units": ["256", "128"],
                          "activation": "ACTIVATION_RELU", "dropout": 0,
                          "regression": False}},
        "train_data": {"fashion_mnist": {"dir": "/data/fashion",
                                         "split": "DATA_SPLIT_TRAIN"},
                       "batch_size": 128, "shuffle": True,
                       "shuffle_seed": "0", "epochs": 0},
        "optimizer": {"adam": {"beta1": 0.9, "beta2": 0.999,
                               "epsilon": 1e-08},
                      "learning_rate": 0.001, "clip_norm": 0},
        "stop": {"max_steps": str(max_steps), "max_seconds": 0,
                 "stop_on_nan_loss": True, "early_stopping_patience": 0,
                 "min_delta": 0},
        "checkpoint": {"model_dir": model_dir,
                       "every_steps": "100", "every_seconds": 0,
                       "max_to_keep": 3},
        "eval": {"steps": "20", "metrics": ["accuracy", "loss"],
                 "top_k": 5, "best_metric": "accuracy",
                 "best_direction": "METRIC_DIRECTION_MAXIMIZE"},
        "export": {"strategy": "EXPORT_STRATEGY_BEST",
                   "export_dir": model_dir + "/export",
                   "exports_to_keep": 3},
    }


def status(job_id, name, state, max_steps, **fields):
    s = {
        "job_id": job_id, "name": name, "state": state,
        "stop_reason": "STOP_REASON_UNSPECIFIED", "reason": "",
        "global_step": "0", "loss": 0, "examples_per_sec": 0,
        "submit_unix_ms": str(now_ms() - 60000), "start_unix_ms": "0",
        "end_unix_ms": "0", "last_eval_metrics": {}, "last_eval_step": "0",
        "checkpoints": [], "best_checkpoint_step": "0", "export_path": "",
        "spec": spec(name, max_steps), "resumed_from_step": "0",
        "resumed_from": "", "rollbacks": 0, "last_rollback": "",
        "checkpoint_failures": 0, "last_checkpoint_failure": "",
        "failovers": 0, "last_failover": "", "backups_rebuilt": 0,
        "last_backup_rebuilt": "", "request_id": "",
    }
    s.update(fields)
    return s


class Job:
    """The training job: its status and its numbered events."""

    def __init__(self, job_id, name, max_steps, keep, skip_eval=(),
                 duplicate_final=False):
        self.lock = threading.Lock()
        self.skip_eval = set(skip_eval)
        self.duplicate_final = duplicate_final
        self.max_steps = max_steps
        self.keep = keep
        self.step = 0
        self.seen_checkpoints = []
        self.pending_eval = None
        self.best = None
        self.events = []  # (seq, JobEvent)
        self.seq = 0
        self.status = status(job_id, name, "JOB_STATE_QUEUED", max_steps,
                             reason="waiting for 2 workers (1 registered)")
        self.add({"status": dict(self.status)})
        self.status.update(state="JOB_STATE_RUNNING",
                           start_unix_ms=str(now_ms()),
                           reason="looking for checkpoints to resume from in "
                           + self.status["spec"]["checkpoint"]["model_dir"])
        self.add({"status": dict(self.status)})
        self.status.update(reason="waiting for ps/1 since 2 s")
        self.add({"status": dict(self.status)})

    def add(self, event):
        self.seq += 1
        event = dict(copy.deepcopy(event), unix_ms=str(now_ms()))
        self.events.append((self.seq, event))

    def stop(self):
        with self.lock:
            if self.status["state"] in TERMINAL:
                return dict(self.status)
            self.finish("JOB_STATE_STOPPED", "STOP_REASON_USER",
                        "stopped by a user at step %d" % self.step)
            return dict(self.status)

    def finish(self, state, stop_reason, reason):
        self.status.update(state=state, stop_reason=stop_reason,
                           reason=reason, end_unix_ms=str(now_ms()))
        best = self.status["best_checkpoint_step"]
        if best != "0":
            self.status["export_path"] = (
                self.status["spec"]["export"]["export_dir"] + "/best/" + best)
        self.add({"status": dict(self.status)})
        if self.duplicate_final:
            self.add({"status": dict(self.status)})

    def tick(self):
        with self.lock:
            if self.status["state"] in TERMINAL:
                return
            if self.pending_eval is not None:
                self.evaluate(self.pending_eval)
                self.pending_eval = None
                if self.step >= self.max_steps:
                    self.finish("JOB_STATE_SUCCEEDED",
                                "STOP_REASON_MAX_STEPS",
                                "reached max_steps %d" % self.max_steps)
                return
            if self.step >= self.max_steps:
                return
            self.step += 10
            s = self.step
            loss = 2.3 * math.exp(-s / 250.0) + 0.25 + 0.03 * math.sin(s)
            lr = 0.001 * (0.5 ** (s // 200))
            eps = 12000 + 1500 * math.sin(s / 40.0)
            progress = {"global_step": str(s), "loss": loss,
                        "examples_per_sec": eps, "learning_rate": lr,
                        "epoch": str(s // 470)}
            if s == 30:
                progress["loss"] = "NaN"  # a NaN in the series: skipped
            self.add({"progress": progress})
            self.status.update(global_step=str(s), loss=loss,
                               examples_per_sec=eps,
                               reason="" if s > 20 else
                               self.status["reason"])
            if s % 100 == 0:
                self.checkpoint(s, final=s >= self.max_steps)
                if s == 100:
                    self.status.update(rollbacks=1, last_rollback=(
                        "ps/1 was lost (heartbeats overdue); rolled back "
                        "from step 104 to ckpt-100"))

    def checkpoint(self, s, final):
        info = {"step": str(s),
                "path": "%s/ckpt-%d" % (
                    self.status["spec"]["checkpoint"]["model_dir"], s),
                "created_unix_ms": str(now_ms()),
                "bytes": str(1048576 + s * 1000), "final": final,
                "metrics": {}}
        self.add({"checkpoint": info})
        kept = self.status["checkpoints"] + [info]
        while len(kept) > self.keep:
            drop = next((c for c in kept
                         if c["step"] != self.status["best_checkpoint_step"]),
                        kept[0])
            kept.remove(drop)
        self.status["checkpoints"] = kept
        if final:
            self.status.update(state="JOB_STATE_FINISHING",
                               stop_reason="STOP_REASON_MAX_STEPS",
                               reason="final evaluation of ckpt-%d" % s)
            self.add({"status": dict(self.status)})
        self.pending_eval = s

    def evaluate(self, s):
        final = s >= self.max_steps
        if s in self.skip_eval and not final:
            self.add({"eval": {"checkpoint_step": str(s), "metrics": {},
                               "is_best": False, "final": False,
                               "skipped_reason": SKIPPED}})
            return
        acc = 0.6 + 0.3 * (1 - math.exp(-s / 200.0)) - (0.05 if s == 300 else 0)
        metrics = {"accuracy": acc, "loss": 1.2 * math.exp(-s / 300.0) + 0.3}
        is_best = self.best is None or acc > self.best
        if is_best:
            self.best = acc
            self.status["best_checkpoint_step"] = str(s)
        self.add({"eval": {"checkpoint_step": str(s), "metrics": metrics,
                           "is_best": is_best, "final": final,
                           "skipped_reason": ""}})
        for c in self.status["checkpoints"]:
            if c["step"] == str(s):
                c["metrics"] = metrics
        self.status.update(last_eval_metrics=metrics, last_eval_step=str(s))

    def events_after(self, after):
        with self.lock:
            picked = [e for q, e in self.events if q > after]
            return {"next": str(self.seq if picked or after > self.seq
                                else after),
                    "events": picked}


class Fake:
    def __init__(self, args):
        self.args = args
        self.started = time.time()
        self.job = Job("job-20251207-0002", "fashion-mlp", args.max_steps,
                       args.keep, skip_eval=args.skip_eval,
                       duplicate_final=args.duplicate_final)
        warmup_dir = MODEL_ROOT + "/fashion-warmup"
        warmup_ckpts = [
            {"step": str(s), "path": "%s/ckpt-%d" % (warmup_dir, s),
             "created_unix_ms": str(now_ms() - 3500000 - (200 - s) * 500),
             "bytes": str(1048576 + s * 1000), "final": s == 200,
             "metrics": {"accuracy": 0.7 + 0.0006 * s - (0.03 if s == 150
                                                         else 0),
                         "loss": 0.9 - 0.002 * s}}
            for s in (100, 150, 200)]
        done = status("job-20251207-0001", "fashion-warmup",
                      "JOB_STATE_SUCCEEDED", 200,
                      stop_reason="STOP_REASON_MAX_STEPS",
                      reason="reached max_steps 200", global_step="200",
                      loss=0.5123456, examples_per_sec=9876.5,
                      submit_unix_ms=str(now_ms() - 3605000),
                      start_unix_ms=str(now_ms() - 3600000),
                      end_unix_ms=str(now_ms() - 3500000),
                      last_eval_metrics=warmup_ckpts[-1]["metrics"],
                      last_eval_step="200", best_checkpoint_step="200",
                      checkpoints=warmup_ckpts,
                      export_path=warmup_dir + "/export/best/200")
        failed = status("job-20251207-0000", "broken-csv",
                        "JOB_STATE_FAILED",
                        0, stop_reason="STOP_REASON_ERROR",
                        reason="train_data: /data/x.csv: No such file",
                        submit_unix_ms=str(now_ms() - 7201000),
                        start_unix_ms=str(now_ms() - 7200000),
                        end_unix_ms=str(now_ms() - 7199000))
        self.queued = status("job-20251207-0003", "fashion-cnn",
                             "JOB_STATE_QUEUED", 5000,
                             reason="waiting for job-20251207-0002 to end")
        self.others = [done, failed]

    def jobs(self):
        with self.job.lock:
            running = dict(self.job.status)
        return [self.queued, running] + self.others

    def find(self, job_id):
        for j in self.jobs():
            if j["job_id"] == job_id:
                return j
        return None

    def cluster(self, port):
        t = now_ms()
        members = []
        running = self.job.status["state"] not in TERMINAL
        for kind, n in (("PS", 2), ("WORKER", 2), ("EVALUATOR", 1)):
            for i in range(n):
                lost = kind == "WORKER" and i == 1 and self.args.lost_worker
                members.append({
                    "task": {"type": "TASK_TYPE_" + kind, "index": i},
                    "address": "127.0.0.1:%d" % (7070 + i)
                    if kind == "PS" else "",
                    "incarnation": str(1234567890123 + 77 * i),
                    "state": "MEMBER_STATE_LOST" if lost else
                    ("MEMBER_STATE_BUSY" if running else "MEMBER_STATE_IDLE"),
                    "registered_unix_ms": str(int(self.started * 1000)),
                    "last_heartbeat_unix_ms": str(t - (9000 if lost else
                                                       300 + 400 * i)),
                    "metrics_address": "127.0.0.1:%d" % port,
                    "job_id": self.job.status["job_id"] if running else "",
                    "step": self.job.status["global_step"],
                    "health": "MEMBER_HEALTH_DEGRADED"
                    if kind == "PS" and i == 1 else "MEMBER_HEALTH_OK",
                    "health_detail": "retrying pushes to ps/0 (3 in 10 s)"
                    if kind == "PS" and i == 1 else "",
                    "queue_depth": 2 if kind == "EVALUATOR" else 0,
                })
        return {"spec": {"chief": ["127.0.0.1:%d" % port],
                         "ps": ["127.0.0.1:7070", "127.0.0.1:7071"],
                         "worker": [], "evaluator": []},
                "members": members,
                "running_job_id": self.job.status["job_id"]
                if running else "",
                "queued_jobs": 1}

    def metrics(self, kind, index):
        up = time.time() - self.started
        lines = ["# TYPE process_start_time_seconds gauge",
                 "process_start_time_seconds %.3f" % self.started]
        if kind == "worker":
            shares = {"data_wait": 0.05, "pull": 0.2 + 0.05 * index,
                      "compute": 0.45, "push_wait": 0.1}
            lines.append("# TYPE pstrain_worker_step_phase_seconds histogram")
            for phase, share in shares.items():
                lines.append('pstrain_worker_step_phase_seconds_sum'
                             '{phase="%s"} %.6f' % (phase, share * up))
                lines.append('pstrain_worker_step_phase_seconds_count'
                             '{phase="%s"} %d' % (phase, int(up * 50)))
            lines.append("# TYPE pstrain_worker_lane_fallbacks_total counter")
            if index == 1:
                lines.append('pstrain_worker_lane_fallbacks_total'
                             '{reason="FAILED_PRECONDITION"} 1')
        elif kind == "ps":
            lines += ["# TYPE pstrain_ps_lane_requests_total counter",
                      "pstrain_ps_lane_requests_total %d" % int(up * 80),
                      "# TYPE pstrain_ps_lane_bytes_total counter",
                      'pstrain_ps_lane_bytes_total{direction="push"} %d'
                      % int(up * 4e6),
                      'pstrain_ps_lane_bytes_total{direction="pull"} %d'
                      % int(up * 4e6)]
        return "\n".join(lines) + "\n"


def make_handler(fake):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *args):
            if fake.args.verbose:
                super().log_message(fmt, *args)

        def send(self, code, body, ctype="application/json"):
            if not isinstance(body, (bytes, str)):
                body = json.dumps(body)
            if isinstance(body, str):
                body = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def error(self, code, message):
            self.send(code, {"error": message})

        def authorized(self):
            token = fake.args.token
            if not token:
                return True
            if self.headers.get("Authorization") == "Bearer " + token:
                return True
            self.error(401, "missing or wrong token (Authorization: "
                       "Bearer <token>)")
            return False

        def asset(self, name, ctype):
            with open(os.path.join(ASSETS, name), "rb") as f:
                self.send(200, f.read(), ctype)

        def do_GET(self):
            url = urlparse(self.path)
            path = url.path
            if path == "/console.js":
                return self.asset("console.js", "text/javascript")
            if path == "/console.css":
                return self.asset("console.css", "text/css")
            if path in ("/", "/cluster") or (
                    path.startswith("/jobs/") and path.count("/") == 2):
                return self.asset("index.html", "text/html; charset=utf-8")
            if path == "/metrics":
                return self.send(200, fake.metrics("ps", 0), "text/plain")
            if path == "/api/console":
                return self.send(200, {
                    "auth_required": bool(fake.args.token),
                    "stop_enabled": fake.args.stop_enabled,
                    "coordinator": "127.0.0.1:%d" % fake.args.port})
            if not path.startswith("/api/"):
                return self.send(404, "<h1>404</h1>", "text/html")
            if not self.authorized():
                return
            parts = path.split("/")[2:]
            if parts == ["jobs"]:
                return self.send(200, {"jobs": fake.jobs()})
            if parts == ["cluster"]:
                return self.send(200, fake.cluster(fake.args.port))
            if len(parts) == 2 and parts[0] == "jobs":
                job = fake.find(parts[1])
                if job is None:
                    return self.error(404, "no job %s" % parts[1])
                return self.send(200, job)
            if len(parts) == 3 and parts[0] == "jobs" and parts[2] == "events":
                if fake.args.no_history and fake.find(parts[1]) is not None:
                    return self.send(200, {"next": "0", "events": []})
                if parts[1] != fake.job.status["job_id"]:
                    if fake.find(parts[1]) is None:
                        return self.error(404, "no job %s" % parts[1])
                    return self.send(200, {"next": "0", "events": []})
                after = parse_qs(url.query).get("after", ["0"])[0]
                try:
                    after = int(after)
                except ValueError:
                    return self.error(400, "after: not a number: " + after)
                return self.send(200, fake.job.events_after(after))
            if (len(parts) == 4 and parts[0] == "members"
                    and parts[3] == "metrics"
                    and parts[1] in ("ps", "worker", "evaluator")):
                return self.send(200, fake.metrics(parts[1], int(parts[2])),
                                 "text/plain; version=0.0.4")
            return self.error(404, "no such endpoint: " + path)

        def do_POST(self):
            parts = urlparse(self.path).path.split("/")[1:]
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            if not (len(parts) == 4 and parts[:2] == ["api", "jobs"]
                    and parts[3] == "stop"):
                return self.error(404, "no such endpoint: " + self.path)
            if not self.authorized():
                return
            if self.headers.get("X-Pstrain-Console") != "stop":
                return self.error(403, "X-Pstrain-Console: stop missing")
            if not fake.args.stop_enabled:
                return self.error(403, "this console may not stop jobs "
                                  "(start the coordinator with "
                                  "--console_stop)")
            if parts[2] != fake.job.status["job_id"]:
                job = fake.find(parts[2])
                if job is None:
                    return self.error(404, "no job %s" % parts[2])
                return self.error(400, "job %s has ended" % parts[2])
            return self.send(200, {"status": fake.job.stop()})

    return Handler


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=8090)
    p.add_argument("--token", default="")
    p.add_argument("--stop_enabled", action="store_true")
    p.add_argument("--max_steps", type=int, default=600)
    p.add_argument("--keep", type=int, default=3)
    p.add_argument("--tick", type=float, default=0.5)
    p.add_argument("--lost_worker", action="store_true")
    p.add_argument("--verbose", action="store_true")
    p.add_argument("--long_paths", action="store_true",
                   help="model_dir deep in a build sandbox")
    p.add_argument("--skip_eval", default="",
                   help="checkpoint steps the evaluator skips, e.g. 300,500")
    p.add_argument("--duplicate_final", action="store_true",
                   help="send the final status event twice")
    p.add_argument("--no_history", action="store_true",
                   help="keep no event of any job (a restarted coordinator)")
    p.add_argument("--rough", action="store_true",
                   help="--long_paths --skip_eval=300 --duplicate_final")
    args = p.parse_args()
    if args.rough:
        args.long_paths = args.duplicate_final = True
        args.skip_eval = args.skip_eval or "300"
    args.skip_eval = [int(s) for s in args.skip_eval.split(",") if s]
    if args.long_paths:
        global MODEL_ROOT
        MODEL_ROOT = LONG_ROOT
    fake = Fake(args)

    def train():
        while True:
            time.sleep(args.tick)
            fake.job.tick()

    threading.Thread(target=train, daemon=True).start()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(fake))
    print("serving on http://127.0.0.1:%d" % args.port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
