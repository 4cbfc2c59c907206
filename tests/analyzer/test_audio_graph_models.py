"""torchaudio's and PyG's models (:mod:`analyzer.models.torchaudio_model`, :mod:`analyzer.models.pyg_model`), and
the torch model's named tuples, numpy row stores and never-0-dim results they rely on."""

from __future__ import annotations

import textwrap

from devicelint.runner import check_source
from devicelint.settings import Settings


def findings(source: str) -> list[tuple[int, str, str]]:
    report = check_source(textwrap.dedent(source), "prog.py", Settings(select=("MV2",)))
    return sorted((d.row, d.code, d.severity.value) for d in report.diagnostics)


AUDIO = """
    import torch
    import torchaudio

    device = torch.device("cuda")
    mel = torchaudio.transforms.MelSpectrogram(sample_rate=16000)
    {move}
    spec = mel(torch.randn(1, 1600, device=device))
"""


def test_a_torchaudio_transform_not_moved_fails_on_a_gpu_waveform() -> None:
    assert findings(AUDIO.format(move="")) == [(8, "MV202", "error")]
    assert findings(AUDIO.format(move="mel = mel.to(device)")) == []
    assert findings(AUDIO.format(move="mel.to(device)")) == []  # a module moves in place


def test_transforms_without_buffers_follow_their_input_and_outputs_need_no_grad() -> None:
    assert findings("""
        import torch
        import torchaudio
        from torchaudio.transforms import AmplitudeToDB, FrequencyMasking, MFCC

        wav, sr = torchaudio.load("clip.wav")
        feats = FrequencyMasking(8)(AmplitudeToDB()(MFCC(sample_rate=sr)(wav.cuda())))
        mfcc = MFCC()(wav)
        print(mfcc.numpy(), feats.cpu().numpy())
        fb = torchaudio.functional.melscale_fbanks(201, 0.0, 8000.0, 40, 16000)
        spec = torch.rand(1, 100, 201, device="cuda")
        mel = spec @ fb
    """) == [(7, "MV202", "error"), (12, "MV201", "error")]


GRAPHS = """
    import torch
    from torch_geometric.data import Data
    from torch_geometric.loader import DataLoader
    from torch_geometric.nn import GCNConv, global_mean_pool

    device = torch.device("cuda")
    graphs = [Data(x=torch.randn(4, 3), edge_index=torch.tensor([[0, 1], [1, 2]]), y=torch.tensor([1]))]
    conv = GCNConv(3, 8).to(device)
    for data in DataLoader(graphs, batch_size=2):
        {move}
        h = conv(data.x, data.edge_index)
        pooled = global_mean_pool(h, data.batch)
"""


def test_pyg_batches_stay_where_the_graphs_are() -> None:
    # the batch left on the CPU: the convolution refuses it, and pooling its output by the batch's CPU graph index
    # fails again past that failure: one root cause (moving the batch fixes both), one finding listing the other
    assert findings(GRAPHS.format(move="pass")) == [(12, "MV202", "error")]
    program = textwrap.dedent(GRAPHS.format(move="pass"))
    [finding] = check_source(program, "graphs.py", Settings(select=("MV2",))).findings
    assert [r.row for r in finding.related if "fails here too" in r.message] == [13]
    assert findings(GRAPHS.format(move="data = data.to(device)")) == []
    assert findings(GRAPHS.format(move="data.cuda()")) == []  # a graph moves in place


def test_a_graph_moved_by_field_names_moves_those_fields_only() -> None:
    source = """
        import torch
        from torch_geometric.data import Data

        data = Data(x=torch.randn(4, 3), y=torch.tensor([0, 1, 0, 1]), train_mask=torch.tensor([1, 0, 1, 0]) > 0)
        data = data.to("cuda", "x", "y")
        logits = data.x.sum(dim=1).cpu()
        picked = logits[data.{index}]
    """
    assert findings(source.format(index="train_mask")) == []  # the mask stayed on the CPU, as the logits are
    assert findings(source.format(index="y")) == [(8, "MV207", "error")]  # the labels moved: a CUDA index


