# The two commands a newcomer needs: `make test` and `make demo` (`make check`: the fast part of make test).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DATA := data/ihbench-dev
SOURCES := $(wildcard ihbench_dataset/sources/conversations/*.json)
# No network but the package registries: tests and the demo never touch the hub.
OFFLINE := HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 HF_EVALUATE_OFFLINE=1 HF_HUB_DISABLE_TELEMETRY=1 GRADIO_ANALYTICS_ENABLED=False

.PHONY: test check demo system-deps browser-deps install

# Two workers, one test file each (fixtures shared within a file): the suite takes about 8 min here
# instead of 13. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 2
test: system-deps browser-deps $(STAMP)
	$(OFFLINE) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile

# The edit-test loop: the suite without the tests marked slow (real audio builds, the wheel, the
# browser, over 10 s) or network (the package index); make test still runs everything.
check: system-deps $(STAMP)
	$(OFFLINE) $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile -m "not slow and not network"

# Builds the dev set when its sources changed, summarizes it, exports one conversation to demo/,
# then serves the Space on http://127.0.0.1:$${PORT:-7860} (Ctrl-C to stop).
demo: system-deps $(STAMP) $(DATA)/build_info.json
	$(OFFLINE) $(BIN)/ihbench info $(DATA)
	$(OFFLINE) $(BIN)/ihbench export $(DATA) --out demo
	$(OFFLINE) $(BIN)/ihbench space --data $(abspath $(DATA)) --port $${PORT:-7860}

install: system-deps $(STAMP)

$(DATA)/build_info.json: $(SOURCES) | $(STAMP)
	$(OFFLINE) $(BIN)/ihbench build --out $(DATA)

# FFmpeg decodes audio (torchcodec); flite is the second TTS voice family.
system-deps:
	@missing=""; \
	command -v ffmpeg >/dev/null 2>&1 || missing="$$missing ffmpeg"; \
	command -v flite >/dev/null 2>&1 || missing="$$missing flite"; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing system packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
	  else \
	    echo "error: missing system packages:$$missing. Install them (Debian/Ubuntu: sudo apt-get install$$missing) and run make again." >&2; \
	    exit 1; \
	  fi; \
	fi

# Debian's Chromium for the Space's browser tests (Playwright drives it; never `playwright install`).
# Without root the browser tests are skipped, and pytest says why.
browser-deps:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing chromium for the browser tests"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "note: chromium is not installed and this is not root: the browser tests will be skipped"; \
	  fi; \
	fi

# CPU torch first (a local wheel here): asking pip for anything that needs torch before it is
# installed would fetch a multi-GB CUDA build. torchcodec 0.13 is the build that matches it.
$(STAMP): setup.py setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q torchcodec==0.13.0 -e '.[tts,models,space,dev,smart-turn,align]'
	touch $(STAMP)
