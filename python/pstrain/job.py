"""A handle on one job: its id and everything one asks about it."""

from __future__ import annotations

from typing import TYPE_CHECKING, AsyncIterator, Iterator, List, Optional

from pstrain.events import JobEvent
from pstrain.job_status import ExportedModel, JobState, JobStatus
from pstrain.scalars import Scalar

if TYPE_CHECKING:
    import pandas

    from pstrain.client import Client


class Job:
    """A job of a cluster, as returned by Client.submit() or Client.job().

    It keeps only the job's id: every call asks the coordinator, so two
    handles on one id agree, and a handle is as thread-safe as its Client.
    Errors are those of the Client's calls of the same names.

        job = client.submit("examples/fashion_mnist_mlp.pbtxt")
        async for event in job.watch_async():   # a notebook stays responsive
            ...
        final = job.wait()
    """

    def __init__(self, client: Client, job_id: str) -> None:
        self._client = client
        self._id = job_id

    @property
    def id(self) -> str:
        return self._id

    @property
    def client(self) -> Client:
        return self._client

    def __repr__(self) -> str:
        return f"pstrain.Job({self._id!r})"

    def status(self) -> JobStatus:
        """The job's status now."""
        return self._client.status(self._id)

    @property
    def state(self) -> JobState:
        """The job's state now (one call to the coordinator)."""
        return self.status().state

    def watch(self, *, progress: bool = True,
              timeout: Optional[float] = None) -> Iterator[JobEvent]:
        """The job's events until it ends (Client.watch)."""
        return self._client.watch(self._id, progress=progress, timeout=timeout)

    def watch_async(self, *, progress: bool = True,
                    timeout: Optional[float] = None) -> AsyncIterator[JobEvent]:
        """The job's events until it ends, for `async for` (Client.watch_async)."""
        return self._client.watch_async(self._id, progress=progress, timeout=timeout)

    def wait(self, timeout: Optional[float] = None) -> JobStatus:
        """Waits for the job to end; its final status (Client.wait)."""
        return self._client.wait(self._id, timeout=timeout)

    async def wait_async(self, timeout: Optional[float] = None) -> JobStatus:
        """wait() for asyncio."""
        return await self._client.wait_async(self._id, timeout=timeout)

    def stop(self, *, immediately: bool = False) -> JobStatus:
        """Stops the job, after a final checkpoint unless `immediately`."""
        return self._client.stop(self._id, immediately=immediately)

    def export(self) -> ExportedModel:
        """The model the evaluator exported for the job (Client.export)."""
        return self._client.export(self._id)

    def scalars(self) -> List[Scalar]:
        """Its training and evaluation scalars, read from its model_dir."""
        return self._client.scalars(self._id)

    def scalars_frame(self) -> pandas.DataFrame:
        """scalars() as a pandas DataFrame (needs pandas)."""
        return self._client.scalars_frame(self._id)