def test_pyg_datasets_lazy_layers_and_transforms() -> None:
    source = """
        import torch
        import torch_geometric.transforms as T
        from torch_geometric.datasets import Planetoid
        from torch_geometric.nn import GCNConv

        dataset = Planetoid("/tmp/Cora", "Cora", transform={transform})
        data = dataset[0]
        conv = GCNConv({channels}, 16).to("cuda")
        out = conv(data.x, data.edge_index)
    """
    assert findings(source.format(transform="T.NormalizeFeatures()", channels="dataset.num_features")) == [
        (10, "MV202", "error")]
    # a transform that may move the graphs; a lazy layer (made where its first input is): not known
    assert findings(source.format(transform="T.Compose([T.NormalizeFeatures(), T.ToDevice('cuda')])",
                                  channels="dataset.num_features")) == []
    assert findings(source.format(transform="None", channels="-1")) == []


def test_topk_fields_numpy_rows_and_unsqueezed_indices() -> None:
    assert findings("""
        import numpy as np
        import torch

        scores = torch.randn(4, 10, device="cuda")
        labels = torch.from_numpy(np.zeros((4, 10), dtype=np.float32))
        hits = labels.gather(1, torch.topk(scores, 3).indices)
        rows = np.zeros((4, 10), dtype=np.float32)
        rows[0] = scores[0]
        flat = np.zeros(10, dtype=np.float32)
        flat[0] = scores[0, 0]

        def loss(actions, q):
            return q.gather(1, torch.tensor(actions).unsqueeze(-1))

        print(loss(np.array(list(range(4))), scores))
    """) == [(7, "MV207", "error"), (9, "MV203", "error"), (14, "MV207", "error")]


def test_solves_type_limits_and_lists_filled_after_init() -> None:
    assert findings("""
        import numpy as np
        import torch
        from torch import nn

        eps = np.finfo(np.float32).eps.item()
        K = torch.from_numpy(np.eye(4, dtype=np.float32))
        f = nn.Parameter(torch.ones(4, 1, device="cuda"))
        u = torch.linalg.solve(K, f)


        class Policy(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 2)
                self.log_probs = []

            def act(self, state):
                self.log_probs.append(torch.log_softmax(self.fc(state), -1)[:, 0])


        policy = Policy().to("cuda")
        for _ in range(3):
            policy.act(torch.randn(1, 4, device="cuda"))
        returns = torch.tensor([1.0, 0.5, 0.25])
        returns = (returns - returns.mean()) / (returns.std() + eps)
        loss = (torch.cat(policy.log_probs) * returns).sum()
    """) == [(9, "MV201", "error"), (27, "MV201", "error")]


def test_a_pyg_layers_edge_index_is_an_index_on_the_features_device() -> None:
    source = """
        import torch
        from torch_geometric.nn import GCNConv

        conv = GCNConv(5, 16).to("cuda")
        x = torch.randn(10, 5, device="cuda")
        edge_index = torch.tensor([[0, 1], [1, 2]]){move}
        out = conv(x, edge_index)
        cpu_out = GCNConv(5, 16)(x.cpu(), edge_index)
    """
    assert findings(source.format(move="")) == [(8, "MV207", "error")]
    assert findings(source.format(move=".cuda()")) == [(9, "MV207", "error")]


def test_fft_frequencies_and_matrix_products_of_unknown_rank() -> None:
    assert findings("""
        import numpy as np
        import torch

        u = torch.randn(1, 16, device="cuda")
        k = torch.fft.fftfreq(16)
        spectrum = torch.fft.fft(u)
        dx = k * spectrum
        ok = torch.fft.fftfreq(16, device=u.device) * spectrum

        def adjacency(n):
            a = np.ones((n, n), dtype=np.float32)
            return torch.from_numpy(a / a.sum(1, keepdims=True))

        emb = torch.randn(4, 8, device="cuda")
        out = torch.mm(adjacency(4), emb)
        scaled = adjacency(4).sum() * emb
    """) == [(8, "MV201", "error"), (16, "MV201", "error")]
