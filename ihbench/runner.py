"""`ihbench run`: a model over interruption points x epochs into a resumable run directory
(`ihbench.rundir`: run.json and responses.jsonl).

Running the same command again resumes: finished (item, epoch) records are skipped, so none is
written twice; a torn last line from a crash is repaired first. The directory is locked for the
life of the command, so a second `ihbench run` on it fails at once instead of doubling records.
"""
from __future__ import annotations

import functools
import itertools
import logging
import platform
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

from ihbench.dataset.io import AppendLog
from ihbench.dataset.load import recorded_source, same_source
from ihbench.dataset.argtypes import same_servers
from ihbench.dataset.redaction import quoted, redact
from ihbench.dataset.schema import EvalItem

from .records import (RECORD_FORMAT, RUN_IDENTITY, RUN_INFO_FORMAT, ResponseRecord, RunInfo, described,
                      settings_digest)
from .rundir import RunDir, latest_responses
from .selection import RunConfigError, items_fingerprint, run_selection, select_items  # noqa: F401 (imported from here too)
from .seeds import record_seed

log = logging.getLogger("ihbench")

# Loader options that say how requests travel, not what the model answers: a resume may change them.
TRANSPORT_OPTIONS = ("base_url", "concurrency", "timeout", "max_retries", "api_key_env", "batch_size", "device",
                     "device_map", "stream")


@dataclass
class RunSpec:
    loader: str
    model_path: str
    data: str
    out: Path
    config: Optional[str] = None
    split: Optional[str] = None
    epochs: int = 3
    limit: Optional[int] = None
    types: Optional[list[str]] = None
    modality: str = "audio"
    #: keep the audio of only the last K user turns (older ones as transcripts); "auto": per item, the
    #: most recent that fit the model; None: all audio
    history_audio: Union[int, str, None] = None
    generation: dict = field(default_factory=dict)
    seed: int = 0
    loader_options: dict = field(default_factory=dict)
    command: Optional[list[str]] = None
    allow_endpoint_change: bool = False


@dataclass
class RunSummary:
    out: Path
    planned: int
    written: int
    skipped: int
    #: errors written by this invocation; as every unanswered (item, epoch) is tried, also the number
    #: the run still lacks: complete at 0, every item failed when it equals `planned`
    errors: int
    seconds: float
    #: answers of this invocation that used the whole --max-new-tokens (as the server counted them): likely cut
    at_budget: int = 0
    #: of `errors`, those on the data's own audio (a clip damaged or silent): a rerun fails them again
    on_data_audio: int = 0
    #: ended by its `stop` event before every point was tried
    stopped: bool = False


def versions() -> dict:
    return dict(_versions())


@functools.lru_cache(maxsize=1)
def _versions() -> dict:
    """Once a process: importlib.metadata walks every installed distribution for each name (40 ms)."""
    from importlib.metadata import PackageNotFoundError, version

    versions = {"python": platform.python_version()}
    for package in ("ihbench", "torch", "transformers", "datasets", "torchcodec", "openai", "peft"):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            pass
    return versions


def data_moved(existing: RunInfo, given: str) -> bool:
    """The run's dataset folder is gone from where run.json names it, and another local folder is given:
    the same dataset moved (checked by its items: `check_moved_data`), not another run's data."""
    recorded = existing.data
    return bool(recorded) and Path(recorded).is_absolute() and not Path(recorded).exists() and Path(given).is_dir() \
        and not same_source(recorded, given)


def check_moved_data(existing: RunInfo, items, given: str, path: Path) -> None:
    """A moved dataset is taken when its items, as the run selected them, are the ones the run answered (the
    fingerprint run.json holds), as judge and report take `--data`; said in one warning."""
    now = items_fingerprint(run_selection(list(items), existing))
    if existing.data_fingerprint is not None and now != existing.data_fingerprint:
        raise RunConfigError(f"{path} names the dataset {existing.data}, which is not there now, and {given} is not the "
                             "dataset the run answered (its items differ); give that dataset's new place, or another "
                             "--out")
    log.warning("%s named the dataset %s, which is not there now; %s holds the items the run answered, and is "
                "recorded as its dataset from now on", path, existing.data, recorded_source(given))


