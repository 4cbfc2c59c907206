"""The semantics profiles by name: which ones exist and which is the default.

A profile's overrides live with the table (:data:`runtime_shim.semantics.PROFILES`, which must
name exactly these). Checking a name from a command line or a configuration needs only this
module, so a cached analyzer run does not import the table.
"""

from __future__ import annotations

from collections.abc import Mapping

#: The seeds' pinned commit: tracel-ai/burn at d16f7ba2ed (2026-09-05).
DEFAULT_PROFILE = "burn-d16f7ba"

PROFILE_DOCS: Mapping[str, str] = {
    "burn-d16f7ba": "Burn at d16f7ba2ed (2026-09-05), the pinned commit: moves as burn-2026-08; autodiff and "
                    "plain floats merge (ops and cat), gradients carry no strategy, int inner/from_inner move "
                    "the association, a wrong-backend input panics naming the input; burn-tensor's autodiff "
                    "conversions are idempotent (inner, from_inner, Device.autodiff), a strategy needs autodiff, "
                    "grad() of a tensor without autodiff is None",
    "burn-2026-08": "Burn main at 2c06be35 (2026-08-21): the HEAD column of dispatch-semantics.md",
    "burn-0.21": "Burn v0.21.x: as burn-2026-08, but a plain float moved to an autodiff device panics (MV102)",
    "burn-next": "Burn with graph-preserving cross-backend autodiff transfers: as the default profile, but an "
                 "autodiff tensor moved to an autodiff device of another backend stays on the tape (gradients "
                 "flow back to the source device); to a capture device it fails (MV102)",
}

#: Other names accepted for a profile (a command line, a configuration, a fixture header).
PROFILE_ALIASES: Mapping[str, str] = {
    "burn-2026-09": "burn-d16f7ba",  # the pinned commit's month: the name this profile had first
}

#: The profiles' names, in the order they are listed.
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILE_DOCS)


class UnknownProfile(ValueError):
    """A profile name that is not in :data:`PROFILE_NAMES` (nor an alias of one)."""


def check_profile(name: str) -> str:
    """The canonical name of profile ``name`` (an alias gives the profile it stands for)."""
    name = PROFILE_ALIASES.get(name, name)
    if name not in PROFILE_NAMES:
        raise UnknownProfile(f"unknown profile {name!r}; known: {', '.join(PROFILE_NAMES)}")
    return name
