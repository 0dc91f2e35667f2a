"""A job's scalar summaries, read from its model_dir.

The job's processes write every training scalar (loss, learning_rate,
examples_per_sec) to <model_dir>/train/scalars.jsonl and every evaluation
metric to <model_dir>/eval/scalars.jsonl, one JSON object per line
(common/summary/scalar_jsonl.h), beside TensorBoard's event files.
"""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING, Dict, List, NamedTuple, Sequence

if TYPE_CHECKING:
    import pandas


class Scalar(NamedTuple):
    """One scalar summary: `split` is "train" or "eval"."""

    split: str
    tag: str
    step: int
    wall_time: float
    value: float


SPLITS = ("train", "eval")
COLUMNS = Scalar._fields

# JSON has no NaN or infinities; the writer spells them as protobuf's JSON
# mapping does.
_SPECIAL_VALUES: Dict[str, float] = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def read_scalars(model_dir: str) -> List[Scalar]:
    """Every scalar of `model_dir`, train then eval, each in file order.

    A split that has written nothing yet has no file and contributes no
    rows. A last line its writer had not finished is skipped. Raises
    FileNotFoundError when `model_dir` does not exist (it must be readable
    from where Python runs: a shared or local file system), ValueError
    naming the file and line of a record that does not parse.
    """
    if not os.path.isdir(model_dir):
        raise FileNotFoundError(f"no model_dir {model_dir} here (the job's model_dir must be "
                                "readable from this machine)")
    scalars: List[Scalar] = []
    for split in SPLITS:
        path = os.path.join(model_dir, split, "scalars.jsonl")
        try:
            with open(path, encoding="utf-8") as file:
                lines = file.read().split("\n")
        except FileNotFoundError:
            continue
        for number, line in enumerate(lines, start=1):
            if not line:
                continue
            try:
                scalars.append(_parse_line(split, line))
            except ValueError as error:
                if number == len(lines):  # the tail a running job is writing
                    break
                raise ValueError(f"{path}:{number}: {error}") from None
    return scalars


def to_frame(scalars: Sequence[Scalar]) -> pandas.DataFrame:
    """`scalars` as a pandas DataFrame with columns split, tag, step,
    wall_time, value. ImportError, saying what to install, without pandas."""
    try:
        import pandas  # pylint: disable=import-outside-toplevel
    except ImportError:
        raise ImportError("scalars as a DataFrame need pandas (Debian: apt-get install "
                          "python3-pandas); scalars() returns them as a list") from None
    return pandas.DataFrame.from_records(scalars, columns=COLUMNS)


def _parse_line(split: str, line: str) -> Scalar:
    record = json.loads(line)
    if not isinstance(record, dict):
        raise ValueError("not a JSON object")
    missing = [key for key in ("step", "wall_time", "tag", "value") if key not in record]
    if missing:
        raise ValueError(f"no {missing[0]!r}")
    value = record["value"]
    if isinstance(value, str):
        if value not in _SPECIAL_VALUES:
            raise ValueError(f"value {value!r} is not a number")
        value = _SPECIAL_VALUES[value]
    return Scalar(split, str(record["tag"]), int(record["step"]), float(record["wall_time"]),
                  float(value))
