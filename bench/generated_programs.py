"""Random device-heavy PyTorch programs, for robustness runs of the analyzer (bench/robustness.py) and its
property tests (tests/analyzer/test_generated_programs.py).

A program is a module of statements drawn from the constructs real code mixes with device moves: tensor
creations on devices, moves (``.to``, ``.cuda()``, ``.cpu()``), arithmetic and reductions, loops over short
constant lists of mixed types (nested, with ``try``/``except: continue`` and rows appended: the shapes that made
the analysis grow exponentially), ``range`` with huge bounds, optional imports, comprehensions, closures,
classes (``nn.Module`` subclasses), recursion, decorators, ``match`` and the walrus. Programs always compile;
whether they would run does not matter (the analyzer must finish on any of them).

Draws go through a :class:`Chooser`: :class:`RandomChooser` (a seeded ``random.Random``) for the bench, and a
Hypothesis ``data.draw`` adapter in the tests, so failures shrink to a small program.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

T = TypeVar("T")

DEVICES = ('"cpu"', '"cuda"', '"cuda:0"', '"cuda:1"', 'torch.device("cuda", 1)', "device", 'torch.device("cpu")')
CONSTANTS = ("1", "2.5", '"x"', "None", "3j", 'b"y"', "True", "(1,)", "[2]", "{}", "-4", '"cuda"')
CREATORS = ("torch.zeros", "torch.ones", "torch.randn", "torch.empty")
MAX_DEPTH = 3


class Chooser(Protocol):
    def choice(self, options: Sequence[T]) -> T: ...

    def integer(self, low: int, high: int) -> int: ...


class RandomChooser:
    """Draws from a seeded ``random.Random`` (the same seed, the same program)."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)

    def choice(self, options: Sequence[T]) -> T:
        return self.random.choice(list(options))

    def integer(self, low: int, high: int) -> int:
        return self.random.randint(low, high)


