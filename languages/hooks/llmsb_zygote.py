"""llm-sandbox zygote for Python: an interpreter that has loaded the image's
common libraries once and forks one child per job (docs/benchmarks.md, "The
zygote").  Started by llmsb-agent as root with the agent's few capabilities,
as `python3 llmsb_zygote.py PROFILE UID GID` with the environment a job's
interpreter would start with, on a clean sandbox (right after a cleanup),
stdin on /dev/null, stdout and stderr on the agent's log and fd 3 a
SOCK_SEQPACKET socket to the agent.

Preloading runs with the real and effective uid and gid of the sandbox
user, so what the libraries write (matplotlib's cache under MPLCONFIGDIR)
is the sandbox user's, as in a plain start.  Then the zygote says b"R" and serves requests:
one message of NUL-separated fields (version, uid, gid, the agent's pid,
RLIMIT_FSIZE, RLIMIT_NOFILE, RLIMIT_NPROC, the work dir, argc, argv...,
env...) with four descriptors (the job's stdin, stdout, stderr and a control
pipe).  Per request it forks; the job's process writes its pid to the
control pipe (the agent kills its group and its uid, as any job's) and
the zygote waits for it and answers its wait status and rusage on the
socket.  The job's process becomes the job's user exactly as the agent's
own child does (new session, the job's pipes, rlimits, oom_score_adj 1000,
no groups, no new privileges, death signal), and runs the program as
`python3 FILE ARGS` would: a fresh __main__, sys.argv, sys.path[0], the
job's environment, new random seeds, the plot hooks when the job wants
plots, tracebacks without a frame of this file.  Whatever it cannot mimic
(interpreter options, a job file that shadows a preloaded module), it
hands to a plain `python3` by exec, after dropping privileges.

The zygote never reads anything a job can write: it starts on a clean
sandbox before any job file is unpacked and preloads before it serves; the
agent never asks it for anything else.  It refuses to fork while it has
more than one thread (BLAS pools are kept to one thread by the agent's
environment)."""
import sys

# What `python3 FILE` has loaded when FILE's first line runs: the same set,
# since this file is started that way.
_FRESH = frozenset(sys.modules)

import _signal  # noqa: E402
import atexit  # noqa: E402
import builtins  # noqa: E402
import ctypes  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import importlib.machinery  # noqa: E402
import mmap  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import struct  # noqa: E402
import types  # noqa: E402

# What the zygote calls once the job's code has run (its finish, its exit,
# a session's next call) is what it finds here, at load: a program may
# rebind os._exit, os.kill, gc.collect, sys.modules["atexit"], builtins...
# (HumanEval's reliability_guard() does) and changes only what it calls
# itself, as in a plain python3, whose exit is C.  The zygote's functions
# look up builtins in a copy (a function takes its globals' __builtins__
# when defined); the modules it calls are copies of their names.
__builtins__ = dict(vars(builtins))


def _frozen(module):
    return types.SimpleNamespace(**vars(module))


os, gc, resource, signal, socket, struct = map(_frozen, (os, gc, resource, signal, socket, struct))
os.path = _frozen(os.path)
_set_handler, _run_exitfuncs = _signal.signal, atexit._run_exitfuncs  # signal.signal is Python
_modules = sys.modules  # the interpreter's own (sys.modules may be rebound)
_display = sys.__excepthook__  # PyErr_Display
_default_unraisable = sys.__unraisablehook__
# the module level's names after the job (its frame's builtins are the real ones)
_SystemExit, _BaseException = SystemExit, BaseException


def _unraisable_args_type():
    """sys.UnraisableHookArgs, which sys does not name: the type of what
    an unraisable exception passes to sys.unraisablehook."""
    got = []
    hook, sys.unraisablehook = sys.unraisablehook, got.append

    class Raises:
        def __del__(self):
            raise ValueError

    try:
        Raises()
    finally:
        sys.unraisablehook = hook
    return type(got[0])


_UnraisableHookArgs = _unraisable_args_type()

PROTO_VERSION = b"1"
# "base": the standard library programs commonly use; "data": numpy,
# pandas and matplotlib (Agg, with the plot hooks) besides; "numpy": numpy
# alone besides.  The smaller a zygote, the faster it forks and its job's
# process exits: the worker picks by what a job's code names.
BASE = ("json", "re", "math", "random", "collections", "itertools", "functools", "datetime",
        "decimal", "fractions", "statistics", "heapq", "bisect", "string", "typing",
        "dataclasses", "copy", "textwrap", "csv", "io", "hashlib", "base64", "struct", "operator")
