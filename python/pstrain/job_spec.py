"""Job specs from whatever a user has at hand: a JobSpec message, a dict, a
file, or text in protobuf text format or JSON."""

from __future__ import annotations

import json
import os
from typing import Any, Mapping, Union

from google.protobuf import json_format
from google.protobuf import text_format

from pstrain.protos import job_pb2

# What submit() and validate() take as a job spec.
JobSpecLike = Union[job_pb2.JobSpec, Mapping[str, Any], str, "os.PathLike[str]"]


def to_job_spec(spec: JobSpecLike) -> job_pb2.JobSpec:
    """A JobSpec message from `spec`.

    `spec` may be a job_pb2.JobSpec; a dict (field names as in job.proto or
    their JSON camelCase); a path to a .pbtxt or .json file; or the text of
    one. Raises ValueError naming what could not be read, before anything is
    sent to the cluster.
    """
    if isinstance(spec, job_pb2.JobSpec):
        return spec
    if isinstance(spec, Mapping):
        return _parse_json(spec, "the dict")
    if isinstance(spec, os.PathLike) or (isinstance(spec, str) and _looks_like_path(spec)):
        path = str(os.fspath(spec))
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except OSError as error:
            raise ValueError(f"cannot read the job spec {path}: {error.strerror}") from None
        return _parse_text(text, path)
    if isinstance(spec, str):
        return _parse_text(spec, "the job spec text")
    raise TypeError(
        "a job spec is a JobSpec, a dict, a path, or text-format or JSON text; got "
        + type(spec).__name__)


def _looks_like_path(text: str) -> bool:
    # One line ending like a spec file: a path. Anything else is the spec.
    return "\n" not in text and text.strip().endswith((".pbtxt", ".json", ".textproto"))


def _parse_text(text: str, source: str) -> job_pb2.JobSpec:
    if text.lstrip().startswith("{"):
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise ValueError(f"{source}: not valid JSON: {error}") from None
        return _parse_json(value, source)
    spec = job_pb2.JobSpec()
    try:
        text_format.Parse(text, spec)
    except text_format.ParseError as error:
        raise ValueError(f"{source}: {error}") from None
    return spec


def _parse_json(value: Any, source: str) -> job_pb2.JobSpec:
    spec = job_pb2.JobSpec()
    try:
        json_format.ParseDict(dict(value) if isinstance(value, Mapping) else value, spec)
    except json_format.ParseError as error:
        raise ValueError(f"{source}: {error}") from None
    return spec