def endpoint_identity(base_url) -> dict:
    """How run.json records the server(s): the address with what looks like a key hidden, and a digest of
    the address as given, so a resume against another server is refused even where hiding made two addresses
    read alike (a deployment's name taken for a key). The digest is 16 hex digits: too short to be taken for
    a key itself, and a random key cannot be recovered from it."""
    import hashlib

    from ihbench.dataset.argtypes import Url

    def canonical(url) -> str:
        try:
            return Url().canonical(url)
        except (ValueError, TypeError, AttributeError):  # given from Python unchecked: compared as it is
            return repr(url)

    urls = [base_url] if isinstance(base_url, str) else list(base_url or [])
    digest = hashlib.sha256("\n".join(sorted(map(canonical, urls))).encode("utf-8")).hexdigest()[:16]
    return {"endpoint": redact(base_url), "endpoint_digest": digest if urls else None}


def options_identity(loader_options: dict) -> dict:
    """How run.json records the loader options that change answers: with what looks like a key hidden, and a
    digest of them as given (a credential a proxy reads from extra_body aside: a key rotated is the same run),
    so a resume with other options is refused even where hiding made two read alike (battery 57, D12: two
    `user` values taken for keys)."""
    import hashlib
    import json

    from ihbench.loaders.extra_body import is_credential_field

    given = {key: value for key, value in sorted(loader_options.items()) if key not in TRANSPORT_OPTIONS}
    if not given:
        return {"loader_options": None, "options_digest": None}
    body = given.get("extra_body")
    compared = {**given, "extra_body": {k: v for k, v in body.items() if not is_credential_field(k)}} \
        if isinstance(body, dict) else given
    text = json.dumps(compared, sort_keys=True, default=repr, ensure_ascii=False)
    return {"loader_options": redact(given), "options_digest": hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]}


def kept_from_first_start(identity: dict, existing: Optional[RunInfo]) -> dict:
    """What a resumed run.json keeps of its first start: the endpoint (a changed one was allowed, not adopted), and
    the options' digest. (What either start hid stays hidden: `RunDir.write_info`.)"""
    if existing is None:
        return {"endpoint": identity["endpoint"], "endpoint_digest": identity["endpoint_digest"],
                "options_digest": identity.get("options_digest")}
    return {"endpoint": existing.endpoint, "endpoint_digest": existing.endpoint_digest or identity["endpoint_digest"],
            "options_digest": existing.options_digest or identity.get("options_digest")}


def check_same_run(existing: RunInfo, identity: dict, path: Path, allow_endpoint_change: bool = False,
                   moved: bool = False) -> None:
    if isinstance(existing.extra.get("barge_in"), dict) != ("barge_in" in identity):  # its points are its own
        made_by = "ihbench barge-in" if "barge_in" in existing.extra else "ihbench run"
        raise RunConfigError(f"{path} belongs to a run of `{made_by}`; give this command its own --out")
    recorded = existing.identity()
    for key in RUN_IDENTITY:
        if key == "endpoint" and allow_endpoint_change:
            continue
        if key == "endpoint" and existing.endpoint_digest and identity.get("endpoint_digest"):
            if existing.endpoint_digest == identity["endpoint_digest"]:
                continue
            alike = " (they read alike with what looks like a key hidden; as given they differ)" \
                if same_servers(recorded[key], identity.get(key)) else ""
            raise RunConfigError(f"{path} belongs to a different run: endpoint is {quoted(recorded[key])} there but "
                                 f"{quoted(identity.get(key))} now{alike}; use another --out (or the same options to resume) "
                                 "(--allow-endpoint-change if the new server serves the same model)")
        if key == "loader_options" and existing.options_digest and identity.get("options_digest"):
            if existing.options_digest == identity["options_digest"]:
                continue  # the same as given, however the environment hides them now (battery 58, E5)
            if recorded[key] == identity.get(key):
                raise RunConfigError(f"{path} belongs to a different run: loader_options are "
                                     f"{setting_said(recorded[key])} there and now, but they read alike with what looks "
                                     "like a key hidden; as given they differ; use another --out (or the same options "
                                     "to resume)")
        if key == "data" and (moved or same_source(recorded[key], identity.get(key))):
            continue
        if key == "endpoint" and same_servers(recorded[key], identity.get(key)):  # replicas in another order
            continue
        if key in ("config", "split") and recorded[key] != identity.get(key):
            there, here = _chosen(recorded, identity)  # with what a left-out option picks filled in
            if there is not None and here is not None:
                index = ("config", "split").index(key)
                if there[index] == here[index]:
                    continue  # `--split dev` where the first start left out the split the default picked (G5)
                raise RunConfigError(f"{path} belongs to a different run: {key} is {setting_said(there[index])} "
                                     f"there but {setting_said(here[index])} now; use another --out (or the same "
                                     "options to resume)")
        if key == "convbench" and _turns_in_order(recorded[key]) == _turns_in_order(identity.get(key)):
            continue  # --only-turns 5,4,3 plays (and now records) 3,4,5
        if recorded[key] != identity.get(key):
            hint = (" (--allow-endpoint-change if the new server serves the same model)" if key == "endpoint"
                    else "")
            name, there, here = first_difference(key, recorded[key], identity.get(key))
            raise RunConfigError(f"{path} belongs to a different run: {name} is {setting_said(there)} there but "
                                 f"{setting_said(here)} now; use another --out (or the same options to resume){hint}")


