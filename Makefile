# Entry points: install, proto, run, test, lint, bench. Each bootstraps what it needs.
PYTHON   ?= $(shell command -v python3.11 || command -v python3)
VENV     := .venv
BIN      := $(VENV)/bin
PY       := $(BIN)/python
STAMP    := $(VENV)/.installed
PROTOS   := $(shell find protos -name '*.proto' | sort)
GEN      := gen
GEN_STAMP := $(GEN)/.stamp
SITE     = $(shell $(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
PYTEST_ARGS ?=

.PHONY: install proto run test lint bench clean

install: $(STAMP) $(GEN_STAMP)

$(PY):
	$(PYTHON) -m venv $(VENV)

# Packages, then the project itself (editable, with the `mahjong` console script).
$(STAMP): pyproject.toml | $(PY)
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

# Generated stubs live in gen/ (never edited, not in git), on the venv's path through a .pth.
proto: $(GEN_STAMP)
$(GEN_STAMP): $(PROTOS) $(STAMP)
	rm -rf $(GEN) && mkdir -p $(GEN)
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=$(GEN) --pyi_out=$(GEN) \
		--grpc_python_out=$(GEN) $(PROTOS)
	find $(GEN)/mahjong -type d -exec touch {}/__init__.py \;
	echo "$(CURDIR)/$(GEN)" > "$(SITE)/mahjong-generated.pth"
	touch $@

run: install
	$(BIN)/mahjong run

test: install
	$(BIN)/pytest -n 2 $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	cd protos && ../$(BIN)/buf lint

bench: install
	$(PY) -m tests.bench

clean:
	rm -rf $(VENV) $(GEN) .venv-bench .pytest_cache .ruff_cache
