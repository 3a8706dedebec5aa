# Two commands do all the setup on a fresh machine with Python >= 3.10 and make:
#   make lab    - create .venv, install attention_kit (editable) and the locked versions of
#                 requirements/lab.txt, open JupyterLab on notebooks/
#   make test   - the same plus the test tools (requirements/test.txt), then ruff, the unit tests,
#                 the browser tests and nbval (twice) on every notebook
#   make check  - the quick loop after a small change: ruff, the fast unit tests, nbval on what changed
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
BASE   := $(VENV)/.installed-base
TESTS  := $(VENV)/.installed-test
SERVER := $(VENV)/.server-extension
NB     ?= $(sort $(wildcard notebooks/[0-9][0-9]_*.ipynb notebooks/zh/[0-9][0-9]_*.ipynb))
ROOT_FLAG := $(if $(filter 0,$(shell id -u)),--allow-root)
NBVAL  := --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg --nbval-cell-timeout=120
# The lock files (make lock writes them): the versions make lab, make test, the student edition and
# Binder install. LOCK= (empty) installs the newest versions pyproject.toml allows instead.
LOCK   ?= requirements/lab.txt
TEST_LOCK := $(if $(LOCK),requirements/test.txt)

.PHONY: install install-test lab test check lint unit browser nbval nbval-elsewhere nbval-scan notebooks notebooks-zh student student-zip answers grade grade-merge reset bench clean tiny-lm heads long-models

$(BASE): pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet $(if $(LOCK),-r $(LOCK)) -e .
	@touch $@

$(TESTS): $(BASE) $(SERVER) $(TEST_LOCK)
	$(BIN)/python -m pip install --quiet $(if $(TEST_LOCK),-r $(TEST_LOCK)) -e '.[test]'
	@touch $@

# attention_kit's Jupyter server extension: kernel messages reach the page without Nagle's delay
# (attention_kit/widgets/server_extension.py); Binder's postBuild does the same
$(SERVER): $(BASE)
	$(BIN)/python -m attention_kit.widgets.server_extension enable
	@touch $@

install: $(BASE) $(SERVER)
install-test: $(TESTS)

lab: $(BASE) $(SERVER)
	$(BIN)/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.root_dir=notebooks $(ROOT_FLAG)

lint: $(TESTS)
	$(BIN)/ruff check .

# The unit tests on every core (pytest-xdist; a file's tests stay on one worker, so a module's
# fixture, e.g. a graded class, is built once), without tests/browser and without nbval's plugin
# (its import costs seconds per process; the unit tests do not use it). Bytecode caches are kept
# (PYTHONDONTWRITEBYTECODE unset: each process would compile everything again).
JOBS  ?= auto
XDIST  = $(if $(filter 1,$(JOBS)),,-n $(JOBS) --dist loadfile)
PYTEST = env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m pytest
unit: $(TESTS)
	MPLBACKEND=Agg $(PYTEST) -q -p no:nbval $(XDIST) -m "not bench and not hub" --ignore=tests/browser --ignore=tests/hub $(PYTEST_ARGS) tests

# The browser tests (tests/browser/): JupyterLab and Notebook 7 in headless Chromium, one process
# (one JupyterLab with every notebook run once serves them all; its kernels use both cores)
browser: $(TESTS)
	MPLBACKEND=Agg $(PYTEST) -q -p no:nbval $(PYTEST_ARGS) tests/browser

# The kernel draws figures inline; an MPLBACKEND from the shell (Agg on many servers) would draw none.
nbval: $(TESTS)
	@if [ -n "$(NB)" ]; then env -u MPLBACKEND $(PYTEST) -q $(NBVAL) $(XDIST) $(NB); \
	else echo "no notebooks yet: nothing for nbval to run"; fi

# nbval again as another machine computes: one BLAS thread, OpenBLAS's generic kernel, numpy
# without AVX2/AVX-512. A stored output that prints rounding noise fails here (tools/nbval_elsewhere.py).
nbval-elsewhere: $(TESTS)
	@if [ -n "$(NB)" ]; then env -u MPLBACKEND -u PYTHONDONTWRITEBYTECODE $(BIN)/python tools/nbval_elsewhere.py -- -q $(NBVAL) $(XDIST) $(NB); fi