class _Writer:
    def __init__(self, chooser: Chooser, max_statements: int) -> None:
        self.c = chooser
        self.lines: list[str] = []
        self.tensors: list[str] = ["base"]
        self.counter = 0
        self.budget = max_statements

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.extend("    " * indent + line for line in text.splitlines())

    def tensor(self) -> str:
        return self.c.choice(self.tensors)

    def device(self) -> str:
        return self.c.choice(DEVICES)

    def constants(self, low: int = 2, high: int = 5) -> str:
        return "[" + ", ".join(self.c.choice(CONSTANTS) for _ in range(self.c.integer(low, high))) + "]"

    # ----------------------------------------------------------- expressions

    def tensor_expr(self) -> str:
        kind = self.c.integer(0, 7)
        if kind == 0:
            return f"{self.c.choice(CREATORS)}({self.c.integer(1, 4)}, device={self.device()})"
        if kind == 1:
            return f"{self.tensor()}.to({self.device()})"
        if kind == 2:
            return f"{self.tensor()}.{self.c.choice(('cuda()', 'cpu()', 'float()', 'detach()', 'clone()'))}"
        if kind == 3:
            return f"{self.tensor()} {self.c.choice(('+', '-', '*', '@'))} {self.tensor()}"
        if kind == 4:
            return f"torch.{self.c.choice(('cat', 'stack'))}([{self.tensor()}, {self.tensor()}])"
        if kind == 5:
            return f"{self.tensor()}.{self.c.choice(('sum()', 'mean()', 'abs()', 'relu()'))}"
        if kind == 6:
            return f"{self.tensor()} * {self.c.choice(('2', '0.5', 'scale'))}"
        return f"torch.tensor({self.constants(1, 3)}, device={self.device()})"

    # ----------------------------------------------------------- statements

    def block(self, indent: int, depth: int, count: int, in_loop: bool = False) -> None:
        for _ in range(count):
            self.statement(indent, depth, in_loop)

    def statement(self, indent: int, depth: int, in_loop: bool = False) -> None:
        self.budget -= 1
        simple = depth >= MAX_DEPTH or self.budget <= 0
        kind = self.c.integer(0, 3 if simple else 16)
        if kind <= 2:
            name = self.fresh()
            self.emit(indent, f"{name} = {self.tensor_expr()}")
            self.tensors.append(name)
        elif kind == 3:
            self.emit(indent, f"device = {self.device()}" if self.c.integer(0, 1) else
                      'device = "cuda" if torch.cuda.is_available() else "cpu"')
        elif kind == 4:  # a loop over a constant list (nested, rows appended on some paths)
            var = self.fresh("v")
            self.emit(indent, f"for {var} in {self.constants()}:")
            self.block(indent + 1, depth + 1, self.c.integer(1, 3), in_loop=True)
            self.emit(indent + 1, f"rows.append(({var}, {self.tensor()}))")
        elif kind == 5:  # try / except: continue inside a loop, or a fallback outside one
            self.emit(indent, "try:")
            self.block(indent + 1, depth + 1, self.c.integer(1, 2), in_loop)
            self.emit(indent + 1, f"{self.c.choice(('mpmath', 'scipy', 'lib'))}.check({self.tensor()})")
            self.emit(indent, f"except {self.c.choice(('Exception', 'ImportError', '(TypeError, ValueError)'))}:")
            self.emit(indent + 1, "continue" if in_loop else f"{self.fresh('fallback')} = None")
        elif kind == 6:  # range, sometimes with a bound past sys.maxsize
            var = self.fresh("i")
            bound = self.c.choice(("3", "n", "order", "10 ** 20", "2 ** 64", "len(rows)"))
            self.emit(indent, f"for {var} in range({bound}):")
            self.block(indent + 1, depth + 1, self.c.integer(1, 2), in_loop=True)
        elif kind == 7:  # comprehensions
            name = self.fresh("moved")
            if self.c.integer(0, 1):
                self.emit(indent, f"{name} = [{self.tensor()}.to(d) for d in [{self.device()}, {self.device()}]]")
            else:
                self.emit(indent, f"{name} = {{k: {self.tensor()} * k for k in range({self.c.integer(0, 20)})}}")
            self.emit(indent, f"rows.extend({name})")
        elif kind == 8:  # a closure over a device
            fn = self.fresh("make")
            self.emit(indent, f"def {fn}(dev={self.device()}):\n    def inner(x):\n        return x.to(dev)\n"
                              f"    return inner")
            name = self.fresh()
            self.emit(indent, f"{name} = {fn}()({self.tensor()})")
            self.tensors.append(name)
        elif kind == 9:  # a module class
            cls = self.fresh("Net")
            self.emit(indent, f"class {cls}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
                              f"        self.fc = nn.Linear(4, 4)\n        self.buf = torch.zeros(4)\n\n"
                              f"    def forward(self, x):\n        return self.fc(x) + self.buf")
            model, name = self.fresh("model"), self.fresh()
            self.emit(indent, f"{model} = {cls}().to({self.device()})")
            self.emit(indent, f"{name} = {model}({self.tensor()})")
            self.tensors.append(name)
        elif kind == 10:  # recursion
            fn, name = self.fresh("rec"), self.fresh()
            self.emit(indent, f"def {fn}(x, n):\n    if n <= 0:\n        return x\n"
                              f"    return {fn}(x.to({self.device()}) + 1, n - 1)")
            self.emit(indent, f"{name} = {fn}({self.tensor()}, {self.c.choice(('3', 'n', '10 ** 20'))})")
            self.tensors.append(name)
        elif kind == 11:  # decorators
            fn, name = self.fresh("step"), self.fresh()
            decorator = self.c.choice(("@torch.no_grad()", "@functools.lru_cache(maxsize=None)", "@traced",
                                       "@torch.inference_mode()"))
            self.emit(indent, f"{decorator}\ndef {fn}(x):\n    return x.to({self.device()}) * 2")
            self.emit(indent, f"{name} = {fn}({self.tensor()})")
            self.tensors.append(name)
        elif kind == 12:  # match
            self.emit(indent, f"match {self.c.choice(('mode', 'device', 'n'))}:")
            for pattern in ('"cuda"', '"cpu" | "mps"', "0", "_"):
                self.emit(indent + 1, f"case {pattern}:")
                self.block(indent + 2, depth + 1, 1, in_loop)
        elif kind == 13:  # walrus
            name = self.fresh()
            self.emit(indent, f"if ({name} := {self.tensor_expr()}) is not None:")
            self.tensors.append(name)
            self.block(indent + 1, depth + 1, 1, in_loop)
        elif kind == 14:  # a dict of rows under optional imports
            var = self.fresh("lib")
            self.emit(indent, f"for {var} in [np, scipy, mpmath, torch]:")
            self.emit(indent + 1, f"if {var} is None:\n    continue")
            self.emit(indent + 1, f"table.setdefault(str({var}), []).append({{'lib': {var}, "
                                  f"'x': {self.tensor()}}})")
            self.block(indent + 1, depth + 1, 1, in_loop=True)
        elif kind == 15:  # if / else over the world
            self.emit(indent, "if torch.cuda.is_available():")
            self.block(indent + 1, depth + 1, 1, in_loop)
            self.emit(indent, "else:")
            self.block(indent + 1, depth + 1, 1, in_loop)
        else:  # a while loop with a counter
            self.emit(indent, "k = 0\nwhile k < n:")
            self.block(indent + 1, depth + 1, self.c.integer(1, 2), in_loop=True)
            self.emit(indent + 1, "k += 1")


PRELUDE = """\
import functools

import torch
from torch import nn

try:
    import numpy as np
except ImportError:
    np = None
try:
    import scipy
except ImportError:
    scipy = None
try:
    import mpmath
except ImportError:
    mpmath = None
lib = None


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


n = 4
order = 10 ** 20
mode = "cuda"
scale = 0.5
device = "cpu"
rows = []
table = {}
base = torch.zeros(4)
"""


def generate(chooser: Chooser, max_statements: int = 40) -> str:
    """One program: the prelude (imports, optional imports, helpers), then up to ``max_statements`` drawn."""
    writer = _Writer(chooser, max_statements)
    writer.emit(0, PRELUDE)
    while writer.budget > 0:
        writer.statement(0, 0)
    source = "\n".join(writer.lines) + "\n"
    compile(source, "<generated>", "exec")  # always valid Python (a generator bug fails here, loudly)
    return source


def generate_seeded(seed: int, max_statements: int = 40) -> str:
    return generate(RandomChooser(seed), max_statements)


def hypothesis_chooser(draw: Callable) -> Chooser:
    """A :class:`Chooser` over Hypothesis's ``draw`` (in a ``@st.composite`` or with ``st.data()``)."""
    from hypothesis import strategies as st

    class _Drawn:
        def choice(self, options: Sequence[T]) -> T:
            return draw(st.sampled_from(list(options)))

        def integer(self, low: int, high: int) -> int:
            return draw(st.integers(low, high))

    return _Drawn()
