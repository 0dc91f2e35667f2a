"""The pstrain client: submit, follow and manage jobs on a cluster's
coordinator from Python, as the `pstrain` command-line client does."""

import os
import uuid

import grpc

from pstrain import errors
from pstrain import job_spec
from pstrain import scalars as scalar_files
from pstrain.protos import coordinator_pb2
from pstrain.protos import coordinator_pb2_grpc
from pstrain.protos import job_pb2

DEFAULT_COORDINATOR = "localhost:7070"
COORDINATOR_ENV = "PSTRAIN_COORDINATOR"
TOKEN_ENV = "PSTRAIN_TOKEN"
# Sends of one submit when the coordinator does not answer in time.
_SUBMIT_ATTEMPTS = 3


class Client:
    """A connection to a pstrain coordinator.

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
      timeout: seconds each call but watch() may take; default 30.

    Calls raise a pstrain.Error subclass carrying the gRPC status code and
    the coordinator's message. Usable as a context manager, which closes
    the channel.
    """

    def __init__(self, address=None, *, tls_ca=None, tls_cert=None, tls_key=None,
                 tls_server_name=None, client_token_file=None, timeout=30.0):
        self.address = address or os.environ.get(COORDINATOR_ENV) or DEFAULT_COORDINATOR
        self.timeout = timeout
        token = _read_token(client_token_file)
        self._metadata = (("authorization", "Bearer " + token),) if token else ()
        if tls_ca or tls_cert:
            options = [("grpc.ssl_target_name_override", tls_server_name)] if tls_server_name else []
            credentials = grpc.ssl_channel_credentials(
                root_certificates=_read_pem(tls_ca, "tls_ca"),
                private_key=_read_pem(tls_key, "tls_key"),
                certificate_chain=_read_pem(tls_cert, "tls_cert"))
            self._channel = grpc.secure_channel(self.address, credentials, options)
        else:
            if tls_key or tls_server_name:
                raise ValueError("tls_key and tls_server_name need tls_cert or tls_ca")
            self._channel = grpc.insecure_channel(self.address)
        self._jobs = coordinator_pb2_grpc.JobServiceStub(self._channel)

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    def submit(self, spec, *, request_id=None):
        """Submits a job and returns its id ("fashion-mnist-mlp-3").

        `spec`: a JobSpec, a dict, a path to a .pbtxt or .json file, or the
        text of one (see pstrain.to_job_spec; ValueError when it cannot be
        read). InvalidSpec names the field at fault; Busy: the queue is full.
        The coordinator answers at once; the job reads its data as it starts.

        `request_id` (default: a random one) makes the submit idempotent: a
        submit with the id of a job the coordinator knows returns that job's
        id and queues nothing. The submit is sent again with its id, up to
        3 times in all, when the coordinator does not answer in time.
        """
        request = coordinator_pb2.SubmitJobRequest(spec=job_spec.to_job_spec(spec),
                                                   request_id=request_id or uuid.uuid4().hex)
        attempts = 1
        while True:
            try:
                return self._call(self._jobs.SubmitJob, request).job_id
            except errors.Error as error:
                if error.code != grpc.StatusCode.DEADLINE_EXCEEDED or attempts == _SUBMIT_ATTEMPTS:
                    raise
                attempts += 1

    def validate(self, spec):
        """The spec as the coordinator would run it, defaults filled in; queues
        nothing. Checks what the job's start would: the data read whole, the
        model built on it, the per-job limits. InvalidSpec names the field at
        fault; NotFound a data file that is not there."""
        request = coordinator_pb2.SubmitJobRequest(spec=job_spec.to_job_spec(spec),
                                                   validate_only=True)
        return self._call(self._jobs.SubmitJob, request).status.spec

    def status(self, job_id):
        """The job's JobStatus message. NotFound: no such job."""
        return self._call(self._jobs.GetJob, coordinator_pb2.GetJobRequest(job_id=job_id))

    def list(self, states=None, limit=0):
        """JobStatus messages, newest first: only in `states` (names such as
        "RUNNING", or JobState values) when given; at most `limit` (0: 100)."""
        request = coordinator_pb2.ListJobsRequest(
            states=[_job_state(state) for state in states or ()], limit=limit)
        return list(self._call(self._jobs.ListJobs, request).jobs)

    def stop(self, job_id, *, immediately=False):
        """Stops the job; it saves a final checkpoint unless `immediately`.
        Returns its JobStatus; a job already ended is left as it is."""
        request = coordinator_pb2.StopJobRequest(job_id=job_id, immediately=immediately)
        return self._call(self._jobs.StopJob, request).status

    def watch(self, job_id, *, progress=True, timeout=None):
        """Yields the job's JobEvent messages until it ends: first its current
        status, then state changes, checkpoints (`checkpoint`, or
        `checkpoint_failure` for one that could not be saved), evaluations
        and (with `progress`) training progress. Stopping the iteration stops watching,
        not the job. GaveUpWaiting when `timeout` seconds pass first (the job
        goes on). A coordinator that goes away meanwhile ends it with
        Unreachable: unlike `pstrain watch`, this does not wait for a
        restarted coordinator; call watch() again once it is back (it
        resumes the job under the same id)."""
        request = coordinator_pb2.WatchJobRequest(job_id=job_id, include_progress=progress)
        stream = self._jobs.WatchJob(request, timeout=timeout, metadata=self._metadata)
        try:
            for event in stream:
                yield event
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED and timeout is not None:
                raise errors.GaveUpWaiting(
                    error.code(), f"job {job_id} did not end within {timeout} s") from None
            raise errors.from_rpc_error(error, self.address) from None
        finally:
            stream.cancel()

    def wait(self, job_id, *, timeout=None):
        """Waits for the job to end and returns its final JobStatus."""
        for _ in self.watch(job_id, progress=False, timeout=timeout):
            pass
        return self.status(job_id)

    def cluster(self):
        """The ClusterStatus message: the cluster spec, every member, the
        running job and the length of the queue."""
        return self._call(self._jobs.GetCluster, coordinator_pb2.GetClusterRequest())

    def members(self):
        """The Member messages of every process the coordinator knows."""
        return list(self.cluster().members)

    def scalars(self, job_id):
        """The job's training and evaluation scalars, as a list of
        pstrain.Scalar(split, tag, step, wall_time, value), read from its
        model_dir, which must be readable where Python runs."""
        model_dir = self.status(job_id).spec.checkpoint.model_dir
        return scalar_files.read_scalars(model_dir)

    def scalars_frame(self, job_id):
        """scalars() as a pandas DataFrame (needs pandas)."""
        return scalar_files.to_frame(self.scalars(job_id))

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout, metadata=self._metadata)
        except grpc.RpcError as error:
            raise errors.from_rpc_error(error, self.address) from None


def state_name(state):
    """"SUCCEEDED" for JOB_STATE_SUCCEEDED, and so on."""
    return job_pb2.JobState.Name(state).removeprefix("JOB_STATE_")


def _job_state(state):
    if isinstance(state, str):
        name = state.upper()
        return job_pb2.JobState.Value(name if name.startswith("JOB_STATE_") else
                                      "JOB_STATE_" + name)
    return state


def _read_token(path):
    if not path:
        return os.environ.get(TOKEN_ENV, "").strip()
    try:
        with open(path, encoding="utf-8") as file:
            token = file.read().strip()
    except OSError as error:
        raise ValueError(f"client_token_file: cannot read {path}: {error.strerror}") from None
    if not token:
        raise ValueError(f"client_token_file: {path} is empty")
    return token


def _read_pem(path, what):
    if not path:
        return None
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as error:
        raise ValueError(f"{what}: cannot read {path}: {error.strerror}") from None
