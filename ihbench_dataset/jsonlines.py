"""Hand-made JSON-lines files (SID annotations and predictions, transcripts, judge likelihoods)
read one way: blank lines skipped, a line that is not JSON an error naming the file and line."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Union


def json_lines(path: Union[str, Path], error: type, *,
               where: str = "{path} line {number}") -> Iterator[tuple[int, Any]]:
    """(line number, decoded value) per non-blank line; `where` formats the place in `error`'s
    message (each file kind keeps the style its users already see)."""
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as decode_error:
                raise error(f"{where.format(path=path, number=number)}: not valid JSON ({decode_error.msg})") from None
