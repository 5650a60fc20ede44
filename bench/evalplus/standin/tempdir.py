"""STAND-IN, not the PyPI package `tempdir` (Debian has none): the one name
evalplus.data.utils imports, used only when it downloads a dataset, which the
harness never does (HUMANEVAL_OVERRIDE_PATH / MBPP_OVERRIDE_PATH are set)."""
import tempfile


class TempDir(tempfile.TemporaryDirectory):
    pass
