"""Analysis speed of devicelint on real code: PyTorch libraries against ruff, pylint and ast.parse, in the same run.

What it measures
    The wall-clock time (``time.perf_counter`` around each subprocess, median of ``--repeats``
    runs, the tools interleaved run by run) of analysing the Python sources of pinned wheels
    (:data:`CORPORA`): timm and transformers by default (:data:`DEFAULT_CORPORA`), torchvision and
    pytorch-lightning too with ``--corpora all`` (the PyTorch corpora), with:

    * ``ast.parse``: read and parse every file in this process (the floor of any Python analyzer);
    * ruff: ``ruff check --no-cache --isolated --exit-zero -q DIR``, ruff's default rules
      (``--isolated``: the repo's own ruff settings do not apply to the corpus); the goals are
      measured against this one. ``ruff (ALL)`` adds ``--select ALL`` and is shown for reference;
    * pylint: ``pylint -j2 --errors-only --recursive=y --score=n --persistent=n DIR``, errors only
      (``-E``: only the checks that report errors run, or it would not finish), measured once
      (``--pylint-repeats``), killed after ``--pylint-timeout`` seconds: a ratio against a killed
      run is a lower bound (``≥``);
    * devicelint cold: ``python -m devicelint check DIR --exit-zero -q --output-format json --isolated
      --no-respect-gitignore --no-cache``, in a fresh interpreter, start-up included (like ruff's,
      no configuration file of the repo and no ``.gitignore`` apply to the corpus; options this
      checkout's CLI lacks are left out: the bench reads ``check --help``); ``--select CODES`` passes
      ``--select CODES`` to every devicelint run (``--select ALL``, or ``--select MV2`` for the PyTorch
      rules: a selector that matches no rule of this checkout is dropped with a note, and
      the bench stops with status 2 if none is left), ``--analyze-all`` passes ``--analyze-all``
      (devicelint's own switch that turns off its relevance skip);
    * devicelint warm: the same without ``--no-cache`` and with ``--cache-dir`` in the cache
      directory (``devicelint-cache/<corpus>``, emptied first), after one untimed run that fills it.
      A CLI without a cache (no ``--no-cache``): the bench prints "warm: not available (no cache
      yet)" and measures cold only;
    * ``--force-analyze`` adds "devicelint forced": devicelint with the relevance skip disabled
      (every file parsed and interpreted, as if each used runtime_shim), measured once. It says
      what the engine costs on real code, which the cold run does not: timm and transformers
      never mention runtime_shim, so the cold run reads them and skips every one.

    devicelint's own modules are compiled to bytecode before any run (``compileall``, as ``pip
    install`` does): run from a checkout under ``PYTHONDONTWRITEBYTECODE``, every run would compile
    them from source again (about 50 ms, a quarter of a warm run on a small corpus).

    The wheels are downloaded once into ``--cache-dir`` (default ``bench/.cache/``, git-ignored)
    with ``pip download --no-deps --only-binary=:all:`` and their ``.py`` files unpacked there.
    Every tool gets the package directory (``timm/``, ``transformers/``, ``torchvision/``,
    ``pytorch_lightning/``: :data:`PACKAGES`) itself; ``devicelint check
    --show-files`` must list as many files as the corpus has, or the bench says so.

    Peak memory: each run's peak resident set (``wait4``'s ``ru_maxrss``: the largest of the process and
    the workers it waited for, not their sum), the largest over the runs, in the JSON (``peak_rss_mb``) and,
    for devicelint cold (goal ≤ 1 GiB on transformers), in the first table.

    Ratios, per corpus: devicelint cold / ruff (goal ≤ 10), pylint / devicelint cold (goal ≥ 10),
    devicelint warm / ruff (goal ≤ 1) and ast.parse / devicelint cold. The diagnostics devicelint
    reports are counted: these corpora do not use runtime_shim, so it should report nothing.

    ``--quick`` measures the repo's own ``runtime_shim/`` instead: no download, no pylint, a few
    seconds, offline (what the smoke test runs).

Reproduce
    python bench/analyzer_speed.py --json bench-results/analyzer_speed.json
    python bench/analyzer_speed.py --quick                       # offline, a few seconds
    python bench/analyzer_speed.py --skip-pylint --repeats 5     # without the slow baseline
    python bench/analyzer_speed.py --corpora timm --force-analyze
    python bench/analyzer_speed.py --corpora all --select ALL --skip-pylint   # the four PyTorch corpora
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer without installing

from bench.report import markdown_table, write_json  # noqa: E402
from bench.tools import find_tool, git_revision  # noqa: E402

# pinned: runs stay comparable
CORPORA = {"timm": "1.0.31", "transformers": "5.25.0", "torchvision": "0.29.1", "pytorch-lightning": "2.6.6"}
DEFAULT_CORPORA = ("timm", "transformers")  # the default run's (docs/performance.md); --corpora all: every one
PACKAGES = {"pytorch-lightning": "pytorch_lightning"}  # the wheel's package directory, where not the corpus name
DEFAULT_CACHE = ROOT / "bench" / ".cache"
QUICK_CORPUS = ROOT / "runtime_shim"
GOAL_COLD_VS_RUFF = 10.0  # devicelint cold ≤ 10x ruff's time
GOAL_PYLINT_VS_COLD = 10.0  # ≥ 10x faster than pylint -j2
GOAL_WARM_VS_RUFF = 1.0  # devicelint warm ≤ ruff's time
FORCE_ALL = ("import sys\nfrom devicelint import cli, frontend\n"
             "frontend.relevant = lambda files, *_: list(files)  # analyse every file\n"
             "sys.exit(cli.main(sys.argv[1:]))\n")


# ---------------------------------------------------------------- helpers shared with bench/robustness.py
# (bench/common.py imports torch at module level; the analyzer benchmarks must run without it)


def source_digest() -> str:
    """A short hash of analyzer/, rules/ and runtime_shim/: names the code measured (git misses untracked files)."""
    digest = hashlib.sha256()
    for package in ("analyzer", "rules", "runtime_shim"):
        for path in sorted((ROOT / package).rglob("*.py")):
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def environment(**extra: Any) -> dict[str, Any]:
    """The interpreter, machine, commit and analyzer sources, for every result file."""
    from devicelint import __version__

    return {"python": platform.python_version(), "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "git": git_revision(), "analyzer_sources": source_digest(), "devicelint": __version__,
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **extra}


def python_files(directory: Path) -> list[Path]:
    """Every ``.py`` file under ``directory``, sorted."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        found.extend(Path(root, f) for f in sorted(files) if f.endswith(".py"))
    return found


