"""Harness: every Nth call of the changed functions also runs the base commit's version; results compared.

restricted / stripped / for_heap / alternatives (choices) and _atom_depth (domain): the branch's result must
equal the base's (atoms, top, notes; for alternatives the same choices, alternatives and order) and be the
input itself exactly when the base's is."""
import sys, io, contextlib, collections
from devicelint import cli, settings, choices, domain
from devicelint.budget import Limits
settings.Settings.limits = lambda self: Limits(self.max_component_steps, None, self.max_worker_memory, self.max_function_steps)
cli._cpus = lambda: 1
src = open("/tmp/sps/basesrc/analyzer/choices.py").read()
src = src.replace("from .domain import", "from devicelint.domain import").replace("from .torch_domain import", "from devicelint.torch_domain import")
import types
mod = types.ModuleType("base_choices"); sys.modules["base_choices"] = mod
exec(compile(src, "base_choices", "exec"), mod.__dict__)
base = mod.__dict__
base["Choice"] = choices.Choice  # (the exec'd module's own class would never equal the engine's choices)
N = int(sys.argv[1]); stats = collections.Counter()
def same(a, b, value):
    ok = a == b and (a.notes or {}) == (b.notes or {}) and a.top == b.top and ((a is value) == (b is value))
    if not ok and stats["shown"] < 6:
        stats["shown"] += 1
        print("DIFF eq", a == b, "notes", (a.notes or {}) == (b.notes or {}), "ident", a is value, b is value, "\n new", a, "\n old", b, "\n in ", value, file=sys.stderr)
    return a == b and (a.notes or {}) == (b.notes or {}) and a.top == b.top and ((a is value) == (b is value))
def wrap(name):
    new = getattr(choices, name); old = base[name]
    def f(*args):
        r = new(*args)
        stats[name] += 1
        if stats[name] % N == 0:
            stats[name + " compared"] += 1
            if not same(r, old(*args), args[0]):
                stats[name + " DIFFERENT"] += 1
        return r
    return f
for name in ("restricted", "stripped", "for_heap"):
    setattr(choices, name, wrap(name))
# the engine modules imported these names: patch them where they are used
import devicelint.engine.core as core, devicelint.engine.relational as rel
for mod in (core, rel):
    for name in ("restricted", "stripped", "for_heap"):
        if hasattr(mod, name): setattr(mod, name, getattr(choices, name))
new_restriction = choices.restriction
def restriction(choice, alternative):
    fn = new_restriction(choice, alternative)
    def g(value):
        r = fn(value)
        stats["restriction"] += 1
        if stats["restriction"] % N == 0:
            stats["restriction compared"] += 1
            if not same(r, base["restricted"](value, choice, alternative), value):
                stats["restriction DIFFERENT"] += 1
        return r
    return g
rel.restriction = restriction
new_alt = choices.alternatives
def alternatives(values):
    values = list(values)
    r = new_alt(values)
    stats["alternatives"] += 1
    if stats["alternatives"] % N == 0:
        stats["alternatives compared"] += 1
        o = base["alternatives"](values)
        if list(r.items()) != list(o.items()):
            print("ALT", r, o, file=sys.stderr)
            stats["alternatives DIFFERENT"] += 1
    return r
rel.alternatives = alternatives
def old_atom_depth(atom):
    if isinstance(atom, domain._SHALLOW):
        return 0
    depth = 0
    for name in getattr(atom, "__dataclass_fields__", ()):
        depth = max(depth, old_field_depth(getattr(atom, name)))
    return depth
def old_field_depth(item):
    if isinstance(item, domain.Value):
        return item.depth
    if isinstance(item, domain.Atom):
        return 1 + old_atom_depth(item)
    if isinstance(item, tuple):
        return max((old_field_depth(x) for x in item), default=0)
    return 0
new_depth = domain._atom_depth
def atom_depth(atom):
    r = new_depth(atom)
    stats["_atom_depth"] += 1
    if stats["_atom_depth"] % N == 0:
        stats["_atom_depth compared"] += 1
        if r != old_atom_depth(atom):
            stats["_atom_depth DIFFERENT"] += 1
    return r
domain._atom_depth = atom_depth
with contextlib.redirect_stdout(io.StringIO()):
    try:
        cli.main(["check", "--no-cache", "--exit-zero", "--isolated", "--no-respect-gitignore", *sys.argv[2:]])
    except SystemExit:
        pass
print(" ".join(sys.argv[2:]), dict(sorted(stats.items())))
