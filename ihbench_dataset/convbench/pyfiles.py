"""The Python files of a published ConversationBench folder, read without running them.

A benchmark folder is code (`turns.py`, `tools.py`, `system.py`, `config.py`), but what it holds is
data. Importing it would run whatever a downloaded folder contains, and would need pipecat. So each
file is parsed with `ast`, only the statement shapes the benchmark uses are accepted, and every value
is read with `ast.literal_eval`. Anything else (a call other than the tool-schema constructors, an
import of another module, a loop, a decorator) is refused with the file, the line and the reason,
before anything is written. Function bodies (`get_relevant_dimensions`, `_load_knowledge_base`,
the config's methods) are never run: what they compute is reimplemented (`dimensions.py`) or read
directly (the knowledge base file).
"""
from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional

from ..errors import IHBenchError
from ..io.regular import absent

#: imports that only name what the described shapes use; nothing else may be imported
_HARMLESS_MODULES = ("__future__", "typing", "pathlib")
_SCHEMA_CLASSES = {"FunctionSchema", "ToolsSchema"}


class ConvBenchFormatError(IHBenchError, ValueError):
    """A benchmark folder or file that is not in a shape the importer reads; the message names the
    file (and line) and says what is wrong."""


@dataclass
class BenchmarkFiles:
    """What the four files hold, as plain values."""

    turns: list
    core_dimensions: list
    category_dimensions: dict
    tools: list[dict]  # OpenAI tool objects, in the ToolsSchema order
    preamble: str
    tools_section: str
    config: dict = field(default_factory=dict)  # name, description, hf_repo, use_real_audio, real_audio_speaker


def refuse(path: Path, node: Optional[ast.AST], reason: str) -> ConvBenchFormatError:
    line = f":{node.lineno}" if node is not None and hasattr(node, "lineno") else ""
    return ConvBenchFormatError(f"{path}{line}: {reason}")


def parse(path: Path) -> ast.Module:
    if not path.is_file():
        raise ConvBenchFormatError(f"{path}: {absent(path)}; a benchmark folder holds turns.py, tools.py, system.py, "
                                   "config.py and data/knowledge_base.txt")
    try:
        return ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as error:
        raise ConvBenchFormatError(f"{path}:{error.lineno}: not valid Python ({error.msg})") from None
    except ValueError as error:  # null bytes
        raise ConvBenchFormatError(f"{path}: not a Python file ({error})") from None


