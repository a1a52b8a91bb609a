"""`BatchLLM`: a text LLM answered through batch files instead of live requests.

Why: a check of a whole suite (`ihbench verify --judge-model`, about 1,300 questions for the dev
set) or a judge of a large run costs half as much through the OpenAI Batch API, and a team with
weights but no server can answer the same file offline with `vllm run-batch`. Neither answers
while the command waits, so the command runs in rounds: every question not yet answered is
written to `FOLDER/requests.jsonl` (the Batch API's input format: one request per line, POST
/v1/chat/completions, the body the live client would send), the question fails as
`BatchPending` (an item failure: not checked this round, asked again by the next one), and the
answers are read from every other `*.jsonl` in the folder (the Batch API's output format:
`custom_id`, `response.status_code`, `response.body` a chat completion, or `error`). A question
whose answer depends on another's (a criterion judged against a blind reply) is asked in the
round after it, so a few rounds answer everything; the command says how many wait each time.

A request's `custom_id` is a hash of its body, so an answer matches the exact question it
answers: when a prompt, the model or the data changes, the old answers match nothing and the
new questions are written again.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
from pathlib import Path
from typing import Optional

from ihbench.dataset.errors import ItemFailure, UsageError
from ihbench.dataset.io import exclusive, lock_file_for
from ihbench.dataset.io.regular import absent
from ihbench.loaders.clients import server_text
from ihbench.loaders.failures import StoppedByProviderError, check_whole_unbudgeted

from .ask import reask_reason
from .backends import response_format

REQUESTS = "requests.jsonl"
ENDPOINT = "/v1/chat/completions"
#: the Batch API's limits of one input file
MAX_REQUESTS, MAX_BYTES = 50_000, 100 * 1024 * 1024


class BatchPending(ItemFailure):
    """The question is in the batch input file and has no answer yet: not checked this round."""


class BatchFileError(UsageError):
    """An answers file in the batch folder that is not in the Batch API's output format."""


def custom_id(body: dict) -> str:
    return "ihb-" + hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


