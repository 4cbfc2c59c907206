"""Diagnostic: of the contexts each world runs, how many read (themselves or below, on the stack) a world assumption."""
import sys, collections
from devicelint import cli, settings
from devicelint.budget import Limits
from devicelint.engine import reuse, core
from devicelint.models import base
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, None, self.max_function_steps)
P = reuse.PassReuse
orig_assume = base.LibraryModel.assumption
orig_fin = P.finish_record
orig_fm = P.finish_module_record
counts = collections.Counter()
def assumption(self, key):
    engine = self.__dict__["engine"]
    for r in engine.recording:
        r.__dict__["_world"] = True
    if not engine.recording:
        counts["read outside any record"] += 1
    return orig_assume(self, key)
def finish_record(self, ctx_id, record, summary):
    counts[("runs", bool(record.__dict__.get("_world")))] += 1
    return orig_fin(self, ctx_id, record, summary)
def finish_module_record(self, record):
    if record is not None:
        counts[("module runs", bool(record.__dict__.get("_world")))] += 1
    return orig_fm(self, record)
orig_nc = P.note_callee
def note_callee(self, ctx_id, summary):
    callee = self.records.get(ctx_id)
    if self.recording and callee is not None and callee.__dict__.get("_world"):
        self.recording[-1].__dict__["_world"] = True
    return orig_nc(self, ctx_id, summary)
P.note_callee = note_callee
base.LibraryModel.assumption = assumption; P.finish_record = finish_record; P.finish_module_record = finish_module_record
try:
    cli.main(sys.argv[1:])
finally:
    print(dict(counts), file=sys.stderr)
