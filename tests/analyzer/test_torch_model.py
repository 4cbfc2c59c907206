"""The PyTorch model of the engine, construct by construct, and the semantics table it lifts."""

from __future__ import annotations

import textwrap

import pytest
from devicelint.runner import check_source
from devicelint.settings import Settings

from runtime_shim import torch_semantics as T


def findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


def messages(source: str) -> list[str]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    return [d.message for d in report.diagnostics]


# --- the table ----------------------------------------------------------------------------------------


def test_scalar_exemption_and_precedence() -> None:
    cuda, cpu0, cpu1 = T.Operand("cuda:0", 2), T.Operand("cpu", 0), T.Operand("cpu", 1)
    assert T.mismatch_code([cuda, cpu0]) is None
    assert T.mismatch_code([cuda, cpu1]) == "MV201"
    assert T.mismatch_code([cpu1, T.Operand("cuda:0", 2, in_module=True)]) == "MV202"
    assert T.mismatch_code([cuda, T.Operand("cpu", 1, is_index=True)], "index_select") == "MV207"
    assert T.mismatch_code([T.Operand("cuda:0", 2), T.Operand("cuda:1", 2)]) == "MV201"


def test_indexing_accepts_a_cpu_index_anywhere_but_not_a_gpu_index_elsewhere() -> None:
    assert T.mismatch_code([T.Operand("cuda:0", 2), T.Operand("cpu", 1, is_index=True)], "__getitem__") is None
    assert T.mismatch_code([T.Operand("cpu", 2), T.Operand("cuda:0", 1, is_index=True)], "__getitem__") == "MV207"


def test_numpy_checks_the_device_before_the_graph() -> None:
    assert T.numpy_outcome("cuda:0", True, True)[0] == "MV203"
    assert T.numpy_outcome("cpu", True, True)[0] == "MV204"
    assert T.numpy_outcome("cpu", True, False) is None  # under no_grad
    assert T.dlpack_outcome(True)[0] == "MV208"  # under no_grad too
    assert T.move_keeps_leaf("cpu", "cpu") and not T.move_keeps_leaf("cpu", "cuda:0")


# --- the engine ---------------------------------------------------------------------------------------


def test_default_device_follows_set_default_device_and_device_blocks() -> None:
    assert findings("""
        import torch
        torch.set_default_device("cuda")
        a = torch.ones(3)
        torch.set_default_device(None)
        b = torch.ones(3)
        try:
            c = a + b
        except RuntimeError:
            c = a
        with torch.device("cuda:1"):
            d = torch.ones(3)
        e = c * d
        """) == [(8, "MV201", "error"), (13, "MV201", "error")]


def test_grad_mode_blocks_and_decorators() -> None:
    assert findings("""
        import torch
        w = torch.ones(3, requires_grad=True)
        with torch.no_grad():
            (w * 2).numpy()

        @torch.inference_mode()
        def export(t):
            return t.numpy()

        def leak(t):
            return t.numpy()

        export(w * 2)
        leak(w * 2)
        """) == [(12, "MV204", "error")]


def test_a_module_moved_in_place_carries_its_layers_and_parameters() -> None:
    assert findings("""
        import torch
        from torch import nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 2)
                self.scale = nn.Parameter(torch.ones(2))
                self.cache = torch.zeros(2)  # a plain attribute: it does not move

            def forward(self, x):
                return self.proj(x) * self.scale + self.cache

        head = Head()
        head.to("cuda:0")
        out = head(torch.randn(3, 4, device="cuda:0"))
        """) == [(13, "MV201", "error")]


def test_cuda_is_available_is_two_worlds_not_a_join() -> None:
    source = """
        import torch
        from torch import nn
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = nn.Linear(4, 2).to(device)
        x = torch.randn(3, 4).to(device)
        y = model(x)
        labels = torch.zeros(3)
        loss = (y.sum(dim=1) - labels).pow(2).mean()
        """
    assert findings(source) == [(9, "MV201", "warning")]  # the moved pair agrees in both worlds
    assert "when CUDA is available" in messages(source)[0]


def run_on(source: str, target: str) -> list[tuple[int, str, str]]:
    settings = Settings(select=("MV2",), target_device=target)
    report = check_source(textwrap.dedent(source), "prog.py", settings)
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


WORLD_SOURCE = """
    import torch
    from torch import nn
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = nn.Linear(4, 2).to(device)
    batch = torch.randn(3, 4)
    prediction = model(batch)
    weights = torch.ones(2, device=device)
    scaled = prediction * weights
    """


def test_a_target_device_analyzes_its_world_only() -> None:
    # both answers: the unmoved batch fails where CUDA is available (a warning naming that world)
    assert run_on(WORLD_SOURCE, "auto") == [(7, "MV202", "warning")]
    # "this code trains on CUDA": the failing world is the only one, so it fails on every path
    assert run_on(WORLD_SOURCE, "cuda") == [(7, "MV202", "error")]
    # on the CPU the model and its batch agree
    assert run_on(WORLD_SOURCE, "cpu") == []


def test_a_target_device_picks_device_choices_on_unknown_flags() -> None:
    source = """
        import sys
        import torch
        use_gpu = len(sys.argv) > 1
        device = torch.device("cuda" if use_gpu else "cpu")
        x = torch.randn(3).to(device)
        y = x + torch.randn(3)
        """
    assert run_on(source, "cuda") == [(7, "MV201", "error")]
    assert run_on(source, "cpu") == []


def test_target_messages_name_no_world_and_auto_messages_name_it_in_a_few_words() -> None:
    settings = Settings(select=("MV2",), target_device="cuda")
    [target] = check_source(textwrap.dedent(WORLD_SOURCE), "prog.py", settings).diagnostics
    assert target.message == ("`nn.Linear` mixes devices: input cpu tensor (created, line 6), weight cuda:0 tensor "
                              "(nn.Linear created, line 5); move the batch to the model's device "
                              "(a tensor attribute: register it as a buffer)")
    [auto] = messages(WORLD_SOURCE)
    assert "when CUDA is available; ok when CUDA is not available" in auto
    assert "is_available()" not in auto


def test_mismatch_messages_carry_a_fix_hint() -> None:
    source = """
        import torch
        logits = torch.randn(8, 4, device="cuda")
        labels = torch.randint(0, 4, (8,))
        loss = torch.nn.functional.cross_entropy(logits, labels)
        table = torch.randn(100, 16, device="cuda")
        rows = torch.index_select(table, 0, torch.tensor([3, 14]))
        model = torch.nn.Linear(4, 2).cuda()
        out = model(torch.randn(3, 4))
        """
    by_code = {}
    for message, code in zip(messages(source), [c for _r, c, _s in findings(source)], strict=True):
        by_code[code] = message
    assert by_code["MV201"].endswith("`.to(x.device)`")
    assert by_code["MV207"].endswith("`.to(x.device)`")
    assert "move the batch to the model's device" in by_code["MV202"]


def test_device_count_splits_the_cuda_world_into_one_gpu_and_several() -> None:
    source = """
        import torch
        main = "cuda:1" if torch.cuda.device_count() > 1 else "cuda:0"
        a = torch.zeros(2, device=main)
        b = torch.ones(2, device=main)
        same = a + b
        first = torch.ones(2, device="cuda:0")
        mixed = a + first
        """
    # the pair placed by the same answer agrees in every world; cuda:1 meets cuda:0 with several GPUs only
    assert findings(source) == [(8, "MV201", "warning")]
    message = messages(source)[0]
    assert "fails at the top level of prog.py when several GPUs are available" in message
    # (without CUDA the program stops at its first CUDA tensor: that world reaches none of these additions)
    assert "ok when one GPU is available;" in message


