"""Wrappers a training loop is written with keep what they wrap: progress bars (analyzer/models/progress_bars.py)
yield the loader's batches, ``torch.compile``/``torch.jit.script`` give the module itself. Without them the
batches or the model are unknown and the loop's bugs go unseen. (tqdm and rich are not installed in the test
environment; what the bars yield is their argument's elements, by their documented contract.)"""

from __future__ import annotations

import textwrap
from pathlib import Path

from devicelint.runner import check, check_source
from devicelint.settings import Settings

LOOP = """
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    {imports}

    model = torch.nn.Linear(4, 2).cuda()
    loader = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,))), batch_size=4)
    for x, y in {loop}:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y)
"""


def findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("ALL",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics if d.code)


def loop_findings(imports: str, loop: str) -> list[tuple[int, str, str]]:
    return findings(LOOP.format(imports=imports, loop=loop))


def test_the_batches_of_a_loop_behind_a_progress_bar_are_followed() -> None:
    expected = [(9, "MV201", "error")]  # the labels were never moved
    assert loop_findings("from tqdm import tqdm", "tqdm(loader)") == expected
    assert loop_findings("from tqdm.auto import tqdm", "tqdm(loader, total=len(loader), leave=False)") == expected
    assert loop_findings("import tqdm", "tqdm.tqdm(iterable=loader, desc='train')") == expected
    assert loop_findings("from tqdm.notebook import tqdm as progress", "progress(loader)") == expected
    assert loop_findings("from rich.progress import track", "track(loader, description='train')") == expected
    assert loop_findings("try:\n        from tqdm import tqdm\n    except ImportError:\n        tqdm = None",
                         "tqdm(loader)") == [(12, "MV201", "error")]


def test_a_bar_of_the_project_or_of_an_unknown_library_is_not_one() -> None:
    assert loop_findings("from mytools import tqdm", "tqdm(loader)") == []
    assert loop_findings("def tqdm(items):\n        return [(None, None)]", "tqdm(loader)") == []


def test_trange_and_tenumerate_are_their_builtins() -> None:
    assert findings("""
        import torch
        from tqdm import trange
        from tqdm.contrib import tenumerate

        weights = torch.ones(3, device="cuda")
        rows = [torch.zeros(3), torch.zeros(3)]
        for step in trange(2):
            print(step + 1)
        for i, row in tenumerate(rows):
            print(weights * row)
    """) == [(11, "MV201", "error")]


def test_a_compiled_or_scripted_module_is_the_module() -> None:
    assert findings("""
        import torch

        model = torch.compile(torch.nn.Linear(4, 2).cuda(), mode="reduce-overhead")
        scripted = torch.jit.script(torch.nn.Linear(4, 2))
        x = torch.randn(3, 4)
        print(model(x))
        print(scripted(x))
        print(scripted.cuda()(x))
    """) == [(7, "MV202", "error"), (9, "MV202", "error")]


def test_a_compiled_function_runs_its_own_code() -> None:
    assert findings("""
        import torch

        def blend(a, b):
            return a + b

        fast = torch.compile(blend)
        print(fast(torch.ones(2, device="cuda"), torch.ones(2)))
        make = torch.compile(mode="max-autotune")
    """) == [(8, "MV201", "error")]


def test_a_bar_kept_entered_or_wrapped_yields_the_batches() -> None:
    assert findings("""
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        from tqdm.auto import tqdm as progress

        model = torch.nn.Linear(4, 2).cuda()
        loader = DataLoader(TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,))), batch_size=4)
        with progress(loader, desc="train") as bar:
            for x, y in bar:
                loss = torch.nn.functional.cross_entropy(model(x.cuda()), y)
                bar.set_postfix(loss=loss.item())
                bar.set_description(f"{loss.item():.2f}")
        for i, (x, y) in progress(enumerate(loader), total=len(loader)):
            print(i + 1, torch.nn.functional.cross_entropy(model(x.cuda()), y))
        bar = progress(loader)
        for step, (x, y) in enumerate(bar):
            print(step, torch.nn.functional.cross_entropy(model(x.cuda()), y))
    """) == [(10, "MV201", "error"), (14, "MV201", "error"), (17, "MV201", "error")]


def test_a_bar_named_through_a_project_module_is_the_bar(tmp_path: Path) -> None:
    (tmp_path / "common.py").write_text("from tqdm import tqdm\n")
    program = LOOP.format(imports="import common", loop="common.tqdm(loader)")
    (tmp_path / "train.py").write_text(textwrap.dedent(program))
    report = check([str(tmp_path)], Settings(select=("ALL",)))
    assert sorted((d.row, d.code) for d in report.diagnostics if d.code) == [(9, "MV201")]


def test_a_bar_without_an_iterable_and_other_names_of_the_library_are_unknown() -> None:
    assert findings("""
        import torch
        import tqdm

        weights = torch.ones(3, device="cuda")
        with tqdm.tqdm(total=3) as bar:
            for row in bar:
                print(weights * row)
        for row in tqdm.contrib.itertools.product([torch.zeros(3)]):
            print(weights * row)
        print(weights * bar.n, weights * tqdm.__version__)
    """) == []


def test_a_bar_around_a_project_iterable_yields_its_items() -> None:
    assert findings("""
        import torch
        from tqdm import tqdm

        class Batches:
            def __init__(self, n):
                self.n = n

            def __iter__(self):
                for _ in range(self.n):
                    yield torch.randn(4), torch.randint(0, 2, (4,))

        def generated(n):
            for _ in range(n):
                yield torch.randn(4)

        weights = torch.ones(4, device="cuda")
        for x, y in tqdm(Batches(3)):
            print(weights * x)
        bar = tqdm(generated(2), total=2)
        for x in bar:
            print(weights * x)
    """) == [(19, "MV201", "error"), (22, "MV201", "error")]
