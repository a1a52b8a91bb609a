"""`build_info.json` as a type: what `ihbench build` made, read back by a rebuild, set-baseline and
the tools that look at a build.

`from_json` checks a file read back (a hand-edited or damaged one is refused with the reason) and
fills in what older builds did not write, so no reader needs `.get(field, legacy)` branches;
`to_json` is what the writer stores. A field a newer writer adds is kept in `extra`.

Versions: 1, the shape since the first build (files written before `format_version` existed read
as 1; the earliest builds did not list `files` and `kept`, which stay None).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Optional

BUILD_INFO_FORMAT = 1


_REQUIRED = {"builder": str, "sources_fingerprint": str, "conversations": list, "split": str, "configs": list}
_OPTIONAL = {"files": list, "kept": list, "statistics": dict, "notes": list, "baselines": str, "format_version": int}


class BuildInfoError(ValueError):
    """Why a build_info.json cannot be used; `BuildDir` reports it with the file."""


@dataclass(frozen=True)
class BuildInfo:
    """The record of one build (and of a set-baseline copy of it)."""

    builder: str
    sources_fingerprint: str
    conversations: list[str]
    split: str
    #: the configs the build made (not those it kept)
    configs: list[str]
    #: the top-level names the build wrote (a rebuild replaces only these); None: a build older than the list
    files: Optional[list[str]] = None
    #: what an earlier folder held that no build wrote (imported configs, a user's files), carried over
    kept: Optional[list[str]] = None
    statistics: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: where the baselines came from, when `ihbench set-baseline` replaced them
    baselines: Optional[str] = None
    format_version: int = BUILD_INFO_FORMAT
    extra: dict = field(default_factory=dict, compare=False)

    @classmethod
    def from_json(cls, data) -> "BuildInfo":
        if not isinstance(data, dict):
            raise BuildInfoError("not a JSON object")
        for name, kind in {**_REQUIRED, **_OPTIONAL}.items():
            value = data.get(name)
            if value is None:
                if name in _REQUIRED:
                    raise BuildInfoError(f"missing field {name!r}")
            elif not isinstance(value, kind) or isinstance(value, bool):
                raise BuildInfoError(f"field {name!r} has the wrong type ({type(value).__name__})")
        if "format_version" in data and data["format_version"] is None:  # as run.json's: absent is old, null edited
            raise BuildInfoError("field 'format_version' is null; ihbench writes a number there (edited by hand?)")
        version = data.get("format_version", 1)
        if not 1 <= version <= BUILD_INFO_FORMAT:  # a later one may mean its fields otherwise; none is below 1
            newer = ": written by a newer ihbench? upgrade it" if version > BUILD_INFO_FORMAT else " (edited by hand?)"
            allowed = f"a whole number from 1 to {BUILD_INFO_FORMAT}" if BUILD_INFO_FORMAT > 1 else "1"
            raise BuildInfoError(f"field 'format_version' must be {allowed}, got {version!r}{newer}")
        names = {f.name for f in fields(cls)} - {"extra"}
        known = {k: v for k, v in data.items() if k in names and v is not None}
        return cls(**{"format_version": 1, **known}, extra={k: v for k, v in data.items() if k not in names})

    def to_json(self) -> dict:
        """In the order the file always had; fields an older build lacked are not invented."""
        data = asdict(self)
        extra = data.pop("extra")
        return {**{k: v for k, v in data.items() if v is not None}, **extra}