def test_the_current_cuda_device_follows_set_device_at_the_top_level_and_device_blocks() -> None:
    pinned = """
        import torch
        torch.cuda.set_device(1)
        w = torch.ones(2).cuda()
        x = torch.ones(2, device="cuda:0")
        y = w + x
        with torch.cuda.device(0):
            z = torch.ones(2, device="cuda") + x
        here = torch.ones(2, device=torch.device("cuda", torch.cuda.current_device())) + w
        """
    assert findings(pinned) == [(6, "MV201", "error")]
    # a set_device inside a function is the process's setting: its callers go on with the device it set
    helper = pinned.replace("torch.cuda.set_device(1)",
                            "def pin():\n            torch.cuda.set_device(1)\n        pin()")
    assert findings(helper) == [(8, "MV201", "error")]
    # one it may or may not have set (an index the analysis does not know): "cuda" is not known after the call
    unknown = pinned.replace("torch.cuda.set_device(1)",
                             "def pin(i):\n            torch.cuda.set_device(i)\n        pin(int(input()))")
    assert findings(unknown) == []
    current = """
        import torch
        torch.cuda.set_device(1)
        x = torch.ones(2, device="cuda:0")
        here = torch.ones(2, device=torch.device("cuda", torch.cuda.current_device())) + x
        """
    assert findings(current) == [(5, "MV201", "error")]


def test_an_optimizers_state_stays_where_it_was_made() -> None:
    resumed = """
        import torch
        from torch import nn
        model = nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        optimizer.load_state_dict({})
        model.cuda()
        optimizer.step()
        """
    assert findings(resumed) == [(8, "MV201", "error")]
    # the state made after the move (or at the first step after it): where the parameters are
    assert findings(resumed.replace("optimizer.load_state_dict({})\n        model.cuda()",
                                    "model.cuda()\n        optimizer.load_state_dict({})")) == []
    assert findings(resumed.replace("optimizer.load_state_dict({})", "pass")) == []
    # the module also moved through another name, or to a device not known: not followed
    alias = resumed.replace("model.cuda()", "other = model\n        other.cuda()\n        model.cuda()")
    assert findings(alias) == []
    part = """
        import torch
        from torch import nn
        model = nn.Sequential(nn.Linear(4, 4), nn.Linear(4, 2))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        model[0].cuda()
        optimizer.load_state_dict({})
        model.cuda()
        optimizer.step()
        """
    assert findings(part) == []  # a layer of it moved through another reference first: where its state is, unknown
    assert findings(resumed.replace("model.cuda()", "model.to(torch.device(input()))")) == []


def test_unknown_stays_silent() -> None:
    assert findings("""
        import torch

        def step(batch, device):
            x = batch.to(device)
            return x + torch.zeros(3)

        def export(t):
            return t.numpy()
        """) == []


@pytest.mark.parametrize(("source", "expected"), [
    ("import torch\nx = torch.randn(2, device='cuda')\nx.cpu()\n", [(3, "MV206", "error")]),
    ("import torch\nx = torch.randn(2)\nx.to(torch.float16)\n", []),  # a cast, not a move
    ("import torch\nfrom torch import nn\nm = nn.Linear(2, 2)\nm.cuda()\n", []),  # modules move in place
])
def test_discarded_moves(source: str, expected: list) -> None:
    assert findings(source) == expected


def test_rows_of_a_tensor_and_index_stores() -> None:
    assert findings("""
        import torch
        scores = torch.randn(4, 3, device="cuda")
        for row in scores:
            try:
                y = row + torch.ones(3)
            except RuntimeError:
                pass
        cpu_t = torch.zeros(5)
        try:
            cpu_t[torch.tensor([1, 2], device="cuda")] = 1.0
        except RuntimeError:
            pass
        scores[torch.tensor([0, 1])] = 2.0  # a CPU index works on any device
        mask = torch.rand(4) > 0.5
        try:
            z = scores * mask[:, None]
        except RuntimeError:
            pass
        """) == [(6, "MV201", "error"), (11, "MV207", "error"), (17, "MV201", "error")]


def test_to_leaves_plain_containers_unless_the_class_registers_modules_otherwise() -> None:
    source = """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = [nn.Linear(4, 4), nn.Linear(4, 4)]
                {registration}

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x

        Net().cuda()(torch.randn(2, 4).cuda())
    """
    assert findings(source.format(registration="")) == [(13, "MV202", "error")]  # a list is not registered
    for registration in ("self.add_module('first', self.blocks[0])", "self.all = nn.ModuleList(self.blocks)",
                         "setattr(self, 'first', self.blocks[0])"):
        assert findings(source.format(registration=registration)) == [], registration  # the same layers may move


def test_loss_class_weights_are_a_buffer_of_the_loss() -> None:
    source = """
        import torch
        from torch import nn

        inputs = torch.randn(4, 3, device="cuda")
        targets = torch.ones(4, 3, device="cuda")
        loss = {loss}
        loss(inputs, targets)
    """
    cpu = "torch.tensor([1.0, 2.0, 3.0])"
    assert findings(source.format(loss=f"nn.BCEWithLogitsLoss(pos_weight={cpu})")) == [(8, "MV202", "error")]
    assert findings(source.format(loss=f"nn.BCEWithLogitsLoss({cpu})")) == [(8, "MV202", "error")]
    assert findings(source.format(loss=f"nn.BCEWithLogitsLoss(weight={cpu}).to('cuda')")) == []  # moved with it
    assert findings(source.format(loss="nn.BCEWithLogitsLoss(weight=None)")) == []
    assert findings(source.format(loss="nn.MSELoss()")) == []
    unknown = findings(source.format(loss="nn.BCEWithLogitsLoss(weight=make_weights())"))
    assert unknown == []  # a weight of unknown device: no verdict


def test_a_layers_later_tensor_arguments_share_its_device() -> None:
    source = """
        import torch
        from torch import nn

        cell = nn.GRUCell(4, 8).cuda()
        x = torch.randn(2, 4, device="cuda")
        h = {hidden}
        cell(x, h)
    """
    assert findings(source.format(hidden="torch.zeros(2, 8)")) == [(8, "MV202", "error")]
    assert findings(source.format(hidden="torch.zeros(2, 8, device='cuda')")) == []
    assert findings(source.format(hidden="initial_state()")) == []  # unknown: the known operands agree
    assert "hx: cpu tensor" in messages(source.format(hidden="torch.zeros(2, 8)"))[0]


def test_numpy_converts_each_tensor_of_a_list_or_tuple() -> None:
    source = """
        import numpy as np
        import torch

        a = torch.ones(2, device="cuda")
        b = torch.ones(2)
        {line}
    """
    assert findings(source.format(line="np.stack((b, a))")) == [(7, "MV203", "error")]  # known items: every path
    assert findings(source.format(line="np.stack([b, b.cpu()])")) == []
    grown = "items = []\nfor _ in range(3):\n    items.append(a)\nnp.mean(items)"
    assert findings(source.format(line=grown.replace("\n", "\n        "))) == [(10, "MV203", "warning")]  # maybe empty
    assert "element: cuda:0 tensor" in messages(source.format(line="np.stack((b, a))"))[0]
    report = check_source(textwrap.dedent(source.format(line="np.stack((b, a))")), "prog.py", Settings(select=("MV2",)))
    assert report.diagnostics[0].fix is None  # `.cpu()` on a tuple is no fix


def test_legacy_tensor_types_and_variable() -> None:
    source = """
        import torch
        from torch.autograd import Variable

        y = torch.randn(3, device="cuda")
        {line}
    """
    assert findings(source.format(line="torch.LongTensor([1, 2, 3]) + y")) == [(6, "MV201", "error")]  # CPU
    assert findings(source.format(line="Variable(torch.randn(3)) + y")) == [(6, "MV201", "error")]
    assert findings(source.format(line="torch.randn(3).type(torch.cuda.FloatTensor) + y")) == []  # moved
    assert findings(source.format(line="torch.randn(3).type('torch.cuda.HalfTensor') + y")) == []
    assert findings(source.format(line="y.type(torch.FloatTensor) + y")) == [(6, "MV201", "error")]  # to the CPU
    assert findings(source.format(line="y.type(torch.float16) + y")) == []  # a cast
    assert findings(source.format(line="y.type(some_type()) + y")) == []  # unknown: no verdict
    default = "torch.set_default_tensor_type(torch.cuda.FloatTensor)\n        torch.zeros(3) + y"
    assert findings(source.format(line=default)) == []  # the default device is the GPU now
    default = "torch.set_default_tensor_type('torch.FloatTensor')\n        torch.zeros(3) + y"
    assert findings(source.format(line=default)) == [(7, "MV201", "error")]
    grad = "w = Variable(torch.randn(3), requires_grad=True).cuda()\n        torch.optim.SGD([w], lr=0.1)"
    assert findings(source.format(line=grad)) == [(7, "MV205", "error")]  # a leaf moved: not a leaf any more


