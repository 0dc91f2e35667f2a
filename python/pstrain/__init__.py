"""pstrain: a Python client of pstrain training clusters.

    import pstrain
    with pstrain.LocalCluster() as client:        # or pstrain.Client("host:7070")
        job = client.submit("examples/fashion_mnist_mlp.pbtxt")
        for event in job.watch():                 # or: async for ... in job.watch_async()
            if isinstance(event, pstrain.Progress):
                print(event.global_step, event.loss)
        final = job.wait()
        print(final.state, final.last_eval_metrics)
        frame = job.scalars_frame()

Results are plain Python values (JobStatus, Member, the events); each keeps
the protos/ message it was read from as `.raw`. Those messages are in
pstrain.protos (job_pb2, coordinator_pb2, ...), generated from protos/ when
the package is built.
"""

from pstrain.client import Client
from pstrain.cluster_status import ClusterStatus, Member, MemberHealth, MemberState, Role
from pstrain.errors import (AuthRefused, Busy, Error, GaveUpWaiting, InvalidSpec, NotFound,
                            Unreachable, WrongState)
from pstrain.events import (CheckpointFailed, CheckpointSaved, Evaluation, JobEvent, Progress,
                            StatusUpdate)
from pstrain.job import Job
from pstrain.job_spec import JobSpecLike, to_job_spec
from pstrain.job_status import Checkpoint, ExportedModel, JobState, JobStatus, StopReason
from pstrain.local_cluster import LocalCluster, LocalClusterError
from pstrain.scalars import Scalar, read_scalars

__version__ = "0.1.0"

__all__ = [
    "AuthRefused", "Busy", "Checkpoint", "CheckpointFailed", "CheckpointSaved", "Client",
    "ClusterStatus", "Error", "Evaluation", "ExportedModel", "GaveUpWaiting", "InvalidSpec", "Job",
    "JobEvent", "JobSpecLike", "JobState", "JobStatus", "LocalCluster", "LocalClusterError",
    "Member", "MemberHealth", "MemberState", "NotFound", "Progress", "Role", "Scalar",
    "StatusUpdate", "StopReason", "Unreachable", "WrongState", "read_scalars", "to_job_spec",
]