def count_lines(data: bytes) -> int:
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


# ---------------------------------------------------------------- corpora (shared with bench/false_positives.py)


def package_of(name: str) -> str:
    """The package directory ``name``'s wheel holds (``pytorch-lightning`` -> ``pytorch_lightning``)."""
    return PACKAGES.get(name, name.replace("-", "_"))


def wheel_stem(name: str) -> str:
    """The distribution name as wheel file names spell it (PEP 427: runs of ``-_.`` become ``_``)."""
    return re.sub(r"[-_.]+", "_", name)


def corpus_names(selection: str) -> list[str]:
    """The corpora a ``--corpora`` value names: comma-separated names, or ``all``; ValueError on an unknown one."""
    names = [name.strip() for name in selection.split(",") if name.strip()]
    if names == ["all"]:
        return list(CORPORA)
    unknown = [name for name in names if name not in CORPORA]
    if unknown or not names:
        raise ValueError(f"unknown corpora {', '.join(unknown) or '(none given)'}; known: {', '.join(CORPORA)}"
                         " or all")
    return names


@dataclass
class Corpus:
    name: str
    version: str
    directory: Path
    files: list[Path]
    lines: int
    cache: Path | None = None  # devicelint's cache directory for this corpus (warm runs)


def add_corpus_arguments(parser: argparse.ArgumentParser, verb: str) -> None:
    """``--corpora`` and ``--directory``, as the benches that run on the corpora or on any directory take them."""
    parser.add_argument("--corpora", default=",".join(CORPORA), help="comma-separated corpora")
    parser.add_argument("--directory", action="append", default=None, metavar="DIR",
                        help=f"{verb} this directory instead of the corpora (repeatable)")


