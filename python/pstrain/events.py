"""A job's events as plain Python values: one class per kind of the
JobEvent message of protos/coordinator.proto.

    for event in job.watch():
        if isinstance(event, pstrain.Progress):
            print(event.global_step, event.loss)
"""

from __future__ import annotations

import dataclasses
import datetime
from typing import Dict, Optional, Union

from pstrain.job_status import Checkpoint, JobStatus
from pstrain.proto_enum import time_of
from pstrain.protos import coordinator_pb2


@dataclasses.dataclass(frozen=True)
class StatusUpdate:
    """The job's status: the first event of every watch, then one on every
    change of state; the last event of a watch shows the final state."""

    time: Optional[datetime.datetime]
    status: JobStatus
    raw: coordinator_pb2.JobEvent = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class Progress:
    """A training progress report (only when watched with progress)."""

    time: Optional[datetime.datetime]
    global_step: int
    loss: float
    examples_per_sec: float
    epoch: int
    raw: coordinator_pb2.JobEvent = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class CheckpointSaved:
    """A checkpoint was saved."""

    time: Optional[datetime.datetime]
    checkpoint: Checkpoint
    raw: coordinator_pb2.JobEvent = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class CheckpointFailed:
    """A checkpoint could not be saved; the ones before it are kept. The
    job fails when `consecutive_failures` reaches `max_consecutive_failures`
    (0: never) or when this was the final checkpoint."""

    time: Optional[datetime.datetime]
    step: int
    message: str
    consecutive_failures: int
    max_consecutive_failures: int
    final: bool
    raw: coordinator_pb2.JobEvent = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """The evaluator's result on a checkpoint; `skipped_reason` says why a
    checkpoint was not evaluated (then `metrics` is empty)."""

    time: Optional[datetime.datetime]
    checkpoint_step: int
    metrics: Dict[str, float]
    is_best: bool
    final: bool
    skipped_reason: str
    raw: coordinator_pb2.JobEvent = dataclasses.field(repr=False, compare=False)


JobEvent = Union[StatusUpdate, Progress, CheckpointSaved, CheckpointFailed, Evaluation]


def event_of(message: coordinator_pb2.JobEvent) -> Optional[JobEvent]:
    """The event `message` carries; None for a kind this client does not
    know (sent by a newer coordinator), which a watch skips."""
    time = time_of(message.unix_ms)
    kind = message.WhichOneof("event")
    if kind == "status":
        return StatusUpdate(time, JobStatus.from_proto(message.status), message)
    if kind == "progress":
        p = message.progress
        return Progress(time, p.global_step, p.loss, p.examples_per_sec, p.epoch, message)
    if kind == "checkpoint":
        return CheckpointSaved(time, Checkpoint.from_proto(message.checkpoint), message)
    if kind == "checkpoint_failure":
        f = message.checkpoint_failure
        return CheckpointFailed(time, f.step, f.message, f.consecutive_failures,
                                f.max_consecutive_failures, f.final, message)
    if kind == "eval":
        e = message.eval
        return Evaluation(time, e.checkpoint_step, dict(e.metrics), e.is_best, e.final,
                          e.skipped_reason, message)
    return None
