"""pytest for the notebooks (nbval): each notebook's kernel on socket files, and its last words kept.

nbval starts a notebook's kernel with jupyter_client's defaults: TCP ports picked free, closed and
bound again by the kernel half a second later. ``make test`` runs nbval beside the browser tests'
JupyterLab and the other xdist worker, which take ports all the time; a port taken in between
killed notebook 02's kernel in CI ("Kernel died before replying to kernel_info", all 48 cells in
error). Here nbval's ``start_new_kernel`` is replaced by one that gives the kernel ``ipc`` sockets
of its own (``attention_kit.grading.sockets``) and writes the kernel's stderr to a file instead of
/dev/null, so a kernel that still dies at start says why in the error.

Only when nbval is active (``--nbval``); ``tests/test_nbval_kernels.py`` checks it takes effect.
"""

from __future__ import annotations


def _start_new_kernel(startup_timeout=60, kernel_name="python", **kwargs):
    """nbval.kernel.start_new_kernel, with socket files and the kernel's stderr kept."""
    from nbval.kernel import NbvalKernelspecManager

    from attention_kit.grading.sockets import start_new_kernel

    kwargs.pop("stderr", None)  # nbval's /dev/null: keep it in a file instead
    return start_new_kernel(kernel_name, startup_timeout,
                            kernel_spec_manager=NbvalKernelspecManager(), **kwargs)


def pytest_configure(config):
    nbval_on = config.getoption("nbval", False) or config.getoption("nbval_lax", False)
    if not (config.pluginmanager.hasplugin("nbval") and nbval_on):
        return
    import nbval.kernel

    nbval.kernel.start_new_kernel = _start_new_kernel


def pytest_unconfigure(config):
    """xdist's workers end without running atexit: remove the kernels' socket folder here."""
    import sys

    sockets = sys.modules.get("attention_kit.grading.sockets")
    if sockets is not None:
        sockets.remove_folder()
