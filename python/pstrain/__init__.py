"""pstrain: a Python client of pstrain training clusters.

    import pstrain
    client = pstrain.Client("localhost:7070")
    job_id = client.submit("examples/fashion_mnist_mlp.pbtxt")
    for event in client.watch(job_id):
        ...
    frame = client.scalars_frame(job_id)

Messages are those of protos/ (pstrain.protos.job_pb2, coordinator_pb2, ...),
generated when the package is built (`bazel build //python:pstrain`).
"""

from pstrain.client import Client, state_name
from pstrain.errors import (AuthRefused, Busy, Error, GaveUpWaiting, InvalidSpec, NotFound,
                            Unreachable, WrongState)
from pstrain.job_spec import to_job_spec
from pstrain.scalars import Scalar, read_scalars

__all__ = [
    "AuthRefused", "Busy", "Client", "Error", "GaveUpWaiting", "InvalidSpec", "NotFound",
    "Scalar", "Unreachable", "WrongState", "read_scalars", "state_name", "to_job_spec",
]