def test_one_parameter_that_always_fails_decides_the_optimizer() -> None:
    source = """
        import torch
        from torch import nn

        scale = nn.Parameter(torch.ones(1)).cuda()
        bias = nn.Parameter(torch.zeros(1, device="cuda"))
        torch.optim.Adam({params}, lr=0.01)
    """
    assert findings(source.format(params="[scale, bias]")) == [(7, "MV205", "error")]  # a known list: every path
    assert findings(source.format(params="[bias]")) == []


def test_a_buffer_assigned_anew_stays_the_modules() -> None:
    source = """
        import torch
        from torch import nn

        class Centering(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("center", torch.zeros(4))
                self.plain = torch.zeros(4)

            def forward(self, x):
                return x - self.{attr}

        layer = Centering().cuda()
        layer.{attr} = torch.zeros(4)
        layer(torch.randn(2, 4, device="cuda"))
    """
    # nn.Module.__setattr__: a buffer (the CPU one stored right before the call: every call fails)
    assert findings(source.format(attr="center")) == [(12, "MV202", "error")]
    assert findings(source.format(attr="plain")) == [(12, "MV201", "error")]  # a plain attribute, never moved


def test_an_in_place_op_returns_the_buffer_itself() -> None:
    assert findings("""
        import torch
        from torch import nn

        class Stats(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("mean", torch.zeros(4))

            def forward(self, x):
                self.mean.mul_(0.9).add_(x.mean(dim=0))
                return x

        Stats()(torch.randn(2, 4, device="cuda"))
    """) == [(11, "MV202", "error")]  # the module is on the CPU, the batch is not: the buffer's module (MV202)


def test_pretrained_embeddings_sit_where_their_table_is() -> None:
    source = """
        import torch
        from torch import nn

        emb = nn.Embedding.from_pretrained({table})
        emb(torch.tensor([1, 4], device="cuda"))
    """
    assert findings(source.format(table="torch.randn(20, 6)")) == [(6, "MV202", "error")]
    assert findings(source.format(table="torch.randn(20, 6, device='cuda')")) == []
    assert findings(source.format(table="load_vectors()")) == []  # unknown table: no verdict


def test_isinstance_of_torch_types_narrows() -> None:
    source = """
        import torch

        def to_device(batch, device):
            if isinstance(batch, dict):
                return {{k: to_device(v, device) for k, v in batch.items()}}
            if isinstance(batch, {kind}):
                return batch.to(device)
            return batch

        moved = to_device({{"x": torch.randn(3), "tag": "a"}}, "cuda")
        moved["x"] + torch.zeros(3, device="cuda")
    """
    assert findings(source.format(kind="torch.Tensor")) == []  # the tensor took the moving branch only
    assert findings(source.format(kind="(torch.Tensor, list)")) == []


def test_a_module_moved_in_place_through_another_reference() -> None:
    source = """
        import torch
        from torch import nn

        class Trainer:
            def __init__(self, model):
                self.model = model

            def setup(self):
                self.model.to("cuda")

            def step(self, x):
                return self.model(x.to("cuda"))

        model = {model}
        trainer = Trainer(model)
        trainer.setup()
        trainer.step(torch.randn(2, 4))
        model(torch.randn(2, 4, device="cuda"))
    """
    assert findings(source.format(model="nn.Linear(4, 1)")) == []  # the trainer's attribute and the caller's name
    assert findings(source.format(model="nn.Sequential(nn.Linear(4, 1))")) == []
    # the same name, before its own move: still reported
    assert findings("""
        import torch
        from torch import nn

        model = nn.Linear(4, 1)
        model(torch.randn(2, 4, device="cuda"))
        model.cuda()
    """) == [(6, "MV202", "error")]


def test_an_attribute_moved_and_stored_back_supersedes_the_old_one() -> None:
    source = """
        import torch
        from torch import nn

        class Scorer:
            def __init__(self):
                self.weights = torch.tensor([0.2, 0.3, 0.5])

            def to(self, device):
                self.weights = self.weights.{move}
                return self

            def score(self, logits):
                return (logits.softmax(-1) * self.weights).sum(-1)

        Scorer().to("cuda").score(torch.randn(4, 3, device="cuda"))
    """
    assert findings(source.format(move="to(device)")) == []  # the other method reads the moved tensor
    assert findings(source.format(move="cpu()")) == [(14, "MV201", "error")]  # moved, but to the CPU


def test_super_to_in_an_override_is_nn_modules() -> None:
    assert findings("""
        import torch
        from torch import nn

        class WithAnchors(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.anchors = torch.linspace(0, 1, 4)

            def to(self, device):
                self.anchors = self.anchors.to(device)
                return super().to(device)

            def forward(self, x):
                return self.fc(x) * self.anchors

        WithAnchors().to("cuda")(torch.randn(2, 4, device="cuda"))
        WithAnchors()(torch.randn(2, 4, device="cuda"))
    """) == [(16, "MV202", "warning")]  # the unmoved one fails (its layer), the moved one does not


# --- autograd state, from bug-report probes ------------------------------------------------------------------


def test_integer_and_boolean_results_never_require_grad() -> None:
    assert findings("""
        import torch
        model = torch.nn.Linear(4, 3)
        out = model(torch.randn(2, 4))
        a = out.argmax(dim=1).numpy()
        b = out.long().numpy()
        c = (out > 0.5).numpy()
        d = out.to(torch.int64).numpy()
        _, predicted = torch.max(out, 1)
        e = predicted.numpy()
        f = out.numpy()
    """) == [(11, "MV204", "error")]


def test_values_and_indices_sit_on_the_input_device() -> None:
    assert findings("""
        import torch
        out = torch.randn(4, 3, device="cuda")
        labels = torch.tensor([0, 1, 2, 0])
        values, order = out.sort(dim=0)
        if values.sum() > 0:
            top = torch.topk(out, 2)[0].numpy()
        _, predicted = torch.max(out.data, 1)
        correct = (predicted == labels).sum()
    """) == [(7, "MV203", "error"), (9, "MV201", "error")]


def test_grad_flags_changed_in_place_are_followed() -> None:
    assert findings("""
        import torch
        w = torch.randn(3, requires_grad=True)
        w.requires_grad_(False)
        a = w.numpy()
        v = torch.randn(3, requires_grad=True)
        v.requires_grad = False
        b = v.numpy()
        u = torch.randn(3, requires_grad=True) * 2
        u.detach_()
        c = u.numpy()
        t = torch.randn(3, requires_grad=True)
        t.requires_grad = True
        d = t.numpy()
    """) == [(14, "MV204", "error")]


def test_moves_under_no_grad_and_identity_casts_keep_a_leaf() -> None:
    assert findings("""
        import torch
        with torch.no_grad():
            w = torch.randn(3, requires_grad=True).cuda()
        opt = torch.optim.SGD([w], lr=0.1)
        v = torch.randn(3, requires_grad=True).float().contiguous()
        opt2 = torch.optim.Adam([v], lr=0.1)
        u = torch.randn(3, device="cuda", requires_grad=True).to(torch.float64)
        opt3 = torch.optim.SGD([u], lr=0.1)
    """) == [(9, "MV205", "error")]


def test_retain_grad_makes_a_non_leafs_grad_readable() -> None:
    assert findings("""
        import torch
        w = torch.randn(3, requires_grad=True).cuda()
        w.retain_grad()
        (w * 2).sum().backward()
        print(w.grad)
    """) == []


def test_assigning_data_moves_the_tensor_in_place() -> None:
    assert findings("""
        import torch
        w = torch.randn(3, requires_grad=True)
        w.data = w.data.cuda()
        x = torch.randn(3, device="cuda")
        y = w * x
        z = w.numpy()
    """) == [(7, "MV203", "error")]


def test_numpy_functions_that_call_the_tensors_own_method_do_not_convert_it() -> None:
    assert findings("""
        import numpy as np
        import torch
        t = torch.randn(3, device="cuda")
        print(np.shape(t), np.ndim(t), np.size(t), np.squeeze(t))
        if t.sum() > 0:
            best = np.argmax(t, axis=0)  # t.argmax(axis=0, out=None) raises a TypeError: numpy converts t
        total = np.mean([t, t])
    """) == [(7, "MV203", "error"), (8, "MV203", "error")]


