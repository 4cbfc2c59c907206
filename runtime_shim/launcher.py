"""Run programs, each in a process of its own: fresh, or forked from a preloaded launcher.

The code that runs inside a program's process is :data:`SOURCE` (a text: it runs under ``python -c``).

``python -c SOURCE --run REQUEST_JSON`` runs one program in a fresh interpreter;
``python -c SOURCE --serve PRELOAD_JSON`` is a *launcher*: it imports the heavy
third-party modules once (numpy, torch), then forks one child per request read
from stdin (a JSON line), and reports each child's pid and exit status on stdout.
A forked child starts with those modules already imported and runs the program
exactly as a fresh one does; this makes a run over many small programs an order
of magnitude faster. runtime_shim itself is never preloaded, so each program
imports it fresh and reads its environment (record file, mode, profile).

A request: ``kind`` ("path": ``runpy.run_path``, as ``python FILE`` or ``python DIR``;
"module": ``runpy.run_module``, as ``python -m``; "call": a console script's ``module:function``,
called), ``target``, ``path0`` (sys.path[0]), ``paths`` (put after it: the project root),
``args`` (the program's command-line arguments), ``cwd``, ``env`` (set), ``unset`` (removed),
``prelude`` (Python run first, in the program's process: the torch observer's ``session.PRELUDE``
for a PyTorch program; empty otherwise),
``result`` (where the child writes how the program ended), ``stdout``/``stderr`` (files, forked
children only). An exception the torch observer tagged (``runtime_shim_code``) is a dispatch
failure with that code, as a ``runtime_shim`` ``DispatchError`` is.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parent.parent
#: What a launcher imports ahead of every program by default.
PRELOAD = ("numpy", "torch")


class LaunchError(RuntimeError):
    """The launcher itself failed (not a program): an internal error."""


SOURCE = r'''
import json, os, sys


def _location(tb, own):
    """Where an exception left the program, as (file, line, col): the innermost traceback entry in the
    program's own files (``own``: its file, or the directory of a package), else the innermost outside
    runtime_shim, runpy and this bootstrap, else the innermost at all."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    if not entries:
        return None, None, None

    def name(entry):
        return entry.tb_frame.f_code.co_filename

    def outside(entry):
        return not name(entry).startswith("<") and os.sep + "runtime_shim" + os.sep not in name(entry) \
            and not name(entry).endswith(os.sep + "runpy.py")

    chosen = next((e for e in reversed(entries) if os.path.abspath(name(e)) == own
                   or os.path.abspath(name(e)).startswith(own + os.sep)), None) \
        or next((e for e in reversed(entries) if outside(e)), None) or entries[-1]
    code = chosen.tb_frame.f_code
    line, col = chosen.tb_lineno, None
    positions = list(code.co_positions())
    index = chosen.tb_lasti // 2
    if 0 <= index < len(positions) and positions[index][0] is not None:
        line, col = positions[index][0], positions[index][2]
    return os.path.abspath(code.co_filename), line, col


def run_child(request):
    """Run the program; write how it ended; return the exit status python would give."""
    import runpy, traceback
    os.environ.update(request["env"])
    for name in request["unset"]:
        os.environ.pop(name, None)
    os.chdir(request["cwd"])
    sys.path[0] = request["path0"]
    # the project root (and its src/), as an installed project would find its packages
    sys.path[1:1] = [p for p in request.get("paths", ()) if p not in sys.path]
    target = request["target"]
    # run_module replaces argv[0] with the module's file, as python -m does
    sys.argv = [target, *request.get("args", ())]

    def write(result):
        with open(request["result"], "w", encoding="utf-8") as f:
            json.dump(result, f)

    status = 0
    try:
        if request.get("prelude"):  # an observer installing itself (the torch observer), as the program's first code
            exec(compile(request["prelude"], "<devicelint-confirm-prelude>", "exec"), {"__name__": "__prelude__"})
        if request["kind"] == "module":
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        elif request["kind"] == "call":  # a console script, module:function, as its wrapper runs it
            import importlib
            module, _, function = target.partition(":")
            sys.argv[0] = module.rsplit(".", 1)[-1]
            entry = importlib.import_module(module)
            for part in function.split("."):
                entry = getattr(entry, part)
            sys.exit(entry())
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
            file, line, col = os.path.abspath(exc.filename), exc.lineno, (exc.offset or 1) - 1
        else:
            own = os.path.abspath(request["path0"] if request["kind"] in ("module", "call") else target)
            file, line, col = _location(exc.__traceback__, own)
        write({"status": "exception", "type": type(exc).__module__ + "." + type(exc).__qualname__,
               "dispatch": dispatch, "code": code if dispatch else None,
               "message": str(exc), "last_line": traceback.format_exception_only(type(exc), exc)[-1].strip(),
               "file": file, "line": line, "col": col})
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename.startswith("<"):  # this bootstrap, runpy
            tb = tb.tb_next
        traceback.print_exception(type(exc), exc, tb)
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


