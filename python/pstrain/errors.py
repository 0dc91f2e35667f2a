"""Errors of the pstrain client: Python exceptions carrying the gRPC status.

Every call of :class:`pstrain.Client` that the coordinator refuses, or that
cannot reach it, raises a subclass of :class:`Error`. Each carries the gRPC
status code and the coordinator's own message, so a notebook shows what went
wrong and a pipeline can branch on the class. The classes follow the exit
codes of the `pstrain` command-line client (docs/cli.md).
"""

from __future__ import annotations

from typing import Dict, Type

import grpc


class Error(Exception):
    """A call to the coordinator failed.

    Attributes:
      code: the grpc.StatusCode of the failure.
      message: what the coordinator (or gRPC, when it was not reached) said.
    """

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{message} ({code.name})")
        self.code = code
        self.message = message


class InvalidSpec(Error):
    """The job spec is invalid; the message names the field. From validate(),
    also data or a model that cannot be loaded, or a job over the cluster's
    per-job limits (a submitted job fails with that reason as it starts)."""


class NotFound(Error):
    """No such job (or checkpoint)."""


class Unreachable(Error):
    """The coordinator cannot be reached, or did not answer in time."""


class Busy(Error):
    """The coordinator's queue is full: the same call may succeed later."""


class AuthRefused(Error):
    """The coordinator did not accept the token."""


class WrongState(Error):
    """The cluster refused the request in its present state (a shutdown
    while a job runs, an export before the evaluator made one)."""


class GaveUpWaiting(Error):
    """The job still ran when a wait's timeout ran out; the job goes on."""


_CLASS_OF_CODE: Dict[grpc.StatusCode, Type[Error]] = {
    grpc.StatusCode.INVALID_ARGUMENT: InvalidSpec,
    grpc.StatusCode.NOT_FOUND: NotFound,
    grpc.StatusCode.UNAVAILABLE: Unreachable,
    grpc.StatusCode.DEADLINE_EXCEEDED: Unreachable,
    grpc.StatusCode.RESOURCE_EXHAUSTED: Busy,
    grpc.StatusCode.UNAUTHENTICATED: AuthRefused,
    grpc.StatusCode.PERMISSION_DENIED: AuthRefused,
    grpc.StatusCode.FAILED_PRECONDITION: WrongState,
}


def from_rpc_error(error: grpc.RpcError, address: str) -> Error:
    """The pstrain Error for a grpc.RpcError (blocking or grpc.aio) of a
    call to `address`."""
    code: grpc.StatusCode = error.code()
    message: str = error.details() or code.name
    if code == grpc.StatusCode.UNAVAILABLE:
        message = f"cannot reach the coordinator at {address}: {message}"
    elif code == grpc.StatusCode.DEADLINE_EXCEEDED:
        message = f"the coordinator at {address} did not answer in time: {message}"
    return _CLASS_OF_CODE.get(code, Error)(code, message)
