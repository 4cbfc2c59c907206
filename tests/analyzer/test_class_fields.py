"""Fields declared by annotation, read by one helper for dataclasses and ``typing.NamedTuple`` classes: order,
defaults, inheritance and what declares no field."""

from __future__ import annotations

import ast
import textwrap

from devicelint.engine.python_values import annotated_fields, in_init, inherited_fields
from devicelint.runner import check_source
from devicelint.settings import Settings


def _observed(source: str) -> list[tuple[int, str]]:
    report = check_source(textwrap.dedent(source), "script.py", Settings(jobs=1))
    return sorted((d.row, d.code or d.message.removeprefix("reveal_device: ")) for d in report.diagnostics)


def _body(source: str) -> list[ast.stmt]:
    node = ast.parse(textwrap.dedent(source)).body[-1]
    assert isinstance(node, ast.ClassDef)
    return node.body


def test_annotations_that_declare_no_field_are_left_out() -> None:
    fields = annotated_fields(_body("""
        class Config:
            device: str
            registry: ClassVar[dict] = {}
            other: typing.ClassVar[int] = 0
            _: KW_ONLY
            seed: int = 0
            name = "plain"
            def method(self) -> None: ...
    """))
    assert [(name, None if value is None else ast.unparse(value)) for name, value in fields] == \
        [("device", None), ("seed", "0")]


def test_a_field_declared_again_keeps_its_place_with_the_later_default() -> None:
    base = annotated_fields(_body("class Base:\n    x: int\n    mask: int = 0\n"))
    sub = annotated_fields(_body("class Sub(Base):\n    mask: int = 1\n    extra: int = 2\n"))
    assert [(name, ast.unparse(value) if value else None) for name, value in inherited_fields([base, None, sub])] \
        == [("x", None), ("mask", "1"), ("extra", "2")]
    assert not in_init(ast.parse("field(init=False, default=0)", mode="eval").body)
    assert in_init(ast.parse("field(default=0)", mode="eval").body) and in_init(None)


def test_a_dataclass_subclass_that_redeclares_a_field_takes_it_at_its_first_place() -> None:
    # ``MaskedBatch(x, mask)``: ``mask`` is the second parameter; its new default is not stored over the argument
    assert _observed("""
        from dataclasses import dataclass, field
        import torch
        from devicelint import reveal_device

        @dataclass
        class Batch:
            x: torch.Tensor
            mask: torch.Tensor = None

        @dataclass
        class MaskedBatch(Batch):
            mask: torch.Tensor = field(default_factory=lambda: torch.ones(4))

        batch = MaskedBatch(torch.randn(4, device="cuda"), torch.ones(4, device="cuda"))
        reveal_device(batch.mask)
        print(batch.x * batch.mask)
    """) == [(16, "cuda:0 tensor")]


def test_a_field_left_out_of_init_takes_no_argument() -> None:
    # ``Step(x, y)``: ``count`` is not a parameter, so ``y`` is the CPU tensor and ``s.x + s.y`` fails
    assert _observed("""
        from dataclasses import dataclass, field
        import torch

        @dataclass
        class Step:
            x: torch.Tensor
            count: int = field(init=False, default=0)
            y: torch.Tensor = None

        s = Step(torch.randn(3, device="cuda"), torch.randn(3))
        print(s.x + s.y)
    """) == [(12, "MV201")]


def test_a_named_tuple_subclass_declares_no_fields() -> None:
    # its annotations are class attributes: the fields are the ``NamedTuple`` class's
    assert _observed("""
        from typing import NamedTuple
        import torch
        from devicelint import reveal_device

        class Step(NamedTuple):
            obs: torch.Tensor
            reward: torch.Tensor

        class WeightedStep(Step):
            weight: float = 1.0

        step = WeightedStep(torch.zeros(2, device="cuda"), reward=torch.zeros(1))
        reveal_device(step.obs)
        reveal_device(step.reward)
    """) == [(14, "cuda:0 tensor"), (15, "cpu tensor")]