def test_weights_outside_a_modules_code_are_plain_operands() -> None:
    """PyTorch names the module's weights only while that module runs (MV202); an EMA update between two
    models' parameters, at the top level, is a plain op (MV201)."""
    assert findings("""
        import copy
        import torch
        model = torch.nn.Linear(3, 3).cuda()
        ema = torch.nn.Linear(3, 3)
        with torch.no_grad():
            for e, p in zip(ema.parameters(), model.parameters()):
                e.mul_(0.99).add_(p)
    """) == [(8, "MV201", "error")]


def test_project_modules_inside_a_sequential_move_and_run_with_it() -> None:
    assert findings("""
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x)

        model = nn.Sequential(Block(), nn.ReLU()).cuda()
        ok = model(torch.randn(2, 4, device="cuda"))
        y = model(torch.randn(2, 4))
    """) == [(15, "MV202", "error")]  # Block.forward fails for the CPU input: reported where it is passed


def test_recurrent_layers_return_their_hidden_state_and_named_parameters_pair_names_with_weights() -> None:
    assert findings("""
        import torch
        lstm = torch.nn.LSTM(4, 8, batch_first=True)
        output, (h, c) = lstm(torch.randn(2, 3, 4))
        names = [name for name, p in lstm.named_parameters()]
        if len(names) > 2:
            last = h.numpy()
        weights = {n: p.numpy() for n, p in lstm.named_parameters()}
    """) == [(7, "MV204", "error"), (8, "MV204", "error")]


def test_torch_from_dlpack_exports_a_tensor_through_dlpack() -> None:
    assert findings("""
        import torch
        x = torch.randn(3, requires_grad=True)
        ok = torch.from_dlpack(x.detach())
        y = torch.utils.dlpack.from_dlpack(x * 2)
    """) == [(5, "MV208", "error")]


def test_frozen_weights_leave_outputs_out_of_the_graph() -> None:
    assert findings("""
        import torch
        from torch import nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
                self.scale = nn.Parameter(torch.ones(2))

            def forward(self, x):
                return self.fc(x) * self.scale

        backbone = nn.Linear(4, 4)
        backbone.requires_grad_(False)
        features = backbone(torch.randn(3, 4)).numpy()
        weight = backbone.weight.numpy()
        encoder = nn.Linear(4, 4)
        for p in encoder.parameters():
            p.requires_grad = False
        encoded = encoder(torch.randn(3, 4)).numpy()
        head = Head()
        head.requires_grad_(False)
        scores = head(torch.randn(3, 4)).numpy()
        trained = nn.Linear(4, 4)
        logits = trained(torch.randn(3, 4)).type(torch.LongTensor).numpy()
        raw = trained(torch.randn(3, 4)).numpy()
    """) == [(27, "MV204", "error")]


def test_an_unknown_fill_value_cannot_save_a_mask_on_another_device() -> None:
    assert findings("""
        import math
        import torch
        scores = torch.randn(3, 3, device="cuda")
        mask = torch.tril(torch.ones(3, 3)) == 0
        masked = scores.masked_fill(mask, float("-inf"))
    """) == [(6, "MV201", "error")]


def test_iterating_a_module_list_calls_each_module() -> None:
    assert findings("""
        import torch
        from torch import nn

        class Block(nn.Module):
            def forward(self, x):
                mask = torch.ones(x.size(1), x.size(1)).bool()
                return x.masked_fill(mask, 0.0)

        blocks = nn.ModuleList([Block(), Block()]).to("cuda")
        x = torch.randn(2, 3, 3, device="cuda")
        for block in blocks:
            x = block(x)
    """) == [(8, "MV201", "error")]


def test_an_f_string_of_known_parts_names_a_device() -> None:
    assert findings("""
        import torch
        rank = 1
        model = torch.nn.Linear(4, 2).to(torch.device(f"cuda:{rank}"))
        y = model(torch.randn(3, 4).cuda())
    """) == [(5, "MV202", "error")]


def test_layers_moved_in_place_while_iterating_their_list_are_unknown_there() -> None:
    assert findings("""
        import torch
        from torch import nn
        layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(2)])
        for layer in layers:
            layer.cuda()
        x = torch.randn(2, 4, device="cuda")
        for layer in layers:
            x = layer(x)
    """) == []


def test_a_module_built_and_moved_in_one_expression_has_no_other_reference() -> None:
    assert findings("""
        import torch
        model = torch.nn.Linear(3, 2).cuda()
        x = torch.randn(4, 3).cuda()
        y = model(x)
        model.cpu()
        z = model(x)
    """) == [(7, "MV202", "error")]


def test_a_module_method_called_directly_runs_no_module() -> None:
    """PyTorch's running module is one whose ``__call__`` is on the stack: a metric's ``update`` called by the
    loop mixes its buffer with MV201's text; the same update in ``forward`` is MV202's."""
    assert findings("""
        import torch
        from torch import nn

        class Counts(nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("total", torch.zeros(3))

            def update(self, x):
                self.total += x

            def forward(self, x):
                self.total += x
                return self.total

        x = torch.ones(3, device="cuda")
        Counts().update(x)
        Counts()(x)
    """) == [(11, "MV201", "error"), (14, "MV202", "error")]


def test_parameters_kept_in_a_plain_dict_are_not_the_modules() -> None:
    """PyTorch's running module does not count them among its parameters: the mismatch is MV201's."""
    assert findings("""
        import torch
        from torch import nn

        class Mixer(nn.Module):
            def __init__(self):
                super().__init__()
                self.params = {"w": nn.Parameter(torch.randn(4, 4))}
                self.fc = nn.Linear(4, 4)

            def forward(self, x):
                return self.fc(x) @ self.params["w"]

        model = Mixer().to("cuda")
        y = model(torch.randn(2, 4, device="cuda"))
    """) == [(12, "MV201", "error")]


def test_a_project_modules_parameters_are_its_layers_weights() -> None:
    assert findings("""
        import torch
        from torch import nn

        class Teacher(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Linear(3, 3)
                self.head = nn.Linear(3, 3)

            def forward(self, x):
                return self.head(self.embed(x))

        teacher = Teacher()
        for p in teacher.parameters():
            p.requires_grad = False
        frozen = teacher(torch.randn(2, 3)).numpy()
        student = nn.Sequential(nn.Linear(3, 3))  # (another Teacher would share the frozen layers' creation sites)
        trained = student(torch.randn(2, 3)).numpy()
    """) == [(19, "MV204", "error")]


def test_super_to_in_an_override_moves_self_for_the_rest_of_it() -> None:
    assert findings("""
        import torch
        import torch.nn as nn

        class Detector(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
                self.anchors = torch.zeros(4)

            @property
            def device(self):
                return next(self.parameters()).device

            def to(self, *args, **kwargs):
                out = super().to(*args, **kwargs)
                self.anchors = self.anchors.to(self.proj.weight.device)
                return out

            def forward(self, x):
                return self.proj(x) + self.anchors

        m = Detector().to("cuda")
        y = m(torch.randn(2, 4).cuda())
        n = Detector()
        n.anchors = n.anchors.to(n.device)
    """) == []


def test_a_module_list_filled_by_append_gives_its_modules() -> None:
    assert findings("""
        import torch
        import torch.nn as nn

        class Attention(nn.Module):
            def __init__(self):
                super().__init__()
                self.qkv = nn.Linear(4, 4)

            def forward(self, x):
                causal = torch.tril(torch.ones(x.size(1), x.size(1), dtype=torch.bool))
                return self.qkv(x).masked_fill(~causal, float("-inf"))

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList()
                for _ in range(2):
                    self.blocks.append(Attention())

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x

        y = Net().cuda()(torch.randn(2, 4, 4).cuda())
    """) == [(12, "MV201", "error")]


