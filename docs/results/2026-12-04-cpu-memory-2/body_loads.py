"""Who parses lazy bodies (LazyBody.load) and how many stay lazy."""
import sys, collections, gc
from devicelint import lazy_bodies
from devicelint.cli import main
first = collections.Counter()
orig = lazy_bodies.LazyBody.load
def load(self):
    if self.node is not None:
        f = sys._getframe(1); where = []
        while f is not None and len(where) < 4:
            co = f.f_code
            if "lazy_bodies" not in co.co_filename and "tree_walk" not in co.co_filename and "/ast.py" not in co.co_filename:
                where.append(f"{co.co_filename.split('/analyzer/')[-1]}:{co.co_name}")
            f = f.f_back
        first[" < ".join(where)] += 1
    return orig(self)
lazy_bodies.LazyBody.load = load
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print("loaded", sum(first.values()), file=sys.stderr)
for k, v in first.most_common(30):
    print(v, k, file=sys.stderr)
