import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("turn_taking_agreement")
launch_gradio_widget(module)
