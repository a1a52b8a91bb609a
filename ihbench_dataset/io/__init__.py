"""The I/O kernel: the few functions every "nothing lost" promise of the toolkit rests on.

    atomic.py     files replaced whole (write_atomic, write_json_atomic, atomic_path) and folders
                  built beside their target and swapped in (staging_folder, remove_stale_staging)
    jsonlines.py  JSON lines: durable appends (AppendLog), a log read back with its torn last
                  line repaired (read_records), hand-made files (json_lines)
    locks.py      one writer per directory (exclusive, lock_file_for), the lock gone when it ends
    folders.py    folders made for an output, removed again when nothing was written (new_folders)
    cache.py      the one cache folder (cache_root)
    json_object.py  a JSON file read whole as an object, its problems in one line (read_json_object)
    regular.py    files read whole are regular files, never a device, a pipe or a folder (check_regular),
                  nor a link leading out of a downloaded benchmark's folder (leaves)
"""
from .atomic import (
    atomic_path,
    remove_stale_staging,
    staging_folder,
    temporary_sibling,
    write_atomic,
    write_json_atomic,
)
from .cache import cache_root
from .folders import new_folders
from .json_object import read_json_object
from .jsonlines import AppendLog, CorruptLogError, json_lines, read_records
from .locks import LockedError, exclusive, holder, lock_file_for

__all__ = [
    "AppendLog", "CorruptLogError", "LockedError", "atomic_path", "cache_root", "exclusive", "holder", "json_lines",
    "lock_file_for", "new_folders", "read_json_object", "read_records", "remove_stale_staging", "staging_folder", "temporary_sibling",
    "write_atomic", "write_json_atomic",
]
