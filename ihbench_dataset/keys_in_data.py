"""A provider's key in a built dataset's texts, found before the dataset is published.

`ihbench verify` and `build` refuse a source that holds one, and `convbench-import` a benchmark; a folder
built before those checks, or a Parquet file edited since, still holds what it holds, and a publish would put
it on the Hub for anyone to read (battery 58, E9). Only text is read: an audio column's bytes are left unread.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Optional

from .redaction import credential_in_data


def key_in_parquet(path: Path) -> Optional[tuple[str, str]]:
    """(the column, `turns.user` dotted through structs and lists, of `path` whose text holds a credential; what it
    holds, said without it: a provider's key, an environment secret's value), or None."""
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    columns = [field.name for field in schema if _holds_text(field.type)]
    if not columns:
        return None
    table = pq.read_table(path, columns=columns)
    for name in columns:
        for where, texts in _texts(name, table.column(name)):
            secret = credential_in_data("\n".join(texts))
            if secret:
                return where, secret
    return None


def _holds_text(kind) -> bool:
    import pyarrow as pa

    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return True
    if pa.types.is_struct(kind):
        if any(pa.types.is_binary(kind.field(i).type) or pa.types.is_large_binary(kind.field(i).type)
               for i in range(kind.num_fields)):
            return False  # an Audio feature's {bytes, path}: a clip, not text
        return any(_holds_text(kind.field(i).type) for i in range(kind.num_fields))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return _holds_text(kind.value_type)
    return False


def _texts(where: str, column) -> Iterator[tuple[str, list]]:
    """(the dotted name, its text values) of every text inside `column`, a chunked array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        yield where, [value for value in column.to_pylist() if value is not None]
    elif pa.types.is_struct(kind) and _holds_text(kind):
        for i in range(kind.num_fields):
            yield from _texts(f"{where}.{kind.field(i).name}", pc.struct_field(column, [i]))
    elif (pa.types.is_list(kind) or pa.types.is_large_list(kind)) and _holds_text(kind):
        yield from _texts(where, pc.list_flatten(column))


def environment_secret_in(records, label) -> Optional[str]:
    """Where the first of `records` (items or conversations, as loaded) holds an environment secret's value, said
    without it (`item X: field: the value of $NAME`), or None. A dataset built or downloaded before the check, or by
    another tool, sent the value of `$MY_SERVICE_TOKEN` in every prompt of a run and a judge, and `export` wrote it
    into a Markdown file (battery 62, I16 and I17). Only environment secrets: a benchmark's own random-looking codes
    are its data."""
    from .checks.words import strings
    from .redaction import any_environment_secret, secret_variable_in

    if not any_environment_secret():
        return None
    for record in records:
        for where, text in strings(record):
            variable = secret_variable_in(text)
            if variable:
                return f"{label(record)}: {where} holds the value of ${variable}"
    return None

