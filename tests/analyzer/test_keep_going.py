"""The analysis goes on past a call that fails on every path: the bugs after it are reported in the same run.

A failing call is reported, then the path continues with the result the user meant it to have (an op's
result on its first operand's device, a move's result on its target), so an error in one function does not
hide the bugs of the functions that run after it, and ``# noqa`` on the first finding silences that line only.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from devicelint.cli import main
from devicelint.runner import check_source


@pytest.fixture(autouse=True)
def _cache_in_tmp(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVICELINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))


def lint(root: Path, capsys: pytest.CaptureFixture, files: dict[str, str], *targets: str) -> list[str]:
    """``check`` on the files written under ``root``: the findings as ``file:row: code [severity]``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    main(["check", "--no-cache", "--output-format", "concise", "-q",
          *(str(root / t) for t in targets or [""])])
    out = capsys.readouterr().out
    found = []
    for line in out.splitlines():
        where, _, rest = line.partition(": ")
        file, row = Path(where.rsplit(":", 2)[0]).name, where.rsplit(":", 2)[1]
        code, severity = rest.split(" ")[:2]
        found.append(f"{file}:{row}: {code} {severity}")
    return sorted(found, key=lambda f: (f.split(":")[0], int(f.split(":")[1])))


TORCH_ONE_PATH = """\
    import torch


    def main():
        weights = torch.randn(4, 4, device="cuda")
        batch = torch.randn(8, 4)
        hidden = batch @ weights{noqa}
        scale = torch.ones(4)
        scaled = hidden * scale.cuda()
        bias = torch.zeros(4)
        out = scaled.cuda() + bias
        return out.sum()


    main()
    """


