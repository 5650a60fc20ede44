"""STAND-IN, not tree-sitter-python: see tree_sitter.py beside it."""


def language():
    raise RuntimeError("tree_sitter_python stand-in: not available here")
