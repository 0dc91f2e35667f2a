"""The cluster as plain Python values: what GetCluster answers (the
members the coordinator knows, the running job, the queue)."""

from __future__ import annotations

import dataclasses
import datetime
from typing import Dict, List, Optional

from pstrain.proto_enum import ProtoEnum, from_proto, time_of
from pstrain.protos import cluster_pb2
from pstrain.protos import coordinator_pb2


class Role(ProtoEnum):
    """A process's part in the cluster; CHIEF is the coordinator."""

    UNSPECIFIED = "UNSPECIFIED"
    CHIEF = "CHIEF"
    PS = "PS"
    WORKER = "WORKER"
    EVALUATOR = "EVALUATOR"


class MemberState(ProtoEnum):
    """IDLE (no job), BUSY (on the running job), LOST (heartbeats overdue,
    its work handed to others) or LEFT (shut down on purpose)."""

    UNSPECIFIED = "UNSPECIFIED"
    IDLE = "IDLE"
    BUSY = "BUSY"
    LOST = "LOST"
    LEFT = "LEFT"


class MemberHealth(ProtoEnum):
    """OK, or DEGRADED (working, with trouble `health_detail` names)."""

    UNSPECIFIED = "UNSPECIFIED"
    OK = "OK"
    DEGRADED = "DEGRADED"


@dataclasses.dataclass(frozen=True)
class Member:
    """A process of the cluster (not the coordinator), as of its latest
    heartbeat. `task` reads as the CLI prints it: "ps/0"."""

    role: Role
    index: int
    address: str  # its gRPC server (parameter servers); "" for the others
    metrics_address: str
    incarnation: int  # changes when the process restarts
    state: MemberState
    health: MemberHealth
    health_detail: str
    job_id: str  # "" when it works on none
    step: int
    queue_depth: int
    last_heartbeat: Optional[datetime.datetime]
    raw: cluster_pb2.Member = dataclasses.field(repr=False, compare=False)

    @property
    def task(self) -> str:
        return f"{self.role.value.lower()}/{self.index}"

    @classmethod
    def from_proto(cls, member: cluster_pb2.Member) -> Member:
        return cls(
            role=from_proto(Role, cluster_pb2.TaskType, "TASK_TYPE_", member.task.type),
            index=member.task.index,
            address=member.address,
            metrics_address=member.metrics_address,
            incarnation=member.incarnation,
            state=from_proto(MemberState, cluster_pb2.MemberState, "MEMBER_STATE_", member.state),
            health=from_proto(MemberHealth, cluster_pb2.MemberHealth, "MEMBER_HEALTH_",
                              member.health),
            health_detail=member.health_detail,
            job_id=member.job_id,
            step=member.step,
            queue_depth=member.queue_depth,
            last_heartbeat=time_of(member.last_heartbeat_unix_ms),
            raw=member,
        )


@dataclasses.dataclass(frozen=True)
class ClusterStatus:
    """The cluster: `addresses` by role as TF_CONFIG's "cluster" spells
    them ({"chief": [...], "ps": [...], ...}), every member, the running
    job (None when idle) and the number of jobs queued."""

    addresses: Dict[str, List[str]]
    members: List[Member]
    running_job_id: Optional[str]
    queued_jobs: int
    raw: coordinator_pb2.ClusterStatus = dataclasses.field(repr=False, compare=False)

    @classmethod
    def from_proto(cls, status: coordinator_pb2.ClusterStatus) -> ClusterStatus:
        spec = status.spec
        return cls(
            addresses={"chief": list(spec.chief), "ps": list(spec.ps),
                       "worker": list(spec.worker), "evaluator": list(spec.evaluator)},
            members=[Member.from_proto(m) for m in status.members],
            running_job_id=status.running_job_id or None,
            queued_jobs=status.queued_jobs,
            raw=status,
        )