class BatchLLM:
    """The `TextLLM` contract over a batch folder (see the module's docstring)."""

    def __init__(self, model: str, folder: Path, *, structured: bool = True, temperature: float = 0.0):
        self.model = model
        self.folder = Path(folder)
        self.structured = structured
        self.temperature = temperature
        if self.folder.exists() and not self.folder.is_dir():
            raise UsageError(f"{self.folder}: not a folder (the batch folder holds {REQUESTS} and the answer files)")
        self._lock = contextlib.ExitStack()  # one command at a time: each rewrites requests.jsonl at its end
        self._lock.enter_context(exclusive(lock_file_for(self.folder), f"batch folder {self.folder}"))
        try:
            requests = _request_lines(self.folder / REQUESTS)
            self.answers = read_answers(self.folder)
            _check_answered_by_the_model_asked(requests, self.answers, self.folder)
        except BaseException:
            self._lock.close()
            raise
        self.others = 0  # questions of the file that another command asked, kept in it
        self.refused = False  # an answer was refused: the command stops, and the file stays as it was
        self.pending: dict[str, dict] = {}
        self.failed: set[str] = set()  # questions a batch failed, asked again (each once, however often asked)
        self.unusable: dict[str, set[str]] = {}  # why an answer could not be used: the questions asked again for it
        self.matched = 0  # questions of this command that an answer in the folder answers (or failed)
        self.from_cache: set[str] = set()  # questions of this command the cache answered (`settled`)

    def settled(self, messages: list[dict], schema_name: str, schema: dict) -> None:
        """A question of this command the cache answered: never kept in the requests file as another
        command's (it is this one's, answered already)."""
        self.from_cache.add(custom_id(self.body(messages, schema_name, schema)))

    def body(self, messages: list[dict], schema_name: str, schema: dict) -> dict:
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        if self.structured:
            body["response_format"] = response_format(schema_name, schema)
        return body

    async def complete(self, messages: list[dict], schema_name: str, schema: dict) -> tuple[str, dict]:
        body = self.body(messages, schema_name, schema)
        key = custom_id(body)
        if key not in self.answers:
            self.pending[key] = body
            why = reask_reason(messages)
            if why is not None:  # the last round's answer to it could not be used
                self.unusable.setdefault(why, set()).add(key)
            raise BatchPending(f"waiting for its answer: request {key} is in {self.folder / REQUESTS}")
        self.matched += 1
        where, line, answer = self.answers[key]
        failure = _failure(answer)
        if failure:  # a request the batch failed (the error file's lines): asked again, as a live call is retried
            self.pending[key] = body
            self.failed.add(key)
            raise BatchPending(f"asked again: {where} line {line} answered it with {failure}")
        completion = answer["response"]["body"]
        answered_by = completion.get("model")
        if isinstance(answered_by, str) and not _same_model(answered_by, self.model):
            self.refused = True  # the command stops here: the questions waiting are kept as they are
            raise _another_model(where, line, answered_by, self.model, self.folder)
        usage = completion.get("usage") if isinstance(completion.get("usage"), dict) else {}  # a string: none
        text = server_text(completion["choices"][0]["message"].get("content") or "")
        try:  # a filtered or cut answer, as a live call's (battery 64, K3): asked again
            check_whole_unbudgeted(completion["choices"][0].get("finish_reason"), text)
        except StoppedByProviderError as error:
            self.pending[key] = body
            self.failed.add(key)
            raise BatchPending(f"asked again: {where} line {line}: {error}") from None
        return text, {
            k: usage[k] for k in ("prompt_tokens", "completion_tokens") if isinstance(usage.get(k), int)}

    def describe(self) -> dict:
        return {"backend": "openai-batch", "model": self.model, "structured": self.structured,
                "temperature": self.temperature}

    async def close(self) -> None:
        """Writes the questions still waiting, or removes the file when none waits. Questions the
        file held that this command did not ask, and that no answer in the folder answers, are
        another command's (another run, judge model or prompt version) and are kept, counted in
        `others`: the folder may be shared, and a question dropped would be lost without a word."""
        from ihbench.dataset.io import write_atomic

        try:
            if self.refused:
                return
            target = self.folder / REQUESTS
            answered = {key for key, (_, _, answer) in self.answers.items() if not _failure(answer)}  # read at start
            earlier = [(line["custom_id"], line["body"]) for _, line in _request_lines(target)]
            kept = {key: body for key, body in earlier
                    if key not in self.pending and key not in answered and key not in self.from_cache}
            self.others = len(kept)
            waiting = {**kept, **self.pending}
            if not waiting:
                target.unlink(missing_ok=True)
                return
            lines = [json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}, ensure_ascii=False)
                     for key, body in waiting.items()]
            text = "\n".join(lines) + "\n"
            if len(lines) > MAX_REQUESTS or len(text.encode("utf-8")) > MAX_BYTES:
                raise UsageError(f"{target}: {len(lines)} requests, {len(text.encode('utf-8')) // 2**20} MB, over the "
                                 f"Batch API's {MAX_REQUESTS} requests or {MAX_BYTES // 2**20} MB a file; check fewer "
                                 "points at once")
            self.folder.mkdir(parents=True, exist_ok=True)
            write_atomic(target, text)
        finally:
            self._lock.close()

    @property
    def unusable_questions(self) -> int:
        """How many questions had an answer that could not be used (asked again), each counted once."""
        return len(set().union(*self.unusable.values()))

    def waiting_line(self) -> Optional[str]:
        """What the user does next, or None when every question was answered."""
        if not self.pending and not self.others:
            return None
        if not self.pending:
            return (f"{self.folder / REQUESTS} keeps {self.others} question(s) another command asked (another run, "
                    "judge model or prompt version), not answered yet; remove the file if they are no longer wanted")
        others = (f"; it also keeps {self.others} question(s) another command asked (another run, judge model or "
                  "prompt version): remove those lines if they are no longer wanted") if self.others else ""
        # counted as questions, as the waiting ones are: one asked twice (16 waiting, "17 failed") is one
        again = [f"{len(self.failed)} failed in an earlier batch"] if self.failed else []
        unusable = self.unusable_questions
        if unusable:
            top = max(self.unusable, key=lambda why: len(self.unusable[why]))
            more = f", and {len(self.unusable) - 1} other problem(s)" if len(self.unusable) > 1 else ""
            again.append(f"{unusable} had an answer that could not be used (e.g. {top}{more})")
        again = f" ({' and '.join(again)}: asked again)" if again else ""
        if self.answers and not self.matched:  # an output file is there, yet it answers nothing asked here
            files = sorted({where.name for where, _, _ in self.answers.values()})
            return (f"{len(self.pending)} question(s) wait for answers, and none of the {len(self.answers)} answer(s) in "
                    f"{self.folder} ({', '.join(files[:3])}{', ...' if len(files) > 3 else ''}) answers one of them "
                    f"(their custom_id match no question asked here: the output of another batch, or of requests "
                    f"changed before they were submitted?); submit {self.folder / REQUESTS} as written, put its output "
                    f"file in {self.folder}, and run the same command again{others}")
        return (f"{len(self.pending)} question(s){again} wait for answers in {self.folder / REQUESTS} (OpenAI Batch API input, "
                f"endpoint {ENDPOINT}): submit it as a batch (or `vllm run-batch -i {REQUESTS} -o answers.jsonl`), put "
                f"the output file in {self.folder}, and run the same command again{others}")


