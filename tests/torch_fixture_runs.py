"""Every fixtures/torch program run once under the torch observer (fake CUDA), for two test files.

``devicelint confirm fixtures/torch`` runs each program under the observer and judges what it recorded against
the analyzer's findings; tests/confirm/test_confirm_torch.py checks that report, and
tests/runtime/test_torch_observer.py checks each program's own run (how it ended, the failures it recorded)
against the fixture's markers. Both read the one confirm run made here (a minute and more on two cores): the
report, and each program's run as confirm's launcher returned it (status, detail, output tail, records).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from session_cache import digest

REPO = Path(__file__).resolve().parents[1]
TORCH_FIXTURES = REPO / "fixtures" / "torch"
#: What the confirm tests run (from the repository's root: programs are named relative to it).
CONFIRM_ARGS = ("confirm", "--no-cache", "--timeout", "180", "--output-format", "json")


def key() -> str:
    """What the result depends on: the programs, the observer, the runtime and the analyzer (with its rules)."""
    import devicelint
    import devicelint.rules
    import torch

    import runtime_shim

    packages = [Path(module.__file__).parent for module in (devicelint, devicelint.rules, runtime_shim)]
    return digest([TORCH_FIXTURES, *packages], *CONFIRM_ARGS, sys.executable, torch.__version__)


def confirm_torch_fixtures(out_dir: Path) -> dict[str, Any]:
    """``devicelint confirm fixtures/torch``: its exit status, its JSON report, and each program's run keyed by
    the program's real path (``runs``: what confirm's launcher returned for it, the records as the observer
    wrote them)."""
    from devicelint.cli import main
    from devicelint.confirm import session

    runs: list = []
    run_programs = session.run_programs

    def keeping(*args: Any, **kwargs: Any) -> list:
        done = run_programs(*args, **kwargs)
        runs.extend(done)
        return done

    out = out_dir / "confirm.json"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(session, "run_programs", keeping)  # raises if confirm stops calling it by that name
        patch.chdir(REPO)
        status = main([*CONFIRM_ARGS, "-o", str(out), "fixtures/torch"])
    assert runs, "confirm ran no program through session.run_programs"
    return {"status": status, "doc": json.loads(out.read_text(encoding="utf-8")),
            "runs": {os.path.realpath(run.program.target): {
                "runtime": run.program.runtime, "mode": run.mode, "status": run.status, "detail": run.detail,
                "stderr": run.stderr, "records": run.records} for run in runs}}