PRELOAD = {"base": BASE, "data": BASE + ("numpy", "pandas", "matplotlib", "matplotlib.pyplot"),
           "numpy": BASE + ("numpy",), "session": BASE}
# "session": one process, forked at the first request, runs every call of a
# session in one __main__ (names, imports and open files persist) and
# answers each call itself ("done ..."); when it ends, so does the zygote.
SESSION = sys.argv[1:2] == ["session"]
# What the job's frames sit on: the zygote's top frame and exec's entry
# into the interpreter loop.  A plain start has neither; the recursion
# limit is raised by as much (and sys.getrecursionlimit/setrecursionlimit
# hide it) so RecursionError strikes at the same depth, with the same
# traceback.
RECURSION_OFFSET = 2
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
_libc = ctypes.CDLL(None, use_errno=True)
# fork(2) itself, the GIL held: os.fork's after-fork hooks (threading's
# bookkeeping, random's reseed, logging's locks) cost ~5 ms per job here and
# fix what only another thread or a fork inside an import could break; the
# zygote forks single-threaded, between imports, and reseeds between jobs.
_fork = ctypes.PyDLL(None, use_errno=True).fork
_SELF = os.path.abspath(__file__)


def _say(msg):
    try:
        os.write(2, ("llmsb-zygote: %s\n" % msg).encode())
    except OSError:
        pass


def _preload(names, uid, gid):
    """As the sandbox user in all but the saved ids (the way back): what the
    libraries create is the user's, and their access() checks (matplotlib's
    of MPLCONFIGDIR) see the user's rights.  No job runs meanwhile."""
    os.setresgid(gid, gid, 0)
    os.setresuid(uid, uid, 0)
    try:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception as e:  # a library the image lacks: not preloaded
                _say("preload %s: %s" % (name, e))
    finally:
        os.setresuid(0, 0, 0)
        os.setresgid(0, 0, 0)
    # what the libraries registered to run at exit (logging.shutdown,
    # multiprocessing's clean-up) runs at every job's exit, as it would
    # have had the job imported them


def _check_path():
    """Nothing a job can write may be on the path the zygote imports from."""
    for p in sys.path:
        r = os.path.realpath(p) if p else os.getcwd()
        if r == "/" or r.startswith(("/work", "/tmp", "/var/tmp", "/dev/shm", "/proc", "/run")):
            _say("refusing: %s on sys.path" % p)
            os._exit(1)


def _top_names(mods):
    return {m.partition(".")[0] for m in mods}


def _threads():
    return len(os.listdir("/proc/self/task"))


def _reseed():
    """New seeds for the generators the next job inherits, here between
    jobs (numpy's first reseed in a fresh fork costs ~6 ms)."""
    sys.modules["random"].seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()


_BUF = bytearray(1 << 17)  # a request lands here, in the job's process only
_WORK = "/work"  # the request's work dir (a session's program files are there)
_SESSION_PID = 0  # a session's process


# What the process forked ahead is doing, shared with the zygote: 0 waiting
# for a request, 1 running one, 2 (a session's) idle between calls.
_STATE = mmap.mmap(-1, 1)
WAITING, RUNNING, IDLE = 0, 1, 2


