"""The code that runs inside a program's process (kept as a source text: it runs under ``python -c``).

``python -c SOURCE --run REQUEST_JSON`` runs one program in a fresh interpreter;
``python -c SOURCE --serve PRELOAD_JSON`` is a *launcher*: it imports the heavy
third-party modules once (numpy, torch), then forks one child per request read
from stdin (a JSON line), and reports each child's pid and exit status on stdout.
A forked child starts with those modules already imported and runs the program
exactly as a fresh one does; this makes a run over many small programs an order
of magnitude faster. runtime_shim itself is never preloaded, so each program
imports it fresh and reads its environment (record file, mode, profile).

A request: ``kind`` ("path": ``runpy.run_path``, as ``python FILE`` or ``python DIR``;
"module": ``runpy.run_module``, as ``python -m``), ``target``, ``path0`` (sys.path[0]),
``cwd``, ``env`` (set), ``unset`` (removed), ``prelude`` (Python run first, in the program's
process: the torch observer's ``session.PRELUDE`` for a PyTorch program; empty otherwise),
``result`` (where the child writes how the program ended), ``stdout``/``stderr`` (files, forked
children only). An exception the torch observer tagged (``runtime_shim_code``) is a dispatch
failure with that code, as a ``runtime_shim`` ``DispatchError`` is.
"""

from __future__ import annotations

SOURCE = r'''
import json, os, sys


def _location(tb):
    """The innermost traceback entry outside runtime_shim and runpy, as (file, line)."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    for entry in reversed(entries):
        name = entry.tb_frame.f_code.co_filename
        if not name.startswith("<") and os.sep + "runtime_shim" + os.sep not in name \
                and not name.endswith(os.sep + "runpy.py"):
            return os.path.abspath(name), entry.tb_lineno
    return None, None


def run_child(request):
    """Run the program; write how it ended; return the exit status python would give."""
    import runpy, traceback
    os.environ.update(request["env"])
    for name in request["unset"]:
        os.environ.pop(name, None)
    os.chdir(request["cwd"])
    sys.path[0] = request["path0"]
    target = request["target"]
    sys.argv = [target]  # run_module replaces it with the module's file, as python -m does

    def write(result):
        with open(request["result"], "w", encoding="utf-8") as f:
            json.dump(result, f)

    status = 0
    try:
        if request.get("prelude"):  # an observer installing itself (the torch observer), as the program's first code
            exec(compile(request["prelude"], "<devicelint-confirm-prelude>", "exec"), {"__name__": "__prelude__"})
        if request["kind"] == "module":
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None or code == 0:
            write({"status": "ok"})
        else:
            status = code if isinstance(code, int) else 1
            if not isinstance(code, int):
                print(code, file=sys.stderr)
            write({"status": "exit", "code": status, "message": None if isinstance(code, int) else str(code)})
    except BaseException as exc:
        dispatch = any(c.__name__ == "DispatchError" and c.__module__.startswith("runtime_shim")
                       for c in type(exc).__mro__)
        # the torch observer tags the library exception it recorded with its code
        tagged = getattr(exc, "runtime_shim_code", None)
        code = getattr(exc, "code", None) if dispatch else tagged
        dispatch = dispatch or tagged is not None
        if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
            file, line = os.path.abspath(exc.filename), exc.lineno
        else:
            file, line = _location(exc.__traceback__)
        write({"status": "exception", "type": type(exc).__module__ + "." + type(exc).__qualname__,
               "dispatch": dispatch, "code": code if dispatch else None,
               "message": str(exc), "last_line": traceback.format_exception_only(type(exc), exc)[-1].strip(),
               "file": file, "line": line})
        traceback.print_exception(type(exc), exc, exc.__traceback__)
        status = 1
    else:
        write({"status": "ok"})
    return status


def finish(status):
    """End as the interpreter would: wait for non-daemon threads, run atexit, flush, exit."""
    import atexit, threading
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(status)


def fork_child(request):
    """In the forked child: a session of its own, stdio to files, then the program."""
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(null, 0)
        os.dup2(out, 1)
        os.dup2(err, 2)
        for fd in (null, out, err):
            os.close(fd)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        import signal
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        finish(run_child(request))
    finally:
        os._exit(70)


def serve(preload):
    import importlib, select, signal
    for name in preload:
        try:
            importlib.import_module(name)
        except Exception:
            pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it closes our stdin to stop us
    out = sys.stdout

    def send(message):
        out.write(json.dumps(message) + "\n")
        out.flush()

    send({"ready": True})
    children = {}
    buffer = b""
    open_input = True
    while open_input or children:
        if open_input:
            ready, _, _ = select.select([0], [], [], 0.01)
            if ready:
                data = os.read(0, 1 << 16)
                if not data:
                    open_input = False
                    for pid in children:  # the parent is gone: stop what it started
                        try:
                            os.killpg(pid, 9)
                        except OSError:
                            pass
                buffer += data
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    message = json.loads(line)
                    pid = os.fork()
                    if pid == 0:
                        fork_child(message["request"])
                    children[pid] = message["id"]
                    send({"id": message["id"], "pid": pid})
        else:
            select.select([], [], [], 0.01)
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            ident = children.pop(pid, None)
            if ident is not None:
                send({"id": ident, "exit": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(json.loads(sys.argv[2]))
    else:
        finish(run_child(json.loads(sys.argv[2])))
'''