def test_a_device_chosen_by_a_flag_is_the_worlds_device() -> None:
    """In the world where CUDA is available the flag-chosen device is CUDA, where it is not, the CPU: the model
    and the batch, both moved to `device`, are never paired across the two."""
    assert findings("""
        import sys
        import torch
        from torch import nn
        use_cuda = "--no-cuda" not in sys.argv and torch.cuda.is_available()
        device = torch.device("cuda" if use_cuda else "cpu")
        if use_cuda:
            other = "cuda:0"
        else:
            other = "cpu"
        model = nn.Linear(2, 2).to(device)
        y = model(torch.randn(3, 2).to(device)) + torch.ones(2, device=other)
        z = model(torch.randn(3, 2))
    """) == [(13, "MV202", "warning")]


def test_assigning_through_an_index_tensor_needs_the_values_on_the_device() -> None:
    assert findings("""
        import torch
        buf = torch.zeros(10, 3, device="cuda")
        idx = torch.tensor([1, 4, 7], device="cuda")
        buf[0:3] = torch.randn(3, 3)
        buf[idx] = torch.tensor(1.0)
        buf[idx] = torch.randn(3, 3)
    """) == [(7, "MV201", "error")]


def test_a_data_loaders_batches_are_the_default_collation_of_its_items() -> None:
    """Numbers and numpy arrays become CPU tensors, tensors are stacked where they are (a stack of
    requires-grad leaves is a non-leaf), tuples and dicts are collated element-wise; with its own
    ``collate_fn`` or ``batch_size=None`` a loader's batches are unknown (silent). (A statement that fails
    on every path ends its path: one per loop.)"""
    source = """
        import numpy as np
        import torch
        from torch.utils.data import DataLoader, TensorDataset

        gpu = torch.ones(3, device="cuda")
        rows = TensorDataset(torch.zeros(8, 3), torch.ones(8, 3, device="cuda"))
        for cpu_row, gpu_row in DataLoader(rows, batch_size=2):
            b = gpu_row + gpu
            a = cpu_row + gpu
        items = [{"x": np.zeros(3), "n": 1.0, "w": torch.zeros(3, requires_grad=True)}]
        for batch in DataLoader(items, batch_size=2):
            c = batch["x"] + gpu
        for batch in DataLoader(items):
            d = batch["n"] + gpu
        for batch in DataLoader(items):
            e = batch["w"].numpy()
        for batch in DataLoader(items, collate_fn=lambda xs: xs):
            f = batch[0]["x"] + gpu
        for batch in DataLoader(items, batch_size=None):
            g = batch["n"] + gpu
        for rows in DataLoader(torch.zeros(8, 3), batch_size=4):
            h = rows + gpu
        for batch in DataLoader({0: torch.zeros(3)}):
            k = batch + gpu
    """
    assert findings(source) == [(10, "MV201", "error"), (13, "MV201", "error"), (15, "MV201", "error"),
                                (17, "MV204", "error"), (23, "MV201", "error")]


def test_keyword_arguments_spread_from_a_dict_of_known_keys() -> None:
    """``model(**batch)`` binds the batch's keys to the parameters of ``forward`` (a dict whose keys the
    analysis does not all know leaves every argument unknown)."""
    source = """
        import torch
        from torch import nn

        class Tagger(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(10, 4)

            def forward(self, input_ids, attention_mask=None):
                return self.embed(input_ids)

        model = Tagger().cuda()
        unknown = {key: torch.zeros(5, dtype=torch.long) for key in input()}
        out = model(**unknown)
        batch = {"input_ids": torch.zeros(5, dtype=torch.long), "attention_mask": torch.ones(5)}
        out = model(**batch)
    """
    # reported at the call that passes the CPU ids (the unknown dict's call may run: no finding there)
    assert findings(source) == [(17, "MV202", "error")]
    [message] = messages(source)
    assert "`Tagger.forward` at prog.py:11" in message and "prog.py:15" not in message, message


def test_a_deep_copy_of_a_layer_is_another_module() -> None:
    """``copy.deepcopy`` of a library layer: the same weights' device, a module of its own (an in-place move of
    the original leaves it); a tensor's copy stays where it was; a project module's copy is a module of its own
    with copies of its layers (a CPU ``Head``'s copy called with a GPU batch fails in its ``forward``)."""
    source = """
        import copy
        import torch
        from torch import nn

        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 2)

            def forward(self, x):
                return self.proj(x).relu()

        x = torch.randn(2, 4, device="cuda")
        block_copy = copy.deepcopy(Head())
        y = block_copy(x)
        weights = copy.deepcopy([torch.zeros(4)])
        layer = nn.Linear(4, 4)
        frozen = copy.deepcopy(layer)
        layer.cuda()
        z = layer(x)
        w = weights[0] + x
    """
    assert findings(source) == [(12, "MV202", "error"), (22, "MV201", "error")]
    source = source.replace("        w = weights[0] + x\n", "        frozen(x)\n")
    assert findings(source) == [(12, "MV202", "error"), (22, "MV202", "error")]


def test_stacking_and_a_layers_forward_take_no_scalar_exemption() -> None:
    """Element-wise ops take a CPU 0-dim tensor beside a GPU one; stacking does not (an H200 raises; fake CUDA
    lets it run, so no fixture can confirm it), nor a layer's forward. A slice keeps its dimension."""
    assert not T.scalar_exempt("stack") and not T.scalar_exempt("forward") and T.scalar_exempt("add")
    assert findings("""
        import torch
        a = torch.tensor(1.0, device="cuda")
        ok = a + torch.tensor(2.0)
        torch.stack([a, torch.tensor(0.0)])
    """) == [(5, "MV201", "error")]
    assert findings("""
        import numpy as np
        import torch
        layer = torch.nn.Linear(3, 2).cuda()
        layer(torch.from_numpy(np.zeros((1, 3), dtype=np.float32)))
    """) == [(5, "MV202", "error")]
    assert findings("""
        import torch
        a = torch.randn(4, 4, device="cuda")
        x = torch.randn(4, 4)
        a[0:2] + x[1:3]
    """) == [(5, "MV201", "error")]


def test_functools_partial_calls_its_function_with_the_bound_arguments() -> None:
    assert findings("""
        import functools
        import torch
        from torch import nn
        make_layer = functools.partial(nn.Linear, 4, bias=False)
        layer = make_layer(4).cuda()
        layer(torch.randn(2, 4).cuda())
        layer(torch.randn(2, 4))
    """) == [(8, "MV202", "error")]


def test_sum_with_a_start_stops_at_the_addition_that_always_fails() -> None:
    """``sum(terms, torch.zeros(1))`` over known CUDA terms: the first addition fails on every run, so the
    ones after it never run (counting them would make the site look mixed: a warning)."""
    assert findings("""
        import torch
        terms = [torch.tensor(1.0, device="cuda"), torch.tensor(2.0, device="cuda")]
        sum(terms, torch.zeros(1))
    """) == [(4, "MV201", "error")]


def test_a_list_changed_in_place_through_a_loop_variable_is_the_outer_lists_element() -> None:
    assert findings("""
        import torch
        grid = [[torch.randn(2), torch.randn(2)], [torch.randn(2), torch.randn(2)]]
        for row in grid:
            for j in range(len(row)):
                row[j] = row[j].cuda()
        total = torch.zeros(2, device="cuda") + grid[0][0] + grid[1][1]
        for row in grid:
            row[0] = row[0].cpu()
        total + grid[1][1]
        total + grid[1][0]
    """) == [(11, "MV201", "error")]


def test_a_stored_element_changes_the_container_it_was_read_from() -> None:
    """``row = grid[0]`` is the same object as ``grid[0]``: stores and appends through ``row`` reach ``grid``."""
    start = """\
        import torch

        grid = [[torch.zeros(2), torch.zeros(2)], [torch.zeros(2)]]
        row = grid[0]
        row[0] = row[0].cuda()
        """
    start = textwrap.dedent(start)
    assert findings(start + "ok = grid[0][0] + torch.ones(2, device='cuda')\n") == []
    # never moved
    assert findings(start + "stale = grid[0][1] + torch.ones(2, device='cuda')\n") == [(6, "MV201", "error")]
    # the appended tensor or the old one (the length after an append is not followed)
    appended = "bucket = grid[1]\nbucket.append(torch.zeros(2, device='cuda'))\nx = grid[1][-1] + row[0]\n"
    assert findings(start + appended) == [(8, "MV201", "warning")]
    # ``grid`` rebound: ``row`` is not its element any more
    rebound = "grid = [[torch.zeros(2)]]\nrow[0] = torch.zeros(2)\nrow[0] = row[0].cuda()\nx = grid[0][0] + row[0]\n"
    assert findings(start + rebound) == [(9, "MV201", "error")]
    # an element of a tensor is not followed this way (its in-place stores are the tensor's own); and an editor's
    # analysis, which records every expression's state, computes the same
    tensor = "t = torch.zeros(4, 3)\nr = t[0]\nr[0] = torch.ones(())\nsetattr(t, 'tag', 1)\n"
    for source in (start + appended, start + tensor):
        recorded = check_source(source, "prog.py", Settings(select=("MV2",), record_expressions=True))
        assert sorted((d.row, d.code, d.severity.value) for d in recorded.diagnostics) == findings(source)


