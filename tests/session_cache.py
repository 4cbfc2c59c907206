"""Results that several test files compare against, computed once per test session.

Under pytest-xdist each worker is a process of its own: the first worker that asks computes the result while
holding a file lock, writes it as JSON into a folder of this session's (beside the workers' temporary folders,
named by the run's id), and every later asker, in any worker, reads it back. Without xdist (or without file
locks) the caller's session-scoped fixture computes it once. Nothing outlives the session, and the name of each
result holds a digest of what it depends on (sources and inputs), so a result is never read for other code.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

try:
    import fcntl
except ImportError:  # no POSIX file locks: each worker computes its own
    fcntl = None  # type: ignore[assignment]


def digest(paths: Iterable[Path], *extra: str) -> str:
    """A digest of ``extra`` and of every file under ``paths`` (names and bytes; caches left out)."""
    hasher = hashlib.sha256("\0".join(extra).encode())
    for root in paths:
        files = sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts) \
            if root.is_dir() else [root]
        for path in files:
            hasher.update(f"\0{path}\0".encode())
            hasher.update(path.read_bytes())
    return hasher.hexdigest()[:24]


def shared(config: pytest.Config, factory: pytest.TempPathFactory, name: str, key: str,
           compute: Callable[[], Any]) -> Any:
    """``compute()`` (JSON data), once per session and ``key``; every caller gets it as read back from JSON,
    the computing worker too, so all of them compare against the same values."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or fcntl is None:
        return json.loads(json.dumps(compute()))
    folder = factory.getbasetemp().parent / f"shared-{workerinput['testrunuid']}"
    folder.mkdir(exist_ok=True)
    result = folder / f"{name}-{key}.json"
    with open(folder / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # released when the file closes, also if compute() raises
        if not result.exists():
            partial = result.with_suffix(".part")
            partial.write_text(json.dumps(compute()), encoding="utf-8")
            partial.replace(result)
        return json.loads(result.read_text(encoding="utf-8"))
