"""The I/O kernel (`ihbench.dataset.io`): the few functions every "nothing lost" promise rests on."""
import os
from contextlib import ExitStack

import pytest

from ihbench.dataset.io import (
    AppendLog,
    CorruptLogError,
    LockedError,
    atomic_path,
    cache_root,
    exclusive,
    json_lines,
    new_folders,
    read_records,
    remove_stale_staging,
    staging_folder,
    write_atomic,
    write_json_atomic,
)
from ihbench.dataset.io import atomic, locks


def _hidden(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture
def syncs(monkeypatch):
    """Every fsync and rename, in order: ("fsync", path) and ("replace", target)."""
    calls = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(descriptor):
        calls.append(("fsync", os.readlink(f"/proc/self/fd/{descriptor}")))
        real_fsync(descriptor)

    def replace(source, target, **kwargs):
        calls.append(("replace", str(target)))
        real_replace(source, target, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    return calls


def test_a_write_is_on_disk_before_it_replaces_the_file(tmp_path, syncs):
    target = tmp_path / "run.json"

    write_json_atomic(target, {"model": "é"})

    assert target.read_text(encoding="utf-8") == '{\n  "model": "é"\n}\n'
    (fsync, synced), replace = syncs
    assert fsync == "fsync" and os.path.basename(synced).endswith(".tmp") and replace == ("replace", str(target))
    assert _hidden(tmp_path) == []


@pytest.mark.parametrize("failure", ["writer", "fsync", "replace"])
def test_a_failing_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch, failure):
    target = tmp_path / "summary.json"
    target.write_text("old", encoding="utf-8")

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    if failure != "writer":
        monkeypatch.setattr(os, failure, broken)
    with pytest.raises(OSError):
        with atomic_path(target) as temporary:
            temporary.write_text("new, half written", encoding="utf-8")
            if failure == "writer":
                broken()

    assert target.read_text(encoding="utf-8") == "old"
    assert _hidden(tmp_path) == []


def test_bytes_and_text_are_written_as_given_into_a_new_folder(tmp_path):
    write_atomic(tmp_path / "a" / "clip.flac", b"\x00fLaC")
    write_atomic(tmp_path / "a" / "lines.jsonl", "one\r\ntwo\n")

    assert (tmp_path / "a" / "clip.flac").read_bytes() == b"\x00fLaC"
    assert (tmp_path / "a" / "lines.jsonl").read_bytes() == b"one\r\ntwo\n"


@pytest.mark.parametrize("exchange", [True, False], ids=["in one step", "renamed aside"])
def test_a_staging_folder_replaces_its_target_whole(tmp_path, monkeypatch, exchange):
    swaps = []
    real = atomic._exchange
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: swaps.append(exchange and real(a, b)) or swaps[-1])
    target = tmp_path / "data"
    (target / "old").mkdir(parents=True)

    with staging_folder(target) as work:
        assert work.parent == tmp_path and work.name.startswith(".") and list(work.iterdir()) == []
        (work / "README.md").write_text("new", encoding="utf-8")

    assert [p.name for p in target.iterdir()] == ["README.md"]
    assert _hidden(tmp_path) == []
    if exchange and swaps != [True]:
        pytest.skip("this file system cannot swap two folders in one step")


def _failed_staging(tmp_path, failure):
    """Fill a staging folder for a target holding README.md "old"; `failure` strikes; return the target."""
    target = tmp_path / "data"
    target.mkdir()
    (target / "README.md").write_text("old", encoding="utf-8")
    with pytest.raises((KeyboardInterrupt, OSError)):
        with staging_folder(target) as work:
            (work / "README.md").write_text("new", encoding="utf-8")
            failure()
    return target


def test_a_staging_folder_is_removed_on_error_and_the_target_stays(tmp_path):
    def interrupt():
        raise KeyboardInterrupt

    target = _failed_staging(tmp_path, interrupt)

    assert (target / "README.md").read_text(encoding="utf-8") == "old"
    assert _hidden(tmp_path) == []