def corpus_targets(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(name, directory) for each ``--directory``, else for each corpus of ``--corpora`` (downloaded once)."""
    if args.directory:
        return [(Path(d).name, Path(d).resolve()) for d in args.directory]
    return [(name, fetch(name, CORPORA[name], DEFAULT_CACHE)) for name in args.corpora.split(",")]


def fetch(name: str, version: str, cache: Path) -> Path:
    """Download ``name==version``'s wheel into ``cache/wheels`` (once) and unpack its package's .py files."""
    wheels = cache / "wheels"
    target = cache / "src" / f"{name}-{version}"
    package = target / package_of(name)
    if (target / ".complete").exists():
        return package
    found = sorted(wheels.glob(f"{wheel_stem(name)}-{version}-*.whl"))
    if not found:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "-d", str(wheels),
                   f"{name}=={version}"]
        print(f"  downloading {name}=={version}: {' '.join(command)}", file=sys.stderr)
        done = subprocess.run(command, capture_output=True, text=True)
        found = sorted(wheels.glob(f"{wheel_stem(name)}-{version}-*.whl"))
        if done.returncode != 0 or not found:
            raise RuntimeError(f"pip download {name}=={version} failed (offline? --quick needs no download):\n"
                               + (done.stderr or done.stdout)[-2000:])
    shutil.rmtree(target, ignore_errors=True)
    with zipfile.ZipFile(found[0]) as wheel:
        members = [m for m in wheel.namelist() if m.startswith(f"{package.name}/") and m.endswith(".py")]
        wheel.extractall(target, members)
    (target / ".complete").write_text(found[0].name + "\n", encoding="utf-8")
    return package


def load_corpus(name: str, version: str, directory: Path) -> Corpus:
    files = python_files(directory)
    lines = sum(count_lines(path.read_bytes()) for path in files)  # also brings every file into the page cache
    return Corpus(name, version, directory, files, lines)


# ---------------------------------------------------------------- tools


@dataclass
class Run:
    seconds: float
    ok: bool
    returncode: int | None = None
    timed_out: bool = False
    error: str | None = None
    stdout: str = ""
    peak_rss_mb: float | None = None  # the largest process's peak resident set (run_command)


def run_command(command: list[str], cwd: Path, timeout: float, keep_stdout: bool,
                env: dict[str, str] | None) -> Run:
    """Run ``command``, timed; on timeout its whole process group is killed (pylint's workers too).

    Its peak memory (``Run.peak_rss_mb``) is the largest resident set of the process or of any worker it
    waited for (``wait4``'s ``ru_maxrss``; None where the platform has no ``wait4``)."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:  # (files: no pipe to drain)
        process = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=out if keep_stdout else subprocess.DEVNULL, stderr=err,
                                   start_new_session=True)
        peak = None
        if hasattr(os, "wait4"):
            while True:  # (polled: wait4 has no timeout)
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    process.returncode = os.waitstatus_to_exitcode(status)
                    peak = usage.ru_maxrss / 1024  # kilobytes on Linux
                    break
                if time.perf_counter() - start > timeout:
                    break
                time.sleep(0.01)
        else:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=timeout)
        if process.returncode is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            return Run(time.perf_counter() - start, ok=False, timed_out=True, error=f"killed after {timeout:g} s")
        seconds = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    return Run(seconds, ok=process.returncode == 0, returncode=process.returncode,
               stdout=stdout.decode("utf-8", "replace"),
               error=stderr.decode("utf-8", "replace")[-2000:].strip() or None, peak_rss_mb=peak)


@dataclass
class Tool:
    """One analyzer of the comparison; ``command`` names the corpus directory ``DIR``."""

    key: str
    label: str
    command: list[str]
    repeats: int
    timeout: float = 600.0
    keep_stdout: bool = False
    env: dict[str, str] | None = None
    accepts: Callable[[int], bool] = lambda returncode: returncode == 0
    fill: bool = False  # one untimed run first (fills a cache)
    in_process: Callable[[Corpus], Run] | None = None

    def run(self, corpus: Corpus) -> Run:
        if self.in_process is not None:
            return self.in_process(corpus)
        places = {"DIR": str(corpus.directory), "CACHE": str(corpus.cache)}
        command = [places.get(part, part) for part in self.command]
        result = run_command(command, corpus.directory.parent, self.timeout, self.keep_stdout, self.env)
        if result.returncode is not None:
            result.ok = self.accepts(result.returncode)
        return result


def ast_parse_all(corpus: Corpus) -> Run:
    """Read and parse every file in this process."""
    failures = 0
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for path in corpus.files:
            try:
                ast.parse(path.read_bytes(), filename=str(path))
            except (SyntaxError, ValueError):
                failures += 1
    return Run(time.perf_counter() - start, ok=True, error=f"{failures} files failed to parse" if failures else None)


def ruff_binary() -> list[str] | None:
    """ruff as this environment installs it (:func:`bench.tools.find_tool`: next to ``sys.executable``, then on
    PATH), else the ruff package's own binary."""
    found = find_tool("ruff")
    if found is not None:
        return [found]
    try:
        from ruff.__main__ import find_ruff_bin  # the pip package's binary

        return [str(find_ruff_bin())]
    except (ImportError, FileNotFoundError):
        return None


def has_module(name: str) -> bool:
    return subprocess.run([sys.executable, "-c", f"import {name}"], capture_output=True).returncode == 0


def tool_version(command: list[str]) -> str | None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT, env=devicelint_env())
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[0] if lines else None