def test_torch_bugs_after_an_error_in_one_path(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    found = lint(tmp_path, capsys, {"train.py": TORCH_ONE_PATH.format(noqa="")})
    # past the failing matmul the result is where the user meant it, on the GPU (the CPU batch is the operand
    # left behind): the product with the cuda scale is fine, the bias left on the CPU is a bug of its own
    assert found == ["train.py:7: MV201 [error]", "train.py:11: MV201 [error]"]


def test_torch_noqa_silences_its_line_only(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    found = lint(tmp_path, capsys, {"train.py": TORCH_ONE_PATH.format(noqa="  # noqa: MV201")})
    assert found == ["train.py:11: MV201 [error]"]


TORCH_FUNCTIONS = """\
    import torch
    import torch.nn as nn


    def encode(model, batch):
        return model(batch)


    def loss_of(features, labels):
        return nn.functional.cross_entropy(features, labels.cuda())


    def report(loss):
        grad_norm = torch.zeros(1, device="cuda")
        return (loss + torch.ones(1)).item(), grad_norm.numpy()


    model = nn.Linear(4, 3).cuda()
    features = encode(model, torch.randn(2, 4))  # noqa: MV202
    loss = loss_of(features, torch.tensor([0, 1]).cpu())
    print(report(loss))
    """


def test_torch_bugs_in_later_functions(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    found = lint(tmp_path, capsys, {"train.py": TORCH_FUNCTIONS})
    # the first bug is silenced; the functions that run after it are still analysed with cuda features
    assert found == ["train.py:15: MV201 [error]", "train.py:15: MV203 [error]"]


def test_torch_bugs_across_modules(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    files = {
        "proj/pyproject.toml": "[project]\nname = 'proj'\n",
        "proj/steps.py": """\
            import torch


            def embed(table, ids):
                return table[ids]


            def pool(vectors):
                mask = torch.ones(vectors.shape[0])
                return (vectors * mask[:, None]).sum(0)
            """,
        "proj/main.py": """\
            import torch

            from steps import embed, pool

            table = torch.randn(10, 4, device="cuda")
            ids = torch.tensor([1, 2, 3], device="cuda")
            vectors = embed(table, ids) + torch.zeros(3, 4)  # noqa: MV201
            pooled = pool(vectors)
            print(pooled.numpy())
            """,
    }
    found = lint(tmp_path, capsys, files, "proj")
    assert found == ["main.py:9: MV203 [error]", "steps.py:10: MV201 [error]"]


SHIM_PROGRAM = """\
    from runtime_shim import Device, Tensor


    def features(x, device):
        return x.to_device(device){noqa}


    def head(h):
        bias = Tensor.zeros([3], Device.flex())
        return h + bias


    def export(h):
        return h.backward()


    trained = Tensor.random([3], Device.flex().autodiff()).require_grad()
    h = features(trained * 2.0, Device.ndarray())
    out = head(h)
    export(out)
    """


def test_shim_bugs_after_an_error(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    found = lint(tmp_path, capsys, {"run.py": SHIM_PROGRAM.format(noqa="")})
    assert found == ["run.py:5: MV102 [error]", "run.py:10: MV105 [error]", "run.py:14: MV108 [error]"]
    found = lint(tmp_path, capsys, {"run.py": SHIM_PROGRAM.format(noqa="  # noqa")})
    assert found == ["run.py:10: MV105 [error]", "run.py:14: MV108 [error]"]


def test_a_later_site_is_judged_on_the_paths_past_the_failure(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture) -> None:
    program = """\
        import sys

        import torch


        x = torch.randn(4)
        w = torch.randn(4, device="cuda")
        y = x * w
        z = torch.ones(4, device="cuda") if len(sys.argv) > 1 else torch.ones(4)
        a = y + torch.ones(4)
        b = y + z
        """
    found = lint(tmp_path, capsys, {"paths.py": program})
    # y is on the GPU on every path past the failing product (the CPU x is the operand left behind): a CPU operand
    # fails there on every path, an error; with z, some paths only
    assert found == ["paths.py:8: MV201 [error]", "paths.py:10: MV201 [error]", "paths.py:11: MV201 [warning]"]


def test_a_handled_failure_still_ends_its_path(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    program = """\
        import torch


        x = torch.randn(4)
        try:
            y = x.cuda() + x
            z = y + torch.ones(4)
        except RuntimeError:
            y = x
        print((y + torch.ones(4)).sum())
        """
    # the program goes on in the handler: the code after the failing call in the try body never runs
    assert lint(tmp_path, capsys, {"fallback.py": program}) == ["fallback.py:6: MV201 [error]"]


def test_a_failure_in_a_callee_inside_a_try_ends_the_path(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    program = """\
        import torch


        def normalise(x, mean, std):
            return (x - mean) / std


        x = torch.randn(4, device="cuda")
        try:
            print(normalise(x, torch.zeros(4), torch.ones(4)))
        except RuntimeError:
            print(normalise(x, torch.zeros(4, device="cuda"), torch.ones(4, device="cuda")))
        """
    # in the try, the subtraction's failure goes to the handler: the division never runs with the CPU std; the
    # subtraction's operands both come from the call, where it is reported
    assert lint(tmp_path, capsys, {"norm.py": program}) == ["norm.py:10: MV201 [error]"]
    # outside any try, the analysis goes on to the division, which fails too (the CPU std): both failures come
    # from what the call passes, so they are one finding there, the other failing operation a related location
    outside = program.replace("try:", "if True:").replace("except RuntimeError:", "if True:")
    assert lint(tmp_path, capsys, {"norm.py": outside}) == ["norm.py:10: MV201 [error]"]
    [finding] = check_source(textwrap.dedent(outside), "norm.py").findings
    assert "and fails at 1 more call inside" in finding.message


def test_a_later_iteration_past_the_failure_does_not_make_it_a_warning(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    program = """\
        import torch
        from torch import nn

        layers = [nn.Linear(4, 4), nn.Linear(4, 4)]
        x = torch.randn(2, 4).cuda()
        for layer in layers:
            x = layer(x)
        """
    # the first iteration fails on every path; the second runs only past that failure (with the CPU output
    # the layer was meant to give) and would pass: the site is still an error
    assert lint(tmp_path, capsys, {"loop.py": program}) == ["loop.py:7: MV202 [error]"]


GENERATE = """\
    import torch
    from torch import nn


    class LM(nn.Module):
        def __init__(self, vocab=20, dim=8):
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.head = nn.Linear(dim, vocab)

        def forward(self, idx):
            return self.head(self.embed(idx))


    @torch.no_grad()
    def generate(model, idx, steps):
        for _ in range(steps):
            logits = model(idx)[:, -1, :]
            nxt = torch.multinomial(torch.softmax(logits, dim=-1), 1)
            idx = torch.cat([idx, nxt], dim=1)
        return idx


    model = LM().cuda()
    start = torch.zeros(1, 1, dtype=torch.long)
    out = generate(model, start, 5)
    {after}
    """


def test_a_failure_over_the_same_tensor_past_the_first_is_one_finding(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture) -> None:
    # the embedding refuses the CPU start tokens; past it the concatenation meets them again next to what the model
    # was meant to give: the same root cause, reported once at the call that passes them (an error: every run of
    # the loop fails, the next iteration exists only past the failure), the concatenation a related location
    program = GENERATE.format(after="print(out.shape)")
    assert lint(tmp_path, capsys, {"gen.py": program}) == ["gen.py:26: MV202 [error]"]
    [finding] = check_source(textwrap.dedent(program), "gen.py").findings
    assert finding.inner is not None and finding.inner.row == 12
    assert [(r.row, r.message) for r in finding.related if "same tensor" in r.message] == [
        (20, "fails here too, over the same tensor")]


def test_an_independent_bug_past_the_first_is_still_reported(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # a new CPU tensor compared with the GPU output is a bug of its own
    program = GENERATE.format(after="print((out == torch.ones(1, 6, dtype=torch.long)).all())")
    assert lint(tmp_path, capsys, {"gen.py": program}) == ["gen.py:26: MV202 [error]", "gen.py:27: MV201 [error]"]


def test_a_later_use_of_the_tensor_left_behind_is_the_same_finding(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    program = """\
        import torch


        def main():
            weights = torch.randn(4, 4, device="cuda")
            batch = torch.randn(8, 4)
            hidden = batch @ weights
            mixed = hidden + batch
            return mixed.sum()


        def scaled(a, b):
            return a * b


        main()
        gpu = torch.ones(3, device="cuda")
        cpu = torch.ones(3)
        scaled(gpu, cpu)
        scaled(gpu * 2, cpu)
        """
    # ``hidden`` is what the product was meant to give, from the CPU batch it left behind: adding that batch again
    # is the same mistake. Two calls that each pass the CPU tensor are two findings, each fixed at its call.
    found = lint(tmp_path, capsys, {"same.py": program})
    assert found == ["same.py:7: MV201 [error]", "same.py:19: MV201 [error]", "same.py:20: MV201 [error]"]
    first = next(d for d in check_source(textwrap.dedent(program), "same.py").findings if d.row == 7)
    assert [r.row for r in first.related if "same tensor" in r.message] == [8]


def test_the_same_tensor_met_again_in_the_calling_frame_is_the_same_finding(tmp_path: Path,
                                                                            capsys: pytest.CaptureFixture) -> None:
    # after the call, the CPU start tokens meet what ``generate`` was meant to return: still the first failure's
    # root cause, listed by its finding (it runs after that failure, not before: no finding of its own)
    program = GENERATE.format(after="print(torch.cat([start, out], dim=1).shape)")
    assert lint(tmp_path, capsys, {"gen.py": program}) == ["gen.py:26: MV202 [error]"]
    [finding] = check_source(textwrap.dedent(program), "gen.py").findings
    assert [r.row for r in finding.related if "same tensor" in r.message] == [20, 27]


DISTILL = """\
    import torch
    import torch.nn as nn
    import torch.nn.functional as F


    def make_teacher():
        return nn.Sequential(nn.Linear(10, 64), nn.ReLU(), nn.Linear(64, 5)).eval()


    def main():
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        student = nn.Linear(10, 5).to(device)
        teacher = make_teacher()
        x = torch.randn(8, 10).to(device)
        with torch.no_grad():
            t_logits = teacher(x)
        loss = F.kl_div(F.log_softmax(student(x), 1), F.softmax(t_logits, 1), reduction="batchmean")
        loss.backward()


    main()
"""


def test_a_sequential_past_a_refusing_layer_gives_no_made_up_device(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture) -> None:
    # the teacher's first layer refuses the GPU batch; its later layers would place the output on their CPU weights,
    # where no run puts it: the loss that mixes it with the student's output is not one more finding
    assert lint(tmp_path, capsys, {"kd.py": DISTILL}) == ["kd.py:16: MV202 [warning]"]
    moved = DISTILL.replace("teacher = make_teacher()", "teacher = make_teacher().to(device)")
    assert lint(tmp_path, capsys, {"kd.py": moved}) == []


KEEP_GOING_DATA = Path(__file__).resolve().parents[1] / "data" / "keep_going"


@pytest.mark.parametrize(("program", "root"), [
    # the target network's first layer refuses the GPU batch: its Q-values are unknown, so the `gather` with the
    # GPU actions and the TD target are not findings (its later layers would have put them on their CPU weights)
    ("target_network_left_on_cpu.py", 19),
    # the reloaded model's embedding refuses the GPU ids: adding its CPU positional buffer to that unknown is
    # unknown, not a CPU tensor that the GPU padding mask and the head would then meet
    ("reloaded_model_positional_buffer.py", 25),
])
def test_an_unknown_left_by_a_failure_is_not_placed_by_what_it_meets(program: str, root: int, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture) -> None:
    text = (KEEP_GOING_DATA / program).read_text(encoding="utf-8")
    assert lint(tmp_path, capsys, {program: text}) == [f"{program}:{root}: MV202 [warning]"]

WORKER_DATASET = """\
    import torch
    from torch.utils.data import DataLoader, Dataset


    class Noisy(Dataset):
        def __len__(self):
            return 8

        def __getitem__(self, index):
            noise = torch.randn(4, device="cuda") * 0.1{noqa}
            scaled = noise.clamp(-1, 1)
            fresh = torch.ones(4, device="cuda")
            return scaled.cpu() + fresh.cpu()


    model = torch.nn.Linear(4, 2).cuda()
    for batch in DataLoader(Noisy(), batch_size=4, num_workers=2):
        model(batch.cuda())
    """


def test_a_forked_worker_using_its_cuda_tensor_again_is_one_finding(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture) -> None:
    # the worker dies at its first CUDA call: what it does later with that tensor is the same failure, listed by
    # the first finding; a second tensor it makes on the GPU is a finding of its own
    program = WORKER_DATASET.format(noqa="")
    assert lint(tmp_path, capsys, {"data.py": program}) == ["data.py:10: MV209 [error]", "data.py:12: MV209 [error]"]
    findings = {d.row: d for d in check_source(textwrap.dedent(program), "data.py").findings}
    assert [(r.row, r.column) for r in findings[10].related if "same tensor" in r.message] == [(11, 18), (13, 16)]
    assert [r.row for r in findings[12].related if "same tensor" in r.message] == [13]


def test_noqa_on_a_root_finding_reports_what_it_had_folded(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    # the noqa silences the finding's line only: the concatenation that fails again over the start tokens is then
    # reported on its own line, and the directive is used (no MV902)
    program = GENERATE.format(after="print(out.shape)").replace(
        "out = generate(model, start, 5)", "out = generate(model, start, 5)  # noqa: MV202")
    assert lint(tmp_path, capsys, {"gen.py": program}) == ["gen.py:20: MV201 [error]"]
    silenced_too = program.replace("idx = torch.cat([idx, nxt], dim=1)",
                                   "idx = torch.cat([idx, nxt], dim=1)  # noqa: MV201")
    assert lint(tmp_path, capsys, {"gen.py": silenced_too}) == []


def test_noqa_on_a_worker_finding_makes_the_next_failure_over_its_tensor_the_finding(
        tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    program = WORKER_DATASET.format(noqa="  # noqa: MV209")
    # the first later call over the noise is the finding now, and lists the one after it
    assert lint(tmp_path, capsys, {"data.py": program}) == ["data.py:11: MV209 [error]", "data.py:12: MV209 [error]"]
    main(["check", "--no-cache", "--output-format", "json", str(tmp_path / "data.py")])
    found = {d["location"]["row"]: d for d in json.loads(capsys.readouterr().out)}
    assert [(r["location"]["row"], r["location"]["column"]) for r in found[11]["related"]
            if "here too" in r["message"]] == [(13, 16)]
    # a noqa on that line too: the last one is reported
    both = program.replace("scaled = noise.clamp(-1, 1)", "scaled = noise.clamp(-1, 1)  # noqa: MV209")
    assert lint(tmp_path, capsys, {"data.py": both}) == ["data.py:12: MV209 [error]", "data.py:13: MV209 [error]"]


def test_a_finding_keeps_what_it_folded_through_the_cache() -> None:
    from devicelint.diagnostics import Diagnostic

    [finding] = check_source(textwrap.dedent(GENERATE.format(after="print(out.shape)")), "gen.py").findings
    assert [(f.row, f.code) for f in finding.folded] == [(20, "MV201")]
    assert Diagnostic.from_cache(finding.to_cache()) == finding
