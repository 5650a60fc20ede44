"""STAND-IN, not Hugging Face `datasets` (Debian has none): evalplus.data
imports load_dataset for EvalPerf only; `evalplus.evaluate` never calls it."""


def load_dataset(*args, **kwargs):
    raise RuntimeError("datasets stand-in: load_dataset is not available here")
