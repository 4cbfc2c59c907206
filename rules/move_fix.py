"""The fix shared by the device-mismatch rules: move the CPU tensor of a two-tensor call to the GPU tensor's device.

``f(gpu, cpu)`` -> ``f(gpu, cpu.to(gpu.device))``, ``gpu.method(cpu)`` -> ``gpu.method(cpu.to(gpu.device))``:
offered only where the call fails on every path, with exactly two tensor operands, one on the CPU and the other,
a plain name, on a GPU (its ``.device`` is then cheap and has no side effect). Unsafe: the call reads a copy.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from devicelint.diagnostics import UNSAFE, Fix
from devicelint.facts import Site, SiteFact
from devicelint.torch_domain import TorchTensorAtom

from .base import fails_everywhere

if TYPE_CHECKING:
    import libcst as cst

_ARG = re.compile(r"arg(\d+)")


def move_to_gpu_operand(site: Site, site_facts: list[SiteFact], source: str, code: str,
                        cpu_roles: frozenset[str] | None = None) -> Fix | None:
    """The fix, or None where it is not mechanical. ``cpu_roles``: the operands that may be moved (None: any)."""
    from devicelint.fixes.spans import source_for

    if not fails_everywhere(site_facts, code):
        return None
    roles = {tuple(role for role, _atom in p.operands) for f in site_facts for p in f.possibilities}
    if len(roles) != 1 or len(next(iter(roles))) != 2:
        return None
    kinds: dict[str, str] = {}
    for f in site_facts:
        for p in f.possibilities:
            for role, atom in p.operands:
                if not isinstance(atom, TorchTensorAtom) or kinds.setdefault(role, atom.dev.type) != atom.dev.type:
                    return None
    if sorted(kinds.values()) != ["cpu", "cuda"]:
        return None
    cpu_role = next(role for role, kind in kinds.items() if kind == "cpu")
    gpu_role = next(role for role, kind in kinds.items() if kind == "cuda")
    if cpu_roles is not None and cpu_role not in cpu_roles:
        return None
    parsed = source_for(source)
    call = parsed.call_at(site)
    if call is None or any(a.star or a.keyword is not None for a in call.args):
        return None
    method = "input" in kinds

    def node(role: str) -> cst.BaseExpression | None:  # the expression that passed the operand
        if role == "input":
            return parsed.method_receiver(call)
        match = _ARG.fullmatch(role)
        index = int(match.group(1)) - (1 if method else 0) if match else -1
        return call.args[index].value if 0 <= index < len(call.args) else None

    cpu, gpu = node(cpu_role), node(gpu_role)
    if cpu is None or gpu is None:
        return None
    name = source[parsed.start(gpu):parsed.end(gpu)]
    if not name.isidentifier() or name in ("self", "cls"):
        return None
    return Fix(UNSAFE, f"Move the CPU tensor to `{name}.device`", tuple(parsed.append_call(cpu, f".to({name}.device)")))
