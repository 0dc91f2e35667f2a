"""Python enums for the enums of protos/, by name, so results print and
compare as words ("SUCCEEDED") rather than numbers."""

from __future__ import annotations

import datetime
import enum
from typing import Optional, Type, TypeVar

from google.protobuf.internal import enum_type_wrapper

E = TypeVar("E", bound=enum.Enum)


class ProtoEnum(str, enum.Enum):
    """A proto enum's values without their prefix; each member equals its
    name as a string (JobState.RUNNING == "RUNNING"). Every one has an
    UNSPECIFIED member, which also stands for values this client does not
    know (a newer coordinator's)."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


def from_proto(cls: Type[E], wrapper: enum_type_wrapper.EnumTypeWrapper, prefix: str,
               number: int) -> E:
    """The member of `cls` named as `number` is in `wrapper`, less
    `prefix`; UNSPECIFIED for a number `wrapper` does not know."""
    try:
        name = wrapper.Name(number)
    except ValueError:
        return cls["UNSPECIFIED"]
    short = name[len(prefix):] if name.startswith(prefix) else name
    return cls[short] if short in cls.__members__ else cls["UNSPECIFIED"]


def to_proto(wrapper: enum_type_wrapper.EnumTypeWrapper, prefix: str, value: object) -> int:
    """The number of `value` (a member, its name with or without `prefix`,
    in any case, or a number) in `wrapper`. ValueError names what is known
    when the name is not."""
    if isinstance(value, int) and not isinstance(value, enum.Enum):
        return value
    name = str(value).upper()
    if not name.startswith(prefix):
        name = prefix + name
    try:
        return wrapper.Value(name)
    except ValueError:
        known = ", ".join(n[len(prefix):] for n in wrapper.keys() if not n.endswith("UNSPECIFIED"))
        raise ValueError(f"unknown {prefix.rstrip('_').lower()} {value!r}; one of {known}") from None


def time_of(unix_ms: int) -> Optional[datetime.datetime]:
    """A UTC time for milliseconds since the epoch; None for 0 (not yet)."""
    if unix_ms == 0:
        return None
    return datetime.datetime.fromtimestamp(unix_ms / 1000, tz=datetime.timezone.utc)
