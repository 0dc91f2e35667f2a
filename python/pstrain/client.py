"""The pstrain client: submit, follow and manage jobs on a cluster's
coordinator from Python, as the `pstrain` command-line client does."""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, AsyncIterator, Callable, Iterable, Iterator, List, Optional, \
    TypeVar, Union

import grpc

from pstrain import errors
from pstrain import job_spec
from pstrain import scalars as scalar_files
from pstrain import watch_stream
from pstrain.cluster_status import ClusterStatus, Member
from pstrain.connection import connect
from pstrain.events import JobEvent
from pstrain.job import Job
from pstrain.job_status import ExportedModel, JobState, JobStatus
from pstrain.proto_enum import to_proto
from pstrain.protos import coordinator_pb2
from pstrain.protos import coordinator_pb2_grpc
from pstrain.protos import job_pb2

if TYPE_CHECKING:
    import pandas

# Sends of one submit when the coordinator does not answer in time.
_SUBMIT_ATTEMPTS = 3

Response = TypeVar("Response")


class Client:
    """A connection to a pstrain coordinator. Safe to use from several
    threads at once, as its gRPC channel is.

    Args:
      address: host:port of the coordinator; default $PSTRAIN_COORDINATOR,
        else localhost:7070 (where `pstrain local` puts it).
      tls_ca, tls_cert, tls_key: PEM files, as the CLI's --tls_ca,
        --tls_cert and --tls_key. TLS is on when tls_ca or tls_cert is given
        (tls_ca alone: the system's CAs are not used, the server must chain
        to it; tls_cert and tls_key: mutual TLS).
      tls_server_name: the name the server's certificate carries when it is
        not the host dialled (--tls_server_name).
      client_token_file: file holding the client API's bearer token
        (--client_token_file); default $PSTRAIN_TOKEN, else none.
      timeout: seconds each call but a watch or wait may take; default 30.

    ValueError names a file that cannot be read. Calls raise a
    pstrain.Error subclass carrying the gRPC status code and the
    coordinator's message. Usable as a context manager, which closes the
    channel.
    """

    def __init__(self, address: Optional[str] = None, *, tls_ca: Optional[str] = None,
                 tls_cert: Optional[str] = None, tls_key: Optional[str] = None,
                 tls_server_name: Optional[str] = None, client_token_file: Optional[str] = None,
                 timeout: float = 30.0) -> None:
        self.connection = connect(address, tls_ca=tls_ca, tls_cert=tls_cert, tls_key=tls_key,
                                  tls_server_name=tls_server_name,
                                  client_token_file=client_token_file)
        self.timeout = timeout
        self._channel = self.connection.open()
        self._jobs = coordinator_pb2_grpc.JobServiceStub(self._channel)

    @property
    def address(self) -> str:
        return self.connection.address

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"pstrain.Client({self.address!r})"

    # ------------------------------------------------------------- jobs --

    def submit(self, spec: job_spec.JobSpecLike, *, request_id: Optional[str] = None) -> Job:
        """Queues a job and returns its handle (job.id: "fashion-mnist-mlp-3").

        `spec`: a JobSpec, a dict, a path to a .pbtxt or .json file, or the
        text of one (see pstrain.to_job_spec; ValueError when it cannot be
        read). InvalidSpec names the field at fault; Busy: the queue is full.
        The coordinator answers at once; the job reads its data as it starts.

        `request_id` (default: a random one) makes the submit idempotent: a
        submit with the id of a job the coordinator knows returns that job
        and queues nothing. The submit is sent again with its id, up to 3
        times in all, when the coordinator does not answer in time.
        """
        request = coordinator_pb2.SubmitJobRequest(spec=job_spec.to_job_spec(spec),
                                                   request_id=request_id or uuid.uuid4().hex)
        attempts = 1
        while True:
            try:
                return self.job(self._call(self._jobs.SubmitJob, request).job_id)
            except errors.Error as error:
                if error.code != grpc.StatusCode.DEADLINE_EXCEEDED or attempts == _SUBMIT_ATTEMPTS:
                    raise
                attempts += 1

    def job(self, job_id: str) -> Job:
        """A handle on a job submitted before (by anyone); nothing is asked
        of the coordinator until it is used."""
        return Job(self, job_id)

    def validate(self, spec: job_spec.JobSpecLike) -> job_pb2.JobSpec:
        """The spec as the coordinator would run it, defaults filled in, as
        the JobSpec message submit() takes; queues nothing. Checks what the
        job's start would: the data read whole, the model built on it, the
        per-job limits. InvalidSpec names the field at fault; NotFound a data
        file that is not there."""
        request = coordinator_pb2.SubmitJobRequest(spec=job_spec.to_job_spec(spec),
                                                   validate_only=True)
        return self._call(self._jobs.SubmitJob, request).status.spec

    def status(self, job_id: str) -> JobStatus:
        """The job's status. NotFound: no such job."""
        return JobStatus.from_proto(
            self._call(self._jobs.GetJob, coordinator_pb2.GetJobRequest(job_id=job_id)))

    def list(self, states: Optional[Iterable[Union[JobState, str]]] = None,
             limit: int = 0) -> List[JobStatus]:
        """Jobs, newest first: only those in `states` (JobState members or
        their names, "RUNNING") when given; at most `limit` (0: 100).
        ValueError names a state that does not exist."""
        request = coordinator_pb2.ListJobsRequest(
            states=[to_proto(job_pb2.JobState, "JOB_STATE_", s) for s in states or ()],
            limit=limit)
        return [JobStatus.from_proto(j) for j in self._call(self._jobs.ListJobs, request).jobs]

    def stop(self, job_id: str, *, immediately: bool = False) -> JobStatus:
        """Stops the job; it saves a final checkpoint unless `immediately`.
        Returns its status; a job already ended is left as it is. NotFound:
        no such job."""
        request = coordinator_pb2.StopJobRequest(job_id=job_id, immediately=immediately)
        return JobStatus.from_proto(self._call(self._jobs.StopJob, request).status)

    def watch(self, job_id: str, *, progress: bool = True,
              timeout: Optional[float] = None) -> Iterator[JobEvent]:
        """Yields the job's events until it ends: first a StatusUpdate, then
        StatusUpdate on each change of state, CheckpointSaved,
        CheckpointFailed, Evaluation and (with `progress`) Progress.
        Stopping the iteration stops watching, not the job. GaveUpWaiting
        when `timeout` seconds pass first (the job goes on). A coordinator
        that goes away meanwhile ends it with Unreachable: unlike `pstrain
        watch`, this does not wait for a restarted coordinator; watch again
        once it is back (it resumes the job under the same id)."""
        return watch_stream.watch_events(self._jobs, self.connection, job_id,
                                         progress=progress, timeout=timeout)

    def watch_async(self, job_id: str, *, progress: bool = True,
                    timeout: Optional[float] = None) -> AsyncIterator[JobEvent]:
        """watch() for asyncio (`async for event in client.watch_async(id)`):
        the event loop, a notebook's included, runs on between events."""
        return watch_stream.watch_events_async(self.connection, job_id, progress=progress,
                                               timeout=timeout)

    def wait(self, job_id: str, *, timeout: Optional[float] = None) -> JobStatus:
        """Waits for the job to end and returns its final status, whatever
        the state (check `.state`). GaveUpWaiting when `timeout` seconds
        pass first; the job goes on."""
        for _ in self.watch(job_id, progress=False, timeout=timeout):
            pass
        return self.status(job_id)

    async def wait_async(self, job_id: str, *, timeout: Optional[float] = None) -> JobStatus:
        """wait() for asyncio: `status = await client.wait_async(id)`."""
        async for _ in self.watch_async(job_id, progress=False, timeout=timeout):
            pass
        return await asyncio.get_running_loop().run_in_executor(None, self.status, job_id)

    def export(self, job_id: str) -> ExportedModel:
        """The model the evaluator exported for the job: the best
        checkpoint's (eval.best_metric), else the newest evaluated. The
        folder lies under the job's export.export_dir. NotFound: no such
        job; WrongState: nothing exported yet (the evaluator exports as it
        evaluates)."""
        request = coordinator_pb2.ExportModelRequest(job_id=job_id)
        return ExportedModel.from_proto(self._call(self._jobs.ExportModel, request))

    def scalars(self, job_id: str) -> List[scalar_files.Scalar]:
        """The job's training and evaluation scalars, as a list of
        pstrain.Scalar(split, tag, step, wall_time, value), read from its
        model_dir, which must be readable where Python runs."""
        return scalar_files.read_scalars(self.status(job_id).model_dir)

    def scalars_frame(self, job_id: str) -> pandas.DataFrame:
        """scalars() as a pandas DataFrame (needs pandas)."""
        return scalar_files.to_frame(self.scalars(job_id))

    # ---------------------------------------------------------- cluster --

    def cluster(self) -> ClusterStatus:
        """The cluster: addresses, every member, the running job and the
        length of the queue."""
        return ClusterStatus.from_proto(
            self._call(self._jobs.GetCluster, coordinator_pb2.GetClusterRequest()))

    def members(self) -> List[Member]:
        """Every process the coordinator knows but itself."""
        return self.cluster().members

    def shutdown(self, *, stop_running_job: bool = False) -> None:
        """Tells every process of the cluster, the coordinator last, to
        exit; queued jobs are stopped. With `stop_running_job` a running
        job is stopped first (with its final checkpoint); without,
        WrongState while a job runs."""
        self._call(self._jobs.Shutdown,
                   coordinator_pb2.ShutdownRequest(stop_running_job=stop_running_job))

    def _call(self, method: Callable[..., Response], request: object) -> Response:
        try:
            return method(request, timeout=self.timeout, metadata=self.connection.metadata)
        except grpc.RpcError as error:
            raise errors.from_rpc_error(error, self.address) from None
