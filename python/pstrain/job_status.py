"""A job's status as plain Python values: what GetJob, ListJobs, StopJob
and ExportModel answer, read out of their protos/job.proto messages."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Dict, List, Optional

from pstrain.proto_enum import ProtoEnum, from_proto, time_of
from pstrain.protos import coordinator_pb2
from pstrain.protos import job_pb2


class JobState(ProtoEnum):
    """Where a job is: QUEUED, RUNNING, FINISHING (final checkpoint,
    evaluation and export), then SUCCEEDED, FAILED or STOPPED."""

    UNSPECIFIED = "UNSPECIFIED"
    QUEUED = "QUEUED"
    RUNNING = "RUNNING"
    FINISHING = "FINISHING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    STOPPED = "STOPPED"

    @property
    def done(self) -> bool:
        """The job has ended and will not change any more."""
        return self in (JobState.SUCCEEDED, JobState.FAILED, JobState.STOPPED)


class StopReason(ProtoEnum):
    """Why training ended (UNSPECIFIED while it trains)."""

    UNSPECIFIED = "UNSPECIFIED"
    MAX_STEPS = "MAX_STEPS"
    MAX_SECONDS = "MAX_SECONDS"
    END_OF_DATA = "END_OF_DATA"
    NAN_LOSS = "NAN_LOSS"
    TARGET_METRIC = "TARGET_METRIC"
    EARLY_STOPPING = "EARLY_STOPPING"
    USER = "USER"
    ERROR = "ERROR"
    CHECKPOINT_FAILURES = "CHECKPOINT_FAILURES"


def job_state(number: int) -> JobState:
    return from_proto(JobState, job_pb2.JobState, "JOB_STATE_", number)


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    """A saved checkpoint: its step and folder; `metrics` once evaluated."""

    step: int
    path: str
    created: Optional[datetime.datetime]
    bytes: int
    final: bool
    metrics: Dict[str, float]

    @classmethod
    def from_proto(cls, info: job_pb2.CheckpointInfo) -> Checkpoint:
        return cls(step=info.step, path=info.path, created=time_of(info.created_unix_ms),
                   bytes=info.bytes, final=info.final, metrics=dict(info.metrics))


@dataclasses.dataclass(frozen=True)
class JobStatus:
    """One job as the coordinator knows it.

    `spec` is the JobSpec message with every default filled in: the same
    message submit() takes, so it can be changed and sent again. `raw` is
    the JobStatus message this was read from, for fields not copied here.
    Times are UTC datetimes, None until they happen.
    """

    job_id: str
    name: str
    state: JobState
    stop_reason: StopReason
    reason: str  # for people: why it failed or stopped, what it waits for
    global_step: int
    loss: float  # newest training loss reported
    examples_per_sec: float
    submitted: Optional[datetime.datetime]
    started: Optional[datetime.datetime]
    ended: Optional[datetime.datetime]
    last_eval_metrics: Dict[str, float]
    last_eval_step: int
    checkpoints: List[Checkpoint]
    best_checkpoint_step: int
    export_path: str  # the newest export ("" when none yet)
    model_dir: str
    resumed_from_step: int
    rollbacks: int
    failovers: int
    checkpoint_failures: int
    request_id: str
    spec: job_pb2.JobSpec = dataclasses.field(repr=False, compare=False)
    raw: job_pb2.JobStatus = dataclasses.field(repr=False, compare=False)

    @property
    def done(self) -> bool:
        """The job has ended (SUCCEEDED, FAILED or STOPPED)."""
        return self.state.done

    @classmethod
    def from_proto(cls, status: job_pb2.JobStatus) -> JobStatus:
        return cls(
            job_id=status.job_id,
            name=status.name,
            state=job_state(status.state),
            stop_reason=from_proto(StopReason, job_pb2.StopReason, "STOP_REASON_",
                                   status.stop_reason),
            reason=status.reason,
            global_step=status.global_step,
            loss=status.loss,
            examples_per_sec=status.examples_per_sec,
            submitted=time_of(status.submit_unix_ms),
            started=time_of(status.start_unix_ms),
            ended=time_of(status.end_unix_ms),
            last_eval_metrics=dict(status.last_eval_metrics),
            last_eval_step=status.last_eval_step,
            checkpoints=[Checkpoint.from_proto(c) for c in status.checkpoints],
            best_checkpoint_step=status.best_checkpoint_step,
            export_path=status.export_path,
            model_dir=status.spec.checkpoint.model_dir,
            resumed_from_step=status.resumed_from_step,
            rollbacks=status.rollbacks,
            failovers=status.failovers,
            checkpoint_failures=status.checkpoint_failures,
            request_id=status.request_id,
            spec=status.spec,
            raw=status,
        )


@dataclasses.dataclass(frozen=True)
class ExportedModel:
    """A model the evaluator exported: the folder and the checkpoint step
    it came from."""

    path: str
    step: int

    @classmethod
    def from_proto(cls, response: coordinator_pb2.ExportModelResponse) -> ExportedModel:
        return cls(path=response.path, step=response.step)
