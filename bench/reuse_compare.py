"""What later engine passes keep (contexts, modules' top-level runs) against running everything again.

Analyses each corpus twice in process, with keeping on and off (``PassReuse.keep_runs``), and compares
the diagnostics (all rules) and every module's namespace at the end, each value written as text with
calling contexts named by function, arguments and file (their numbers differ between the two runs).
The heaps are not compared: they also hold instances made by contexts of earlier passes, and which
contexts an earlier pass ran differs between the two runs by design.

Usage (the corpora are the speed bench's pinned wheels, downloaded on first use)::

    python bench/reuse_compare.py --corpora torchvision,pytorch-lightning
    python bench/reuse_compare.py --directory fixtures/torch          # any directory
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the repo root: the analyzer and bench without installing

from devicelint.engine import reuse  # noqa: E402
from devicelint.engine.core import Engine  # noqa: E402
from devicelint.runner import check  # noqa: E402
from devicelint.settings import Settings  # noqa: E402

from bench.analyzer_speed import add_corpus_arguments, corpus_targets  # noqa: E402

_CONTEXT = re.compile(r"ctx=(\d+)")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def namespaces(engine: Engine) -> dict[str, dict[str, str]]:
    """Every module's namespace, values as text with context numbers replaced by what the contexts are."""
    contexts = engine.contexts

    def named(match: re.Match[str]) -> str:
        ctx = contexts.get(int(match.group(1)))
        return f"ctx={(ctx.function, ctx.args, ctx.file, ctx.uncalled)}" if ctx is not None else match.group(0)

    def text(value: Any) -> str:
        return _ADDRESS.sub("", _CONTEXT.sub(named, repr(value)))

    return {module.name: {name: text(value) for name, value in module.namespace.items()} for module in engine.modules}


def analyzed(directory: Path, keep: bool) -> tuple[list[dict], list[dict[str, dict[str, str]]]]:
    """The diagnostics, and each engine's module namespaces once it ran (taken before it releases them)."""
    taken: list[dict[str, dict[str, str]]] = []
    run = Engine.run

    def remembered(self: Engine) -> None:
        run(self)
        taken.append(namespaces(self))

    reuse.PassReuse.keep_runs = keep
    Engine.run = remembered  # type: ignore[method-assign]
    try:
        report = check([str(directory)], Settings(jobs=1, select=("ALL",)))
    finally:
        Engine.run = run  # type: ignore[method-assign]
        reuse.PassReuse.keep_runs = True
    return [d.to_json() for d in report.diagnostics], taken


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    add_corpus_arguments(parser, "compare on")
    args = parser.parse_args()
    targets = corpus_targets(args)
    print("| corpus | engines | diagnostics | same diagnostics | module names | names that differ |")
    print("| --- | ---: | ---: | --- | ---: | ---: |")
    failed = False
    for name, directory in targets:
        kept, kept_spaces = analyzed(directory, True)
        everything, all_spaces = analyzed(directory, False)
        names = differ = 0
        for mine, theirs in zip(kept_spaces, all_spaces, strict=True):
            for module, space in theirs.items():
                for key in space.keys() | mine.get(module, {}).keys():
                    names += 1
                    if space.get(key) != mine.get(module, {}).get(key):
                        differ += 1
                        if differ <= 5:
                            print(f"  {module}.{key} differs", file=sys.stderr)
        same = kept == everything
        print(f"| {name} | {len(kept_spaces)} | {len(kept)} | {'yes' if same else '**no**'} | {names:,} | {differ} |")
        failed |= not same or bool(differ)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
