"""Every metric folder can be pushed to the Hub as is: module, card, widget, requirements; the
examples in module docstrings and cards run; modules import nothing from this project."""
import re

import pytest
import yaml
from metric_modules import METRICS, MODULE_NAMES, load, run_doctest

READY = MODULE_NAMES  # every module the project promises; a missing folder fails, it is not skipped


@pytest.mark.parametrize("name", READY)
def test_folder_has_module_card_widget_and_requirements(name):
    folder = METRICS / name
    for file in (f"{name}.py", "README.md", "app.py", "requirements.txt"):
        assert (folder / file).is_file(), file
    app = (folder / "app.py").read_text()
    # the widget loads the folder it sits in (a bare name would be evaluate-metric/<name> on the Hub)
    assert "evaluate.load(str(Path(__file__).resolve().parent))" in app and "launch_gradio_widget(module)" in app


@pytest.mark.parametrize("name", READY)
def test_card_has_the_yaml_header_and_sections(name):
    text = (METRICS / name / "README.md").read_text()
    header = yaml.safe_load(text.split("---")[1])
    assert header["title"] and header["description"] and {"evaluate", "metric"} <= set(header["tags"])
    assert header["sdk"] == "gradio" and header["app_file"] == "app.py"
    for section in ("Metric Description", "How to Use", "Inputs", "Output Values", "Examples", "Limitations",
                    "Citation"):
        assert re.search(rf"^##+ .*{section}", text, re.MULTILINE), section


@pytest.mark.parametrize("name", READY)
def test_module_imports_nothing_from_this_project(name):
    for path in (METRICS / name).glob("*.py"):
        source = path.read_text()
        assert not re.search(r"^\s*(from|import)\s+(ihbench|ihbench_dataset|loaders)\b", source, re.MULTILINE), path
        for line in source.splitlines():
            if line.startswith("from .") and "," in line.split("import", 1)[1]:
                pytest.fail(f"{path}: one relative import per line (evaluate parses them with a regex): {line}")


@pytest.mark.parametrize("name", READY)
def test_docstring_examples_run(name):

    results = run_doctest(_kwargs_description(name), f"{name}._KWARGS_DESCRIPTION")
    assert results.attempted > 0 and results.failed == 0


@pytest.mark.parametrize("name", READY)
def test_card_examples_run(name):
    text = (METRICS / name / "README.md").read_text()
    examples = "\n".join(re.findall(r"```python\n(>>>.*?)```", text, re.DOTALL))
    results = run_doctest(examples, f"{name}/README.md")
    assert results.attempted > 0 and results.failed == 0


@pytest.mark.parametrize("name", READY)
def test_card_shows_every_docstring_example(name):
    def prompts(text):
        return {line.strip() for line in text.splitlines() if line.strip().startswith(">>>")}

    card = (METRICS / name / "README.md").read_text()
    assert prompts(_kwargs_description(name)) <= prompts(card)


def _kwargs_description(name):
    """The module's `_KWARGS_DESCRIPTION`, as evaluate loads it (modules use relative imports)."""
    import inspect

    module = inspect.getmodule(type(load(name)))
    return module._KWARGS_DESCRIPTION


@pytest.mark.parametrize("name", READY)
def test_evaluate_loads_the_modules_own_class_with_its_description(name):
    module = load(name)
    assert type(module).__module__.split(".")[-1] == name
    assert module.description.strip() and module.citation.strip() and module.inputs_description.strip()