def _serve(sock):
    """Returns (request, fds) in a job's process; never returns in the
    zygote.  The zygote forks each job's process ahead of its request (the
    fork is off the job's path): that process, still root and a bare copy
    of the zygote, waits for the agent's request on the socket, marks that
    it took one (_STATE) and becomes the job.  The zygote waits for it and
    sends the agent its wait status and resource use ("exit STATUS
    UTIME_US STIME_US MAXRSS_KB") when it ended running a request.  The
    zygote itself never receives a request: nothing of a job's is ever in
    its memory, so the next job, a copy of it, finds nothing of this
    one's.  A session's zygote forks once and ends with its process."""
    zygote = os.getpid()
    while True:
        if _threads() != 1:
            _say("refusing: %d threads" % _threads())
            os._exit(1)
        _STATE[0] = WAITING
        pid = _fork()
        if pid == 0:
            return _take(sock, zygote)
        if pid < 0:
            _say("fork: %s" % os.strerror(ctypes.get_errno()))
            os._exit(1)  # the agent starts its jobs itself
        while True:
            try:
                _pid, status, ru = os.wait4(pid, 0)
                break
            except InterruptedError:
                continue
        state = _STATE[0]
        if state == RUNNING:
            sock.send(b"exit %d %d %d %d" % (status, int(ru.ru_utime * 1e6),
                                             int(ru.ru_stime * 1e6), ru.ru_maxrss))
        elif state == WAITING:  # the agent closed the socket, or it was killed
            if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
                os._exit(0)
            _say("a waiting child ended (status %d)" % status)
            os._exit(1)
        if SESSION:
            os._exit(0)  # the session is over (idle: the agent finds the zygote gone)
        _reseed()  # no two jobs share a generator's state