def read_answers(folder: Path) -> dict[str, tuple[Path, int, dict]]:
    """{custom_id: (file, line, answer line)} of every answers file in the folder (the output and
    error files of every batch so far): an answer replaces a failure of the same request, and of two
    answers the later file's in name order counts."""
    from ihbench.dataset.io import json_lines

    answers: dict[str, tuple[Path, int, dict]] = {}
    if not folder.is_dir():
        return answers
    for path in sorted(folder.glob("*.jsonl")):
        if path.name == REQUESTS:
            continue
        if not path.is_file():  # /dev/zero is read for ever, a named pipe waits for ever
            raise BatchFileError(f"{path}: {absent(path)}; a "
                                 "batch's answers are files: remove it or put the file itself there")
        for number, line in json_lines(path, BatchFileError, where="{path} line {number}", hand_made=False):
            key = _checked(line, path, number)
            if key in answers and not _failure(line) and not _failure(answers[key][2]) and \
                    _content(line) != _content(answers[key][2]):
                raise BatchFileError(f"{path} line {number} and {answers[key][0]} line {answers[key][1]} answer "
                                     f"{key} differently; keep one of them (remove the other answers file or line)")
            if key not in answers or _failure(answers[key][2]) or not _failure(line):
                answers[key] = (path, number, line)
    return answers


def _another_model(where: Path, line: int, answered_by: str, asked: str, folder: Path) -> BatchFileError:
    return BatchFileError(f"{where} line {line}: answered by {answered_by!r}, not the judge asked for, {asked!r} (the "
                          "batch ran under another model name, or the request was changed before it was submitted); "
                          f"remove this answers file and submit {folder / REQUESTS} as written")


def _check_answered_by_the_model_asked(requests: list, answers: dict, folder: Path) -> None:
    """Every answer to a question the requests file holds, checked before any is used: a file refused
    half-way would have put the answers before the refused one in the cache (a refused command leaves
    nothing behind). An answer to a question no longer in the file is checked when it is asked."""
    for _, request in requests:
        found = answers.get(request["custom_id"])
        asked = request["body"].get("model")
        if found is None or _failure(found[2]) or not isinstance(asked, str):
            continue
        answered_by = found[2]["response"]["body"].get("model")
        if isinstance(answered_by, str) and not _same_model(answered_by, asked):
            raise _another_model(found[0], found[1], answered_by, asked, folder)


def _request_lines(path: Path) -> list:
    """(line number, request) of the waiting requests file as this toolkit wrote it, [] when there is none: a
    line whose body no longer hashes to its custom_id was edited, and its answer would be scored as the
    answer to another question."""
    from ihbench.dataset.io import json_lines

    if not path.is_file():
        return []
    lines = list(json_lines(path, BatchFileError, where="{path} line {number}"))
    for number, line in lines:
        body = line.get("body") if isinstance(line, dict) else None
        if not isinstance(body, dict) or line.get("custom_id") != custom_id(body):
            raise BatchFileError(f"{path} line {number}: changed since it was written (its body no longer matches "
                                 "its custom_id); an answer to it would be taken for another question. Delete the "
                                 "file and run the command again to write it anew")
    return lines


def _same_model(answered_by: str, asked: str) -> bool:
    """The Batch API names the snapshot that answered ("gpt-4.1-2025-04-14" for "gpt-4.1")."""
    return answered_by == asked or answered_by.startswith(asked + "-")


def _content(answer: dict) -> str:
    return answer["response"]["body"]["choices"][0]["message"].get("content") or ""


def _failure(answer: dict) -> Optional[str]:
    """Why the batch did not answer this request ("status 500: ..."), or None for an answer."""
    response = answer.get("response") or {}
    status = response.get("status_code")
    if not answer.get("error") and status == 200:
        return None
    error = answer.get("error") or (response.get("body") or {}).get("error")
    message = error.get("message") if isinstance(error, dict) else error
    return (f"status {status}" if status else "no response") + (f": {message}" if message else "")


def _checked(line, path: Path, number: int) -> str:
    def bad(why: str):
        return BatchFileError(f"{path} line {number}: {why}; an answers file is a Batch API output file (custom_id, "
                              "response.status_code, response.body, error)")

    if not isinstance(line, dict) or not isinstance(line.get("custom_id"), str):
        raise bad("no custom_id")
    response = line.get("response")
    if line.get("error") is None and not isinstance(response, dict):
        raise bad("neither a response nor an error")
    if isinstance(response, dict) and response.get("status_code") == 200:
        body = response.get("body")
        choices = body.get("choices") if isinstance(body, dict) else None
        message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
            else None
        if not isinstance(message, dict) or not isinstance(message.get("content"), (str, type(None))):
            raise bad("response.body is not a chat completion (choices[0].message.content)")
    return line["custom_id"]
