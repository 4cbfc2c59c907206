"""Hugging Face ``datasets`` (:mod:`analyzer.models.hf_datasets`): a dataset formatted for torch gives CPU
tensors, by row, by column and through a ``DataLoader``; other formats are not followed."""

from __future__ import annotations

import textwrap

import pytest
from devicelint.runner import check_source
from devicelint.settings import Settings


def findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


HEAD = """
    import torch
    from torch.utils.data import DataLoader
    {imports}
    layer = torch.nn.Linear(4, 2).cuda()
    """


@pytest.mark.parametrize(("imports", "make"), [
    ("from datasets import load_dataset", 'load_dataset("csv", data_files="x.csv")["train"]'),
    ("import datasets as hfds", 'hfds.load_dataset("csv", data_files="x.csv", split="train")'),
    ("from datasets import Dataset", 'Dataset.from_dict({"x": [[0.0] * 4] * 8, "y": [0] * 8})'),
])
def test_batches_of_a_dataset_formatted_for_torch_are_on_the_cpu(imports: str, make: str) -> None:
    source = HEAD.format(imports=imports) + f"""
    ds = {make}
    ds.set_format("torch", columns=["x", "y"])
    for batch in DataLoader(ds, batch_size=4):
        layer(batch["x"])
        layer(batch["x"].cuda())
    """
    assert findings(source) == [(10, "MV202", "error")]


def test_rows_columns_and_slices_of_a_formatted_dataset() -> None:
    source = HEAD.format(imports="from datasets import load_dataset") + """
    ds = load_dataset("imdb", split="train").with_format("torch")
    layer(ds["x"])
    layer(ds[0]["x"])
    layer(ds[:4]["x"])
    ds[0]["label"] + torch.ones(2, device="cuda")
    """
    # a row's label may be 0-dim (a CPU scalar mixes with CUDA tensors): not reported
    assert findings(source) == [(8, "MV202", "error"), (9, "MV202", "error"), (10, "MV202", "error")]


@pytest.mark.parametrize("formatting", [
    "",  # Python rows (what a DataLoader makes of them is not followed)
    'ds.set_format("numpy")',
    'ds = ds.with_format("torch", device="cuda")',  # (``from_numpy`` ignores the device: not known)
    'ds.set_format("torch"); ds.reset_format()',
    'ds = ds.with_format("torch"); ds.set_format(type=None)',
])
def test_other_formats_are_not_followed(formatting: str) -> None:
    source = HEAD.format(imports="from datasets import load_dataset") + f"""
    ds = load_dataset("imdb", split="train")
    {formatting}
    for batch in DataLoader(ds, batch_size=4):
        layer(batch["x"])
    """
    assert findings(source) == []


def test_the_format_is_kept_by_map_filter_and_splits() -> None:
    source = HEAD.format(imports="from datasets import load_dataset") + """
    splits = load_dataset("imdb").with_format("torch")
    train = splits.map(lambda b: b, batched=True).filter(lambda r: True)["train"].shuffle(seed=0)
    parts = train.train_test_split(test_size=0.1)
    layer(parts["test"]["x"])
    """
    assert findings(source) == [(10, "MV202", "error")]
