import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("tf_win_rate")
launch_gradio_widget(module)