# --- conditions and results that invent no device --------------------------------------------------------


def test_device_equality_follows_torch_device_eq() -> None:
    from devicelint.models.torch_api import devices_equal
    assert devices_equal(("cpu", None, False), ("cuda", 0, False)) is False
    assert devices_equal(("cpu", None, False), ("cpu", None, False)) is True
    assert devices_equal(("cuda", 0, False), ("cuda", 1, False)) is False
    assert devices_equal(("cuda", 0, True), ("cuda", 0, False)) is False  # torch.device("cuda") vs t.device
    assert devices_equal(("cuda", 0, True), ("cuda", 0, True)) is True


def test_device_comparisons_decide_the_branch() -> None:
    assert findings("""
        import torch
        from torch import nn
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = nn.Linear(4, 2).to(device)
        x = torch.randn(3, 4)
        if x.device != model.weight.device:
            x = x.to(model.weight.device)
        print(model(x))
        y = torch.randn(3, 4)
        if model.weight.device == torch.device("cuda"):
            y = y.cuda()  # never: an unindexed device is not a tensor's device
        print(model(y.to(device)))
    """) == []
    # the wrong move after a correct comparison is still found
    assert findings("""
        import torch
        from torch import nn
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = nn.Linear(4, 2).to(device)
        x = torch.randn(3, 4, device=device)
        if x.device == model.weight.device:
            x = x.cpu()
        print(model(x))
    """) == [(9, "MV202", "warning")]


def test_isinstance_of_an_item_or_attribute_is_decided() -> None:
    source = """
        import torch
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        def weights(cfg):
            if isinstance(cfg["w"], {kind}):
                return torch.full((2,), 1.0)
            return cfg["w"]
        print(torch.ones(2, device=device) * weights({{"w": torch.ones(2, device=device)}}))
    """
    assert findings(source.format(kind="float")) == []
    assert findings(source.format(kind="torch.Tensor")) == [(8, "MV201", "warning")]


def test_an_unknown_operand_with_a_cpu_scalar_stays_unknown() -> None:
    source = """
        import torch
        import somelib
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        scaled = somelib.logits() * torch.tensor({value})
        print(torch.cat([scaled, torch.zeros(2, 3, device=device)]))
    """
    assert findings(source.format(value="0.5")) == []
    # a 1-dim CPU operand: where the product succeeds it is on the CPU
    assert findings(source.format(value="[0.5, 2.0, 1.0]")) == [(6, "MV201", "warning")]


def test_a_module_that_moves_itself_in_init_is_the_moved_module() -> None:
    source = """
        import torch
        from torch import nn
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
                self.to(device)
        net = Net()
        print(net.fc.weight @ torch.ones(4, {where}))
    """
    assert findings(source.format(where="device=device")) == []
    assert findings(source.format(where="")) == [(11, "MV201", "warning")]


def test_device_text_and_index_are_known() -> None:
    assert findings("""
        import torch
        from torch import nn
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = nn.Linear(4, 2).to(device)
        x, y = torch.randn(3, 4), torch.randn(3, 4)
        if str(model.weight.device) != "cpu":
            x = x.to(model.weight.device)
        if model.weight.get_device() >= 0:
            y = y.cuda()
        print(model(x), model(y))
    """) == []


# --- project modules, their parameters' device, requires-grad flags -------------------------------------------


def test_grad_flag_outcome_table() -> None:
    assert T.grad_flag_outcome(is_leaf=False, flag=True, method=False) is not None  # `t.requires_grad = True`
    assert T.grad_flag_outcome(is_leaf=False, flag=False, method=True) is not None
    assert T.grad_flag_outcome(is_leaf=False, flag=True, method=True) is None  # requires grad already
    assert T.grad_flag_outcome(is_leaf=True, flag=False, method=False) is None


def test_requires_grad_flag_of_a_moved_leaf() -> None:
    assert findings("""
        import torch
        v = torch.randn(3, requires_grad=True).cuda()
        v.requires_grad_()
        v.requires_grad = True
        """) == [(5, "MV205", "error")]
    assert findings("""
        import torch
        v = torch.randn(3, requires_grad=True).cuda()
        v.requires_grad_(False)
        """) == [(4, "MV205", "error")]
    assert findings("""
        import torch
        w = torch.randn(3).cuda()
        w.requires_grad = True
        u = torch.randn(3, requires_grad=True, device="cuda")
        u.requires_grad_(False)
        u.requires_grad = True
        def f(flag):
            v = torch.randn(3, requires_grad=True).cuda()
            v.requires_grad_(flag)
        """) == []


PROJECT_MODEL = """
    import torch
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            self.head = nn.Linear(4, 2)

        @property
        def device(self):
            return next(self.parameters()).device
    """


def test_device_of_a_project_module_moved_as_a_whole() -> None:
    assert findings(PROJECT_MODEL + """
    model = Net().cuda()
    x = torch.randn(3, 4)
    ok = model.head(model.body(x.to(model.device)))
    bad = ok + torch.randn(3, 2)
    """) == [(18, "MV201", "error")]
    # not moved as a whole: the parameters not seen may be anywhere (the known ones stay alternatives)
    assert findings(PROJECT_MODEL + """
    model = Net()
    model.head.cuda()
    y = torch.randn(3, 4).to(model.device) + torch.randn(3, 4)
    """) == []


def test_optimizer_state_over_a_project_module() -> None:
    source = PROJECT_MODEL + """
    def resume(state):
        model = Net()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        {first}
        {second}
        model.head(model.body(torch.randn(3, 4, device="cuda"))).sum().backward()
        optimizer.step()

    resume({{}})
    """
    load, move = "optimizer.load_state_dict(state)", "model.cuda()"
    assert findings(source.format(first=load, second=move)) == [(21, "MV201", "error")]
    assert findings(source.format(first=move, second=load)) == []


def test_discarded_move_whatever_the_device() -> None:
    assert findings("""
        import sys
        import torch

        def go(x, d, dtype):
            x.to(d)
            x.to(dtype)
            x.to(d, torch.float16)
            x.cuda(d)
            y = x.to(d)

        go(torch.randn(3), sys.argv[1], sys.argv[2])
        """) == [(6, "MV206", "error"), (8, "MV206", "error"), (9, "MV206", "error")]


# --- DataLoader settings: forked workers (MV209), pinning (MV210), the sampler's generator (MV211) --------------

_DATASET = """
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Samples(Dataset):
        def __init__(self, device):
            self.rows = torch.randn(16, 4)
            self.device = device

        def __len__(self):
            return 16

        def __getitem__(self, index):
            return self.rows[index].to(self.device)

    model = torch.nn.Linear(4, 2).cuda()
"""


@pytest.mark.parametrize(("loader", "expected"), [
    ('DataLoader(Samples("cuda"), batch_size=4, num_workers=2)', [(14, "MV209", "error")]),
    ('DataLoader(Samples("cuda"), num_workers=2, multiprocessing_context="fork")', [(14, "MV209", "error")]),
    ('DataLoader(Samples("cuda"), num_workers=2, multiprocessing_context="spawn")', []),
    ('DataLoader(Samples("cuda"), num_workers=2, multiprocessing_context="forkserver")', []),
    ('DataLoader(Samples("cuda"), num_workers=0)', []),
    ('DataLoader(Samples("cuda"))', []),
    ('DataLoader(Samples("cpu"), num_workers=4)', []),
    ('DataLoader(Samples("cuda"), num_workers=int(__import__("os").environ["WORKERS"]))', []),  # unknown: silent
])
def test_cuda_in_forked_loader_workers(loader: str, expected: list) -> None:
    assert findings(_DATASET + f"""
    for batch in {loader}:
        model(batch.cuda())
    """) == expected


