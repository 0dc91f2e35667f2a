"""A whole training job driven from Python: start a cluster on this
machine, submit examples/fashion_mnist_mlp.pbtxt, follow its progress,
wait for the end, print the final metrics, then find the exported model
and read the scalars back.

    bazel build -c opt //client:pstrain //python:wheel
    /usr/bin/python3 -m venv --system-site-packages /tmp/pstrain-env
    /tmp/pstrain-env/bin/pip install --no-index --no-deps \\
        bazel-bin/python/pstrain-0.1.0-py3-none-any.whl
    PSTRAIN_BINARY=bazel-bin/client/pstrain \\
        /tmp/pstrain-env/bin/python examples/python/train_fashion_mnist.py

Needs Debian's dataset-fashion-mnist. Every file of the run (checkpoints,
export, logs) goes to --workdir, a new temporary folder by default. Exit
code 0 when the job succeeded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from typing import List, Optional

import pstrain

DEFAULT_SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir,
                            "fashion_mnist_mlp.pbtxt")


def parse_args(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default=DEFAULT_SPEC, help="the job spec to train")
    parser.add_argument("--workdir", help="folder for the run; default a new temporary one")
    parser.add_argument("--max_steps", type=int, default=0,
                        help="train this many steps instead of the spec's stop.max_steps")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pstrain", help="the pstrain program; default $PSTRAIN_BINARY, "
                        "else pstrain on PATH")
    return parser.parse_args(argv)


async def follow(job: pstrain.Job, max_steps: int) -> None:
    """Prints the job's progress about ten times over its run, and each
    checkpoint, evaluation and change of state. A notebook would run the
    same loop as a task; its kernel stays free meanwhile."""
    next_step = 0
    last_state = None
    async for event in job.watch_async():
        if isinstance(event, pstrain.Progress) and event.global_step >= next_step:
            print(f"  step {event.global_step:>6}  loss {event.loss:.4f}  "
                  f"{event.examples_per_sec:,.0f} examples/s", flush=True)
            next_step = event.global_step + max(1, max_steps // 10)
        elif isinstance(event, pstrain.CheckpointSaved):
            print(f"  checkpoint at step {event.checkpoint.step}", flush=True)
        elif isinstance(event, pstrain.Evaluation) and event.metrics:
            metrics = ", ".join(f"{k} {v:.4f}" for k, v in sorted(event.metrics.items()))
            print(f"  evaluation of step {event.checkpoint_step}: {metrics}"
                  f"{' (best so far)' if event.is_best else ''}", flush=True)
        elif isinstance(event, pstrain.StatusUpdate) and event.status.state != last_state:
            last_state = event.status.state
            print(f"  {last_state}", flush=True)


def train(client: pstrain.Client, args: argparse.Namespace, workdir: str) -> int:
    spec = pstrain.to_job_spec(args.spec)
    spec.checkpoint.model_dir = os.path.join(workdir, "fashion_mnist_mlp")
    if args.max_steps:
        spec.stop.max_steps = args.max_steps
    job = client.submit(spec)
    print(f"Submitted {job.id}; training {spec.stop.max_steps} steps", flush=True)
    asyncio.run(follow(job, spec.stop.max_steps))

    final = job.wait()
    print(f"Job {job.id} ended {final.state} at step {final.global_step}: {final.reason}")
    if final.state != pstrain.JobState.SUCCEEDED:
        return 1
    for name, value in sorted(final.last_eval_metrics.items()):
        print(f"final {name}: {value:.4f}")

    exported = job.export()
    print(f"exported model: {exported.path} (step {exported.step})")

    scalars = job.scalars()
    print(f"scalars: {len(scalars)} read from {final.model_dir}")
    try:
        frame = job.scalars_frame()
    except ImportError as error:  # pandas is optional
        print(f"  ({error})")
    else:
        accuracy = frame[(frame.split == "eval") & (frame.tag == "accuracy")]
        print(accuracy[["step", "value"]].to_string(index=False))
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = parse_args(argv)
    workdir = args.workdir or tempfile.mkdtemp(prefix="pstrain-example-")
    print(f"Starting a local cluster; its files go to {workdir}", flush=True)
    with pstrain.LocalCluster(args.pstrain, workers=args.workers, checkpoint_root=workdir,
                              run_dir=os.path.join(workdir, "logs")) as client:
        code = train(client, args, workdir)
    print("The cluster has stopped.")
    return code


if __name__ == "__main__":
    sys.exit(main())
