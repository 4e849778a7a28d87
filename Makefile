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
# in place by setup.py (mypyc). They are rebuilt whenever any module under shared/, infra/ or
# services/ changes, not only their own sources: mypyc builds in what it knows of the modules they
# import (a named tuple's fields are read by position, say). MAHJONG_PURE_PYTHON=1 runs every
# module as Python instead (`make pure` removes the built extensions).
SOURCES := $(shell find shared infra services -name '*.py')
COMPILE_STAMP := $(VENV)/.compiled

.PHONY: install proto web browser promtool run test lint bench clean pure image image-tools image-test \
	settings-doc

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

$(COMPILE_STAMP): $(SOURCES) setup.py build_support/native_classes.py pyproject.toml $(STAMP)
	find shared infra services -name '*.so' -delete  # a module no longer listed runs as Python again
	$(PY) setup.py --quiet build_ext --inplace
	find shared infra services -name '*.so' -exec touch {} +  # built from the sources as they are now
	touch $@

pure:
	find shared infra services -name '*.so' -delete
	rm -f $(COMPILE_STAMP)

# The README's tables of each service's own settings, made from their declarations
# (infra/settings.py; a unit test checks they are current).
settings-doc: $(STAMP) $(GEN_STAMP)
	$(PY) -m devkit.settings_table README.md

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

# The image (deploy/Dockerfile) with podman, and its smoke test. IMAGE_BASE is the Dockerfile's
# BASE: by default a Debian bookworm base with python3 built here from Debian's packages
# (mmdebstrap, imported once as $(IMAGE_LOCAL_BASE) and kept); a studio that reaches Docker Hub
# may say IMAGE_BASE=python:3.11-slim. The context is staged in $(IMAGE_DIR)/context: the files
# git tracks (or would: untracked, not ignored) among the sources the Dockerfile copies, and
# web/dist from `make web`. Then the image is written as an OCI layout ($(IMAGE_DIR)/oci, its
# layers compressed as a registry keeps them) and its digest there goes into the prod overlay
# with IMAGE_NAME (what `skopeo copy --preserve-digests` pushes keeps that digest; README,
# "Deployment"). podman reads tests/image/containers.conf (no rlimits, runc, cgroupfs).
comma            := ,
IMAGE_NAME       ?= registry.example.com/mahjong/mahjong
IMAGE_TAG        ?= latest
IMAGE            := $(IMAGE_NAME):$(IMAGE_TAG)
IMAGE_LOCAL_BASE := localhost/debian-py:bookworm
IMAGE_BASE       ?= $(IMAGE_LOCAL_BASE)
IMAGE_DIR        := build/image
IMAGE_OVERLAY    := deploy/k8s/overlays/prod/kustomization.yaml
DEBIAN_MIRROR    ?= http://deb.debian.org
# The CA bundle pip trusts in the build (a build secret, not kept in the image): pip's, else the
# machine's.
IMAGE_CA         ?= $(firstword $(wildcard $(PIP_CERT) /etc/ssl/certs/ca-certificates.crt))
PODMAN           := CONTAINERS_CONF=$(CURDIR)/tests/image/containers.conf podman
IMAGE_SOURCES    := pyproject.toml setup.py build_support protos shared infra services deploy/Dockerfile \
	deploy/requirements.lock deploy/build-requirements.lock

# podman, runc, uidmap and mmdebstrap (Debian's), installed when missing (as `make test` does).
image-tools:
	@command -v podman >/dev/null && command -v runc >/dev/null && command -v newuidmap >/dev/null \
		&& { [ "$(IMAGE_BASE)" != "$(IMAGE_LOCAL_BASE)" ] || command -v mmdebstrap >/dev/null; } || { \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends podman runc uidmap mmdebstrap >/dev/null; }

image: web image-tools
	@if [ "$(IMAGE_BASE)" = "$(IMAGE_LOCAL_BASE)" ] && ! $(PODMAN) image exists $(IMAGE_LOCAL_BASE); then \
		echo "make image: building the base $(IMAGE_LOCAL_BASE) (mmdebstrap, bookworm)"; \
		mkdir -p $(IMAGE_DIR) && rm -f $(IMAGE_DIR)/rootfs.tar && \
		SOURCE_DATE_EPOCH=1735689600 mmdebstrap --quiet --variant=apt \
			--include=python3,python3-venv --aptopt='APT::Install-Recommends "false"' \
			--aptopt='Acquire::Languages "none"' \
			--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
			--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
			--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
			--dpkgopt='path-include=/usr/share/doc/*/copyright' \
			bookworm $(IMAGE_DIR)/rootfs.tar \
			"deb $(DEBIAN_MIRROR)/debian bookworm main" \
			"deb $(DEBIAN_MIRROR)/debian bookworm-updates main" \
			"deb $(DEBIAN_MIRROR)/debian-security bookworm-security main" && \
		$(PODMAN) import --quiet $(IMAGE_DIR)/rootfs.tar $(IMAGE_LOCAL_BASE) >/dev/null && \
		rm -f $(IMAGE_DIR)/rootfs.tar; \
	fi
	rm -rf $(IMAGE_DIR)/context && mkdir -p $(IMAGE_DIR)/context/web
	git ls-files -z --cached --others --exclude-standard -- $(IMAGE_SOURCES) \
		| tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null \
		| tar -xf - -C $(IMAGE_DIR)/context
	cp -r $(WEB)/dist $(IMAGE_DIR)/context/web/dist
	$(PODMAN) build --quiet --network host --build-arg BASE=$(IMAGE_BASE) \
		$(if $(IMAGE_CA),--secret id=ca$(comma)src=$(IMAGE_CA)) \
		-f $(IMAGE_DIR)/context/deploy/Dockerfile -t $(IMAGE) $(IMAGE_DIR)/context
	rm -rf $(IMAGE_DIR)/oci && $(PODMAN) push --quiet --digestfile $(IMAGE_DIR)/digest \
		$(IMAGE) oci:$(IMAGE_DIR)/oci:$(IMAGE_TAG)
	sed -i -E -e 's|^(    newName: ).*|\1$(IMAGE_NAME)|' \
		-e "s|^(    digest: ).*|\1$$(cat $(IMAGE_DIR)/digest)|" $(IMAGE_OVERLAY)
	@echo "make image: $(IMAGE)@$$(cat $(IMAGE_DIR)/digest)" \
		"($$($(PODMAN) image inspect --format '{{.Size}}' $(IMAGE) | awk '{printf "%.0f MB", $$1/1e6}'))"

# The image's smoke test (tests/image; not part of `make test`): every service started from the
# image as the manifests start it, a hand played through the gateway, SIGTERM, PostgreSQL.
image-test: install image
	MAHJONG_IMAGE=$(IMAGE) MAHJONG_IMAGE_TESTS=1 $(BIN)/pytest -p no:cacheprovider tests/image

# `make run OTLP=127.0.0.1:4317`: every call traced to a local OTLP/gRPC receiver (README,
# "Operations: traces").
run: install web
	$(BIN)/mahjong run $(if $(OTLP),--otlp-endpoint $(OTLP))

test: install web browser promtool
	$(BIN)/pytest -n 3 --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(PY) -m tests.lint.sizes
	cd protos && ../$(BIN)/buf lint

bench: install
	$(PY) -m tests.bench

clean: pure
	rm -rf $(VENV) $(GEN) .venv-bench .pytest_cache .ruff_cache build
	rm -rf $(WEB)/node_modules $(WEB)/dist $(WEB)/src/gen $(WEB)/test-artifacts