# For a notebook's author before a commit (a few minutes, not part of make test): nbval under each
# setting of a grid, the OpenBLAS kernels this CPU runs x (its threads and SIMD | one thread, SIMD off)
nbval-scan: $(TESTS)
	@if [ -n "$(NB)" ]; then env -u MPLBACKEND $(BIN)/python tools/nbval_elsewhere.py --scan -- -q $(NBVAL) $(NB); fi

# The lowest supported versions kept honest: a second environment, .venv-lowest, on the lowest
# Python the course supports (LOWEST_VERSION), with every dependency of pyproject.toml at its lower
# bound (requirements/lowest.txt, uv's lowest-direct resolution), runs nbval against the stored
# outputs. For CI and before a release (docs/development.md). tools/find_python.py finds an
# installed Python $(LOWEST_VERSION) (uv's discovery, the PATH, pyenv's versions even when its shim
# is not set to 3.10, the system's; none is downloaded) and fails loudly when there is none:
# LOWEST_PYTHON=/path/to/python3.10 names one. The stamp names the version the venv was built on.
LOWEST := .venv-lowest
LOWEST_VERSION ?= 3.10
LOWEST_PYTHON ?=
LOWEST_STAMP := $(LOWEST)/.installed-python$(LOWEST_VERSION)
$(LOWEST_STAMP): requirements/lowest.txt pyproject.toml | $(TESTS)
	@py="$$($(BIN)/python tools/find_python.py $(LOWEST_VERSION) $(LOWEST_PYTHON))" || exit 1; \
	echo "nbval-lowest: building $(LOWEST) on $$py"; \
	rm -rf $(LOWEST) && \
	$(BIN)/uv venv --quiet --no-python-downloads --python "$$py" $(LOWEST) && \
	$(BIN)/uv pip sync --quiet --python $(LOWEST)/bin/python requirements/lowest.txt && \
	$(BIN)/uv pip install --quiet --python $(LOWEST)/bin/python --no-deps -e .
	@touch $@

# NBVAL_LOWEST_ARGS: more pytest options for it (default: every core, one notebook per worker)
NBVAL_LOWEST_ARGS ?= $(XDIST)
.PHONY: nbval-lowest lock
nbval-lowest: $(LOWEST_STAMP)
	@$(LOWEST)/bin/python -c "import sys, numpy, matplotlib, jupyterlab, ipykernel; v = '%d.%d' % sys.version_info[:2]; \
	print('nbval-lowest: Python', sys.version.split()[0], '(' + sys.base_prefix + ')', '| numpy', numpy.__version__, '| matplotlib', matplotlib.__version__, '| jupyterlab', jupyterlab.__version__, '| ipykernel', ipykernel.__version__); \
	sys.exit(0 if v == '$(LOWEST_VERSION)' else '*** nbval-lowest: $(LOWEST) runs Python ' + v + ', not $(LOWEST_VERSION): make clean, then again')"
	@if [ -n "$(NB)" ]; then env -u MPLBACKEND $(LOWEST)/bin/python -m pytest -q $(NBVAL) $(NBVAL_LOWEST_ARGS) $(NB); fi

