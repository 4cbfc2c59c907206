"""Process-wide settings: the semantics profile and real vs virtual devices.

Both start from the environment (``RUNTIME_SHIM_PROFILE``,
``RUNTIME_SHIM_VIRTUAL``) and can be changed for a block with the context
managers :func:`profile` and :func:`virtual_devices`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from .profiles import DEFAULT_PROFILE, check_profile
from .validation import check_bool


class _Settings:
    __slots__ = ("profile", "virtual")

    def __init__(self) -> None:
        self.profile = check_profile(os.environ.get("RUNTIME_SHIM_PROFILE") or DEFAULT_PROFILE)
        self.virtual = os.environ.get("RUNTIME_SHIM_VIRTUAL", "").lower() in ("1", "true", "yes", "on")


SETTINGS = _Settings()


def set_profile(name: str) -> None:
    """Use the semantics of profile ``name`` from now on (``burn-d16f7ba``, ``burn-2026-08``, ``burn-0.21``)."""
    SETTINGS.profile = check_profile(name)


def current_profile() -> str:
    return SETTINGS.profile


@contextlib.contextmanager
def profile(name: str) -> Iterator[str]:
    """Use profile ``name`` inside the block."""
    previous = SETTINGS.profile
    SETTINGS.profile = check_profile(name)
    try:
        yield name
    finally:
        SETTINGS.profile = previous


def set_virtual(enabled: bool) -> None:
    SETTINGS.virtual = check_bool("set_virtual", "enabled", enabled)


def is_virtual() -> bool:
    return SETTINGS.virtual


def mode() -> str:
    """``"virtual"`` or ``"real"``: which kind of devices produce results now."""
    return "virtual" if SETTINGS.virtual else "real"


@contextlib.contextmanager
def virtual_devices(enabled: bool = True) -> Iterator[None]:
    """Inside the block every declared backend and CUDA index exists and runs on the CPU."""
    previous = SETTINGS.virtual
    SETTINGS.virtual = check_bool("virtual_devices", "enabled", enabled)
    try:
        yield
    finally:
        SETTINGS.virtual = previous
