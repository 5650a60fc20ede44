"""llm-sandbox plot capture for Python, loaded at interpreter start by
llmsb_plots.pth.  Inert unless SANDBOX_PLOTS_DIR is set (the worker sets it
for jobs with plots on).  It never touches the program's source, prints
nothing, and patches matplotlib and plotly only when the program imports
them, so output and traceback line numbers stay those of the program.

matplotlib (and seaborn, which draws through it): every plt.show() saves
the open figures and closes them, as a window closing would; savefig and
fig.savefig also save a PNG copy; figures still open at exit are saved.
A figure is saved again only if it changed since.  plotly: fig.show() and
plotly.io.show() save a PNG when an image exporter (kaleido) is there,
else a self-contained HTML page.  Files: $SANDBOX_PLOTS_DIR/plot-NNN.EXT."""
import os as _os
import sys as _sys

_DIR = _os.environ.get("SANDBOX_PLOTS_DIR", "")
_state = {"n": 0, "savefig": None}


def _path(ext):
    _state["n"] += 1
    return _os.path.join(_DIR, "plot-%03d.%s" % (_state["n"], ext))


def _changed(fig):
    return not getattr(fig, "_llmsb_captured", False) or fig.stale


def _capture_mpl(fig):
    if not _changed(fig):
        return
    try:
        _state["savefig"](fig, _path("png"), format="png")
        fig._llmsb_captured = True
        # saving restores the figure's dpi and colours, which marks it
        # stale; it has not changed, and drawing on it will mark it again
        fig.stale = False
    except Exception:
        pass


def _open_figures():
    try:
        from matplotlib import _pylab_helpers
        return [m.canvas.figure for m in _pylab_helpers.Gcf.get_all_fig_managers()]
    except Exception:
        return []


def _patch_pyplot(plt):
    import atexit
    from matplotlib.figure import Figure

    if _state["savefig"] is not None:
        return
    orig_savefig = Figure.savefig
    _state["savefig"] = orig_savefig

    def savefig(self, *args, **kwargs):
        changed = _changed(self)
        result = orig_savefig(self, *args, **kwargs)
        if changed:
            _capture_mpl(self)
        else:
            self.stale = False
        return result

    def fig_show(self, *args, **kwargs):
        _capture_mpl(self)

    def show(*args, **kwargs):
        for fig in _open_figures():
            _capture_mpl(fig)
        plt.close("all")

    def at_exit():
        for fig in _open_figures():
            _capture_mpl(fig)

    savefig.__doc__ = orig_savefig.__doc__
    Figure.savefig = savefig
    Figure.show = fig_show
    plt.show = show
    atexit.register(at_exit)


def _capture_plotly(fig):
    try:
        import kaleido  # noqa: F401  (an exporter is there: a real PNG)
        fig.write_image(_path("png"), format="png")
        return
    except Exception:
        pass
    try:
        fig.write_html(_path("html"), include_plotlyjs=True, full_html=True)
    except Exception:
        pass


def _patch_plotly_figure(mod):
    def show(self, *args, **kwargs):
        _capture_plotly(self)
    mod.BaseFigure.show = show


def _patch_plotly_io(mod):
    def show(fig, *args, **kwargs):
        if hasattr(fig, "write_html"):
            _capture_plotly(fig)
    mod.show = show


_PATCHES = {
    "matplotlib.pyplot": _patch_pyplot,
    "plotly.basedatatypes": _patch_plotly_figure,
    "plotly.io": _patch_plotly_io,
}


class _Finder:
    """Finds the modules above through the other finders and runs the
    patch right after the module's own code."""

    def find_spec(self, name, path=None, target=None):
        patch = _PATCHES.get(name)
        if patch is None:
            return None
        spec = None
        for finder in _sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        loader = getattr(spec, "loader", None)
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        orig_exec = loader.exec_module

        def exec_module(module):
            orig_exec(module)
            try:
                patch(module)
            except Exception:
                pass
        loader.exec_module = exec_module
        return spec


def cell_start():
    """A session's call begins (llmsb_zygote.py): the last call's files
    were collected; numbering starts again at plot-001."""
    _state["n"] = 0
    try:
        for name in _os.listdir(_DIR):
            if name.startswith("plot-"):
                _os.unlink(_os.path.join(_DIR, name))
    except OSError:
        pass


def cell_end():
    """A session's call ended: its figures still open are saved and
    closed, as at a program's exit, so the next call starts with none."""
    plt = _sys.modules.get("matplotlib.pyplot")
    if plt is None or _state["savefig"] is None:
        return
    for fig in _open_figures():
        _capture_mpl(fig)
    try:
        plt.close("all")
    except Exception:
        pass


def activate(directory):
    """Turns capture on in a process that started without SANDBOX_PLOTS_DIR
    (a job forked by the zygote, llmsb_zygote.py): the modules already
    loaded are patched now, the others when they are imported."""
    global _DIR
    _DIR = directory
    if not _os.path.isdir(_DIR):
        return
    for name, patch in _PATCHES.items():
        mod = _sys.modules.get(name)
        if mod is not None:
            try:
                patch(mod)
            except Exception:
                pass
    _sys.meta_path.insert(0, _Finder())


if _DIR and _os.path.isdir(_DIR):
    _sys.meta_path.insert(0, _Finder())
