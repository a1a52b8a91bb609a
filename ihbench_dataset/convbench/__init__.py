"""ConversationBench (Audio Arena): long spoken conversations with a knowledge base and tools.

Read from the layouts it is published in without running any of its files (`read.py`,
`pyfiles.py`), held as plain values (`benchmark.py`), and written as two configs of a dataset
folder (`importing.py`): one row per turn, and one row of setup (instruction, knowledge base,
tools). `ihbench convbench-import` and `ihbench build` (the in-house benchmark) both go through
`import_convbench`/`write_configs`; runs read the configs back with `load_benchmark`.
"""
from .benchmark import DIMENSIONS, ConvBenchmark, ConvTurn, mapping_version, relevant_dimensions
from .importing import SETUP_SUFFIX, SPLIT, check_name, import_convbench, write_benchmark, write_configs
from .load import load_benchmark
from .pyfiles import ConvBenchFormatError
from .read import read_benchmark

__all__ = ["DIMENSIONS", "SETUP_SUFFIX", "SPLIT", "ConvBenchFormatError", "ConvBenchmark", "ConvTurn",
           "check_name", "import_convbench", "load_benchmark", "mapping_version", "read_benchmark", "relevant_dimensions",
           "write_benchmark", "write_configs"]
