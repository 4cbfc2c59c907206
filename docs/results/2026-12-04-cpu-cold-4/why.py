"""Which module top-level runs are not kept, and why (diagnostic)."""
import sys, collections
from devicelint import cli, settings
from devicelint.budget import Limits
from devicelint.engine import reuse
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, None, self.max_function_steps)
P = reuse.PassReuse
orig_keep = P.keep_module
orig_fin = P.finish_record
orig_cycle = P.note_cycle
stats = collections.Counter()
def keep_module(self, module):
    r = self.module_records.get(module)
    ok = orig_keep(self, module)
    if not ok and r is not None:
        stats[(module.name, "tainted" if r.tainted else "invalid")] += 1
    return ok
def finish_record(self, ctx_id, record, summary):
    before = self.module_loads
    orig_fin(self, ctx_id, record, summary)
    if summary is not None and record.module_loads != self.module_loads:
        stats[("fnload", record.fn.qualname if hasattr(record.fn, "qualname") else str(record.fn))] += 1
def note_cycle(self, head):
    stats[("cycle", str(self.contexts.get(head).function if self.contexts.get(head) else head))] += 1
    return orig_cycle(self, head)
P.keep_module = keep_module; P.finish_record = finish_record; P.note_cycle = note_cycle
try:
    cli.main(sys.argv[1:])
finally:
    for k, v in stats.most_common(40): print(v, k, file=sys.stderr)
