# Two commands on a fresh machine: `make demo` runs the product, `make test` runs the tests.
PYTHON_BOOT := $(shell scripts/find-python)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat requirements.txt requirements-dev.txt constraints.txt | cksum | cut -d' ' -f1)

.PHONY: demo test bench lint clean

$(STAMP): requirements.txt requirements-dev.txt constraints.txt
	@test -n "$(PYTHON_BOOT)" || { echo "Python >= 3.12 is required" >&2; exit 1; }
	test -x $(PY) || $(PYTHON_BOOT) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements-dev.txt -c constraints.txt
	rm -f $(VENV)/.installed-* && touch $(STAMP)

demo: $(STAMP)
	./scripts/demo.sh

# One pytest-xdist worker per core, at most 4 (each has its own test database and Redis databases: tests/settings.py);
# a test file runs whole on one worker.
test: $(STAMP)
	$(PY) -m pytest -n auto --maxprocesses=4 --dist loadfile

bench: $(STAMP)
	$(PY) bench/run_all.py

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(PY) scripts/check_code_shape.py

clean:
	rm -rf $(VENV) var staticfiles
