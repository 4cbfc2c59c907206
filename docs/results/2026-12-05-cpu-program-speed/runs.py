"""Why functions run: quiet evaluations, recursion rounds, later generations, per pass."""
import collections, sys, io, contextlib
from devicelint import cli, settings
from devicelint.budget import Limits
from devicelint.engine import core, calls
from devicelint.engine.dispatch_helpers import NullFacts
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, None, self.max_function_steps)
cli._cpus = lambda: 1
cats = collections.Counter()
byfn = collections.Counter()
seen = {}
orig = calls.Calls._run_function
def counting(self, fn, fref, ctx, bound, scopes, profile, modes=None):
    quiet = isinstance(self.facts, NullFacts)
    key = (id(self), ctx.id)
    again = key in seen.setdefault(self._pass_no, set())
    seen[self._pass_no].add(key)
    c = ("quiet" if quiet else "facts", "again" if again else "first", f"pass{self._pass_no}")
    cats[c] += 1
    byfn[(fn.qualname, c[0], c[1])] += 1
    return orig(self, fn, fref, ctx, bound, scopes, profile, modes)
calls.Calls._run_function = counting
orig_begin = core.Engine.begin_pass
def begin(self):
    self._pass_no = getattr(self, "_pass_no", 0) + 1
    return orig_begin(self)
core.Engine.begin_pass = begin
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(sys.argv[1:])
for c, n in sorted(cats.items()):
    print(n, c)
for k, n in byfn.most_common(30):
    print(n, k)
