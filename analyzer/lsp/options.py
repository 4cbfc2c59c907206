"""The server's settings: the client's (``initializationOptions``, then ``workspace/configuration``
section ``devicelint``) layered over the nearest ``[tool.devicelint]``, the client winning as
command-line flags do.

Client keys (camelCase, as editors spell settings): ``select``, ``extendSelect``,
``ignore`` (lists of codes or prefixes), ``profile``, ``backends`` (list), ``targetDevice``,
``ignoreNoqa`` (bool), ``debounceMs`` (delay before re-checking after an edit).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from runtime_shim.profiles import DEFAULT_PROFILE, PROFILE_ALIASES, PROFILE_NAMES

from .. import config
from ..discovery import DiscoveryOptions
from ..settings import Settings, SettingsError, check_selector, check_target_device, parse_backends

DEFAULT_DEBOUNCE_MS = 200
KEYS = ("select", "extendSelect", "ignore", "profile", "backends", "targetDevice", "ignoreNoqa", "debounceMs")


@dataclass(frozen=True)
class ClientOptions:
    """The client's settings, validated."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    profile: str | None = None
    backends: frozenset[str] | None = None
    target_device: str | None = None  # None: the configuration file's (default auto)
    ignore_noqa: bool = False
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    unknown: tuple[str, ...] = field(default=())  # keys we do not know (reported, not fatal)


def _codes(key: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SettingsError(f"`{key}` must be a list of rule codes, not {value!r}")
    return tuple(check_selector(v) for v in value)


def parse_client_options(raw: Any) -> ClientOptions:
    """The client's settings (a dict, optionally wrapped in ``{"devicelint": {...}}``); SettingsError when wrong."""
    if raw is None:
        return ClientOptions()
    if isinstance(raw, dict) and isinstance(raw.get("devicelint"), dict):
        raw = raw["devicelint"]
    if not isinstance(raw, dict):
        raise SettingsError(f"devicelint settings must be an object, not {raw!r}")
    values: dict[str, Any] = {}
    if raw.get("select") is not None:
        values["select"] = _codes("select", raw["select"])
    if raw.get("extendSelect") is not None:
        values["extend_select"] = _codes("extendSelect", raw["extendSelect"])
    if raw.get("ignore") is not None:
        values["ignore"] = _codes("ignore", raw["ignore"])
    profile = raw.get("profile")
    if profile is not None:
        profile = PROFILE_ALIASES.get(profile, profile)
        if profile not in PROFILE_NAMES:
            raise SettingsError(f"`profile`: unknown profile {profile!r}; known: {', '.join(PROFILE_NAMES)}")
        values["profile"] = profile
    if raw.get("backends") is not None:
        values["backends"] = parse_backends(raw["backends"])
    if raw.get("targetDevice") is not None:
        values["target_device"] = check_target_device(raw["targetDevice"], "targetDevice")
    if raw.get("ignoreNoqa") is not None:
        if not isinstance(raw["ignoreNoqa"], bool):
            raise SettingsError("`ignoreNoqa` must be true or false")
        values["ignore_noqa"] = raw["ignoreNoqa"]
    debounce = raw.get("debounceMs")
    if debounce is not None:
        if not isinstance(debounce, int) or isinstance(debounce, bool) or debounce < 0:
            raise SettingsError(f"`debounceMs` must be a non-negative integer, not {debounce!r}")
        values["debounce_ms"] = debounce
    values["unknown"] = tuple(sorted(k for k in raw if k not in KEYS))
    return ClientOptions(**values)


def find_config(path: str) -> config.Config | None:
    """The ``[tool.devicelint]`` configuration closest to ``path`` (None: there is none)."""
    found = config.find(os.path.dirname(os.path.abspath(path)))
    return config.load(found) if found is not None else None


def build_settings(found: config.Config, client: ClientOptions) -> Settings:
    """Settings for one project: the configuration file's, then the client's on top (like CLI flags)."""
    settings = Settings(profile=client.profile or found.get("profile", DEFAULT_PROFILE))
    settings.backends = client.backends if client.backends is not None else found.get("backends")
    settings.target_device = client.target_device or found.get("target-device", "auto")
    layer = found.selection()
    settings.selections = (layer,) if layer is not None else ()
    settings.select = client.select
    settings.extend_select = client.extend_select
    settings.ignore = client.ignore
    settings.per_file_ignores = found.per_file_ignores()
    settings.respect_noqa = not client.ignore_noqa
    settings.max_file_size = found.get("max-file-size", settings.max_file_size)
    settings.discovery = DiscoveryOptions(
        root=found.root,
        exclude=found.get("exclude"),
        extend_exclude=found.get("extend-exclude", ()),
        respect_gitignore=found.get("respect-gitignore", True),
        roots=found.roots(),
    )
    settings.cache_dir = None  # buffers change on every keystroke: the disk cache would only churn
    return settings.validate()