def _chosen(recorded: dict, identity: dict) -> tuple[Optional[tuple], Optional[tuple]]:
    """The (config, split) each start names once a left-out option's default is filled in from the data: None for the
    first start's when the data cannot say (it changed: the settings are then compared as given). The present start's
    that the data refuses is said as the data says it (battery 62, I10: `--split test` of data with only dev was said
    as "config is 'conversations' there but not given now")."""
    if recorded.get("convbench") or identity.get("convbench"):
        return None, None  # a ConversationBench config takes no split, and names its config
    from ihbench.dataset.load import DataSourceError, chosen_by_default

    here = chosen_by_default(identity["data"], identity.get("config"), identity.get("split"))
    try:
        there = chosen_by_default(identity["data"], recorded.get("config"), recorded.get("split"))
    except DataSourceError:
        return None, here
    return there, here


def first_difference(name: str, there, here) -> tuple[str, object, object]:
    """(the dotted name of the first setting that differs, its value there, here): down to the setting
    itself (`convbench.benchmark_hash`), not the whole dict that holds it."""
    if isinstance(there, dict) and isinstance(here, dict) and there != here:
        key = next(k for k in sorted(set(there) | set(here), key=str)
                   if there.get(k, _MISSING) != here.get(k, _MISSING))
        return first_difference(f"{name}.{key}", there.get(key, _MISSING), here.get(key, _MISSING))
    return name, there, here


def setting_said(value) -> str:
    """A setting as a refusal says it: `not given` for an option left out, an object or a list as JSON spells it
    (`{"extra_body": ...}`, not Python's `{'extra_body': ...}` or `None`; battery 58, E16), text as quoted."""
    if value is None:
        return "not given"
    if isinstance(value, (dict, list, bool)):
        try:
            return quoted(value, as_json=True)
        except TypeError:
            pass
    return quoted(value)


class _Missing:
    """A setting one side does not have at all (deleted from run.json by hand, or from an older
    ihbench), said as such rather than as None: it differs from a None that is there."""

    def __repr__(self) -> str:
        return "missing"


_MISSING = _Missing()


def _turns_in_order(settings):
    if not isinstance(settings, dict) or not isinstance(settings.get("only_turns"), list):
        return settings
    return {**settings, "only_turns": sorted(set(map(str, settings["only_turns"])))}


def check_same_data(records: Sequence[ResponseRecord], ids: set, data: str, run_dir: RunDir) -> None:
    """A resume into a run whose answers are to points the data no longer has: the folder at that
    path is another dataset now (rebuilt from other sources), and answering it would put the answers
    to two datasets in one run, which judge and report then refuse for good. Said before any call.
    (A point whose content changed is answered again instead: `_answered`.)"""
    foreign = sorted({record.id for record in records} - ids)
    if foreign:
        raise RunConfigError(f"{run_dir.responses_path}: {len(foreign)} point(s) answered in this run are not in "
                             f"{data} (e.g. {foreign[0]}): it holds another dataset than when the run started "
                             "(rebuilt from other sources?); give another --out for it")


