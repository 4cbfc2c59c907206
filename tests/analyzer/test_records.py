"""Records and replay buffers of the standard library (analyzer/models/records.py): tensors are followed through
``namedtuple`` records, ``typing.NamedTuple`` fields, ``deque`` and ``random``'s sampling."""

from __future__ import annotations

import textwrap

from devicelint.runner import check_source
from devicelint.settings import Settings


def _reveals(source: str) -> list[str]:
    report = check_source(textwrap.dedent(source), "script.py", Settings(jobs=1))
    return [d.message.removeprefix("reveal_device: ") for d in sorted(report.diagnostics, key=lambda d: d.row)
            if not d.code]


def test_a_namedtuple_record_answers_its_fields_by_name_and_by_index() -> None:
    assert _reveals("""
        from collections import namedtuple
        import collections
        import torch
        from devicelint import reveal_device

        A = namedtuple("A", ["x", "y"])
        B = collections.namedtuple("B", "x, y z", defaults=(torch.zeros(1),))
        a = A(torch.zeros(1, device="cuda"), y=torch.zeros(1))
        b = B(torch.zeros(1), torch.zeros(1, device="cuda"))
        reveal_device(a.x)
        reveal_device(a[1])
        reveal_device(b.y)
        reveal_device(b.z)
        first, second = a
        reveal_device(first)
    """) == ["cuda:0 tensor", "cpu tensor", "cuda:0 tensor", "cpu tensor", "cuda:0 tensor"]


def test_a_replay_memory_keeps_its_transitions_through_deque_sample_and_zip() -> None:
    assert _reveals("""
        import random
        from collections import deque, namedtuple
        import torch
        from devicelint import reveal_device

        T = namedtuple("T", ("state", "reward"))
        memory = deque(maxlen=100)
        memory.append(T(torch.zeros(2, device="cuda"), torch.zeros(1)))
        batch = T(*zip(*random.sample(memory, 1)))
        reveal_device(torch.cat(batch.state))
        reveal_device(torch.cat(batch.reward))
        reveal_device(random.choice(memory).state)
    """) == ["cuda:0 tensor", "cpu tensor", "cuda:0 tensor"]


def test_a_typing_named_tuple_stores_its_fields() -> None:
    assert _reveals("""
        from typing import NamedTuple
        import torch
        from devicelint import reveal_device

        class Step(NamedTuple):
            obs: torch.Tensor
            reward: torch.Tensor

        step = Step(torch.zeros(2, device="cuda"), reward=torch.zeros(1))
        reveal_device(step.obs)
        reveal_device(step.reward)
    """) == ["cuda:0 tensor", "cpu tensor"]


def test_records_that_cannot_be_built_stay_unknown() -> None:
    assert _reveals("""
        from collections import namedtuple
        import torch
        from devicelint import reveal_device

        names = input().split()
        A = namedtuple("A", names)
        B = namedtuple("B", "x y")
        reveal_device(A(torch.zeros(1)).x)
        reveal_device(B(torch.zeros(1)).x)
    """) == ["Unknown", "Unknown"]


def test_a_typing_named_tuple_is_read_by_position_and_replaced() -> None:
    assert _reveals("""
        from typing import NamedTuple
        import torch
        from devicelint import reveal_device

        class Batch(NamedTuple):
            x: torch.Tensor
            y: torch.Tensor

        class Labelled(Batch):
            weight: torch.Tensor  # (a subclass's annotation is not a field)

        b = Batch(torch.zeros(1, device="cuda"), torch.zeros(1))
        x, y = b
        reveal_device(x)
        reveal_device(y)
        reveal_device(b[0])
        reveal_device(b[-1])
        moved = b._replace(y=b.y.cuda())
        reveal_device(moved.y)
        reveal_device(moved[0])
        first, second = Labelled(torch.zeros(1), torch.zeros(1, device="cuda"))
        reveal_device(second)
        one, two, three = b  # (the wrong number of names: Python raises)
        reveal_device(one)
    """) == ["cuda:0 tensor", "cpu tensor", "cuda:0 tensor", "cpu tensor", "cuda:0 tensor", "cuda:0 tensor",
             "cuda:0 tensor", "Unknown"]


def test_a_namedtuple_record_is_replaced_and_named_tuple_samples_collate_to_records() -> None:
    assert _reveals("""
        from collections import namedtuple
        from typing import NamedTuple
        import torch
        from torch.utils.data import DataLoader, Dataset
        from devicelint import reveal_device

        Pair = namedtuple("Pair", "a b")
        p = Pair(torch.zeros(1), torch.zeros(1)).\\
            _replace(a=torch.zeros(1, device="cuda"))
        reveal_device(p.a)
        reveal_device(p[1])

        class Sample(NamedTuple):
            image: torch.Tensor
            label: int

        class Data(Dataset):
            def __len__(self):
                return 4

            def __getitem__(self, i):
                return Sample(torch.zeros(3, device="cuda"), i)

        for images, labels in DataLoader(Data(), batch_size=2):
            reveal_device(images)
            reveal_device(labels)
        for batch in DataLoader([Pair(torch.zeros(3), 1)], batch_size=2):
            reveal_device(batch.a)
    """) == ["cuda:0 tensor", "cpu tensor", "cuda:0 tensor", "cpu tensor", "cpu tensor"]


def test_a_seeded_random_instance_samples_as_the_module_does() -> None:
    assert _reveals("""
        import random
        from collections import deque
        import torch
        from devicelint import reveal_device

        memory = deque(maxlen=100)
        memory.append((torch.zeros(1, device="cuda"), 0))
        rng = random.Random(0)
        state, _ = rng.sample(memory, 1)[0]
        reveal_device(state)
        state, _ = random.SystemRandom().choice(memory)
        reveal_device(state)
        reveal_device(rng.choices(memory, k=2)[1][0])
        reveal_device(rng.random())
    """) == ["cuda:0 tensor", "cuda:0 tensor", "cuda:0 tensor", "Unknown"]
