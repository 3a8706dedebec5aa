"""The JupyterLab the browser tests drive (as `make lab` starts it) loads attention_kit's server
extension: the kernel's messages reach the page without Nagle's delay."""


def test_jupyterlab_loads_the_server_extension(lab_page, lab):
    log = lab.log_path.read_text(errors="replace")
    assert "attention_kit: kernel messages go to the page without Nagle's delay" in log, lab.log_tail()
