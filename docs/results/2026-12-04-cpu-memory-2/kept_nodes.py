"""Nodes a transformers run keeps after stripping: in the trees (headers, module and class level) and in the kept writes."""
import ast, sys, os, collections
from devicelint import frontend, lazy_bodies
from devicelint.engine import demand
tree_nodes = kept_nodes = bodies = 0
header = collections.Counter()
for dirpath, _, names in os.walk(sys.argv[1]):
    for name in names:
        if not name.endswith(".py"): continue
        path = os.path.join(dirpath, name)
        src = frontend.source_of(path, open(path, "rb").read())
        if frontend.parse(src) is not None: continue
        demand.summarize(src); lazy_bodies.strip(src)
        seen = set()
        stack = [src.tree]
        while stack:
            n = stack.pop()
            if id(n) in seen: continue
            seen.add(id(n)); tree_nodes += 1
            for f, v in ast.iter_fields(n):
                if type(v) is lazy_bodies.LazyBody:
                    bodies += 1; continue
                if isinstance(v, list): stack.extend(x for x in v if isinstance(x, ast.AST))
                elif isinstance(v, ast.AST): stack.append(v)
                if f in ("args", "returns", "decorator_list") and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    header[f] += sum(1 for x in (v if isinstance(v, list) else [v]) if isinstance(x, ast.AST) for _ in ast.walk(x))
        for mentions, writes in src.function_scans.values():
            for w in writes:
                for x in ast.walk(w):
                    if id(x) not in seen:
                        seen.add(id(x)); kept_nodes += 1
print(f"tree nodes kept {tree_nodes}, lazy bodies {bodies}, nodes only in kept writes {kept_nodes}, header nodes {dict(header)}")
