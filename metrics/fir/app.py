import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("fir")
launch_gradio_widget(module)
