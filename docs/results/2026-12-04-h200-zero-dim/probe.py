"""Which ops take a 0-dim CPU tensor beside CUDA operands (the scalar exemption), and which refuse it:
run on a real GPU and under the observer's fake CUDA, the outcomes compared line by line."""

import torch

cuda = torch.device("cuda")
x = torch.randn(10, device=cuda)
m = torch.randn(10, 3, device=cuda)
i0 = torch.tensor(3)            # a 0-dim CPU index
f0 = torch.tensor(2.0)          # a 0-dim CPU float
b0 = torch.tensor(True)

CASES = {
    "add": lambda: x + f0,
    "mul_": lambda: x.clone().mul_(f0),
    "where": lambda: torch.where(b0, x, x),
    "masked_fill": lambda: x.masked_fill(b0, 0.0),
    "clamp": lambda: x.clamp(min=f0),
    "lerp": lambda: torch.lerp(x, x, f0),
    "index_select": lambda: x.index_select(0, i0),
    "gather": lambda: x.gather(0, i0),
    "scatter_add_": lambda: torch.zeros(10, device=cuda).scatter_add_(0, i0, x[0]),
    "scatter_": lambda: torch.zeros(10, device=cuda).scatter_(0, i0, x[0]),
    "index_add_": lambda: torch.zeros(10, device=cuda).index_add_(0, i0, x[0]),
    "index_copy_": lambda: torch.zeros(10, device=cuda).index_copy_(0, i0, x[0]),
    "index_fill_": lambda: torch.zeros(10, device=cuda).index_fill_(0, i0, 1.0),
    "index_put_": lambda: torch.zeros(10, device=cuda).index_put_((i0,), x[0]),
    "take": lambda: x.take(i0),
    "getitem": lambda: x[i0],
    "getitem_2d": lambda: m[i0],
    "embedding": lambda: torch.nn.functional.embedding(i0, m),
    "one_hot_matmul": lambda: m @ torch.ones(3),
    "cross_entropy_target": lambda: torch.nn.functional.cross_entropy(m[:1], i0.view(1).clamp(max=2)),
    "nll_loss_target0": lambda: torch.nn.functional.nll_loss(m[0], i0.clamp(max=2)),
    "cat": lambda: torch.cat([x, f0.view(1)]),
    "dot": lambda: torch.dot(x[:3], torch.ones(3)),
    "mse_loss": lambda: torch.nn.functional.mse_loss(x[0], f0),
    "bucketize": lambda: torch.bucketize(f0, x.sort().values),
    "searchsorted": lambda: torch.searchsorted(x.sort().values, f0),
    "histc_min": lambda: torch.histc(x, bins=4, min=0, max=1),
    "topk_k": lambda: x.topk(int(i0)),
    "copy_": lambda: x.clone().copy_(f0),
}

for name, case in CASES.items():
    try:
        case()
        if x.is_cuda:
            torch.cuda.synchronize()
        print(f"{name}: ok")
    except Exception as error:  # noqa: BLE001 - the outcome is what is recorded
        print(f"{name}: {type(error).__name__}: {str(error).splitlines()[0][:160]}")
