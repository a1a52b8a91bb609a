"""The module's widget: `python app.py` here, or the Space that `ihbench publish-metrics` creates."""
from pathlib import Path

import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load(str(Path(__file__).resolve().parent))  # this folder: never a same-named Hub module
launch_gradio_widget(module)