def _answered(records: list[ResponseRecord], items: Sequence[EvalItem], run_dir: RunDir,
              epochs: int) -> set[tuple[str, int]]:
    """(item id, epoch) already answered for the data as it is now. An item that failed (its last
    record is an error) is tried again, as is one whose content changed since it was answered (the
    old record stays, superseded); the user is told how many of each: a resume never mixes answers
    to two versions of the data, and an error is never taken for an answer."""
    current = {item.id: item.content_hash for item in items}
    outside = sorted({r.id for r in records} - set(current))
    if outside:  # a run narrowed by --limit/--types (or lines copied in): kept in the file, never this run's
        log.warning("%s: %d item(s) answered in it are not among this selection (--limit, --types), e.g. %s: kept in "
                    "the file, and left out by judge and report", run_dir.path, len(outside), outside[0])
    beyond = [r for r in records if r.epoch >= epochs]
    if beyond:  # a run resumed with fewer --epochs (battery 47, T8): said here, not only by report without --quiet
        log.warning("%s: %d response(s) of the later epochs it had (%d) are beyond --epochs %d: kept in the file, "
                    "and left out by judge and report while the run has %d epoch(s)", run_dir.path, len(beyond),
                    max(r.epoch for r in beyond) + 1, epochs, epochs)
    records = [r for r in records if r.id in current]
    latest = latest_responses(records, current)
    done = {key for key, record in latest.items() if record.answered}
    failed = len(latest) - len(done)
    changed = {r.id for r in records if r.key not in latest} - {item_id for item_id, _ in latest}
    if changed:
        log.warning("%s: %d item(s) changed in the data since they were answered (e.g. %s); answering them again",
                    run_dir.path, len(changed), sorted(changed)[0])
    if failed:
        log.warning("%s: trying again %d response(s) that failed before", run_dir.path, failed)
    return done


def run(spec: RunSpec, *, loader=None, items: Optional[list[EvalItem]] = None, progress: bool = True,
        on_record: Optional[Callable[[ResponseRecord], None]] = None,
        stop: Optional[threading.Event] = None) -> RunSummary:
    """`on_record(record)` is called after each record is durable (the Space streams with it). Once `stop`
    is set no other batch starts (the Space's Stop button; the CLI has Ctrl-C): the run ends as an
    unfinished one, and the same run goes on from there."""
    from ihbench.loaders import GenerationConfig
    from ihbench.protocol import history_audio_label

    started = time.perf_counter()
    out = Path(spec.out)
    if out.exists() and not out.is_dir():
        raise RunConfigError(f"--out: {out} is a file, not a run directory")
    generation = GenerationConfig(**spec.generation)
    identity = {"loader": spec.loader, "model_path": spec.model_path, "data": recorded_source(spec.data),
                "config": spec.config,
                "split": spec.split, "modality": spec.modality,
                "history_audio": history_audio_label(spec.history_audio),
                "generation": generation.to_dict(),
                "seed": spec.seed, "types": sorted(spec.types) if spec.types else None,
                **endpoint_identity(spec.loader_options.get("base_url")),
                # options that change answers (thinking=true, dtype, ...), not where they come from
                **options_identity(spec.loader_options)}
    from ihbench.dataset.argtypes import epochs

    epochs().check("--epochs", spec.epochs)  # from Python too: 10^20 epochs would be planned in memory
    run_dir = RunDir(out)
    with run_dir.writing():  # a run refused before it wrote anything leaves no folder behind
        return _run_locked(spec, run_dir, identity, generation, loader, items, progress, started, on_record, stop)


