"""Why a context of a later pass was not kept: the first failing check of its record."""
import collections, sys, io, contextlib
from devicelint import cli, settings
from devicelint.budget import Limits
from devicelint.engine import core, reuse
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, None, self.max_function_steps)
cli._cpus = lambda: 1
why = collections.Counter()
attrs = collections.Counter()
flags = collections.Counter()
R = reuse.PassReuse
orig_keep = R.keep_previous
def keep_previous(self, ctx_id, bound_key):
    kept = orig_keep(self, ctx_id, bound_key)
    if kept or not self.reuse_enabled or ctx_id in self.ran_this_pass:
        return kept
    rec = self.records.get(ctx_id)
    if rec is None:
        why["new context"] += 1; return kept
    if rec.tainted:
        why["tainted"] += 1; return kept
    sim = reuse.Simulation()
    heap = self.heap
    bad = [k for k, seen in rec.reads.items() if not reuse._same(heap.get(k), seen)]
    if bad:
        why["own heap read changed"] += 1
        for k in bad:
            if str(k[1]) == '@requires_grad':
                flags[(repr(rec.reads[k])[:60], repr(heap.get(k))[:60], len(bad))] += 1
        for k in bad[:3]:
            attrs[(getattr(k[0], 'cls', type(k[0]).__name__).__str__()[:40], str(k[1])[:30])] += 1
        return kept
    module = rec.fn.module
    if tuple(reuse._or_top(sim.value(module, n)) for n in rec.free_names) != rec.globals_key:
        why["globals"] += 1; return kept
    if not self._same_scans(rec.scans):
        why["scan"] += 1; return kept
    for key, seen in rec.global_reads.items():
        if key[0] in ("module", "star") and not self._same_module_read(key, seen, sim):
            why["module read " + key[0]] += 1; return kept
    if not self._same_class_reads(rec.global_reads):
        why["class/havoc read"] += 1; return kept
    why["a callee"] += 1
    return kept
R.keep_previous = keep_previous
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(sys.argv[1:])
for k, n in why.most_common(): print(n, k)
for k, n in attrs.most_common(40): print(n, k)

for k, n in flags.most_common(40): print(n, k)
