"""A job's events as they happen (the WatchJob stream), read either
blocking, for scripts, or with asyncio, for notebooks and services whose
event loop must keep running meanwhile."""

from __future__ import annotations

from typing import AsyncIterator, Iterator, Optional

import grpc
import grpc.aio

from pstrain import errors
from pstrain.connection import Connection
from pstrain.events import JobEvent, event_of
from pstrain.protos import coordinator_pb2
from pstrain.protos import coordinator_pb2_grpc


def watch_events(stub: coordinator_pb2_grpc.JobServiceStub, connection: Connection,
                 job_id: str, *, progress: bool, timeout: Optional[float]) -> Iterator[JobEvent]:
    """The job's events until it ends, read on `stub`'s channel."""
    request = coordinator_pb2.WatchJobRequest(job_id=job_id, include_progress=progress)
    stream = stub.WatchJob(request, timeout=timeout, metadata=connection.metadata)
    try:
        for message in stream:
            event = event_of(message)
            if event is not None:
                yield event
    except grpc.RpcError as error:
        raise _watch_error(error, job_id, timeout, connection.address) from None
    finally:
        stream.cancel()


async def watch_events_async(connection: Connection, job_id: str, *, progress: bool,
                             timeout: Optional[float]) -> AsyncIterator[JobEvent]:
    """The job's events until it ends, on a grpc.aio channel of its own:
    a grpc.aio channel belongs to the event loop that opened it, and the
    blocking client may be used from any thread or loop."""
    request = coordinator_pb2.WatchJobRequest(job_id=job_id, include_progress=progress)
    async with connection.open_async() as channel:
        stub = coordinator_pb2_grpc.JobServiceStub(channel)
        call = stub.WatchJob(request, timeout=timeout, metadata=connection.metadata)
        try:
            async for message in call:
                event = event_of(message)
                if event is not None:
                    yield event
        except grpc.RpcError as error:  # grpc.aio.AioRpcError is one
            raise _watch_error(error, job_id, timeout, connection.address) from None
        finally:
            call.cancel()


def _watch_error(error: grpc.RpcError, job_id: str, timeout: Optional[float],
                 address: str) -> errors.Error:
    # A watch's deadline is the caller's patience, not a coordinator that
    # did not answer: the job goes on.
    code = error.code()
    if code == grpc.StatusCode.DEADLINE_EXCEEDED and timeout is not None:
        return errors.GaveUpWaiting(code, f"job {job_id} did not end within {timeout} s")
    return errors.from_rpc_error(error, address)