def test_cuda_in_a_workers_transform_and_collate_fn_is_reported_where_it_is_made() -> None:
    source = """
        import torch
        from torch.utils.data import DataLoader

        class ToGpu:
            def __call__(self, row):
                return torch.as_tensor(row, device="cuda")

        class Rows(torch.utils.data.Dataset):
            def __init__(self, transform):
                self.transform = transform

            def __len__(self):
                return 8

            def __getitem__(self, index):
                return self.transform([0.0, 1.0])

        def collate(samples):
            return torch.stack(samples).cuda()

        a = DataLoader(Rows(ToGpu()), batch_size=2, num_workers=2)
        b = DataLoader([torch.zeros(2)] * 8, batch_size=2, num_workers=2, collate_fn=collate)
        c = DataLoader([torch.zeros(2)] * 8, batch_size=2, collate_fn=collate)
    """
    assert findings(source) == [(7, "MV209", "error"), (20, "MV209", "error")]
    assert "2 DataLoader worker processes started by fork" in messages(source)[0]


@pytest.mark.parametrize(("loader", "expected"), [
    ("DataLoader(TensorDataset(x.cuda()), batch_size=4, pin_memory=True)", [(5, "MV210", "error")]),
    ("DataLoader(TensorDataset(x), batch_size=4, pin_memory=True)", []),
    ("DataLoader(TensorDataset(x.cuda()), batch_size=4, pin_memory=False)", []),
    ("DataLoader(TensorDataset(x.cuda()), batch_size=4)", []),
    ("DataLoader(TensorDataset(x), collate_fn=lambda b: [t.cuda() for t, in b], pin_memory=True)",
     [(5, "MV210", "error")]),
])
def test_pinned_gpu_batches(loader: str, expected: list) -> None:
    assert findings(f"""
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        x = torch.randn(16, 3)
        loader = {loader}
    """) == expected


@pytest.mark.parametrize(("setup", "loader", "expected"), [
    ('torch.set_default_device("cuda")', "DataLoader(data, shuffle=True)", [(6, "MV211", "error")]),
    ("torch.set_default_tensor_type(torch.cuda.FloatTensor)", "DataLoader(data, shuffle=True)",
     [(6, "MV211", "error")]),
    ('torch.set_default_device("cuda")', "DataLoader(data, sampler=RandomSampler(data))", [(6, "MV211", "error")]),
    ('torch.set_default_device("cuda")', "DataLoader(data, generator=torch.Generator().manual_seed(1))",
     [(6, "MV211", "error")]),
    ('torch.set_default_device("cuda")', 'DataLoader(data, shuffle=True, generator=torch.Generator(device="cuda"))',
     []),
    ('torch.set_default_device("cuda")',
     'DataLoader(data, sampler=RandomSampler(data, generator=torch.Generator("cuda")))', []),
    ('torch.set_default_device("cuda")', "DataLoader(data, shuffle=False)", []),
    ("pass", "DataLoader(data, shuffle=True)", []),
    ('torch.set_default_device("cpu")', "DataLoader(data, shuffle=True, generator=torch.Generator())", []),
])
def test_sampler_generator_against_the_default_device(setup: str, loader: str, expected: list) -> None:
    assert findings(f"""
        import torch
        from torch.utils.data import DataLoader, RandomSampler
        {setup}
        data = [torch.zeros(2)] * 8
        loader = {loader}
    """) == expected


def test_a_loader_built_in_a_cuda_device_block_shuffles_on_the_gpu() -> None:
    source = """
        import torch
        from torch.utils.data import DataLoader
        with torch.device("cuda"):
            data = [torch.zeros(2)] * 8
            loader = DataLoader(data, batch_size=2, shuffle=True)
    """
    assert findings(source) == [(6, "MV211", "error")]
    assert "default device: torch.device('cuda:0')" in messages(source)[0]


def test_a_library_dataset_of_gpu_tensors_read_by_forked_workers() -> None:
    assert findings("""
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        rows = torch.randn(16, 4).cuda()
        forked = DataLoader(TensorDataset(rows), batch_size=4, num_workers=2)
        listed = DataLoader([r for r in rows], batch_size=4, num_workers=2)
        spawned = DataLoader(TensorDataset(rows), num_workers=2, multiprocessing_context="spawn")
        host = DataLoader(TensorDataset(rows.cpu()), batch_size=4, num_workers=2)
    """) == [(5, "MV209", "error"), (6, "MV209", "error")]


def test_a_cuda_generator_for_a_loader_on_the_cpu_default_device() -> None:
    source = """
        import torch
        from torch.utils.data import DataLoader
        data = [torch.zeros(2)] * 8
        loader = DataLoader(data, shuffle=True, generator=torch.Generator(device="cuda"))
    """
    assert findings(source) == [(5, "MV211", "error")]
    assert messages(source)[0].startswith("Expected a 'cpu' device type for generator but found 'cuda'")


def test_past_a_mismatch_the_result_is_on_the_accelerator() -> None:
    # two replay-buffer tensors left on the CPU are two findings; the loss of the GPU prediction against the target
    # they make is not a third (past the failures the target is where the user meant it: on the GPU)
    assert findings("""
        import torch
        import torch.nn.functional as F

        q = torch.randn(32, device="cuda", requires_grad=True)
        q2 = torch.randn(32, device="cuda")
        rewards, done = torch.rand(32), torch.zeros(32)
        target = rewards + 0.99 * q2 * (1 - done)
        loss = F.smooth_l1_loss(q, target)
    """) == [(8, "MV201", "error"), (8, "MV201", "error")]


def test_past_a_layer_left_on_the_cpu_the_output_is_unknown() -> None:
    # a model never moved fails at its first layer only; a layer built in forward fails there only
    assert findings("""
        import torch
        from torch import nn

        class MLP(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(4, 8)
                self.fc2 = nn.Linear(8, 2)

            def forward(self, x):
                return self.fc2(torch.relu(self.fc1(x)))

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 8, 3)

            def forward(self, x):
                return self.conv(nn.BatchNorm2d(3)(x))

        MLP()(torch.randn(2, 4, device="cuda"))
        Block().cuda()(torch.randn(1, 3, 8, 8, device="cuda"))
    """) == [(12, "MV202", "error"), (20, "MV202", "error")]


def test_packed_sequence_lengths_must_be_on_the_cpu() -> None:
    assert findings("""
        import torch
        from torch import nn
        from torch.nn.utils.rnn import pack_padded_sequence

        x = torch.randn(3, 5, 8, device="cuda")
        mask = torch.ones(3, 5, device="cuda")
        pack_padded_sequence(x, mask.sum(1).long(), batch_first=True, enforce_sorted=False)
        nn.utils.rnn.pack_padded_sequence(x, mask.sum(1).long().cpu(), batch_first=True)
        pack_padded_sequence(x, [5, 3, 2], batch_first=True)
        pack_padded_sequence(x, torch.tensor([5, 3, 2]), batch_first=True)
        torch.nn.utils.rnn.pack_padded_sequence(x, lengths=torch.tensor([5, 3, 2]).to(x.device), batch_first=True)
    """) == [(8, "MV212", "error"), (12, "MV212", "error")]


def test_sparse_adjacency_follows_its_values_and_torch_sparse_ops_check_devices() -> None:
    # (fake CUDA cannot run sparse CUDA kernels, so this class has no observed fixture)
    source = """
        import torch
        idx = torch.tensor([[0, 1], [1, 0]])
        adj = torch.sparse_coo_tensor(idx, torch.ones(2), (2, 2)).coalesce()
        x = torch.randn(2, 3).cuda()
        y = torch.sparse.mm(adj, x)
        z = torch.spmm(adj.cuda(), x)
        w = torch.sparse.mm(torch.sparse_coo_tensor(idx, torch.ones(2), (2, 2), device="cuda"), x)
        """
    assert findings(source) == [(6, "MV201", "error")]


