"""One root cause, one finding: a failure that only follows from an earlier one is that finding's.

Past a call that fails on every path the analysis goes on with the result the user meant it to have (docs/analyzer.md,
"Going on past a failure"). A later call that fails again over the same tensor left on the wrong device (the
start tokens a generation loop concatenates after the model already refused them, a CPU batch that reaches a second
layer) is the same bug: moving that tensor fixes both. Such a failure is a *cascade* of the earlier one: it gives no
finding of its own, and the earlier one's finding lists it ("fails here too"). A later failure over another tensor
(labels left on the CPU after the inputs were) is a bug of its own and stays a finding. The later failure is told
apart by an operand derived from what an earlier failure was meant to give (its provenance is the tensor left
behind, on another device than that tensor), and by order: a failure does not follow from one that runs after it,
read in source order along the calls that lead to both.

In a forked ``DataLoader`` worker (MV209) the first CUDA call raises and ends the worker: a later call there over
the same tensor (the noise a ``__getitem__`` made on the GPU, moved back with ``.cpu()`` on the next line) is a
cascade of the call that made it, or of the first call over it (a parent's GPU tensor, indexed and then computed
with), whatever the other failures' devices (:func:`_worker_cascades`).

Two further readings of the facts serve the same end: a combination that succeeds only with the result of a call that
never succeeds (:func:`never_succeeding`) is hypothetical, as on a path past a failure, so a loop's later iterations do
not turn a failure on every run into a warning.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from devicelint.facts import Context, FactStore, Possibility, Site, SiteFact

from .anchors import MAX_DEPTH

Where = tuple[str, int, int]
#: the calls that lead to a site, outermost first: (context id, call position) each
Chain = tuple[tuple[int, Where], ...]
#: How many caller paths of one context are compared (a helper called from many places).
MAX_PATHS = 8
#: sites by their call's position (file, line, col)
Never = dict[Where, list[Site]]


@dataclass(frozen=True, slots=True)
class Cascades:
    """The cascades of one set of facts: each cascading fact's root facts, and each root fact's cascading sites."""

    roots: dict[int, list[SiteFact]]  # id(cascading fact) -> the facts it follows from
    followers: dict[int, list[Site]]  # id(root fact) -> the sites that fail again past it
    never: Never  # sites that never succeed (see never_succeeding)


_CACHE: WeakKeyDictionary[FactStore, tuple[object, Cascades]] = WeakKeyDictionary()


def cascades(facts: FactStore) -> Cascades:
    """The cascades among ``facts`` (computed once per set of facts: every rule asks)."""
    grouped = facts.by_site()
    cached = _CACHE.get(facts)
    if cached is not None and cached[0] is grouped:
        return cached[1]
    found = _find(grouped)
    _CACHE[facts] = (grouped, found)
    return found


def meant_device(atoms: list) -> object:
    """The device a mismatching call was meant to run on: the accelerator of a CPU/accelerator mismatch, else the
    first operand's (as the torch model's checked ops go on past it)."""
    return next((atom.dev for atom in atoms if atom.dev.type != "cpu"), atoms[0].dev)


def _tensors(possibility: Possibility) -> list:
    return [atom for _role, atom in possibility.operands if hasattr(getattr(atom, "dev", None), "type")]


def left_behind(possibility: Possibility) -> frozenset[Where] | None:
    """Where the operands a failing combination leaves behind were made: those not on the device the call was meant
    to run on. None where that is not a tensor of known provenance (a module's weight, a value of unknown origin)."""
    atoms = _tensors(possibility)
    if len({atom.dev for atom in atoms}) < 2:
        return None
    meant = meant_device(atoms)
    left: set[Where] = set()
    for atom in atoms:
        if atom.dev == meant:
            continue
        origin = getattr(atom, "provenance", None)
        if getattr(atom, "owned", False) or origin is None or not origin.line:
            return None
        left.add((origin.file, origin.line, origin.col))
    return frozenset(left) or None


def _past(possibility: Possibility) -> frozenset[Where]:
    """The tensors left behind by earlier failures whose meant results this combination uses: an operand on the
    device the call is meant for, derived from a tensor that was not there (what a failing call was meant to give
    comes from the operand it left behind, and a move starts afresh, so only such a result is that)."""
    atoms = _tensors(possibility)
    if len({atom.dev for atom in atoms}) < 2:
        return frozenset()
    meant = meant_device(atoms)
    return frozenset((origin.file, origin.line, origin.col) for atom in atoms if atom.dev == meant
                     and not getattr(atom, "owned", False) and (origin := getattr(atom, "source", None)) is not None
                     and origin.line)


def never_succeeding(grouped: dict[Site, list[SiteFact]]) -> Never:
    """The sites that fail and succeed only with their own result as an operand (``SiteFact.fed_back``), or only
    on paths past a failure: what they return exists only where the analysis goes on as if they had succeeded."""
    never: Never = {}
    for site, site_facts in grouped.items():
        possibilities = [p for f in site_facts for p in f.possibilities]
        if not any(p.failed for p in possibilities):
            continue
        passes = {p for p in possibilities if not p.failed}
        own = {p for f in site_facts for p in f.fed_back}
        if passes <= own and not any(f.unknown for f in site_facts):
            never.setdefault((site.file, site.line, site.col), []).append(site)
    return never


def hypothetical(possibility: Possibility, never: Never) -> bool:
    """A succeeding combination with an operand that only a call that never succeeds gives."""
    return bool(never) and not possibility.failed and any(
        site.made(origin) for _role, origin in possibility.origins()
        for site in never.get((origin.file, origin.line, origin.col), ()))


def _find(grouped: dict[Site, list[SiteFact]]) -> Cascades:
    never = never_succeeding(grouped)
    failing = [f for site_facts in grouped.values() for f in site_facts if any(p.failed for p in f.possibilities)]
    # a root: a call that fails on every path of its context (the analysis goes on past it with its meant result)
    roots: list[tuple[SiteFact, frozenset[Where]]] = []
    for fact in failing:
        if fact.unknown or not all(p.failed or hypothetical(p, never) for p in fact.possibilities):
            continue
        parts = [left_behind(p) for p in fact.possibilities if p.failed]
        if all(part is not None for part in parts):
            roots.append((fact, frozenset().union(*(part for part in parts if part is not None))))
    of: dict[int, list[SiteFact]] = {}
    paths: dict[int, list[Chain]] = {}
    for fact in failing:
        found: list[SiteFact] = []
        for possibility in fact.possibilities:
            if not possibility.failed:
                continue
            left, past = left_behind(possibility), _past(possibility)
            # the same tensor left behind again, met by what the earlier failure was meant to give
            earlier = [root for root, root_left in roots if root.site != fact.site and left is not None
                       and left <= root_left and left & past and not _runs_before(fact, root, paths)]
            if not earlier:
                found = []
                break
            found.extend(r for r in earlier if all(r is not seen for seen in found))
        if found:
            of[id(fact)] = found
    for fact_id, found in _worker_cascades(failing, paths).items():
        of.setdefault(fact_id, found)
    # failures that each follow from the other (in a loop) are each a finding
    of = {fact_id: found for fact_id, found in of.items() if not _returns_to(fact_id, found, of)}
    sites = {id(f): f.site for f in failing}
    by_root: dict[int, list[Site]] = {}
    for fact_id, found in of.items():  # a cascade of a cascade follows from the first failure
        for root in _firsts(found, of):
            followers = by_root.setdefault(id(root), [])
            if sites[fact_id] not in followers:
                followers.append(sites[fact_id])
    return Cascades(of, by_root, never)


#: the semantics row of a CUDA call in a forked DataLoader worker (:mod:`devicelint.models.torch_data`)
WORKER_ROW = "torch.worker"


def _worker_tensor(possibility: Possibility) -> tuple[Where, Where] | None:
    """Where the CUDA tensor a failing worker call computes with got its device (made there or by the parent), and
    the ``DataLoader(...)`` call whose workers run it (another loader's workers fail on their own)."""
    found = dict(possibility.operands)
    tensor, workers = getattr(found.get("tensor"), "provenance", None), getattr(found.get("worker"), "origin", None)
    if tensor is None or not tensor.line or workers is None:
        return None
    return (tensor.file, tensor.line, tensor.col), (workers.file, workers.line, workers.col)


def _worker_cascades(failing: list[SiteFact], paths: dict[int, list[Chain]]) -> dict[int, list[SiteFact]]:
    """The worker failures over a tensor an earlier worker failure made or used first: the call that made it (a
    CUDA creation in the worker), else each failure over it that runs before."""
    over: dict[int, set[tuple[Where, Where]]] = {}
    by_tensor: dict[tuple[Where, Where], list[SiteFact]] = {}
    for fact in failing:
        failed = [p for p in fact.possibilities if p.failed]
        if any(p.row != WORKER_ROW for p in failed):
            continue
        tensors = {_worker_tensor(p) for p in failed}
        if None in tensors:
            continue
        over[id(fact)] = {t for t in tensors if t is not None}
        for tensor in over[id(fact)]:
            by_tensor.setdefault(tensor, []).append(fact)
    of: dict[int, list[SiteFact]] = {}
    for fact in failing:
        if id(fact) not in over:
            continue
        found: list[SiteFact] = []
        for tensor in over[id(fact)]:
            if (fact.site.file, fact.site.line, fact.site.col) == tensor[0]:
                found = []  # made here: the first failure over it
                break
            group = by_tensor[tensor]
            makers = [f for f in group if (f.site.file, f.site.line, f.site.col) == tensor[0]]
            earlier = makers or [f for f in group if f.site != fact.site and _runs_before(f, fact, paths)
                                 and not _runs_before(fact, f, paths)]
            if not earlier:
                found = []
                break
            found.extend(f for f in earlier if all(f is not seen for seen in found))
        if found:
            of[id(fact)] = found
    return of


def _chains(context: Context, depth: int = 0) -> list[Chain]:
    """The calls that lead into ``context`` from an outermost one."""
    if not context.callers or depth >= MAX_DEPTH:
        return [()]
    out: list[Chain] = []
    for link in context.callers[:MAX_PATHS]:
        if link.caller is None:
            continue
        for outer in _chains(link.caller, depth + 1):
            out.append((*outer, (link.caller.id, (link.file, link.line, link.col))))
            if len(out) >= MAX_PATHS:
                return out
    return out or [()]


def _before(first: Chain, second: Chain) -> bool:
    """Whether ``first`` runs before ``second`` (read in source order): they part in one context, ``first`` at an
    earlier position there (a call that leads to it, or the site itself)."""
    for (ctx_a, at_a), (ctx_b, at_b) in zip(first, second, strict=False):
        if ctx_a != ctx_b:
            return False
        if at_a != at_b:
            return at_a[0] == at_b[0] and at_a[1:] < at_b[1:]
    return False


def _runs_before(first: SiteFact, second: SiteFact, paths: dict[int, list[Chain]]) -> bool:
    """Whether a path to ``first`` runs before one to ``second``: then ``first`` cannot follow from ``second``."""
    for fact in (first, second):
        if id(fact) not in paths:
            site = fact.site
            paths[id(fact)] = [(*chain, (fact.context.id, (site.file, site.line, site.col)))
                               for chain in _chains(fact.context)]
    return any(_before(a, b) for a in paths[id(first)] for b in paths[id(second)])


def _returns_to(start: int, found: list[SiteFact], of: dict[int, list[SiteFact]]) -> bool:
    """Whether following the roots from ``found`` leads back to the fact ``start``."""
    seen: set[int] = set()
    todo = list(found)
    while todo:
        root = todo.pop()
        if id(root) == start:
            return True
        if id(root) not in seen:
            seen.add(id(root))
            todo.extend(of.get(id(root), ()))
    return False


def _firsts(found: Iterable[SiteFact], of: dict[int, list[SiteFact]], depth: int = 0) -> Iterator[SiteFact]:
    for root in found:
        if id(root) in of and depth < MAX_DEPTH:
            yield from _firsts(of[id(root)], of, depth + 1)
        else:
            yield root
