"""What `--option extra_body` may add to the OpenAI-compatible loader's requests: an allow-list.

The protocol decides what the model hears, where its answer ends and what form the answer takes; every
server names the fields that change those its own way (vLLM's `stop_token_ids` and `chat_template`,
SGLang's `regex`, llama.cpp's `grammar`, TGI's `max_new_tokens`), so a deny-list always missed one and the
answers it shaped were scored (batteries 52 to 54). Only sampling beside --temperature and --top-p,
thinking, bookkeeping the model does not see, and a credential a proxy reads pass, each value checked
here: a wrong one was a run of HTTP 400s that --temperature would have refused at the start (battery 55, B6).
"""
from __future__ import annotations

from typing import Any, Optional, Union

from ihbench.dataset.argtypes import ArgType, ArgumentValueError, Boolean, Choice, boolean, choice, number, whole
from ihbench.dataset.errors import UsageError
from ihbench.dataset.redaction import quoted

#: what every request sets from the benchmark's own settings: extra_body may add to a request, never replace
#: these (run.json would say one thing while the server was sent another)
SET_BY_IHBENCH = {"model": "--model-path", "messages": "the benchmark's conversation", "max_tokens": "--max-new-tokens",
                  "max_completion_tokens": "--max-new-tokens", "temperature": "--temperature", "top_p": "--top-p",
                  "seed": "the run's per-item seeds (--seed)", "n": "one answer per request",
                  "stream": "--option stream", "stream_options": "--option stream", "tools": "the benchmark's tools",
                  "tool_choice": "the benchmark's tools", "modalities": "--option audio_voice",
                  "audio": "--option audio_voice"}

_FORCES_FORM = "forces the answer's form"
#: fields that decide where an answer ends or what it may say, or what of the conversation the model hears,
#: named with what each does (battery 52: `stop` ["."] cut every answer at its first sentence)
ENDS_ANSWERS = {"stop": "cuts answers at a string", "stop_token_ids": "cuts answers at a token",
                "min_tokens": "keeps the model from ending its turn", "ignore_eos": "keeps the model from ending its turn",
                "logit_bias": "weighs the model's tokens", "bad_words": "forbids words",
                "truncate_prompt_tokens": "cuts the conversation the model hears", "response_format": _FORCES_FORM,
                "structured_outputs": _FORCES_FORM, "guided_json": _FORCES_FORM, "guided_regex": _FORCES_FORM,
                "guided_choice": _FORCES_FORM, "guided_grammar": _FORCES_FORM}

_TEXT, _MAPPING = str, dict


class Fields(dict):
    """A JSON object whose fields are named, each with its check (`{"type": "enabled", "budget_tokens": 2048}`):
    a field not named is refused, as at the top level; the `required` ones must be there, and so must those
    `required_when` a field has a value (`{("type", "enabled"): ("budget_tokens",)}`)."""

    def __init__(self, required: tuple = (), required_when: Optional[dict] = None, **fields):
        super().__init__(**fields)
        self.required = required
        self.required_when = required_when or {}

    def missing(self, name: str, value: dict) -> Optional[str]:
        """What `value` (the field `name`) lacks, said, or None."""
        absent = [field for field in self.required if field not in value]
        if absent:
            return f"{absent[0]!r} is required ({name} carries {', '.join(self)})"
        for (field, given), needed in self.required_when.items():
            absent = [name for name in needed if name not in value]
            if value.get(field) == given and absent:
                return f"{absent[0]!r} is required with {field} {given}"
        return None


#: OpenAI's processing tiers: any other is an HTTP 400 on every item (battery 59, F3)
SERVICE_TIERS = ("auto", "default", "flex", "scale", "priority")

Check = Union[ArgType, type, Fields, tuple]
#: how hard a model thinks, in the words servers take (OpenAI's `none` to `xhigh`, gpt-oss's template's
#: `low`/`medium`/`high`): any other text was written into the system message a model hears (battery 56, C3)
EFFORT = choice(("none", "minimal", "low", "medium", "high", "xhigh"))
#: the fields extra_body may carry, by kind, with what each value must be
PASSED_ON: dict[str, dict[str, Check]] = {
    "sampling": {"top_k": whole(min=-1, max=2 ** 31 - 1), "min_p": number(0, 1), "typical_p": number(0, 1, min_open=True),
                 "repetition_penalty": number(min=0, min_open=True), "presence_penalty": number(-2, 2),
                 "frequency_penalty": number(-2, 2)},
    "thinking": {"chat_template_kwargs": _MAPPING, "reasoning_effort": EFFORT,
                 "reasoning": Fields(effort=EFFORT, max_tokens=whole(min=0), exclude=boolean(), enabled=boolean(),
                                     summary=choice(("auto", "concise", "detailed"))),
                 # Anthropic's shape: a type always, and a budget of 1,024 tokens or more (battery 57, D7: the
                 # server refused every request of `{}` or a budget of 0)
                 "thinking": (boolean(), Fields(("type",), {("type", "enabled"): ("budget_tokens",)},
                                                type=choice(("enabled", "disabled")), budget_tokens=whole(min=1024))),
                 "include_reasoning": boolean(), "enable_thinking": boolean(), "thinking_budget": whole(min=0)},
    "bookkeeping": {"user": _TEXT, "metadata": _MAPPING, "store": boolean(), "service_tier": choice(SERVICE_TIERS),
                    "priority": whole(), "request_id": _TEXT, "cache_salt": _TEXT, "provider": _MAPPING,
                    "logprobs": boolean(), "top_logprobs": whole(0, 20)},
}
#: what chat_template_kwargs may set: thinking on or off, or its effort (`{"enable_thinking": true}`)
THINKING_SWITCHES: dict[str, Check] = {"enable_thinking": boolean(), "thinking": boolean(),
                                       "reasoning_effort": EFFORT, "thinking_budget": whole(min=0)}
