import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("irl")
launch_gradio_widget(module)
