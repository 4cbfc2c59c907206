"""A backend-agnostic reverse-mode tape over the executors' primitive ops.

Every op on a tracked autodiff float adds a :class:`Node`. A node knows its
parents, how to recompute its output from theirs (``forward``) and how to turn
the output's gradient into its parents' (``backward``), all through the
executor API, so NdArray and Flex get gradients exactly as torch backends do.

A backward pass consumes the graph it walks, as burn-autodiff's server does (runtime/server.rs
``backward`` removes every traversed node's step, ``cleanup`` then frees the graphs that hang from
a consumed node): a later backward whose root, or any op node below it, was consumed fails (see
:func:`unavailable`). Tracked leaves may take part in any number of passes.

Checkpointing (Burn's ``CheckpointingStrategy``):

* ``Disabled``: a node stores the values its backward needs (its inputs and/or
  its output) when it is created.
* ``Balanced``: compute-bound nodes (matmul) and values used by two or more
  ops store their output; other memory-bound nodes (elementwise, shape ops)
  store nothing and their values
  are recomputed in the backward pass from the nearest stored ancestor, each
  segment once, and freed as soon as the pass is past them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from .dataplane import transfer
from .executors import Executor
from .semantics import CheckpointingStrategy

_node_ids = itertools.count(1)

Prim = Any
Backward = Callable[[Executor, Prim, Sequence[Prim], Prim], Sequence[Prim | None]]


class Node:
    """One value on the tape: a leaf, a constant input, or an op result (:func:`record` sets the
    same fields without calling ``__init__``: a new field goes in both)."""

    __slots__ = ("id", "parents", "forward", "backward", "value", "exec", "requires_grad",
                 "needs_inputs", "needs_output", "name", "shape", "consumers", "consumed", "__weakref__")

    def __init__(self, exec_: Executor, *, value: Prim = None, requires_grad: bool = False,
                 parents: tuple[Node, ...] = (), forward: Callable[..., Prim] | None = None,
                 backward: Backward | None = None, needs_inputs: bool = False,
                 needs_output: bool = False, name: str = "leaf", shape: tuple[int, ...] = ()) -> None:
        self.id = next(_node_ids)
        self.exec = exec_
        self.value = value
        self.requires_grad = requires_grad
        self.parents = parents
        self.forward = forward
        self.backward = backward
        self.needs_inputs = needs_inputs
        self.needs_output = needs_output
        self.name = name
        self.shape = shape
        self.consumers = 0  # ops recorded with this node as a parent
        self.consumed = False  # walked by a backward pass: its step is gone

    @property
    def is_leaf(self) -> bool:
        return not self.parents


_new_node = object.__new__


def leaf(exec_: Executor, value: Prim) -> Node:
    """A tracked leaf (``require_grad``): gradients are collected for it."""
    return Node(exec_, value=value, requires_grad=True, shape=exec_.shape(value))


def constant(exec_: Executor, value: Prim) -> Node:
    """An untracked input of a recorded op: its value is kept, no gradient flows to it."""
    return Node(exec_, value=value, name="const", shape=exec_.shape(value))


def record(name: str, exec_: Executor, parents: tuple[Node, ...], out: Prim,
           forward: Callable[..., Prim], backward: Backward, needs_inputs: bool,
           needs_output: bool, compute_bound: bool, strategy: CheckpointingStrategy | None) -> Node:
    """Add an op node; which values it keeps depends on the checkpointing strategy."""
    # Node's fields set directly: the keyword-argument call costs a good part of a small op's dispatch
    node = _new_node(Node)
    node.id = next(_node_ids)
    node.exec, node.requires_grad, node.parents, node.forward, node.backward = exec_, True, parents, forward, backward
    node.needs_inputs, node.needs_output, node.name, node.shape = needs_inputs, needs_output, name, exec_.shape(out)
    node.consumers, node.consumed = 0, False
    if strategy is CheckpointingStrategy.BALANCED:
        node.value = out if compute_bound else None  # a checkpoint: recomputation starts from here
    else:
        node.value = out if needs_output else None
    return node


def link_parents(parents: tuple[Node, ...], values: Sequence[Prim], strategy: CheckpointingStrategy | None,
                 needs_inputs: bool) -> None:
    """Count the new consumer of each parent and keep the parent values the strategy wants kept.

    ``Disabled``: an op that needs its inputs makes its parents keep their values.
    ``Balanced``: a value used by two or more ops (a residual stream, a shared activation) is kept
    as a checkpoint: recomputing it for every consumer would chain recomputation across layers.
    """
    balanced = strategy is CheckpointingStrategy.BALANCED
    for parent, value in zip(parents, values, strict=True):
        parent.consumers += 1
        if parent.value is None and (parent.consumers > 1 if balanced else needs_inputs):
            parent.value = value


class _Values:
    """Values needed during one backward pass: stored, or recomputed and cached."""

    def __init__(self) -> None:
        self.cache: dict[int, Prim] = {}
        self.recomputed = 0

    def get(self, node: Node) -> Prim:
        if node.value is not None:
            return node.value
        hit = self.cache.get(node.id)
        if hit is not None:
            return hit
        # Walk up to the nearest ancestors with a value, then run the segment forward once.
        pending, order, seen = [node], [], set()
        while pending:
            current = pending.pop()
            if current.id in seen or current.value is not None or current.id in self.cache:
                continue
            seen.add(current.id)
            order.append(current)
            pending.extend(current.parents)
        for current in sorted(order, key=lambda n: n.id):  # ids grow in creation order
            inputs = [self.get_known(p) for p in current.parents]
            self.cache[current.id] = current.forward(*inputs)
            self.recomputed += 1
        return self.cache[node.id]

    def get_known(self, node: Node) -> Prim:
        return node.value if node.value is not None else self.cache[node.id]

    def release(self, node: Node) -> None:
        self.cache.pop(node.id, None)


class Gradients:
    """The gradients of one backward pass, keyed by tracked leaf."""

    def __init__(self, grads: dict[int, tuple[Prim, Executor]]) -> None:
        self._grads = grads
        self.recomputed = 0

    def get(self, node_id: int) -> tuple[Prim, Executor] | None:
        return self._grads.get(node_id)

    def pop(self, node_id: int) -> tuple[Prim, Executor] | None:
        return self._grads.pop(node_id, None)

    def put(self, node_id: int, grad: Prim, exec_: Executor) -> None:
        self._grads[node_id] = (grad, exec_)

    def __len__(self) -> int:
        return len(self._grads)

    def __repr__(self) -> str:
        return f"Gradients({len(self._grads)} tensors)"


def _topological(root: Node) -> list[Node]:
    """Nodes that need a gradient, parents before children (iterative: chains can be deep)."""
    order: list[Node] = []
    state: dict[int, bool] = {}
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node.id in state or not node.requires_grad:
            continue
        state[node.id] = True
        stack.append((node, True))
        stack.extend((p, False) for p in node.parents if p.requires_grad and p.id not in state)
    return order


def unavailable(root: Node) -> bool:
    """Whether a backward pass from ``root`` finds a graph an earlier pass consumed.

    The root's own step is gone (``Option::expect`` in server.rs ``backward``), or an op node below it
    was consumed: Burn's memory management frees the graphs built on a consumed node once no tensor
    handle keeps that node (``free_unavailable_nodes``), which in Rust is the usual case (tensors are
    moved into the ops that use them); Python names keep every handle alive, so the shim takes the
    Rust program's view. A consumed tracked leaf is fine: its step does nothing, the ops above it
    write its gradient.
    """
    return root.consumed or any(node.consumed and not node.is_leaf for node in _topological(root))


def backward(root: Node, seed: Prim) -> Gradients:
    """Gradients of ``root`` (seeded with ``seed``) for every tracked leaf below it; consumes the graph."""
    order = _topological(root)
    for node in order:
        node.consumed = True
    grads: dict[int, Prim] = {root.id: seed}
    values = _Values()
    leaves: dict[int, tuple[Prim, Executor]] = {}
    for node in reversed(order):
        grad = grads.pop(node.id, None)
        if grad is None:
            continue
        if node.is_leaf:
            leaves[node.id] = (grad, node.exec)
            continue
        inputs = [values.get(p) for p in node.parents] if node.needs_inputs else []
        out = values.get(node) if node.needs_output else None
        parent_grads = node.backward(node.exec, grad, inputs, out)
        for parent, parent_grad in zip(node.parents, parent_grads, strict=True):
            if parent_grad is None or not parent.requires_grad:
                continue
            if node.exec.shape(parent_grad) != parent.shape:
                parent_grad = node.exec.sum_to_shape(parent_grad, parent.shape)  # undo broadcasting
            if parent.exec is not node.exec:
                parent_grad = transfer(parent_grad, node.exec, parent.exec)  # back to the source device
            previous = grads.get(parent.id)
            grads[parent.id] = parent_grad if previous is None else parent.exec.add(previous, parent_grad)
        values.release(node)
    result = Gradients(leaves)
    result.recomputed = values.recomputed
    return result