def _recv(sock):
    """The next request and its four descriptors; _exit(0) when the agent
    closed the socket."""
    cmsg_space = socket.CMSG_SPACE(4 * 4)
    while True:
        try:
            n, anc, _flags, _addr = sock.recvmsg_into([_BUF], cmsg_space)
            break
        except InterruptedError:
            continue
        except OSError as e:
            _say("recv: %s" % e)
            os._exit(1)
    fds = []
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds += list(struct.unpack("%di" % (len(data) // 4), data[:len(data) - len(data) % 4]))
    if n == 0:
        os._exit(0)  # the agent closed the socket: the zygote ends too
    if len(fds) != 4:
        _say("refusing: %d descriptors" % len(fds))
        os._exit(1)
    _STATE[0] = RUNNING
    if not SESSION:
        _STATE.close()  # the job cannot tell the zygote otherwise (a session's own process can)
    return bytes(_BUF[:n]), fds


def _take(sock, zygote):
    """In the process forked ahead: the next request."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # fork cleared it
    if os.getppid() != zygote:
        os._exit(1)
    return _recv(sock)


def _prctl(option, value):
    if _libc.prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0)) != 0:
        raise OSError(ctypes.get_errno(), "prctl %d" % option)


def _fail(ctl, msg):
    """Before the job's code: the agent hears why on the control pipe (and
    starts the job itself); the job's own streams get nothing of it."""
    try:
        os.write(ctl, b"fail %s\n" % msg.encode("utf-8", "replace")[:200])
    except OSError:
        pass
    os._exit(127)


def _set_limit(res, v):
    if v:
        try:
            resource.setrlimit(res, (v, v))
        except (ValueError, OSError):
            pass  # as the agent's own start: the container's limits hold


def _become(sock, msg, fds):
    """The job's process, still root: on the job's pipes, as the job's
    user.  Returns (argv, the control pipe)."""
    stdin, stdout, stderr, ctl = fds
    try:
        return _become_user(sock, msg, stdin, stdout, stderr, ctl)
    except BaseException as e:  # nothing of the job's has run
        _fail(ctl, "%s: %s" % (type(e).__name__, e))


def _become_user(sock, msg, stdin, stdout, stderr, ctl):
    f = msg.split(b"\0")
    if f[0] != PROTO_VERSION or len(f) < 10:
        _fail(ctl, "bad request")
    uid, gid, _agent, fsize, nofile, nproc = (int(x) for x in f[1:7])
    work, argc = f[7], int(f[8])
    global _WORK
    _WORK = os.fsdecode(work)
    argv, env = f[9:9 + argc], [e for e in f[9 + argc:] if e]
    if uid <= 0 or gid <= 0 or argc < 1:
        _fail(ctl, "bad request")
    zygote = os.getppid()
    os.setsid()
    os.dup2(stdin, 0)
    os.dup2(stdout, 1)
    os.dup2(stderr, 2)
    # the socket (but a session's, which takes its next calls there), the
    # originals: all but the control pipe (close_range(2))
    keep = sorted({ctl, sock.fileno()} if SESSION else {ctl})
    if not SESSION:
        sock.detach()
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _set_limit(resource.RLIMIT_FSIZE, fsize)
    _set_limit(resource.RLIMIT_NOFILE, nofile)
    _set_limit(resource.RLIMIT_NPROC, nproc)
    try:
        o = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
        try:
            os.write(o, b"1000")
        finally:
            os.close(o)
    except OSError:
        pass  # best effort: the cgroup limit still holds
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getgid() != gid:
        _fail(ctl, "ids did not change")
    if _libc.setuid(0) == 0:  # the C call: no exception to build when refused
        _fail(ctl, "uid 0 is still reachable")
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    # a uid change made the process undumpable (root's /proc files); an
    # exec would have made it dumpable again, as the job's own
    _prctl(PR_SET_DUMPABLE, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != zygote:
        _fail(ctl, "the zygote is gone")
    try:
        os.chdir(work)
    except OSError:
        os._exit(127)  # as the agent's own start
    os.environ.clear()
    for kv in env:
        k, _, v = kv.partition(b"=")
        if k:
            os.environb[k] = v
    return argv, ctl


def _tell(ctl, how):
    """The agent learns the pid (and whether the zygote's interpreter runs
    the job) only now: nothing of the job's has run yet."""
    os.write(ctl, b"%d %s\n" % (os.getpid(), how))
    os.close(ctl)


def _plain(argv):
    """Runs the job as a plain start would (the job's user already)."""
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        os.write(2, b"llmsb-agent: cannot run \"%s\": %s\n" % (argv[0], os.strerror(e.errno).encode()))
    os._exit(127)


def _shadows(dirname, names):
    """1 when a file of dirname would be imported instead of a preloaded
    module (a plain start would import the job's own)."""
    try:
        entries = os.listdir(dirname)
    except OSError:
        return True
    for e in entries:
        stem = e.partition(".")[0]
        if stem in names:
            return True
    return False


def _prepare(argv, preloaded, ctl):
    """The job's code and globals, set up as `python3 FILE ARGS` would have
    them; execs a plain start for what it cannot mimic."""
    path = os.fsdecode(argv[1]) if len(argv) > 1 else ""
    source = None
    if path and not path.startswith("-") and os.path.isfile(path):
        script = os.path.abspath(path)
        sys_path0 = os.path.dirname(os.path.realpath(script))
        # what a plain start would read at start-up that the zygote read
        # long ago: the user site a job ships, a matplotlibrc in the work dir
        user_site = os.environ.get("PYTHONUSERBASE")
        if (not _shadows(sys_path0, preloaded) and
                not (user_site and os.path.exists(user_site)) and
                not ("matplotlib" in sys.modules and os.path.exists("matplotlibrc"))):
            try:
                with open(script, "rb") as f:
                    source = f.read()
            except OSError:
                pass
    if source is None:
        _tell(ctl, b"plain")
        _plain(argv)
    _tell(ctl, b"zygote")
    main = _new_main(script, importlib.machinery.SourceFileLoader("__main__", script))
    sys.argv = [os.fsdecode(a) for a in argv[1:]]
    sys.orig_argv = [os.fsdecode(a) for a in argv]
    sys.path[0] = sys_path0
    plots = os.environ.get("SANDBOX_PLOTS_DIR")
    if plots and "llmsb_plots" in sys.modules:
        sys.modules["llmsb_plots"].activate(plots)
    code = compile(source, script, "exec", dont_inherit=True)
    _hide_recursion_offset(RECURSION_OFFSET)
    return code, main.__dict__


def _new_main(script, loader):
    """A fresh __main__, as `python3 FILE` makes it, in sys.modules."""
    main = types.ModuleType("__main__")
    main.__file__ = script
    main.__cached__ = None
    main.__loader__ = loader
    main.__spec__ = None
    main.__package__ = None
    main.__annotations__ = {}
    main.__builtins__ = builtins
    sys.modules["__main__"] = main
    return main


def _hide_recursion_offset(off):
    get, put = sys.getrecursionlimit, sys.setrecursionlimit

    def getrecursionlimit():
        return get() - off

    def setrecursionlimit(limit):
        if not isinstance(limit, int) or limit < 1:
            put(limit)  # the builtin's own error
        put(limit + off)

    for f, orig in ((getrecursionlimit, get), (setrecursionlimit, put)):
        f.__doc__, f.__module__ = orig.__doc__, "sys"
    put(get() + off)
    sys.getrecursionlimit, sys.setrecursionlimit = getrecursionlimit, setrecursionlimit


def _trim(tb):
    """tb without its first frames, those of this file."""
    while tb is not None and tb.tb_frame.f_code.co_filename == _SELF:
        tb = tb.tb_next
    return tb


def _write_stderr(text):
    """PySys_WriteStderr: to sys.stderr, else to descriptor 2."""
    try:
        sys.stderr.write(text)
    except BaseException:
        try:
            os.write(2, text.encode("utf-8", "backslashreplace"))
        except OSError:
            pass


def _uncaught(e):
    """PyErr_Print of an exception out of __main__: sys.last_*, then the
    program's sys.excepthook (its own failure and the exception shown by
    the interpreter's display, a SystemExit out of it obeyed).  Returns the
    exit status: 1, or -SIGINT when it is KeyboardInterrupt itself (the
    interpreter compares the type: a subclass exits 1)."""
    tb = _trim(e.__traceback__)
    BaseException.with_traceback(e, tb)
    t = type(e)
    sys.last_type, sys.last_value, sys.last_traceback = t, e, tb
    if "last_exc" in _SYS_DELETES:
        sys.last_exc = e
    status = -signal.SIGINT if t is KeyboardInterrupt else 1
    try:
        hook = sys.excepthook
    except AttributeError:
        _write_stderr("sys.excepthook is missing\n")
        _display(t, e, tb)
        return status
    try:
        hook(t, e, tb)
    except SystemExit as e2:
        return _exit_status(e2)
    except BaseException as e2:
        tb2 = _trim(e2.__traceback__)
        _write_stderr("Error in sys.excepthook:\n")
        _display(type(e2), BaseException.with_traceback(e2, tb2), tb2)
        _write_stderr("\nOriginal exception was:\n")
        _display(t, e, tb)
    return status


def _exit_status(e):
    """sys.exit's argument as the interpreter reads it (_Py_HandleSystemExit):
    an int is the status, None 0, anything else is printed and exits 1."""
    code = e.code
    if code is None:
        return 0
    if isinstance(code, int):  # C's exit() of a C long; past a long: -1
        return code & 0xFF if -(1 << 63) <= code < (1 << 63) else 255
    err = getattr(sys, "stderr", None)
    try:
        if err is None:
            os.write(2, str(code).encode("utf-8", "backslashreplace"))
        else:
            err.write(str(code))
    except BaseException:
        pass
    _write_stderr("\n")
    return 1


def _unraisable(e, obj):
    """PyErr_WriteUnraisable(obj): the program's sys.unraisablehook, the
    interpreter's own when there is none or it fails."""
    tb = _trim(e.__traceback__)
    args = _UnraisableHookArgs((type(e), BaseException.with_traceback(e, tb), tb, None, obj))
    hook = getattr(sys, "unraisablehook", None)
    if hook is not None:
        try:
            hook(args)
            return
        except BaseException as e2:
            tb = _trim(e2.__traceback__)
            args = _UnraisableHookArgs((type(e2), BaseException.with_traceback(e2, tb), tb, None,
                                        hook))
    try:
        _default_unraisable(args)
    except BaseException:
        pass


def _closed(f):
    try:
        return bool(f.closed)
    except BaseException:
        return False  # as the interpreter: a stream that cannot say is open


def _flush_std_files(names=("stdout", "stderr")):
    """flush_std_files() of the interpreter's exit: each stream that is
    there and not closed is flushed; False when one could not be (stdout's
    error goes to sys.unraisablehook, stderr's is dropped)."""
    ok = True
    for name in names:
        f = getattr(sys, name, None)
        if f is None or _closed(f):
            continue
        try:
            f.flush()
        except BaseException as e:
            ok = False
            if name.strip("_") == "stdout":
                _unraisable(e, f)
    return ok


def _shutdown_threads():
    """wait_for_thread_shutdown(): threading's _shutdown, when the program
    or the zygote imported threading."""
    if "threading" not in _modules:
        return
    threading = _modules["threading"]
    try:
        threading._shutdown()
    except BaseException as e:
        _unraisable(e, threading)


def _run_exit_handlers():
    """atexit's handlers, an error out of one told as the interpreter's own
    exit tells it: that runs them from C, so an error without a traceback
    (a C callback's: atexit.register(sys.exit, 5)) gets none, where here
    the unraisable report would add _finish's frame.  The program's
    sys.unraisablehook (or the interpreter's) is handed the error with
    this file's frames trimmed, then is back in its place, unless a
    handler set another."""
    d = vars(sys)
    program = d.get("unraisablehook")

    def hook(args):
        tb = _trim(args.exc_traceback)
        if args.exc_value is not None:
            BaseException.with_traceback(args.exc_value, tb)
        args = _UnraisableHookArgs((args.exc_type, args.exc_value, tb, args.err_msg, args.object))
        if program is None:
            _default_unraisable(args)
            return
        try:
            program(args)
        except BaseException as e:
            tb = _trim(e.__traceback__)
            _default_unraisable(_UnraisableHookArgs((type(e), BaseException.with_traceback(e, tb), tb,
                                                     None, program)))

    d["unraisablehook"] = hook
    try:
        _run_exitfuncs()
    except BaseException:
        pass  # each handler's error is reported by atexit itself
    if d.get("unraisablehook") is hook:
        if program is None:
            d.pop("unraisablehook", None)
        else:
            d["unraisablehook"] = program


# finalize_modules_delete_special(): what the interpreter sets to None
# before it lets the modules go (sys.last_* hold the frames, so the
# globals, of an uncaught exception)
_SYS_DELETES = ("path", "argv", "ps1", "ps2") + (("last_exc",) if sys.version_info >= (3, 12) else ()) + (
    "last_type", "last_value", "last_traceback", "path_hooks", "path_importer_cache", "meta_path",
    "__interactivehook__")


def _delete_special():
    """builtins._ and _SYS_DELETES to None, sys.stdin, stdout and stderr
    back to sys.__stdin__... (None when gone), as the interpreter's exit."""
    vars(builtins)["_"] = None
    d = vars(sys)
    for name in _SYS_DELETES:
        d[name] = None
    for name in ("stdin", "stdout", "stderr"):
        d[name] = d.get("__%s__" % name)


def _finish(status, before):
    """Py_FinalizeEx, less what would take a second with numpy, pandas and
    matplotlib loaded (tearing down every module): the program's threads,
    the exit handlers, the streams, sys.last_* and the rest of
    _SYS_DELETES, then the program's own objects (nothing of the
    zygote's holds them: __main__ and the modules it imported leave
    sys.modules and are collected, so files it left open are flushed and
    closed and finalizers run as at a plain exit), the original streams, then _exit: status, 120
    when a stream could not be flushed, death by SIGINT for status
    -SIGINT (130 should the signal be blocked)."""
    _shutdown_threads()
    _run_exit_handlers()
    flushed = _flush_std_files()
    _delete_special()
    # one collection while __main__ still holds the job's objects: it
    # puts each file's objects in the order a plain exit finalizes them
    # (the text wrapper before its buffer; the buffer closed first drops
    # what the wrapper still holds, when __main__'s names are in a cycle)
    gc.collect()
    for name in [n for n in _modules if n not in before] + ["__main__"]:
        _modules.pop(name, None)  # the last references: they go as at exit
    gc.collect()
    flushed = _flush_std_files(("__stdout__", "__stderr__")) and flushed
    if status < 0:
        _set_handler(-status, _signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        os._exit(128 - status)
    os._exit(status if flushed else 120)


def _main():
    names, uid, gid = PRELOAD[sys.argv[1]], int(sys.argv[2]), int(sys.argv[3])
    sock = socket.socket(fileno=3)
    _check_path()
    _preload(names, uid, gid)
    preloaded = _top_names(sys.modules) - _top_names(_FRESH)
    _check_path()
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the uid changes cleared it
    _reseed()
    gc.collect()
    gc.freeze()  # the jobs' collections leave the preloaded objects' pages shared
    if _threads() != 1:
        _say("refusing: %d threads after preload" % _threads())
        os._exit(1)
    sock.send(b"R")
    msg, fds = _serve(sock)
    return sock, msg, fds, preloaded


def _session_start():
    """The session's one __main__ (its names persist from call to call),
    the recursion depth compensated, plots on when asked for."""
    main = _new_main(None, None)
    _hide_recursion_offset(RECURSION_OFFSET)
    global _SESSION_PID
    _SESSION_PID = os.getpid()
    # a process the session forks has no business on the agent's socket
    fd = _sock.fileno()
    os.register_at_fork(after_in_child=lambda: os.close(fd))
    plots = os.environ.get("SANDBOX_PLOTS_DIR")
    if plots and "llmsb_plots" in sys.modules:
        sys.modules["llmsb_plots"].activate(plots)
    return main


def _session_call(main, argv, ctl):
    """One call: its program compiled (named as the file it came in, in the
    work dir whatever the session's current directory), the agent told the
    pid, sys.argv and sys.path[0] as for `python3 FILE`.  A program that
    cannot be read fails this call, not the session."""
    _tell(ctl, b"zygote")
    script = os.path.join(_WORK, os.fsdecode(argv[1]) if len(argv) > 1 else "")
    with open(script, "rb") as f:
        source = f.read()
    main.__file__ = script
    sys.argv = [os.fsdecode(a) for a in argv[1:]]
    sys.orig_argv = [os.fsdecode(a) for a in argv]
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    plots = _modules.get("llmsb_plots")
    if plots is not None and plots._DIR:
        plots.cell_start()
    return compile(source, script, "exec", dont_inherit=True)


def _session_next(sock, main, status, ru0):
    """Ends a call (its figures saved, its streams flushed and let go, its
    status and resource use sent as "done ...") and waits for the next:
    (argv, control pipe, resource use at its start)."""
    plots = _modules.get("llmsb_plots")
    if plots is not None and plots._DIR:
        plots.cell_end()
    status = status if _flush_std_files() else 120
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    ut = ru.ru_utime + kids.ru_utime - ru0[0]
    st = ru.ru_stime + kids.ru_stime - ru0[1]
    sock.send(b"done %d %d %d %d" % ((status & 0xFF) << 8, int(ut * 1e6), int(st * 1e6),
                                     max(ru.ru_maxrss, kids.ru_maxrss)))
    _STATE[0] = IDLE
    msg, fds = _recv(sock)
    f = msg.split(b"\0")
    if f[0] != PROTO_VERSION or len(f) < 10:
        _fail(fds[3], "bad request")
    argc = int(f[8])
    for fd, to in zip(fds[:3], (0, 1, 2)):
        os.dup2(fd, to)
        os.close(fd)
    # the new stdin's own buffer: nothing of the last call's input is left
    sys.stdin = sys.__stdin__ = open(0, "r", closefd=False, encoding=sys.stdin.encoding,
                                     errors=sys.stdin.errors)
    return f[9:9 + argc], fds[3], _usage()


def _usage():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (ru.ru_utime + kids.ru_utime, ru.ru_stime + kids.ru_stime)


_sock, _msg, _fds, _preloaded = _main()
_argv, _ctl = _become(_sock, _msg, _fds)
del _msg, _fds
_before = frozenset(sys.modules)
if SESSION:
    # every call at the top, as a job's program: the same frames under it
    _main_mod, _ru0 = _session_start(), _usage()
    while True:
        _exc = _ending = None
        try:
            _code = _session_call(_main_mod, _argv, _ctl)
            exec(_code, _main_mod.__dict__)
            _status = 0
        except _SystemExit as _e:  # the end of the session, as of a program
            _ending, _status = True, _exit_status(_e)
        except _BaseException as _e:
            _exc = _e
        _code = None
        if _ending:
            _main_mod = None  # its names go at the exit, as a program's
            _finish(_status, _before)
        if _exc is not None:  # out of the handler: the hook's errors have no context
            _status, _exc = _uncaught(_exc), None
            _status = 1 if _status < 0 else _status
        if os.getpid() != _SESSION_PID:  # a child the call forked, at the call's end
            _main_mod = None
            _finish(_status, _before)
        _argv, _ctl, _ru0 = _session_next(_sock, _main_mod, _status, _ru0)
del _sock
_code = _globals = _exc = None
try:
    _code, _globals = _prepare(_argv, _preloaded, _ctl)
    del _argv, _preloaded, _ctl
    exec(_code, _globals)  # at the top: the job's frames sit on this one only
    _status = 0
except _SystemExit as _e:
    _status = _exit_status(_e)
except _BaseException as _e:
    _exc = _e
finally:
    # nothing of the zygote's may keep the job's names or frames alive:
    # _finish lets them go as a plain exit does (files flushed, finalizers run)
    _code = _globals = None
if _exc is not None:  # out of the handler: the hook's errors have no context
    _status, _exc = _uncaught(_exc), None
_finish(_status, _before)