def test_a_failed_swap_puts_the_old_folder_back(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "_exchange", lambda a, b: False)
    real_replace = os.replace

    def replace(source, target):
        if ".building-" in str(source):
            raise OSError(5, "Input/output error")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace)
    target = _failed_staging(tmp_path, lambda: None)  # the swap itself fails

    assert (target / "README.md").read_text(encoding="utf-8") == "old"
    assert _hidden(tmp_path) == []


def test_working_folders_of_killed_writers_are_removed_and_live_ones_kept(tmp_path):
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    for name in (f".data.building-{dead}", f".data.old-{dead}", f".data.building-{os.getppid()}", ".other.building-1"):
        (tmp_path / name).mkdir()

    remove_stale_staging(tmp_path / "data")

    assert _hidden(tmp_path) == [f".data.building-{os.getppid()}", ".other.building-1"]


def test_every_appended_record_is_synced(tmp_path, syncs):
    path = tmp_path / "run" / "responses.jsonl"
    with AppendLog(path) as log:
        log.extend([{"id": "a"}, {"id": "b"}])

    assert [kind for kind, _ in syncs] == ["fsync", "fsync"]
    assert read_records(path) == [{"id": "a"}, {"id": "b"}]


def test_a_torn_last_line_is_ignored_by_readers_and_cut_by_the_writer(tmp_path):
    path = tmp_path / "responses.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b", "resp')

    assert read_records(path) == [{"id": "a"}]
    assert path.read_bytes().endswith(b'"resp')  # a reader changes nothing
    assert read_records(path, repair=True) == [{"id": "a"}]
    assert path.read_bytes() == b'{"id": "a"}\n'
    with AppendLog(path) as log:
        log.append({"id": "b"})
    assert read_records(path) == [{"id": "a"}, {"id": "b"}]