#: fields a proxy reads a credential from, spelled with `_` or `-`, any case: text, recorded <redacted> (a field
#: only named like a secret, `ignore_eos_token`, is no credential: battery 55, B6)
CREDENTIALS = frozenset({"api_key", "apikey", "key", "token", "api_token", "access_token", "auth_token",
                         "authorization", "x_api_key", "password", "secret", "client_secret", "bearer",
                         "subscription_key", "ocp_apim_subscription_key"})


def is_credential_field(name: object) -> bool:
    """A field a proxy reads a credential from (`CREDENTIALS`), however spelled (`X-API-KEY`)."""
    return str(name).lower().replace("-", "_") in CREDENTIALS


def check_extra_body(body: dict) -> None:
    """Every field of `body` allowed and of the right kind, or the UsageError that names the first that is not
    (every unknown field at once: a user who fixes one should not meet the next; battery 58, E2)."""
    for name, value in body.items():
        if name in SET_BY_IHBENCH:
            raise UsageError(f"--option extra_body: {quoted(name)} is set by ihbench itself ({SET_BY_IHBENCH[name]}); "
                             "extra_body adds fields to a request, it cannot replace these: leave it out")
        if name in ENDS_ANSWERS:
            raise UsageError(f"--option extra_body: {quoted(name)} {ENDS_ANSWERS[name]}; the model answers the benchmark's "
                             "conversation as it would, within --max-new-tokens: leave it out")
        if is_credential_field(name):
            if not isinstance(value, str):
                raise UsageError(f"--option extra_body: {quoted(name)} carries a credential, which is text; got "
                                 f"{type(value).__name__}")
            continue
        check = _passed_on_check(name)
        if check is None:
            unknown = [other for other in body if other not in SET_BY_IHBENCH and other not in ENDS_ANSWERS
                       and not is_credential_field(other) and _passed_on_check(other) is None]
            named = (f"{quoted(name)} is not a field" if len(unknown) == 1
                     else f"{', '.join(quoted(other) for other in unknown)} are not fields")
            raise UsageError(f"--option extra_body: {named} ihbench passes on; extra_body may carry "
                             f"{_passed_on_said()}; what the model hears, where its answer ends and what form it "
                             "takes are the benchmark's: leave it out")
        _check_value(name, value, check)
    if "top_logprobs" in body and body.get("logprobs") is not True:  # refused by OpenAI and vLLM on every item
        raise UsageError("--option extra_body: top_logprobs needs \"logprobs\": true beside it; the server refuses "
                         "it alone")
    kwargs = body.get("chat_template_kwargs")
    for name, value in (kwargs or {}).items():
        if name not in THINKING_SWITCHES:
            raise UsageError(f"--option extra_body: chat_template_kwargs may only switch thinking "
                             f"({', '.join(sorted(THINKING_SWITCHES))}), got {quoted(name)}; the template's other settings "
                             "change the conversation the model hears: leave it out")
        _check_value(f"chat_template_kwargs.{name}", value, THINKING_SWITCHES[name])


def _passed_on_check(name: str) -> Optional[Check]:
    return next((fields[name] for fields in PASSED_ON.values() if name in fields), None)


def _check_value(name: str, value: Any, check: Check) -> None:
    """`value` as `check` wants it, in JSON's own kind: the text "false" is no false (a template's
    `{% if enable_thinking %}` reads it as true: thinking on for a user who asked for it off; battery 56, C3),
    and the text "5" no number, as for the server."""
    alternatives = check if isinstance(check, tuple) else (check,)
    for alternative in alternatives:
        if _fits(value, alternative):
            if isinstance(alternative, Fields):
                missing = alternative.missing(name, value)
                if missing:
                    raise UsageError(f"--option extra_body: {name}: {missing}")
                for field, inner in value.items():
                    if field not in alternative:
                        raise UsageError(f"--option extra_body: {name}: {quoted(field)} is not a field ihbench passes "
                                         f"on; {name} may carry {', '.join(alternative)}: leave it out")
                    _check_value(f"{name}.{field}", inner, alternative[field])
            return
    said = " or ".join(_expected(alternative) for alternative in alternatives)
    raise UsageError(f"--option extra_body: {name}: expected {said}, got {quoted(value, as_json=True)}")


def _fits(value: Any, check: Check) -> bool:
    if isinstance(check, Fields):
        return isinstance(value, dict)
    if isinstance(check, ArgType):
        kind = bool if isinstance(check, Boolean) else str if isinstance(check, Choice) else (int, float)
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            return False
        try:
            check.convert(value)
        except ArgumentValueError:
            return False
        return not isinstance(check, Choice) or value == value.strip()
    return isinstance(value, check) and (check is bool or not isinstance(value, bool))


def _expected(check: Check) -> str:
    if isinstance(check, Fields):
        return f"a JSON object of {', '.join(check)}"
    if isinstance(check, ArgType):
        return check.expected
    return {str: "text", dict: "a JSON object", bool: "true or false"}[check]


def _passed_on_said() -> str:
    return "; ".join([*(f"{kind} ({', '.join(fields)})" for kind, fields in PASSED_ON.items()),
                      f"a credential a proxy reads ({', '.join(sorted(CREDENTIALS)[:4])}, ...; recorded <redacted>)"])
