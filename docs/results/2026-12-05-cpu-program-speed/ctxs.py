"""Which functions run in how many contexts, and which parts of the context key differ."""
import collections, sys, io, contextlib
from devicelint import cli, settings
from devicelint.budget import Limits
from devicelint.engine import core, calls
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, None, self.max_function_steps)
cli._cpus = lambda: 1
runs = collections.Counter()
world = [0]
orig_run_function = calls.Calls._run_function
def counting(self, fn, fref, ctx, bound, scopes, profile, modes=None):
    runs[(fn.module.file.split('/')[-1], fn.qualname)] += 1
    return orig_run_function(self, fn, fref, ctx, bound, scopes, profile, modes)
calls.Calls._run_function = counting
POS = ["node", "closure", "args", "scopes", "profile", "globals", "uncalled", "modes", "ways"]
varying = collections.Counter()
tot = [0]*5
per_fn_keys = collections.Counter()
orig_release = core.Engine.release
def release(self):
    world[0] += 1
    by_node = collections.defaultdict(list)
    names = {id(fn.node): (fn.module.file.split('/')[-1], fn.qualname) for fn in self.functions.values()}
    for key in self.ctx_ids:
        if isinstance(key, tuple) and len(key) == 9:
            by_node[key[0]].append(key)
    for node, keys in by_node.items():
        tot[0] += len(keys)
        tot[1] += len({k[:8] for k in keys})
        tot[2] += len({k[:7] + k[8:] for k in keys})
        tot[3] += len({k[:7] for k in keys})
        tot[4] += len({k[:2] + k[3:] for k in keys})
        per_fn_keys[names.get(node, node)] += len(keys)
        if len(keys) > 1:
            for i in range(1, 9):
                if len({repr(k[i]) if i != 2 else k[i] for k in keys}) > 1:
                    varying[(names.get(node, node), POS[i])] += 1
    orig_release(self)
core.Engine.release = release
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(sys.argv[1:])
print("keys", tot[0], "without ways", tot[1], "without modes", tot[2], "without both", tot[3], "without args", tot[4])
print("worlds", world[0], "runs", sum(runs.values()))
for (f, q), n in runs.most_common(45):
    print(f"{n:6d} runs {per_fn_keys[(f, q)]:5d} keys  {f}:{q}  varies: {sorted(p for (k, p) in varying if k == (f, q))}")
agg = collections.Counter(p for (_k, p) in varying)
print("functions with a varying component (per world):", agg)
