"""Device behaviours of PyTorch that the fake-CUDA observer must reproduce, one case a function.

``python cases.py`` runs every case and prints one JSON line per case: how it ended (``ok`` with the
devices it produced, or the exception's type and first message line). Run with plain torch on a CUDA
machine it gives the reference (recorded in ``h200.json``); run under ``runtime_shim.torch_observer``
in fake mode it must print the same (tests/runtime/test_gpu_parity.py).
"""

import json
import sys

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CASES = []


def case(function):
    CASES.append(function)
    return function


def devices(*tensors):
    return [str(t.device) for t in tensors]


@case
def conv1d_weight_on_cuda_input_on_cpu():
    return devices(nn.Conv1d(3, 4, 3).cuda()(torch.randn(2, 3, 8)))


@case
def conv2d_weight_on_cuda_input_on_cpu():
    return devices(nn.Conv2d(3, 4, 3).cuda()(torch.randn(2, 3, 8, 8)))


@case
def conv3d_weight_on_cuda_input_on_cpu():
    return devices(nn.Conv3d(3, 4, 3).cuda()(torch.randn(2, 3, 6, 6, 6)))


@case
def conv_transpose2d_weight_on_cuda_input_on_cpu():
    return devices(nn.ConvTranspose2d(3, 4, 3).cuda()(torch.randn(2, 3, 8, 8)))


@case
def conv2d_weight_on_cpu_input_on_cuda():
    return devices(nn.Conv2d(3, 4, 3)(torch.randn(2, 3, 8, 8).cuda()))


@case
def conv2d_both_on_cuda():
    return devices(nn.Conv2d(3, 4, 3).cuda()(torch.randn(2, 3, 8, 8, device="cuda")))


@case
def to_device_index():
    return devices(torch.ones(3).to(0))


@case
def get_device_of_cuda_and_cpu():
    return [torch.ones(3, device="cuda").get_device(), torch.ones(3).get_device()]


@case
def legacy_new_with_sizes():
    return devices(torch.ones(3, device="cuda").new(2, 2))


@case
def legacy_new_with_data():
    return devices(torch.ones(3, device="cuda").new([1.0, 2.0]))


@case
def tensor_of_cuda_scalars():
    a, b = torch.tensor(1.0, device="cuda"), torch.tensor(2.0, device="cuda")
    return devices(torch.tensor([a, b]))


@case
def parameter_from_list_moved_by_module_cuda():
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = nn.Parameter(torch.tensor([1.0, 2.0]))

    return devices(Scale().cuda().scale)


@case
def boolean_mask_index():
    x = torch.randn(10, device="cuda")
    return devices(x[x > 0])


@case
def nonzero_and_masked_select():
    x = torch.randn(10, device="cuda")
    return devices(torch.nonzero(x), torch.masked_select(x, x > 0), x.nonzero(as_tuple=True)[0])


@case
def boolean_mask_on_cpu_indexing_cuda():
    x = torch.randn(10, device="cuda")
    return devices(x[torch.ones(10, dtype=torch.bool)])


@case
def masked_fill_cpu_mask_on_cuda_tensor():
    return devices(torch.zeros(4, device="cuda").masked_fill(torch.tensor([True, False, True, False]), 1.0))


@case
def masked_fill_cuda_mask_on_cpu_tensor():
    return devices(torch.zeros(4).masked_fill(torch.tensor([True, False, True, False], device="cuda"), 1.0))


@case
def shuffled_loader_with_cuda_default_device():
    torch.set_default_device("cuda")
    try:
        loader = DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=4, shuffle=True)
        return [str(batch.device) for (batch,) in loader]
    finally:
        torch.set_default_device(None)


@case
def tensor_from_data_under_cuda_default_device():
    torch.set_default_device("cuda")
    try:
        return devices(torch.tensor([1.0, 2.0]), torch.as_tensor([3, 4]), torch.zeros(2))
    finally:
        torch.set_default_device(None)


@case
def tensor_from_data_in_cuda_device_block():
    with torch.device("cuda"):
        return devices(torch.tensor([1.0, 2.0]), torch.ones(2))


@case
def linear_weight_on_cuda_input_on_cpu():
    return devices(nn.Linear(3, 2).cuda()(torch.randn(4, 3)))


@case
def embedding_cuda_indices_on_cpu():
    return devices(nn.Embedding(10, 3).cuda()(torch.tensor([1, 2, 3])))


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else ""


def main():
    for function in CASES:
        try:
            result = {"case": function.__name__, "outcome": "ok", "value": function()}
        except Exception as error:  # every case reports how it ended, whatever ended it
            result = {"case": function.__name__, "outcome": type(error).__name__, "message": first_line(error)}
        print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