# make test: ruff, then the unit tests, nbval and nbval-elsewhere one after the other beside the
# browser tests, two targets at a time (the browser tests mostly wait for the page and leave a core
# idle); each target's output is printed whole when it ends. TEST_JOBS=1: one after the other.
# AK_TEST_EDITIONS: a folder the unit and browser tests share for the run, where the student
# edition is built once (tests/editions.py); removed after.
TEST_JOBS ?= 2
test: lint
	@editions="$$(mktemp -d)"; \
	AK_TEST_EDITIONS="$$editions" $(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target browser unit nbval nbval-elsewhere; \
	rc=$$?; rm -rf "$$editions"; exit $$rc

# Binder as repo2docker builds it (docs/development.md, "Binder as repo2docker builds it"): a venv,
# .venv-binder, on Python 3.11 with repo2docker's base environment (requirements/repo2docker-base.txt,
# its conda lock's Python packages at the lock's versions), then what Binder does over it:
# environment.yml's pip section as `mamba env update` runs it (pip install -U -r ...), postBuild,
# and pip check. Not part of make test (a few minutes; the base pins come from PyPI).
#   make binder-env       build it; pip check must be clean
#   make binder-nbval     nbval on the notebooks with that env's kernel (pytest and nbval added at
#                         requirements/test.txt's pins; no package already there may move)
#   make binder-browser   the browser tests (tests/browser) against that env's JupyterLab
#   make binder           all three
#   make binder-base R2D=<clone of jupyterhub/repo2docker> R2D_REF=<tag>   refresh the base pins
BINDER := .venv-binder
BINDER_PYTHON ?= python3.11
.PHONY: binder binder-env binder-nbval binder-browser binder-base
$(BINDER)/.installed: requirements/repo2docker-base.txt requirements/lab.txt pyproject.toml postBuild
	rm -rf $(BINDER)
	$(BINDER_PYTHON) -m venv $(BINDER)
	@# conda installs the lock as it is: every version exact, nothing resolved
	$(BINDER)/bin/python -m pip install --quiet --no-deps -r requirements/repo2docker-base.txt
	@# environment.yml's pip section: mamba 2.3 writes it to a file and runs pip install -U -r
	$(BINDER)/bin/python -m pip install --quiet --no-input -U -r requirements/lab.txt -e .
	PATH="$(CURDIR)/$(BINDER)/bin:$$PATH" bash postBuild
	$(BINDER)/bin/python -m pip check
	@$(BINDER)/bin/python -c "from importlib.metadata import version as v; print('binder-env:', ', '.join(f'{p} {v(p)}' for p in ('jupyterlab', 'notebook', 'jupyter_server', 'ipywidgets', 'ipykernel', 'jupyterhub')))"
	@touch $@
binder-env: $(BINDER)/.installed

$(BINDER)/.installed-test: $(BINDER)/.installed requirements/test.txt
	$(BINDER)/bin/python -m pip freeze --exclude-editable | sort > $(BINDER)/freeze-before.txt
	$(BINDER)/bin/python -m pip install --quiet -c requirements/test.txt pytest nbval pytest-xdist
	$(BINDER)/bin/python -m pip freeze --exclude-editable | sort > $(BINDER)/freeze-after.txt
	@moved="$$(comm -23 $(BINDER)/freeze-before.txt $(BINDER)/freeze-after.txt)"; \
	if [ -n "$$moved" ]; then echo "installing pytest and nbval moved: $$moved"; exit 1; fi
	$(BINDER)/bin/python -m pip check
	@touch $@

binder-nbval: $(BINDER)/.installed-test
	@if [ -n "$(NB)" ]; then env -u MPLBACKEND $(BINDER)/bin/python -m pytest -q $(NBVAL) $(XDIST) $(NB); fi

# BROWSER_PYTHON (tests/browser/conftest.py): the python whose JupyterLab serves the notebooks
binder-browser: $(BINDER)/.installed $(TESTS)
	BROWSER_PYTHON="$(CURDIR)/$(BINDER)/bin/python" $(BIN)/python -m pytest -q tests/browser

binder: binder-env binder-nbval binder-browser

binder-base: $(TESTS)
	@test -n "$(R2D)" -a -n "$(R2D_REF)" || { echo "usage: make binder-base R2D=<clone of jupyterhub/repo2docker> R2D_REF=<release tag>"; exit 2; }
	$(BIN)/python tools/repo2docker_base.py pins --repo "$(R2D)" --ref "$(R2D_REF)"
	rm -rf $(BINDER)-base
	$(BINDER_PYTHON) -m venv $(BINDER)-base
	$(BINDER)-base/bin/python -m pip install --quiet --no-deps -r requirements/repo2docker-base.txt
	$(BIN)/python tools/repo2docker_base.py requires --python $(BINDER)-base/bin/python
	rm -rf $(BINDER)-base

# Write the lock files with uv (docs/development.md, "The lock files"). Pins are kept unless asked:
#   make lock                      after a change to pyproject.toml: only what it needs moves
#   make lock UPGRADE=1            between semesters: the newest versions of everything
#   make lock UPGRADE=numpy        the newest numpy (and what it needs), the rest kept
UV_COMPILE = $(BIN)/uv pip compile --quiet --universal --python-version 3.10 --custom-compile-command "make lock" \
    $(if $(filter 1,$(UPGRADE)),--upgrade,$(foreach p,$(subst $(comma), ,$(UPGRADE)),--upgrade-package $(p)))
comma := ,
# Then every pin of lab.txt must have a wheel for each platform and Python learners use (no compiler
# needed); a package without one is held back in requirements/constraints.txt.
LOCK_PLATFORMS := x86_64-manylinux_2_28 aarch64-manylinux_2_28 x86_64-pc-windows-msvc x86_64-apple-darwin aarch64-apple-darwin
LOCK_PYTHONS   := 3.10 3.11 3.12 3.13 3.14
lock: $(TESTS)
	$(UV_COMPILE) pyproject.toml -c requirements/constraints.txt -o requirements/lab.txt
	$(UV_COMPILE) pyproject.toml --extra test -c requirements/constraints.txt -c requirements/lab.txt -o requirements/test.txt
	$(UV_COMPILE) pyproject.toml --extra hub -c requirements/constraints.txt -c requirements/lab.txt -c requirements/test.txt -o requirements/hub.txt
	$(UV_COMPILE) pyproject.toml requirements/lowest.in --resolution lowest-direct -o requirements/lowest.txt
	@for plat in $(LOCK_PLATFORMS); do for py in $(LOCK_PYTHONS); do \
	    $(BIN)/uv pip compile --quiet --no-deps --only-binary :all: --python-platform $$plat \
	        --python-version $$py requirements/lab.txt -o /dev/null || { echo "lab.txt: no wheel on $$plat, Python $$py"; exit 1; }; \
	done; done; echo "lab.txt: a wheel for every pin on $(LOCK_PLATFORMS), Python $(LOCK_PYTHONS)"
	@git diff --stat -- requirements/ 2>/dev/null || true

# The quick loop after a small change (about a minute on 2 cores): ruff, the unit tests without the
# browser tests and without those marked slow (tests/conftest.py), on every core (pytest-xdist;
# JOBS=1 runs them in one process), and nbval on the notebooks the change touched
# (tools/changed_notebooks.py: a changed .ipynb, or one that a changed module's docstring names).
# SINCE=main compares with where the branch left main instead of with HEAD.
# make test stays the whole suite.
SINCE ?= HEAD
check: $(TESTS)
	$(BIN)/ruff check .
	@# bytecode caches kept (a second run skips compiling and pytest's assertion rewriting: about 6 s per
	@# process) and nbval not loaded (its import costs about 4 s per process; the unit tests do not use it)
	MPLBACKEND=Agg $(PYTEST) -q -p no:nbval $(XDIST) -m "not slow and not bench and not hub" --ignore=tests/browser --ignore=tests/hub $(PYTEST_ARGS) tests
	@nb="$$($(BIN)/python tools/changed_notebooks.py $(SINCE))"; \
	if [ -n "$$nb" ]; then echo "nbval on $$nb" | tr '\n' ' '; echo; env -u MPLBACKEND $(PYTEST) -q $(NBVAL) $$nb; \
	else echo "nbval: no notebook touched (make nbval runs them all)"; fi

# Re-execute notebooks in place (their stored outputs are what nbval compares):
#   make notebooks               every notebook
#   make notebooks NB=notebooks/02_self_attention.ipynb
notebooks: $(TESTS)
	env -u MPLBACKEND $(BIN)/python -m jupyter nbconvert --to notebook --execute --inplace \
	    --ExecutePreprocessor.store_widget_state=False --ExecutePreprocessor.record_timing=False \
	    --ExecutePreprocessor.timeout=300 $(NB)
	$(BIN)/python tools/tidy_notebooks.py $(NB)

# The Chinese edition (docs/translating.md): notebooks/zh/ built from translations/zh/*.po (the
# English code cells, the translated text), then executed: the kernel runs in notebooks/zh/, whose
# marker file makes attention_kit print in Chinese. STEMS=01_general_attention_model: only those.
notebooks-zh: $(TESTS)
	$(BIN)/python tools/translate.py build $(STEMS) $(if $(STEMS),README)
	@nbs="$$(ls notebooks/zh/[0-9][0-9]_*.ipynb 2>/dev/null | grep -E "$$(echo '$(or $(STEMS),.)' | tr ' ' '|')" | tr '\n' ' ')"; \
	if [ -n "$$nbs" ]; then $(MAKE) --no-print-directory notebooks NB="$$nbs"; fi

# The student edition in student/: the notebooks without solutions or answers, the package, a README,
# environment.yml and a Makefile whose `make lab` opens them (docs/teaching.md, "Publish the student
# edition"). make student-zip also writes student.zip. PREDICTIONS=record: prediction exercises are
# recorded in class and judged only by make grade.
student: $(BASE)
	$(BIN)/python tools/make_student.py $(if $(filter record,$(PREDICTIONS)),--record-predictions)

student-zip: $(BASE)
	$(BIN)/python tools/make_student.py --zip $(if $(filter record,$(PREDICTIONS)),--record-predictions)

# The teacher's answer key: every exercise's task and worked solution, and the answers to the
# questions to ask in class (docs/class-answers.md) -> answers/answer-key.md. Not for learners.
answers: $(BASE)
	$(BIN)/python tools/make_answers.py

# Grade a class's returned notebooks with the exercise checkers (docs/teaching.md, "Grading a class"):
#   make grade SUBMISSIONS=returned                 -> grades/grades.csv, grades/feedback/, grades/summary.md,
#                                                      grades/canvas.csv, grades/canvas_reupload.zip,
#                                                      grades/moodle.csv, grades/moodle_feedback.zip
#   make grade SUBMISSIONS=returned GRADES=week3 GRADE_ARGS="--cell-timeout 120 --memory-mb 4096"
#   make grade SUBMISSIONS=submissions.zip NOTEBOOKS=02,04 ASSIGNMENT="Week 2 (12345)"
#   make grade SUBMISSIONS=returned EXERCISES=02.1-02.5,02.6:0.5,04   (exercises set, with weights)
#   make grade SUBMISSIONS=resubmitted LEARNERS=alice,bob              (regrade two into grades/,
#                                                      with grades/grades.json's settings; NEW_SETTINGS=1
#                                                      applies the ones given to the whole class)
#   make grade SUBMISSIONS=returned SHARD=2/8 GRADES=grades-2        (one shard of a large class, by LMS id;
#                                                      the others on other machines, then:)
#   make grade-merge SHARDS="grades-1 grades-2 ... grades-8" GRADES=grades   (the files of one run)
#   LATE_PENALTY=10: percent of a late notebook's points taken off
#   LATE=4712,alice: learners whose notebooks are late (Moodle and plain folders carry no late mark)
#   MOODLE_MAX=100 MOODLE_HEADERS=de CANVAS_POINTS=20: the LMS assignment's scale and language
GRADES ?= grades
grade: $(BASE)
	@test -n "$(SUBMISSIONS)" || { echo "usage: make grade SUBMISSIONS=<folder or zip> [NOTEBOOKS=02,04 | EXERCISES=02.1-02.5,04] [LEARNERS=a,b] [ASSIGNMENT=name] [GRADES=grades] [MOODLE_MAX=100] [MOODLE_HEADERS=en] [CANVAS_POINTS=n] [LATE_PENALTY=10] [LATE=ids] [NEW_SETTINGS=1] [ADD_LEARNERS=1] [SHARD=i/N] [GRADE_ARGS=...]"; exit 2; }
	$(BIN)/python -m attention_kit.grading "$(SUBMISSIONS)" --out "$(GRADES)" $(if $(SEED),--seed "$(SEED)") \
	    $(if $(NOTEBOOKS),--notebooks "$(NOTEBOOKS)") $(if $(EXERCISES),--exercises "$(EXERCISES)") \
	    $(if $(LEARNERS),--learners "$(LEARNERS)") $(if $(ASSIGNMENT),--assignment "$(ASSIGNMENT)") \
	    $(if $(MOODLE_MAX),--moodle-max "$(MOODLE_MAX)") $(if $(MOODLE_HEADERS),--moodle-headers "$(MOODLE_HEADERS)") \
	    $(if $(CANVAS_POINTS),--canvas-points "$(CANVAS_POINTS)") $(if $(LATE_PENALTY),--late-penalty "$(LATE_PENALTY)") \
	    $(if $(LATE),--late "$(LATE)") $(if $(NEW_SETTINGS),--new-settings) $(if $(ADD_LEARNERS),--add-learners) $(if $(SHARD),--shard "$(SHARD)") \
	    $(GRADE_ARGS)

grade-merge: $(BASE)
	@test -n "$(SHARDS)" || { echo "usage: make grade-merge SHARDS=\"grades-1 grades-2 ...\" [GRADES=grades]"; exit 2; }
	$(BIN)/python -m attention_kit.grading merge $(SHARDS) --out "$(GRADES)"

# Put one notebook back as it was (your changes to it are lost):
#   make reset NB=notebooks/02_self_attention.ipynb   (the committed version, via git)
#   make reset NB=student/02_self_attention.ipynb     (a fresh student copy)
reset: $(BASE)
	@test "$(origin NB)" = "command line" || { echo "usage: make reset NB=notebooks/<file>.ipynb or NB=student/<file>.ipynb"; exit 2; }
	@case "$(NB)" in \
	    student/*) $(BIN)/python tools/make_student.py notebooks/$(notdir $(NB)) ;; \
	    *) git checkout -- $(NB) && echo "reset $(NB)" ;; \
	esac

# The benchmarks (benchmarks/run.py): the list of what each measures, then each in turn; or one:
#   make bench NAME=list | make bench NAME=learner-order ARGS="notebooks/04_masks_and_positions.ipynb"
bench: $(TESTS)
	$(BIN)/python benchmarks/run.py $(NAME) $(ARGS)

# Every benchmark's quick form (one short round, smallest sizes, no figure asserted; about 3 min on a
# busy 2-core machine): fails when a benchmark no longer runs. For CI (issue 44); NAME= one of them.
.PHONY: bench-quick
# Every benchmark's quick form, one short round each, no figure asserted (tests/test_benchmarks_quick.py;
# .ci/run runs it after make test): a benchmark cannot rot unseen. NAME=... runs one, without the test.
bench-quick: $(TESTS)
	@if [ -n "$(NAME)" ]; then $(BIN)/python benchmarks/run.py --quick $(NAME); \
	else $(PYTEST) -q -p no:nbval -m bench tests/test_benchmarks_quick.py; fi

# A real JupyterHub on this machine (hub/, docs/teaching.md "On a JupyterHub"), on 127.0.0.1 only:
#   make hub         the proxy (configurable-http-proxy, npm ci into node_modules/ from
#                    package-lock.json) and JupyterHub (requirements/hub.txt, in .venv beside the
#                    course: the learners' servers run there, the server extension enabled); any
#                    user name logs in with the password it prints (HUB_PASSWORD=... sets it);
#                    state in .hub/; HUB_COURSE=student: the student edition in each new home
#   make hub-restart restart the hub of a running make hub (the learners' servers keep running)
#   make hub-test    the faults a class meets, against a real hub (tests/hub/; about 1-4 minutes on 2 cores)
#   make bench NAME=hub-load ARGS="--learners 1,10"   the load test (benchmarks/hub_load.py)
HUB_STAMP := $(VENV)/.installed-hub
PROXY     := node_modules/.bin/configurable-http-proxy
.PHONY: hub hub-install hub-test hub-restart
$(HUB_STAMP): $(BASE) $(SERVER) requirements/hub.txt
	$(BIN)/python -m pip install --quiet -r requirements/hub.txt
	$(BIN)/python -m pip check
	@touch $@

$(PROXY): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

hub-install: $(HUB_STAMP) $(PROXY)

hub: hub-install
	$(BIN)/python hub/hubctl.py run $(if $(HUB_COURSE),--course "$(HUB_COURSE)")

hub-restart:
	$(BIN)/python hub/hubctl.py restart

hub-test: $(TESTS) hub-install
	MPLBACKEND=Agg $(PYTEST) -q -p no:nbval -m hub $(PYTEST_ARGS) tests/hub

# Retrain notebook 08's four models and rewrite attention_kit/data/heads_*.npz (about a minute)
heads: $(BASE)
	$(BIN)/python tools/train_heads.py

# Retrain notebook 06's language model and rewrite attention_kit/data/tiny_lm.npz (about a minute)
tiny-lm: $(BASE)
	$(BIN)/python tools/train_tiny_lm.py

# notebook 09's RoPE rhyme models and its length-extrapolation runs (a few minutes)
long-models: $(BASE)
	$(BIN)/python tools/train_tiny_lm.py --positions rope
	$(BIN)/python tools/train_extrapolation.py

clean:
	rm -rf $(VENV) $(LOWEST) node_modules $(BINDER) $(BINDER)-base *.egg-info build artifacts student student.zip answers