def test_dict_get_of_a_key_the_dict_lacks_is_its_default() -> None:
    source = """
        import torch
        def main(cfg):
            device = torch.device(cfg.get("device", "cuda"))
            ids = torch.tensor([0, 1])
            emb = torch.nn.Embedding(3, 2).to(device)
            return emb(ids)
        main({"epochs": 3})
        main({"epochs": 3, "device": "cpu"})
        """
    assert findings(source) == [(7, "MV202", "warning")]


def test_zip_star_of_a_batch_gives_its_columns_for_pad_sequence() -> None:
    source = """
        import torch
        from torch.nn.utils.rnn import pad_sequence
        def collate(batch):
            ids, labels = zip(*batch)
            return pad_sequence(ids, batch_first=True), torch.tensor(labels)
        batch = [(torch.ones(3), 1) for _ in range(4)]
        ids, labels = collate(list(batch))
        emb = torch.nn.Linear(3, 2).cuda()
        out = emb(ids)
        """
    assert findings(source) == [(10, "MV202", "error")]


def test_a_distribution_sample_of_a_given_shape_has_a_dimension() -> None:
    source = """
        import torch
        from torch.distributions import Normal
        noise = Normal(0.0, 1.0)
        mu = torch.randn(4, 3).cuda()
        a = mu + noise.sample((4, 3))
        b = mu + noise.sample(mu.shape)
        c = mu + noise.sample()
        d = mu + noise.sample(torch.Size([]))
        """
    # a 0-dim CPU sample is a scalar to a GPU tensor; ``torch.Size([])`` is a call the model does not follow
    assert findings(source) == [(6, "MV201", "error"), (7, "MV201", "error")]


def test_a_transformer_causal_mask_alone_is_not_checked_but_padding_masks_are() -> None:
    # a causal self-attention mask with no padding mask is dropped for the is_causal hint (its values decide:
    # unknown here); with a padding mask beside it, or a padding mask itself, the mask is used and checked
    source = """
        import torch
        from torch import nn
        layer = nn.TransformerEncoderLayer(8, 2, 16)
        encoder = nn.TransformerEncoder(layer, 1).cuda()
        x = torch.randn(5, 2, 8).cuda()
        causal = torch.triu(torch.full((5, 5), float("-inf")), diagonal=1)
        padding = torch.zeros(2, 5, dtype=torch.bool)
        a = encoder(x, causal)
        b = encoder(x, mask=causal, src_key_padding_mask=padding.cuda())
        c = encoder(x, src_key_padding_mask=padding)
        """
    assert findings(source) == [(10, "MV202", "error"), (11, "MV202", "error")]


def test_a_shape_test_against_a_partly_unknown_tensor_reads_its_known_part() -> None:
    """A YOLO-style grid placeholder (`torch.zeros(1)`) replaced when its `shape[2:4]` differs from the features',
    in a head also called with features the analysis does not know: the placeholder's empty `shape[2:4]` never
    equals a 5-dim tensor's, whatever else the features may be."""
    source = '''
import torch
from torch import nn
import featurekit


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(6, 12, 1)
        self.grid = torch.zeros(1)

    def forward(self, features):
        x = self.conv(features)
        bs, _, ny, nx = x.shape
        x = x.view(bs, 3, 4, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
        if self.grid.shape[2:4] != x.shape[2:4]:
            self.grid = torch.zeros(1, 1, ny, nx, 2).to(x.device)
        return x[..., 0:2] + self.grid


head = Head().to("cuda")
print(head(torch.randn(2, 6, 8, 8, device="cuda")))
print(head(featurekit.load()))
'''
    report = check_source(source, "head.py", Settings(select=("MV2",)))
    assert [(d.row, d.code) for d in report.diagnostics] == []


def test_a_module_frozen_by_a_flag_that_is_not_a_constant_may_require_grad_or_not() -> None:
    source = """
        import torch
        from torch import nn

        layer = nn.Linear(2, 2)
        layer.requires_grad_(torch.rand(1) > 0.5)
        params = list(layer.parameters())
        params[0].cuda() + torch.ones(2, device="cuda")
        """
    assert findings(source) == []  # (not an analysis failure)


def test_a_class_that_registers_no_module_is_walked_once_however_often_it_moves(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from devicelint.models import torch_model

    walked: list[str] = []
    walk = torch_model._dynamic_registration

    def counting(cls: torch_model.ClassInfo) -> str | None:
        walked.append(cls.name)
        return walk(cls)

    monkeypatch.setattr(torch_model, "_dynamic_registration", counting)
    source = """
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.layers = [nn.Linear(4, 4)]

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()
                self.layers = [nn.Linear(4, 4)]

            def forward(self, x):
                for layer in self.layers:
                    x = layer(x)
                return x

        nets = [Net(), Net(), Net()]
        for net in nets:
            net.cuda()
            net.to("cpu")
            net.cuda()
        Net().cuda()(torch.randn(2, 4).cuda())
    """
    # the plain list is not registered, whichever way the class is asked (the answer kept is the walk's)
    assert run_on(source, "cuda") == [(18, "MV202", "error")]
    assert sorted(walked) == ["Block", "Net"]  # one analysis (one world): each class walked once


MOVES_SOURCE = """
    import torch
    from torch import nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 4)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.block.fc(x))

    def place(model, run):
        return model.to("cuda")

    net = Net()
    {moves}
    place(net, 0)(torch.randn(2, 4))
"""


def test_a_move_that_would_change_nothing_is_not_copied_again(monkeypatch: pytest.MonkeyPatch) -> None:
    from devicelint.models import torch_model

    copied: list[str] = []
    identities = torch_model._registered_identities

    def counting(values):  # type: ignore[no-untyped-def]
        copied.append("copy")  # once per module instance copied onto its moved twin
        return identities(values)

    monkeypatch.setattr(torch_model, "_registered_identities", counting)
    once = run_on(MOVES_SOURCE.format(moves=""), "cuda")
    copies_once = len(copied)
    copied.clear()
    # the same model moved to the same device four times more (each call a context of its own), nothing changed
    # in between: the same findings; the first move makes the twins, the second changes nothing and is kept,
    # the others replay it (no copy)
    again = run_on(MOVES_SOURCE.format(moves="\n    ".join(f"place(net, {run})" for run in range(1, 5))), "cuda")
    assert once == [(24, "MV202", "error")]
    assert again == [(27, "MV202", "error")]
    assert 0 < len(copied) == 2 * copies_once


def test_a_kept_move_is_copied_again_once_an_attribute_it_read_changed() -> None:
    from devicelint.domain import V, const
    from devicelint.engine.program import ClassInfo
    from devicelint.models.move_memo import CopyRecord, KeptMove, MoveMemo

    cls = ClassInfo.__new__(ClassInfo)
    instance, moved = object(), object()

    class Owner:  # an instance: the memo reads its class only
        def __init__(self, inner: object) -> None:
            self.cls = cls
            self.inner = inner

    owner, twin = Owner(instance), Owner(moved)
    value, copy = V(const(1)), V(const(2))
    heap = {(owner, "fc"): value, (twin, "fc"): copy}
    owners = {owner: ["fc"]}
    memo = MoveMemo()
    kept = KeptMove((CopyRecord(owner, twin, None, (("fc", value),), (copy,)),), ())  # type: ignore[arg-type]

    def current(registration: str | None = None, plain: tuple = ()) -> bool:
        move = KeptMove(kept.copies, plain)
        return memo.current(move, heap, owners, lambda attr: attr.startswith("@"), lambda _cls: registration,
                            lambda c: c is cls)

    assert current()
    heap[(owner, "fc")] = V(const(1))  # an equal value, another object: a store replaced it
    assert not current()
    heap[(owner, "fc")] = value
    heap[(twin, "fc")] = V(const(3))  # the twin changed since
    assert not current()
    heap[(twin, "fc")] = copy
    owners[owner].append("bias")  # a new attribute
    heap[(owner, "bias")] = value
    assert not current()
    owners[owner].pop()
    owners[owner].append("@moved")  # a move's own note is not copied: no difference
    assert current()
    assert not current(registration="call")  # the class registers its modules otherwise now
    assert not current(plain=(cls,))  # an instance left where it was is a module now