def base_env() -> dict[str, str]:
    """The interpreter's environment: this runtime_shim importable, code positions on."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.pop("PYTHONNODEBUGRANGES", None)  # the recorder needs column positions
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class Launcher:
    """A preloaded interpreter that forks one child per program (POSIX only)."""

    def __init__(self, preload: Sequence[str] = PRELOAD, python: str | None = None) -> None:
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - the launcher's own stderr, for errors
        self._proc = subprocess.Popen(
            [python or sys.executable, "-c", SOURCE, "--serve", json.dumps(list(preload))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, env=base_env(),
            start_new_session=True)
        self._lock = threading.Condition()
        self._write_lock = threading.Lock()
        self._events: dict[int, dict] = {}
        self._next = 0
        self._ready = False
        self._dead = False
        self._reader = threading.Thread(target=self._read, name="confirm-launcher", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                message = json.loads(line)
            except json.JSONDecodeError:  # not ours (a preloaded module printing): ignore it
                continue
            with self._lock:
                if message.get("ready"):
                    self._ready = True
                else:
                    self._events.setdefault(message["id"], {}).update(message)
                self._lock.notify_all()
        with self._lock:
            self._dead = True
            self._lock.notify_all()

    def _wait_for(self, predicate: Callable[[], bool], timeout: float | None) -> bool:
        with self._lock:
            return self._lock.wait_for(lambda: predicate() or self._dead, timeout)

    def run(self, request: dict, timeout: float) -> tuple[int | None, bool]:
        """Run one request; (exit status, timed out). The status is negative for a signal."""
        with self._lock:
            ident = self._next
            self._next += 1
        assert self._proc.stdin is not None
        with self._write_lock:  # one writer at a time
            self._proc.stdin.write((json.dumps({"id": ident, "request": request}) + "\n").encode())
            self._proc.stdin.flush()
        self._wait_for(lambda: "pid" in self._events.get(ident, {}), None)
        event = self._events.get(ident, {})
        if "pid" not in event:
            raise LaunchError(f"the launcher stopped: {self.log()}")
        done = self._wait_for(lambda: "exit" in self._events.get(ident, {}), timeout)
        timed_out = not done or "exit" not in self._events.get(ident, {})
        if timed_out:
            kill_group(event["pid"])
            self._wait_for(lambda: "exit" in self._events.get(ident, {}), 30)
        with self._lock:
            final = self._events.pop(ident, {})
        return final.get("exit"), timed_out

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")[-2000:]

    def close(self) -> None:
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            kill_group(self._proc.pid)
            self._proc.wait()
        self._log.close()


@contextlib.contextmanager
def preloaded(modules: Sequence[str]) -> Iterator[Launcher | None]:
    """A launcher that has imported ``modules``, closed on exit; ``None`` where processes cannot fork."""
    if os.name != "posix" or not hasattr(os, "fork"):
        yield None
        return
    launcher = Launcher(modules)
    try:
        yield launcher
    finally:
        launcher.close()


def run_fresh(request: dict, timeout: float, python: str | None) -> tuple[int | None, bool]:
    """One program in a fresh interpreter (no launcher)."""
    env = base_env()
    env.update(request["env"])
    for name in request["unset"]:
        env.pop(name, None)
    with open(request["stdout"], "wb") as out, open(request["stderr"], "wb") as err:
        proc = subprocess.Popen([python or sys.executable, "-c", SOURCE, "--run", json.dumps(request)],
                                env=env, cwd=request["cwd"], stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)
        try:
            return proc.wait(timeout=timeout), False
        except subprocess.TimeoutExpired:
            kill_group(proc.pid)
            proc.wait()
            return proc.returncode, True
        except BaseException:
            kill_group(proc.pid)
            proc.wait()
            raise