def test_a_damaged_line_inside_a_log_is_not_guessed_at(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_text('{"id": "a"}\n{"id": \n{"id": "c"}\n', encoding="utf-8")

    with pytest.raises(CorruptLogError, match=r"judgments.jsonl: line 2 is not valid JSON .*not torn by a crash"):
        read_records(path, repair=True)


def test_unusable_records_are_left_out_and_named(tmp_path, caplog):
    path = tmp_path / "responses.jsonl"
    path.write_text('[1]\n{"epoch": "x"}\n{"epoch": 1}\n', encoding="utf-8")

    records = read_records(path, check=lambda r: None if isinstance(r["epoch"], int) else "epoch is not a number")

    assert records == [{"epoch": 1}]
    assert "line 1: not a JSON object" in caplog.text and "line 2: epoch is not a number" in caplog.text


def test_a_record_holding_a_line_separator_character_is_one_record(tmp_path):
    path = tmp_path / "responses.jsonl"
    with AppendLog(path) as log:
        log.append({"response": "one\u2028two\x1cthree\x85"})

    assert read_records(path) == [{"response": "one\u2028two\x1cthree\x85"}]


def test_hand_made_files_name_the_file_and_line_of_a_bad_line(tmp_path):
    path = tmp_path / "words.jsonl"
    path.write_text('{"a": 1}\n\n{"b": \n', encoding="utf-8")

    class WordsError(ValueError):
        pass

    lines = json_lines(path, WordsError)
    assert next(lines) == (1, {"a": 1})
    with pytest.raises(WordsError, match=rf"^{path} line 3: not valid JSON \(Expecting value at column 7\)$"):
        next(lines)
    with pytest.raises(WordsError, match=r"^line 3 of the words: not valid JSON"):
        list(json_lines(path, WordsError, where="line {number} of the words"))


def test_one_cache_root_serves_every_cache(monkeypatch, tmp_path):
    from ihbench.dataset.tts import RenderCache
    from ihbench.llm.cache import default_cache_path

    monkeypatch.setenv("IHBENCH_CACHE", str(tmp_path / "mine"))
    assert cache_root() == tmp_path / "mine"
    assert RenderCache().directory == tmp_path / "mine" / "tts"
    assert default_cache_path() == tmp_path / "mine" / "judge_cache.sqlite"

    monkeypatch.delenv("IHBENCH_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "ihbench"

    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_root() == tmp_path / "home" / ".cache" / "ihbench"


# --- one writer per directory: the lock, gone when its holder is done -----------------------------

def test_a_lock_is_removed_by_its_holder_however_the_command_ends(tmp_path):
    lock = tmp_path / ".out.lock"
    with exclusive(lock, "out"):
        assert f"pid {os.getpid()}" in lock.read_text()
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(RuntimeError, match="refused"):
        with exclusive(lock, "out"):
            raise RuntimeError("refused")
    assert list(tmp_path.iterdir()) == []


def test_a_second_writer_is_refused_and_the_first_keeps_its_lock(tmp_path):
    lock = tmp_path / ".out.lock"
    with exclusive(lock, "output folder out"):
        with pytest.raises(LockedError, match=rf"output folder out is in use by another process \(pid {os.getpid()}"):
            with exclusive(lock, "output folder out"):
                pass
        assert lock.is_file()  # the refused writer removed nothing
    assert not lock.exists()


def test_a_writer_that_opened_a_lock_just_before_its_holder_removed_it_locks_the_new_one(tmp_path, monkeypatch):
    """The race of removing a lock file: B opens the file, A ends (removes it, unlocks), B locks the
    file nobody can see any more. B must notice and lock the file at the path instead."""
    lock = tmp_path / ".out.lock"
    first = ExitStack()
    first.enter_context(exclusive(lock, "out"))
    real_open, opened = os.open, []

    def open_then_first_ends(path, *args):
        descriptor = real_open(path, *args)
        opened.append(descriptor)
        if len(opened) == 1:
            first.close()  # A is done between B's open and B's flock
        return descriptor

    monkeypatch.setattr(locks.os, "open", open_then_first_ends)
    with exclusive(lock, "out"):
        monkeypatch.setattr(locks.os, "open", real_open)
        assert len(opened) == 2  # the first file was let go, the path's file taken
        with pytest.raises(LockedError):  # and it is the path's file that is held
            with exclusive(lock, "out"):
                pass
    assert not lock.exists()


_WRITER = """
import os, sys, time
from ihbench.dataset.io.locks import LockedError, exclusive
lock, inside, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
done = 0
while done < rounds:
    try:
        with exclusive(lock, "out"):
            os.close(os.open(inside, os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # fails if another writer is in
            time.sleep(0.0005)
            os.unlink(inside)
            done += 1
    except LockedError:
        pass
"""


def test_concurrent_writers_never_hold_one_lock_at_once(tmp_path):
    import subprocess
    import sys

    lock, inside = tmp_path / ".out.lock", tmp_path / "inside"
    writers = [subprocess.Popen([sys.executable, "-c", _WRITER, str(lock), str(inside), "150"],
                                stderr=subprocess.PIPE, text=True) for _ in range(3)]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err  # FileExistsError: two writers were inside together
    assert list(tmp_path.iterdir()) == []


def test_folders_made_for_an_output_are_removed_again_when_nothing_was_written(tmp_path):
    (tmp_path / "kept").mkdir()
    with pytest.raises(RuntimeError):
        with new_folders(tmp_path / "kept" / "a" / "b") as made:
            assert made.is_dir()
            raise RuntimeError("refused")
    assert [p.name for p in tmp_path.rglob("*")] == ["kept"]  # made here and empty: gone; there before: kept
    with new_folders(tmp_path / "kept" / "a" / "b") as made:
        (made.parent / "result.json").write_text("{}")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "kept", "kept/a", "kept/a/result.json"]


def test_a_staging_folder_removes_what_killed_writers_left_beside_its_target(tmp_path):
    """Battery 11: a killed set-baseline left `.OUT.building-PID` (a dataset's size) that the next one kept."""
    import subprocess
    import sys

    from ihbench.dataset.io import staging_folder

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    left = tmp_path / f".out.building-{pid}"
    (left / "data").mkdir(parents=True)
    with staging_folder(tmp_path / "out") as work:
        (work / "f").write_text("x")
    assert not left.exists() and (tmp_path / "out" / "f").read_text() == "x"
