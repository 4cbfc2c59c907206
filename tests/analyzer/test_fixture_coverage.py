"""The fixtures cover every rule × every flow construct (the matrix of fixture_coverage.py).

A missing cell fails here with the fixtures to write; a cell that cannot exist
must be listed in EXEMPT with the reason.
"""

from __future__ import annotations

import ast
import textwrap

from devicelint.rules import all_rules
from fixture_coverage import CONSTRUCTS, constructs_at, matrix

# (code, construct) -> why no fixture can exercise it
EXEMPT: dict[tuple[str, str], str] = {}


def test_every_rule_meets_every_flow_construct_in_some_fixture() -> None:
    table = matrix()
    codes = [rule.code for rule in all_rules() if not rule.code.startswith("MV9")]
    missing = [f"{code} × {construct}" for code in codes for construct in CONSTRUCTS
               if not table[code].get(construct) and (code, construct) not in EXEMPT]
    assert not missing, f"{len(missing)} rule × construct cells have no fixture:\n" + "\n".join(missing)


def test_the_construct_reader_sees_what_encloses_and_binds_a_marked_call() -> None:
    source = textwrap.dedent("""\
        from trainkit.config import DEVICE

        def step(batch, device=DEVICE):
            first, second = batch
            for item in batch:
                if device.is_autodiff():
                    try:
                        pass
                    except Exception:
                        first.to_device(device)
            return [x.to_device(device) for x in batch if (y := x)]
        """)
    tree = ast.parse(source)
    handler = constructs_at(tree, 10, {"trainkit"})
    assert {"unpacking", "loop", "container iteration", "narrowing", "if/else join", "try/except/finally",
            "function call", "default argument"} <= handler
    assert {"comprehension", "walrus"} <= constructs_at(tree, 11, {"trainkit"})


def test_only_names_imported_from_the_fixture_itself_are_module_constants() -> None:
    source = textwrap.dedent("""\
        from runtime_shim import Device
        from .devices import HOST

        def export(t):
            t.to_device(Device.cpu())
            t.to_device(HOST)
        """)
    tree = ast.parse(source)
    assert "module constant (import)" not in constructs_at(tree, 5, {"devices"})
    assert "module constant (import)" in constructs_at(tree, 6, {"devices"})