def compile_bytecode() -> str | None:
    """Compile devicelint's modules to bytecode first, as ``pip install`` does: a run from a checkout
    under ``PYTHONDONTWRITEBYTECODE`` (set on some machines) would otherwise compile about 70 modules
    from source each time, some 50 ms of every run. Returns a note when it could not."""
    env = devicelint_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    done = subprocess.run([sys.executable, "-m", "compileall", "-q", "analyzer", "rules", "runtime_shim"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return f"devicelint's bytecode could not be compiled first ({(done.stderr or done.stdout).strip()[:200]})"
    return None


def devicelint_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.pop("RUNTIME_SHIM_RECORD", None)
    return env


def devicelint_flags() -> set[str]:
    """The options of ``devicelint check`` this checkout has (the CLI grows: the bench uses what exists)."""
    done = subprocess.run([sys.executable, "-m", "devicelint", "check", "--help"], capture_output=True, text=True,
                          cwd=ROOT, env=devicelint_env(), timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"`python -m devicelint check --help` failed:\n{done.stderr[-2000:]}")
    wanted = ("--no-cache", "--cache-dir", "--isolated", "--no-respect-gitignore", "--show-files", "--select",
              "--analyze-all")
    return {flag for flag in wanted if flag in done.stdout}


def rule_codes() -> list[str]:
    """The rule codes ``devicelint rules`` lists in this checkout (MV2xx appear once they exist)."""
    done = subprocess.run([sys.executable, "-m", "devicelint", "rules"], capture_output=True, text=True, cwd=ROOT,
                          env=devicelint_env(), timeout=120)
    if done.returncode != 0:
        raise RuntimeError(f"`python -m devicelint rules` failed:\n{done.stderr[-2000:]}")
    return [match.group(0) for line in done.stdout.splitlines() if (match := re.match(r"[A-Z]+[0-9]+", line))]


def split_selection(select: str, codes: list[str]) -> tuple[str, list[str]]:
    """``select`` (comma-separated ``ALL``, codes or prefixes, as ruff's) without the selectors that match none of
    ``codes``, and those selectors: ``("MV1", ["MV2"])`` for ``MV1,MV2`` before MV2xx exist."""
    selectors = [part.strip() for part in select.split(",") if part.strip()]
    missing = [part for part in selectors if part != "ALL" and not any(code.startswith(part) for code in codes)]
    return ",".join(part for part in selectors if part not in missing), missing


def devicelint_selection(select: str | None, flags: set[str]) -> tuple[str | None, list[str]]:
    """``--select``'s value with the selectors this checkout has no rule for left out, and notes saying so.

    RuntimeError when a selection was asked for and nothing of it is left (devicelint would stop with status 2).
    """
    if not select:
        return None, []
    if "--select" not in flags:
        raise RuntimeError("this checkout's `devicelint check` has no --select")
    kept, missing = split_selection(select, rule_codes())
    notes = [f"--select: {', '.join(missing)} matches no rule of this checkout (`devicelint rules`): left out"
             ] if missing else []
    if not kept:
        raise RuntimeError(f"--select {select}: no rule of this checkout matches it (`devicelint rules`); "
                           "--select ALL selects every rule there is")
    return kept, notes


def devicelint_files(corpus: Corpus, flags: set[str]) -> int | None:
    """How many files ``devicelint check DIR --show-files`` lists (None: the CLI cannot tell)."""
    if "--show-files" not in flags:
        return None
    extra = [flag for flag in ("--isolated", "--no-respect-gitignore") if flag in flags]
    done = subprocess.run([sys.executable, "-m", "devicelint", "check", str(corpus.directory), "--show-files", *extra],
                          capture_output=True, text=True, cwd=corpus.directory.parent, env=devicelint_env(),
                          timeout=600)
    if done.returncode != 0:
        return None
    return sum(1 for line in done.stdout.splitlines() if line.strip().endswith((".py", ".pyi")))


def build_tools(args: argparse.Namespace, flags: set[str]) -> tuple[list[Tool], list[str]]:
    """The tools this machine can run, and why any were left out."""
    tools = [Tool("ast_parse", "ast.parse", ["(in process) ast.parse(open(f, 'rb').read()) for every file"],
                  args.repeats, in_process=ast_parse_all)]
    notes = []
    ruff = ruff_binary()
    if ruff is None:
        notes.append("ruff: not installed (pip install ruff); the ratios against ruff are missing")
    else:
        base = [*ruff, "check", "--no-cache", "--isolated", "--exit-zero", "-q"]
        tools.append(Tool("ruff", "ruff", [*base, "DIR"], args.repeats, args.timeout))
        if not args.quick:
            tools.append(Tool("ruff_all", "ruff (ALL)", [*base, "--select", "ALL", "DIR"], args.repeats, args.timeout))
    if args.quick or args.skip_pylint:
        notes.append("pylint: skipped (--quick)" if args.quick else "pylint: skipped (--skip-pylint)")
    elif not has_module("pylint"):
        notes.append("pylint: not installed (pip install pylint); skipped")
    else:
        command = [sys.executable, "-m", "pylint", "-j", str(args.pylint_jobs), "--errors-only", "--recursive=y",
                   "--score=n", "--persistent=n", "DIR"]
        # pylint's exit status is a bit mask of the messages found; 32 alone means a usage error
        tools.append(Tool("pylint", f"pylint -j{args.pylint_jobs} -E", command, args.pylint_repeats,
                          args.pylint_timeout, accepts=lambda returncode: not returncode & 32))
    env = devicelint_env()
    # like ruff's: no configuration file of the repo around the corpus, no .gitignore of it (bench/.cache/)
    check = [sys.executable, "-m", "devicelint", "check", "DIR", "--exit-zero", "-q", "--output-format", "json",
             *[flag for flag in ("--isolated", "--no-respect-gitignore") if flag in flags]]
    if args.select:
        check += ["--select", args.select]
    if args.analyze_all:
        if "--analyze-all" not in flags:
            raise RuntimeError("this checkout's `devicelint check` has no --analyze-all")
        check.append("--analyze-all")
    has_cache = "--no-cache" in flags
    cold = [*check, "--no-cache"] if has_cache else check
    tools.append(Tool("devicelint_cold", "devicelint cold", cold, args.repeats, args.timeout, True, env))
    if has_cache:
        warm = [*check, "--cache-dir", "CACHE"] if "--cache-dir" in flags else check
        tools.append(Tool("devicelint_warm", "devicelint warm", warm, args.repeats, args.timeout, True, env,
                          fill=True))
    else:
        notes.append("warm: not available (no cache yet)")
    if args.force_analyze:
        forced = [sys.executable, "-c", FORCE_ALL, *cold[3:]]
        tools.append(Tool("devicelint_forced", "devicelint forced", forced, 1, args.force_timeout, True, env))
    return tools, notes


# ---------------------------------------------------------------- measuring


def measure(corpus: Corpus, tools: list[Tool]) -> dict[str, dict[str, Any]]:
    """Every tool on ``corpus``, the tools interleaved run by run; a failed or killed tool is not repeated."""
    runs: dict[str, list[Run]] = {tool.key: [] for tool in tools}
    fills: dict[str, Run] = {}
    for tool in tools:
        if tool.fill:
            if corpus.cache is not None:
                shutil.rmtree(corpus.cache, ignore_errors=True)  # the fill run starts from an empty cache
            print(f"  {corpus.name}: {tool.label}: filling the cache", file=sys.stderr)
            fills[tool.key] = tool.run(corpus)
    for index in range(max(tool.repeats for tool in tools)):
        for tool in tools:
            done = runs[tool.key]
            if index >= tool.repeats or (done and not done[-1].ok) or (tool.key in fills and not fills[tool.key].ok):
                continue
            print(f"  {corpus.name}: {tool.label} run {index + 1}/{tool.repeats}", file=sys.stderr)
            done.append(tool.run(corpus))
    results = {}
    for tool in tools:
        done = runs[tool.key]
        failed = fills.get(tool.key) if tool.key in fills and not fills[tool.key].ok else None
        failed = failed or next((r for r in done if not r.ok), None)
        good = [r.seconds for r in done if r.ok]
        peaks = [r.peak_rss_mb for r in done if r.ok and r.peak_rss_mb is not None]
        result: dict[str, Any] = {
            "label": tool.label, "command": tool.command, "samples_s": [r.seconds for r in done],
            "median_s": statistics.median(good) if good else None, "min_s": min(good) if good else None,
            "peak_rss_mb": max(peaks) if peaks else None,
            "ok": failed is None and bool(good), "timed_out": bool(failed and failed.timed_out),
            "error": None if failed is None else (failed.error or f"exit status {failed.returncode}"),
        }
        if failed is not None and failed.timed_out:
            result["median_s"] = failed.seconds  # a lower bound
        if tool.keep_stdout and done and done[-1].ok:
            result["diagnostics"] = diagnostics_of(done[-1].stdout)
        results[tool.key] = result
    return results


def diagnostics_of(stdout: str) -> dict[str, Any]:
    """The count of diagnostics in devicelint's JSON output, in all and per code."""
    try:
        items = json.loads(stdout or "[]")
    except json.JSONDecodeError:
        return {"count": None, "by_code": {}, "error": "output is not JSON"}
    codes = Counter(item.get("code") or item.get("severity", "?") for item in items)
    return {"count": len(items), "by_code": dict(sorted(codes.items()))}


def ratio(numerator: dict[str, Any] | None, denominator: dict[str, Any] | None) -> dict[str, Any] | None:
    """numerator / denominator of two median times; a killed numerator makes it a lower bound."""
    if not numerator or not denominator or numerator["median_s"] is None or denominator["median_s"] is None:
        return None
    if not denominator["ok"] or not (numerator["ok"] or numerator["timed_out"]):
        return None
    return {"value": numerator["median_s"] / denominator["median_s"], "lower_bound": numerator["timed_out"]}


def ratios(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    get = results.get
    found = {
        "cold_vs_ruff": ratio(get("devicelint_cold"), get("ruff")),
        "pylint_vs_cold": ratio(get("pylint"), get("devicelint_cold")),
        "warm_vs_ruff": ratio(get("devicelint_warm"), get("ruff")),
        "ast_parse_vs_cold": ratio(get("ast_parse"), get("devicelint_cold")),
    }
    if "devicelint_forced" in results:
        found["forced_vs_ruff"] = ratio(get("devicelint_forced"), get("ruff"))
        found["pylint_vs_forced"] = ratio(get("pylint"), get("devicelint_forced"))
    return found


GOALS = {"cold_vs_ruff": ("≤", GOAL_COLD_VS_RUFF), "pylint_vs_cold": ("≥", GOAL_PYLINT_VS_COLD),
         "warm_vs_ruff": ("≤", GOAL_WARM_VS_RUFF)}


def goal_met(key: str, found: dict[str, Any] | None) -> bool | None:
    if found is None or key not in GOALS:
        return None
    sense, bound = GOALS[key]
    return found["value"] <= bound if sense == "≤" else found["value"] >= bound


# ---------------------------------------------------------------- output


def seconds_cell(result: dict[str, Any] | None) -> str:
    if result is None:
        return "n/a"
    if result["timed_out"]:
        return f"> {result['median_s']:.0f}"
    if not result["ok"]:
        return "failed"
    value = result["median_s"]
    return f"{value:.3f}" if value < 10 else f"{value:.1f}"


def memory_cell(result: dict[str, Any] | None) -> str:
    """The peak resident set of the largest process over the runs."""
    peak = None if result is None else result.get("peak_rss_mb")
    return "n/a" if peak is None else f"{peak:.0f} MB"


def ratio_cell(key: str, found: dict[str, Any] | None) -> str:
    if found is None:
        return "n/a"
    text = ("≥ " if found["lower_bound"] else "") + (f"{found['value']:.2f}" if found["value"] < 100
                                                      else f"{found['value']:.0f}")
    met = goal_met(key, found)
    return text if met is None else f"{text} {'met' if met else '**not met**'}"


def summary(rows: list[dict[str, Any]], notes: list[str]) -> str:
    parts = []
    for row in rows:
        found = row["ratios"]
        goals = [f"{key} {ratio_cell(key, found[key])}" for key in GOALS if found.get(key) is not None]
        diagnostics = row["results"].get("devicelint_cold", {}).get("diagnostics", {}).get("count")
        parts.append(f"{row['corpus']} ({row['files']} files, {row['lines']} lines): "
                     + (", ".join(goals) or "no ratios") + f", {diagnostics} diagnostics")
    text = "analyzer speed: " + "; ".join(parts)
    return text + "".join(f"; {note}" for note in notes if note.startswith("warm"))


def print_report(rows: list[dict[str, Any]], tools: list[Tool], notes: list[str]) -> str:
    keys = [tool.key for tool in tools]
    labels = {tool.key: tool.label for tool in tools}
    print(markdown_table(
        ["corpus", "files", "lines", *[f"{labels[key]} s" for key in keys], "devicelint diagnostics",
         "devicelint cold peak RSS"],
        [[row["corpus"], row["files"], row["lines"], *[seconds_cell(row["results"].get(key)) for key in keys],
          row["results"].get("devicelint_cold", {}).get("diagnostics", {}).get("count", "n/a"),
          memory_cell(row["results"].get("devicelint_cold"))] for row in rows],
    ))
    print()
    ratio_keys = list(rows[0]["ratios"]) if rows else []
    titles = {"cold_vs_ruff": f"cold / ruff (≤ {GOAL_COLD_VS_RUFF:g})",
              "pylint_vs_cold": f"pylint / cold (≥ {GOAL_PYLINT_VS_COLD:g})",
              "warm_vs_ruff": f"warm / ruff (≤ {GOAL_WARM_VS_RUFF:g})", "ast_parse_vs_cold": "ast.parse / cold",
              "forced_vs_ruff": "forced / ruff", "pylint_vs_forced": "pylint / forced"}
    print(markdown_table(["corpus", *[titles[key] for key in ratio_keys]],
                         [[row["corpus"], *[ratio_cell(key, row["ratios"][key]) for key in ratio_keys]]
                          for row in rows]))
    print()
    for row in rows:
        for result in row["results"].values():
            if not result["ok"]:
                print(f"{row['corpus']}: {result['label']}: {result['error']}")
        forced = row["results"].get("devicelint_forced", {}).get("diagnostics")
        if forced:
            print(f"{row['corpus']}: devicelint forced reported {forced['count']} diagnostics {forced['by_code']}")
    for note in notes:
        print(note)
    text = summary(rows, notes)
    print(text)
    return text


# ---------------------------------------------------------------- main


def incremental_main(args: argparse.Namespace) -> int:
    """``--incremental``: :mod:`bench.incremental_speed` on each corpus."""
    from bench.incremental_speed import measure_incremental, report

    compile_bytecode()
    flags = devicelint_flags()
    check_flags = ["--exit-zero", "-q", "--output-format", "json",
                   *[flag for flag in ("--isolated", "--no-respect-gitignore") if flag in flags]]
    if args.select:
        check_flags += ["--select", args.select]
    rows = []
    try:
        for name in corpus_names(args.corpora):
            package = fetch(name, CORPORA[name], Path(args.cache_dir))
            rows.append(measure_incremental(name, package, args.repeats, check_flags, args.timeout))
    except (RuntimeError, ValueError) as error:
        print(f"analyzer_speed: {error}", file=sys.stderr)
        return 2
    print(f"# devicelint incremental runs against ruff cold, median of {args.repeats}, {os.cpu_count()} CPUs")
    for row in rows:
        print()
        print(report(row))
    write_json(args.json, {"benchmark": "analyzer_speed --incremental", "environment": environment(),
                           "repeats": args.repeats, "rows": rows})
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per tool and corpus, median (default 3)")
    parser.add_argument("--quick", action="store_true",
                        help="the repo's runtime_shim/ only: no download, no pylint, a few seconds, offline")
    parser.add_argument("--corpora", default=",".join(DEFAULT_CORPORA),
                        help=f"comma-separated, among {', '.join(CORPORA)}, or all "
                             f"(default: {','.join(DEFAULT_CORPORA)})")
    parser.add_argument("--select", metavar="CODES",
                        help="pass --select CODES to every devicelint run, e.g. ALL or MV2 (default: devicelint's "
                             "own selection); selectors that match no rule of this checkout are left out, with a note")
    parser.add_argument("--analyze-all", action="store_true",
                        help="pass --analyze-all to every devicelint run (its relevance skip off)")
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE),
                        help="where wheels and sources are kept (default bench/.cache/, git-ignored)")
    parser.add_argument("--skip-pylint", action="store_true", help="leave pylint out (it takes minutes)")
    parser.add_argument("--pylint-timeout", type=float, default=900.0,
                        help="kill pylint after this many seconds; its ratio becomes a lower bound (default 900)")
    parser.add_argument("--pylint-jobs", type=int, default=2, help="pylint -j (default 2)")
    parser.add_argument("--pylint-repeats", type=int, default=1, help="timed pylint runs per corpus (default 1)")
    parser.add_argument("--timeout", type=float, default=600.0, help="limit per run of the other tools (default 600)")
    parser.add_argument("--force-analyze", action="store_true",
                        help="also time devicelint analysing every file (the relevance skip disabled), once")
    parser.add_argument("--force-timeout", type=float, default=1800.0,
                        help="limit of the forced run in seconds (default 1800)")
    parser.add_argument("--incremental", action="store_true",
                        help="instead: ruff cold, devicelint cold, warm, after a one-file edit and a run naming "
                             "that file, as ratios to ruff (bench/incremental_speed.py)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON to PATH")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.pylint_repeats < 1:
        parser.error("--repeats and --pylint-repeats must be at least 1")
    if args.incremental:
        return incremental_main(args)

    try:
        bytecode_note = compile_bytecode()
        flags = devicelint_flags()
        has_cache = "--no-cache" in flags
        args.select, select_notes = devicelint_selection(args.select, flags)
        if args.quick:
            corpora = [load_corpus("runtime_shim (local)", "repo", QUICK_CORPUS)]
        else:
            try:
                names = corpus_names(args.corpora)
            except ValueError as error:
                parser.error(str(error))
            cache = Path(args.cache_dir)
            corpora = [load_corpus(name, CORPORA[name], fetch(name, CORPORA[name], cache)) for name in names]
    except RuntimeError as error:
        print(f"analyzer_speed: {error}", file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="devicelint-bench-cache-")) if args.quick else Path(args.cache_dir)
    for corpus in corpora:
        corpus.cache = scratch / "devicelint-cache" / corpus.name.split()[0]
    try:
        tools, notes = build_tools(args, flags)
    except RuntimeError as error:
        print(f"analyzer_speed: {error}", file=sys.stderr)
        return 2
    notes = select_notes + notes + ([bytecode_note] if bytecode_note else [])
    versions = {"ruff": tool_version([*(ruff_binary() or ["ruff"]), "--version"]),
                "pylint": tool_version([sys.executable, "-m", "pylint", "--version"]) if not args.quick else None,
                "devicelint": tool_version([sys.executable, "-m", "devicelint", "--version"])}

    print("# devicelint analysis speed against ruff, pylint and ast.parse, same files, same run")
    print(f"Python {platform.python_version()}, {os.cpu_count()} CPUs; "
          + ", ".join(f"{v}" for v in versions.values() if v)
          + f"; median of {args.repeats} runs (pylint: {args.pylint_repeats}); "
          + ("corpus: runtime_shim/ of this repo" if args.quick
             else "corpora: " + ", ".join(f"{c.name} {c.version}" for c in corpora)))
    print("ruff: default rules (`--isolated`); pylint: errors only (`-E`); devicelint: "
          + ("`--no-cache` cold, cached warm (after one run that fills the cache)" if has_cache
             else "no cache yet: cold only")
          + (f", `--select {args.select}`" if args.select else ", its default rules")
          + (", `--analyze-all`" if args.analyze_all else ""))
    rows = []
    for corpus in corpora:
        seen = devicelint_files(corpus, flags)
        if seen is not None and seen != len(corpus.files):
            notes.append(f"{corpus.name}: devicelint --show-files lists {seen} files, the corpus has "
                         f"{len(corpus.files)}: the times are not of the same files")
        results = measure(corpus, tools)
        rows.append({"corpus": corpus.name, "version": corpus.version, "directory": str(corpus.directory),
                     "files": len(corpus.files), "devicelint_files": seen, "lines": corpus.lines,
                     "results": results, "ratios": ratios(results)})
    if args.quick:
        shutil.rmtree(scratch, ignore_errors=True)
    print()
    text = print_report(rows, tools, notes)
    write_json(args.json, {"benchmark": "analyzer_speed", "environment": environment(versions=versions),
                           "pins": {c.name: c.version for c in corpora} if not args.quick else {},
                           "select": args.select, "analyze_all": args.analyze_all, "repeats": args.repeats,
                           "pylint_repeats": args.pylint_repeats, "devicelint_has_cache": has_cache,
                           "devicelint_flags": sorted(flags),
                           "goals": {key: {"sense": sense, "bound": bound} for key, (sense, bound) in GOALS.items()},
                           "rows": rows, "notes": notes, "summary": text})
    devicelint_failed = any(not row["results"]["devicelint_cold"]["ok"] for row in rows)
    return 1 if devicelint_failed else 0


if __name__ == "__main__":
    sys.exit(main())
