import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("rq_pass_rate")
launch_gradio_widget(module)
