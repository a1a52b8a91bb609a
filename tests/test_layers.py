"""The import graph of the toolkit's own code: arrows only point down, and no circles.

Installed, everything is `ihbench.*`, but the repository keeps the layers in their own folders,
so the layer of a module is read from its import name: `ihbench.dataset` (data) under
`ihbench.loaders` (models) under the rest of `ihbench` (orchestration) under the Space.
Imports inside functions count too: a lazy upward import is still an arrow that climbs. The
metric modules import nothing of the project (checked in test_metric_cards).
"""
import ast
from pathlib import Path

from conftest import REPO

MOUNTED = {"ihbench_dataset": "ihbench.dataset", "loaders": "ihbench.loaders", "ihbench": "ihbench"}
LAYERS = {"ihbench.dataset": 0, "ihbench.loaders": 1, "ihbench": 2}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    parts[0] = MOUNTED[parts[0]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _layer(name: str) -> int:
    prefix = max((p for p in LAYERS if name == p or name.startswith(p + ".")), key=len)  # the most specific
    return LAYERS[prefix]


def _graph() -> dict[str, set[str]]:
    files = {_module_name(p): p for folder in MOUNTED for p in (REPO / folder).rglob("*.py")}
    graph = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module or ""
                targets.add(module)
                targets |= {f"{module}.{alias.name}" for alias in node.names}
        graph[name] = {t for t in targets if t in files and t != name}
    return graph


def test_every_import_points_down_or_sideways():
    upward = sorted(f"{source} -> {target}" for source, targets in _graph().items() for target in targets
                    if _layer(target) > _layer(source))
    assert upward == []


def test_no_module_imports_itself_through_others():
    graph = _graph()
    circles, state = [], {}

    def visit(node, stack):
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                circles.append(" -> ".join(stack[stack.index(target):] + [target]))
            elif target not in state:
                visit(target, stack + [target])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert circles == []


def test_no_module_imports_a_folder_name_the_wheel_does_not_install():
    """Installed, `ihbench_dataset` and `loaders` exist only as `ihbench.dataset` and `ihbench.loaders`:
    an import by the repository's folder name works in a checkout and fails for every user of the
    wheel (battery 34: `ihbench run` on a ConversationBench config ended in ModuleNotFoundError)."""
    repository_only = {folder for folder in MOUNTED if MOUNTED[folder] != folder}
    found = []
    for folder in MOUNTED:
        for path in (REPO / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
                    [node.module] if isinstance(node, ast.ImportFrom) and not node.level and node.module else []
                found += [f"{path.relative_to(REPO)}:{node.lineno} imports {name}" for name in names
                          if name.split(".")[0] in repository_only]
    assert found == []