def _run_locked(spec: RunSpec, run_dir: RunDir, identity: dict, generation, loader, items, progress: bool,
                started: float, on_record: Optional[Callable[[ResponseRecord], None]],
                stop: Optional[threading.Event] = None) -> RunSummary:
    from ihbench.loaders import create
    from ihbench.loaders.base import Response
    from ihbench.loaders.failures import is_item_failure, used_the_budget
    from ihbench.loaders.reasoning import budget_warning
    from ihbench.protocol import AUTO, build_model_input, fitting_model_input

    out = run_dir.path
    existing = run_dir.info() if run_dir.exists() else None
    handed = items is not None  # points picked by the caller (the Space): recorded by id, as no option selects them
    if existing and existing.item_ids is not None and not handed:  # it would become a run of the whole selection
        raise RunConfigError(f"{run_dir.info_path} belongs to a run of {len(existing.item_ids)} point(s) handed to the "
                             "runner (picked in the Space: run.json's item_ids); `ihbench run` selects points by "
                             "--types and --limit, so it cannot go on with it: use another --out")
    if existing and items is None:  # a dataset gone from its path is said so, not as "a different run" (whose
        from ihbench.dataset.load import resolve_source  # recorded path is absolute, the given one relative)

        resolve_source(spec.data)
    moved = bool(existing) and items is None and data_moved(existing, spec.data)
    if existing:
        check_same_run(existing, identity, run_dir.info_path, spec.allow_endpoint_change, moved)
    records = run_dir.responses(repair=True)
    if items is None:  # the data first (folder, config, split): a typo is not said after minutes of loading weights
        from ihbench.dataset import load_items

        items = load_items(spec.data, config=spec.config, split=spec.split)
        if moved:
            check_moved_data(existing, items, spec.data, run_dir.info_path)
        check_same_data(records, {item.id for item in items}, spec.data, run_dir)
    items = select_items(items, spec.types, spec.limit)
    from ihbench.dataset.keys_in_data import environment_secret_in

    found = environment_secret_in(items, lambda item: f"{spec.data}: item {item.id}")
    if found:  # battery 62, I17: sent to the model's server in every prompt, without a word
        raise RunConfigError(f"{found} (a credential; not shown), which the prompts would carry to the model; unset "
                             "the variable if that text is no secret, or rebuild the dataset without it")
    if existing and not handed and existing.n_items and len(items) > existing.n_items and \
            existing.limit == spec.limit and sorted(existing.types or []) == sorted(spec.types or []):
        log.warning("%s: the same selection of %s now holds %d point(s), %d more than when the run started (the "
                    "dataset rebuilt with more conversations?); the new ones are answered now", run_dir.path,
                    spec.data, len(items), len(items) - existing.n_items)
    passed_in = loader is not None  # a loader object from Python: --model-path is then only its label
    if loader is None:
        loader = create(spec.loader, spec.model_path, **spec.loader_options)  # fails fast: missing model, bad option
    loader.check_modality(spec.modality)
    warning = budget_warning(loader, generation.max_new_tokens)
    if warning:
        log.warning("%s", warning)
    auto = spec.history_audio == AUTO and spec.modality == "audio"
    if spec.modality == "audio" and not auto and items:  # every prompt over the server's clip cap would fail, each
        from ihbench.loaders.limits import check_clip_count  # on every retry: refused before any request

        heard = {item.id: sum(m.role == "user" for m in item.history) + 1 for item in items}
        if spec.history_audio is not None:
            heard = {key: min(count, int(spec.history_audio)) for key, count in heard.items()}
        cap = getattr(loader, "max_audio_clips", None)
        over = [key for key, count in heard.items() if cap is not None and count > cap]
        remedies = "--history-audio auto or last:K (older user turns as transcripts), or --modality text"
        if over and len(over) == len(heard):  # not one could be answered
            shallowest = min(heard, key=heard.get)
            check_clip_count(loader, heard[shallowest], f"{shallowest}, with its user turns heard as audio, the "
                             "interruption included", remedies, prompt="even this run's shortest prompt")
        elif over:  # those are failed items on every rerun alike: said once, up front
            log.warning("%d of %d point(s) hold more user turns heard as audio than the server's %d clip(s) per prompt "
                        "(--option max_audio_clips), e.g. %s: they are recorded as failed each time; use %s",
                        len(over), len(heard), cap, over[0], remedies)
    if auto and not loader.knows_limits():
        log.warning("--history-audio auto: the %s loader cannot tell what fits the model%s, so every user turn is "
                    "heard as audio", spec.loader, " (give --option max_audio_clips=N, the server's per-prompt clip "
                    "limit)" if spec.loader == "openai" else "")

    run_dir.write_info(RunInfo(
        **{**identity, **kept_from_first_start(identity, existing)},
        epochs=spec.epochs, limit=spec.limit, item_ids=[item.id for item in items] if handed else None,
        model=described(loader, passed_in),
        effective_generation=loader.effective_generation(generation), data_fingerprint=items_fingerprint(items),
        n_items=len(items), versions=versions(), command=redact(list(spec.command or sys.argv)),
        created=existing.created if existing else time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        record_format=existing.record_format if existing else RECORD_FORMAT,
        format_version=RUN_INFO_FORMAT))

    done = _answered(records, items, run_dir, spec.epochs)
    todo = [(item, epoch) for item in items for epoch in range(spec.epochs) if (item.id, epoch) not in done]
    planned = len(items) * spec.epochs
    written = errors = at_budget = on_data_audio = 0
    from tqdm.auto import tqdm

    with AppendLog(run_dir.responses_path) as responses_log, \
            tqdm(total=planned, initial=planned - len(todo), unit="response",
                 desc=f"{spec.loader} {Path(spec.model_path).name}", disable=not progress) as bar:
        for start in range(0, len(todo), max(1, loader.batch_size)):
            if stop is not None and stop.is_set():
                break
            batch = todo[start:start + max(1, loader.batch_size)]
            seeds = [record_seed(spec.seed, item.id, epoch) for item, epoch in batch]
            build_failures: dict[int, Response] = {}  # an input the model cannot take: that item's failure
            ready, conversations = [], []
            audio_turns: list[Optional[int]] = [None] * len(batch)
            for position, (item, _) in enumerate(batch):
                built = time.perf_counter()
                try:
                    if auto:
                        conversation = fitting_model_input(item, lambda c: loader.fits(c, generation))
                    else:
                        conversation = build_model_input(item, spec.modality,
                                                         history_audio=None if spec.history_audio == AUTO
                                                         else spec.history_audio)
                except Exception as error:  # empty audio, or an input the model cannot take: that item's
                    if not is_item_failure(error):
                        raise
                    build_failures[position] = Response.failure(error, built)
                    continue
                conversations.append(conversation)
                audio_turns[position] = len(conversation.audio_clips)
                ready.append(position)
            arriving = ((ready[index], response) for index, response in
                        loader.answers(conversations, generation, [seeds[p] for p in ready], stop))
            # each answer written as it arrives: one received is kept when a request still in flight is
            # stopped (Ctrl-C, SIGTERM), as responses.jsonl is fsynced record by record (battery 54, A13)
            for position, response in itertools.chain(build_failures.items(), arriving):
                (item, epoch), seed, heard = batch[position], seeds[position], audio_turns[position]
                if response is None:  # not asked: the run was stopped first
                    continue
                record = ResponseRecord(
                    id=item.id, epoch=epoch, seed=seed, response=response.text, error=response.error,
                    latency_s=round(response.latency_s, 4), input_tokens=response.input_tokens,
                    output_tokens=response.output_tokens, modality=spec.modality,
                    conversation_id=item.conversation_id, interruption_type=item.interruption_type,
                    depth=item.depth, reasoning=response.reasoning,  # a thinking model's thoughts: kept, never judged
                    item_hash=item.content_hash, audio_turns=heard, model=f"{spec.loader}:{spec.model_path}",
                    generation=settings_digest(identity["generation"]),
                    format_version=RECORD_FORMAT)
                responses_log.append(record.to_json())
                if on_record:
                    on_record(record)
                written += 1
                errors += response.error is not None
                on_data_audio += record.on_data_audio
                at_budget += response.error is None and used_the_budget(response, generation.max_new_tokens)
                bar.update(1)
    return RunSummary(out=out, planned=planned, written=written, skipped=planned - len(todo), errors=errors,
                      seconds=time.perf_counter() - started, at_budget=at_budget,
                      on_data_audio=on_data_audio, stopped=stop is not None and stop.is_set())