def literal(path: Path, node: ast.AST, what: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise refuse(path, node, f"{what} is not a literal value ({type(node).__name__}); only literals are "
                                 "read, nothing is run") from None


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _assigned_name(node: ast.stmt) -> Optional[str]:
    """`NAME = value` or `NAME: type = value`; None for any other statement."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def _check_import(path: Path, node: ast.stmt, allowed: dict) -> None:
    """`allowed`: module -> names it may give (None: any); relative modules are spelled with dots."""
    if isinstance(node, ast.Import):
        raise refuse(path, node, f"`import {', '.join(a.name for a in node.names)}` is not part of a benchmark "
                                 "file; refused (nothing in the folder is run)")
    module = "." * node.level + (node.module or "")
    names = {alias.name for alias in node.names}
    for prefix, permitted in {**{m: None for m in _HARMLESS_MODULES}, **allowed}.items():
        if module == prefix or (prefix == "pipecat" and module.startswith("pipecat.")):
            if permitted is None or names <= permitted:
                return
    raise refuse(path, node, f"`from {module} import {', '.join(sorted(names))}` is not an import a benchmark "
                             "file makes; refused")


def _check_function(path: Path, node: ast.stmt, names: set) -> None:
    if node.name not in names:
        raise refuse(path, node, f"function `{node.name}` is not one a benchmark file defines "
                                 f"(expected {', '.join(sorted(names))})")
    if node.decorator_list:
        raise refuse(path, node, f"function `{node.name}` has a decorator; refused")


def _data_statements(path: Path, functions: set) -> Iterator[tuple[Optional[str], ast.stmt]]:
    """(assigned name or None, statement) of each top-level statement that is not the docstring, a
    harmless import or one of the `functions` the file may define (checked here, never run)."""
    for node in parse(path).body:
        if _is_docstring(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _check_import(path, node, {})
        elif isinstance(node, ast.FunctionDef):
            _check_function(path, node, functions)
        else:
            yield _assigned_name(node), node


def read_turns(path: Path) -> tuple[list, list, dict]:
    """(turns, CORE_DIMENSIONS, CATEGORY_DIMENSIONS) from turns.py."""
    values: dict[str, Any] = {}
    wanted = ("turns", "CORE_DIMENSIONS", "CATEGORY_DIMENSIONS")
    for name, node in _data_statements(path, {"get_relevant_dimensions"}):
        if name in wanted:
            values[name] = literal(path, node.value, f"`{name}`")
        else:
            raise refuse(path, node, _unexpected(node, f"turns.py assigns only {', '.join(wanted)}"))
    missing = [name for name in wanted if name not in values]
    if missing:
        raise ConvBenchFormatError(f"{path}: no `{missing[0]}`; turns.py assigns {', '.join(wanted)} "
                                   "(the category mapping is read from the folder, never assumed)")
    turns, core, mapping = (values[name] for name in wanted)
    if not isinstance(turns, list) or not all(isinstance(turn, dict) for turn in turns):
        raise ConvBenchFormatError(f"{path}: `turns` must be a list of dicts")
    if not turns:  # imported, it made a config of no rows, which every reader of the dataset then refused
        raise ConvBenchFormatError(f"{path}: `turns` is empty; a benchmark is one conversation of at least one turn")
    if not isinstance(core, list) or not all(isinstance(d, str) for d in core):
        raise ConvBenchFormatError(f"{path}: `CORE_DIMENSIONS` must be a list of names")
    if not isinstance(mapping, dict) or not all(
            isinstance(k, str) and isinstance(v, (list, tuple)) and all(isinstance(d, str) for d in v)
            for k, v in mapping.items()):
        raise ConvBenchFormatError(f"{path}: `CATEGORY_DIMENSIONS` must map category names to lists of dimensions")
    return turns, core, {k: list(v) for k, v in mapping.items()}


def read_tools(path: Path) -> list[dict]:
    """The tools in ToolsSchema order, each in the OpenAI shape pipecat sends."""
    schemas: dict[str, dict] = {}
    order: Optional[list[str]] = None
    for node in parse(path).body:
        if _is_docstring(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _check_import(path, node, {"pipecat": _SCHEMA_CLASSES})
            continue
        name = _assigned_name(node)
        call = getattr(node, "value", None)
        if name is None or not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name) \
                or call.func.id not in _SCHEMA_CLASSES:
            raise refuse(path, node, _unexpected(node, "tools.py holds only `x = FunctionSchema(...)` and one "
                                                       "`ToolsSchemaForTest = ToolsSchema(standard_tools=[...])`"))
        if call.args:
            raise refuse(path, call, f"`{call.func.id}(...)` takes keyword arguments only here")
        keywords = {kw.arg: kw.value for kw in call.keywords}
        if None in keywords:
            raise refuse(path, call, f"`{call.func.id}(**...)` is not read; give each keyword")
        if call.func.id == "FunctionSchema":
            schemas[name] = _function_schema(path, call, keywords)
        else:
            order = _standard_tools(path, call, keywords, schemas)
    if order is None:
        raise ConvBenchFormatError(f"{path}: no `ToolsSchema(standard_tools=[...])`; it gives the tools' order")
    return [schemas[name] for name in order]


def _function_schema(path: Path, call: ast.Call, keywords: dict) -> dict:
    unknown = set(keywords) - {"name", "description", "properties", "required"}
    if unknown:
        raise refuse(path, call, f"FunctionSchema keyword `{sorted(unknown)[0]}` is not read; expected name, "
                                 "description, properties, required")
    values = {key: literal(path, value, f"FunctionSchema `{key}`") for key, value in keywords.items()}
    name, properties, required = values.get("name"), values.get("properties", {}), values.get("required") or []
    if not isinstance(name, str) or not name:
        raise refuse(path, call, "FunctionSchema needs a `name` string")
    if not isinstance(properties, dict) or not all(isinstance(v, dict) for v in properties.values()):
        raise refuse(path, call, f"tool {name}: `properties` must map each parameter to its JSON schema")
    if not isinstance(required, list) or not set(required) <= set(properties):
        raise refuse(path, call, f"tool {name}: `required` must list parameters it declares")
    return {"type": "function", "function": {
        "name": name, "description": str(values.get("description") or ""),
        "parameters": {"type": "object", "properties": properties, "required": required}}}


def _standard_tools(path: Path, call: ast.Call, keywords: dict, schemas: dict) -> list[str]:
    tools = keywords.get("standard_tools")
    if set(keywords) != {"standard_tools"} or not isinstance(tools, ast.List) or \
            not all(isinstance(element, ast.Name) for element in tools.elts):
        raise refuse(path, call, "expected `ToolsSchema(standard_tools=[name, ...])` listing FunctionSchema names")
    order = [element.id for element in tools.elts]
    unknown = [name for name in order if name not in schemas]
    if unknown:
        raise refuse(path, call, f"`{unknown[0]}` in standard_tools is not a FunctionSchema defined above it")
    return order


def read_system(path: Path) -> tuple[str, str]:
    """(_PREAMBLE, _TOOLS_SECTION); the instruction is preamble + knowledge base + tools section, which
    is checked to be what `system_instruction` says."""
    values: dict[str, str] = {}
    joined = False
    for name, node in _data_statements(path, {"_load_knowledge_base"}):
        if name in ("_PREAMBLE", "_TOOLS_SECTION"):
            value = literal(path, node.value, f"`{name}`")
            if not isinstance(value, str):
                raise refuse(path, node, f"`{name}` must be a string")
            values[name] = value
        elif name == "system_instruction":
            if not _is_preamble_kb_tools(node.value):
                raise refuse(path, node, "expected `system_instruction = _PREAMBLE + _load_knowledge_base() + "
                                         "_TOOLS_SECTION`")
            joined = True
        else:
            raise refuse(path, node, _unexpected(node, "system.py assigns _PREAMBLE, _TOOLS_SECTION and "
                                                       "system_instruction"))
    for name in ("_PREAMBLE", "_TOOLS_SECTION"):
        if name not in values:
            raise ConvBenchFormatError(f"{path}: no `{name}` string")
    if not joined:
        raise ConvBenchFormatError(f"{path}: no `system_instruction = _PREAMBLE + _load_knowledge_base() + "
                                   "_TOOLS_SECTION`")
    return values["_PREAMBLE"], values["_TOOLS_SECTION"]


def _is_preamble_kb_tools(node: ast.AST) -> bool:
    return (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_name(node.right, "_TOOLS_SECTION")
            and isinstance(node.left, ast.BinOp) and isinstance(node.left.op, ast.Add)
            and _is_name(node.left.left, "_PREAMBLE") and isinstance(node.left.right, ast.Call)
            and _is_name(node.left.right.func, "_load_knowledge_base") and not node.left.right.args
            and not node.left.right.keywords)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


#: the config's constant attributes that are read; others (turns = turns, audio_dir = Path(...)) are
#: references to the other files or the audio-path rule, reimplemented, never evaluated
CONFIG_CONSTANTS = ("name", "description", "hf_repo", "use_real_audio", "real_audio_speaker")


def read_config(path: Path) -> dict:
    found: Optional[dict] = None
    for node in parse(path).body:
        if _is_docstring(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _check_import(path, node, {".turns": None, ".tools": None, ".system": None})
        elif isinstance(node, ast.ClassDef) and node.name == "BenchmarkConfig" and not node.decorator_list \
                and not node.keywords and all(isinstance(base, ast.Name) for base in node.bases):
            found = _config_class(path, node)
        else:
            raise refuse(path, node, _unexpected(node, "config.py holds its imports and `class BenchmarkConfig`"))
    if found is None:
        raise ConvBenchFormatError(f"{path}: no `class BenchmarkConfig`")
    return found


def _config_class(path: Path, node: ast.ClassDef) -> dict:
    constants = {}
    for statement in node.body:
        name = _assigned_name(statement)
        if _is_docstring(statement):
            continue
        if isinstance(statement, ast.FunctionDef):  # methods are never run
            if any(not isinstance(d, ast.Name) for d in statement.decorator_list):
                raise refuse(path, statement, f"method `{statement.name}` has a decorator that is not a plain name")
            continue
        if name in CONFIG_CONSTANTS:
            constants[name] = literal(path, statement.value, f"BenchmarkConfig.{name}")
        elif name is not None and _is_reference(statement.value):
            continue
        else:
            raise refuse(path, statement, _unexpected(statement, "BenchmarkConfig holds constants, references to "
                                                                 "the other files and methods"))
    return constants


def _is_reference(node: ast.AST) -> bool:
    """A name, an attribute, a literal, `Path(...)` of those, or `/` and `+` of those: the shapes of
    `turns = turns` and `audio_dir = Path(__file__).parent / "audio"`. Never evaluated."""
    if isinstance(node, (ast.Name, ast.Constant)):
        return True
    if isinstance(node, ast.Attribute):
        return _is_reference(node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Div, ast.Add)):
        return _is_reference(node.left) and _is_reference(node.right)
    if isinstance(node, ast.Call):
        return _is_name(node.func, "Path") and not node.keywords and all(_is_reference(a) for a in node.args)
    return False


def check_package_init(path: Path) -> None:
    """`__init__.py`, when there is one: a docstring and `from .config import BenchmarkConfig`."""
    if not path.is_file():
        return
    for node in parse(path).body:
        if _is_docstring(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            _check_import(path, node, {".config": {"BenchmarkConfig"}})
        elif _assigned_name(node) == "__all__":
            literal(path, node.value, "`__all__`")
        else:
            raise refuse(path, node, _unexpected(node, "__init__.py only re-exports BenchmarkConfig"))


def _unexpected(node: ast.stmt, expected: str) -> str:
    kinds = {ast.For: "a loop", ast.While: "a loop", ast.AsyncFor: "a loop", ast.With: "a `with` block",
             ast.If: "an `if`", ast.Try: "a `try`", ast.ClassDef: "a class", ast.FunctionDef: "a function",
             ast.AsyncFunctionDef: "a function", ast.Delete: "a `del`", ast.Global: "a `global`"}
    kind = kinds.get(type(node))
    if kind is None and isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        kind = "a call"
    if kind is None:
        name = _assigned_name(node)
        value = getattr(node, "value", None)
        kind = (f"a call assigned to `{name}`" if isinstance(value, ast.Call) else f"an assignment to `{name}`") \
            if name else f"a `{type(node).__name__}` statement"
    return f"{kind} is not part of the shape the importer reads ({expected}); refused, nothing in the folder is run"
