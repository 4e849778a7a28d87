# Entry points: install, proto, web, run, test, lint, bench. Each bootstraps what it needs.
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

# The compiled hot path: the modules pyproject.toml lists under [tool.mahjong] compiled, built
# in place by setup.py (mypyc). They are rebuilt whenever any module under shared/ or services/
# changes, not only their own sources: mypyc builds in what it knows of the modules they import
# (a named tuple's fields are read by position, say). MAHJONG_PURE_PYTHON=1 runs every module as
# Python instead (`make pure` removes the built extensions).
SOURCES := $(shell find shared services -name '*.py')
COMPILE_STAMP := $(VENV)/.compiled

.PHONY: install proto web browser promtool run test lint bench clean pure

ifdef MAHJONG_PURE_PYTHON
install: $(STAMP) $(GEN_STAMP) pure
else
install: $(STAMP) $(GEN_STAMP) $(COMPILE_STAMP)
endif

$(PY):
	$(PYTHON) -m venv $(VENV)

# Packages, then the project itself (editable, with the `mahjong` console script); its
# extensions are built by the next rule, with the venv's mypyc.
$(STAMP): pyproject.toml | $(PY)
	MAHJONG_PURE_PYTHON=1 $(BIN)/pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

$(COMPILE_STAMP): $(SOURCES) setup.py pyproject.toml $(STAMP)
	find shared services -name '*.so' -delete  # a module no longer listed runs as Python again
	$(PY) setup.py --quiet build_ext --inplace
	find shared services -name '*.so' -exec touch {} +  # built from the sources as they are now
	touch $@

pure:
	find shared services -name '*.so' -delete
	rm -f $(COMPILE_STAMP)

# Generated stubs live in gen/ (never edited, not in git), on the venv's path through a .pth.
proto: $(GEN_STAMP)
$(GEN_STAMP): $(PROTOS) $(STAMP)
	rm -rf $(GEN) && mkdir -p $(GEN)
	$(PY) -m grpc_tools.protoc -Iprotos --python_out=$(GEN) --pyi_out=$(GEN) \
		--grpc_python_out=$(GEN) $(PROTOS)
	find $(GEN)/mahjong -type d -exec touch {}/__init__.py \;
	echo "$(CURDIR)/$(GEN)" > "$(SITE)/mahjong-generated.pth"
	touch $@

# The web table (web/): npm packages from package-lock.json, then buf generates the client code
# from protos/ into web/src/gen (not in git) and Vite builds web/dist, which the gateway's web
# port serves. Rebuilt when the page's sources, its packages or a .proto change.
WEB      := web
WEB_DEPS := $(WEB)/node_modules/.installed
WEB_DIST := $(WEB)/dist/index.html
WEB_SRC  := $(shell find $(WEB)/src -path $(WEB)/src/gen -prune -o -type f -print) \
	$(WEB)/index.html $(WEB)/vite.config.ts $(WEB)/tsconfig.json $(WEB)/buf.gen.yaml

$(WEB_DEPS): $(WEB)/package.json $(WEB)/package-lock.json
	@command -v npm >/dev/null || { echo "make web: needs Node.js and npm" >&2; exit 1; }
	cd $(WEB) && npm ci --no-fund --no-audit --loglevel=error
	touch $@

$(WEB_DIST): $(WEB_DEPS) $(WEB_SRC) $(PROTOS)
	cd $(WEB) && npm run --silent build

web: $(WEB_DIST)

# The browser test's Chromium (Debian's; playwright-core drives it, no browser download) and a
# font with Chinese characters for its screenshots, installed when missing.
browser:
	@command -v chromium >/dev/null && fc-list 2>/dev/null | grep -qi 'wqy\|noto sans cjk' || { \
		apt-get update -qq && apt-get install -y -qq chromium fonts-wqy-zenhei >/dev/null; }

# promtool, which checks and unit-tests the alert rules of deploy/monitoring in tests/deploy:
# Debian's prometheus package (the server is installed but not started), when missing.
promtool:
	@command -v promtool >/dev/null || { \
		apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus >/dev/null; }

run: install web
	$(BIN)/mahjong run

test: install web browser promtool
	$(BIN)/pytest -n 2 $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	cd protos && ../$(BIN)/buf lint

bench: install
	$(PY) -m tests.bench

clean: pure
	rm -rf $(VENV) $(GEN) .venv-bench .pytest_cache .ruff_cache build
	rm -rf $(WEB)/node_modules $(WEB)/dist $(WEB)/src/gen $(WEB)/test-artifacts
