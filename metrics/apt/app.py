import evaluate
from evaluate.utils import launch_gradio_widget

module = evaluate.load("apt")
launch_gradio_widget(module)
