"""Every body strip() makes lazy re-parses to the same nodes (fields and positions) as the whole file's parse."""
import ast, sys, os
from devicelint import frontend, lazy_bodies
bad = checked = files = 0
for root in sys.argv[1:]:
    for dirpath, _, names in os.walk(root):
        for name in names:
            if not name.endswith(".py"): continue
            path = os.path.join(dirpath, name)
            src = frontend.source_of(path, open(path, "rb").read())
            if frontend.parse(src) is not None: continue
            files += 1
            originals = {}
            for node in ast.walk(src.tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    originals[id(node)] = (node, [ast.dump(s, include_attributes=True) for s in node.body])
            lazy_bodies.strip(src)
            for node, dumps in originals.values():
                if type(node.body) is lazy_bodies.LazyBody:
                    checked += 1
                    again = [ast.dump(s, include_attributes=True) for s in lazy_bodies.full(node).body]
                    if again != dumps:
                        bad += 1; print("DIFF", path, node.lineno)
print(f"files {files} lazy bodies {checked} different {bad}")
