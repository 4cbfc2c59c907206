"""Memory profile of one devicelint check: RSS per phase, tracemalloc top at the end of each engine pass."""
import os, sys, resource, time, tracemalloc, gc
FRAMES = int(os.environ.get("FRAMES", "1"))
TRACE = os.environ.get("TM", "1") == "1"
if TRACE:
    tracemalloc.start(FRAMES)
from devicelint import runner, scheduler
from devicelint.engine import core
from devicelint.settings import Settings
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
def cur():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 // 2**20
t0 = time.time()
def mark(what):
    extra = ""
    if TRACE:
        c, p = tracemalloc.get_traced_memory(); extra = f" traced {c>>20} MB peak {p>>20} MB"
    print(f"[{time.time()-t0:6.1f}s] {what}: rss {cur()} MB max {rss()} MB{extra}", file=sys.stderr, flush=True)
def top(label, n=25):
    if not TRACE: return
    snap = tracemalloc.take_snapshot()
    snap = snap.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
    key = "traceback" if FRAMES > 1 else "lineno"
    stats = snap.statistics(key)
    print(f"--- top at {label}", file=sys.stderr)
    for s in stats[:n]:
        if FRAMES > 1:
            print(f"{s.size>>20} MB {s.count}", file=sys.stderr)
            for line in s.traceback.format()[-2*FRAMES:]:
                print("   ", line, file=sys.stderr)
        else:
            print(f"{s.size>>20:5d} MB {s.count:9d} {s.traceback[0].filename.split('/')[-1]}:{s.traceback[0].lineno}", file=sys.stderr)
    # by file
    files = snap.statistics("filename")
    print("  by file:", ", ".join(f"{s.traceback[0].filename.split('/')[-1]}={s.size>>20}" for s in files[:15]), file=sys.stderr)
orig_end = core.Engine.end_pass
n = [0]
def end_pass(self):
    orig_end(self)
    n[0] += 1
    mark(f"end of pass {n[0]}")
    if n[0] in (1,):
        top(f"pass {n[0]}")
core.Engine.end_pass = end_pass
orig_init = core.Engine.__init__
def init(self, *a, **k):
    mark("engine init start")
    orig_init(self, *a, **k)
    mark("engine built")
core.Engine.__init__ = init
orig_rel = core.Engine.release
def release(self):
    mark("before release"); top("before release")
    orig_rel(self)
core.Engine.release = release
settings = Settings(cache_dir=None, max_component_seconds=None, max_worker_memory=None)
report = runner.check([sys.argv[1]], settings)
mark("done")
print(len(report.diagnostics), file=sys.stderr)
