"""Shared test configuration: the ``slow`` marker.

``make check`` (the quick loop) runs ``-m "not slow"``; ``make test`` and ``make unit`` run every
test. Mark a test slow when it takes more than a few seconds on a 2-core machine (training,
executing notebooks or kernels, building the student edition): ``@pytest.mark.slow``, or
``pytestmark = pytest.mark.slow`` for a whole module.
"""


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: seconds or more on 2 cores; make check leaves it out, make test runs it")
    config.addinivalue_line("markers", "hub: against a real JupyterHub (tests/hub/); make hub-test runs it, make unit and make check leave it out")
    config.addinivalue_line("markers", "bench: runs the benchmarks' quick forms; make bench-quick runs it, make unit leaves it out")
