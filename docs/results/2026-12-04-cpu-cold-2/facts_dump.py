"""Run the check (no wall-time budget, one process) and dump every merged fact in a canonical form to argv[1]."""
import sys, io, contextlib
from devicelint import cli, settings, scheduler
from devicelint.budget import Limits
from devicelint.engine import worlds
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, self.max_worker_memory, self.max_function_steps)
cli._cpus = lambda: 1
out = open(sys.argv[1], "w")
# harness only: hashes that do not depend on where objects are in memory (identity hashes order sets of atoms
# holding project classes differently in every process), so that two runs can be compared exactly
import os
if os.environ.get("STABLE_HASH") == "1":
    from devicelint.engine import program as P
    P.FunctionKind.__hash__ = lambda self: hash(self.name)
    P.ModuleInfo.__hash__ = lambda self: hash(("m", self.file))
    P.ClassInfo.__hash__ = lambda self: hash(("c", self.module.file, self.node.lineno, self.node.col_offset))
    P.FunctionInfo.__hash__ = lambda self: hash(("f", self.module.file, self.node.lineno, self.node.col_offset, self.qualname))
orig = worlds.run_worlds
def wrapped(sources, facts, *a, **k):
    orig(sources, facts, *a, **k)
    lines = []
    for kind in ("sites", "reveals"):
        for fact in getattr(facts, kind).values():
            c = fact.context
            sig = (kind, fact.site.file, fact.site.line, fact.site.col, fact.site.end_line, fact.site.end_col, fact.site.api,
                   c.function, c.file, c.args, c.uncalled, c.entry, c.world, c.conditions, c.splits,
                   tuple((x.file, x.line, x.col) for x in c.callers))
            if kind == "sites":
                body = (sorted(repr((p.operands, p.code, p.message, p.row, p.redirected_from)) for p in fact.possibilities),
                        fact.unknown, fact.real, fact.passed_past_failure)
            else:
                body = sorted(fact.texts)
            lines.append(repr((sig, body)))
    out.write("\n".join(sorted(lines)) + "\n"); out.flush()
worlds.run_worlds = wrapped
import devicelint.engine.worlds as w2
sys.argv = ["devicelint"] + sys.argv[2:]
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli.main(sys.argv[1:])
    except SystemExit:
        pass
