"""Capture an inference graph for export on a capture device.

A capture device executes nothing: inside `capture_scope`, tensors created on
(or moved to) it become initializers with known values, and every operation
adds a computed value to the graph. Here trained weights from a plain Flex
device become the graph's initializers, the input is a placeholder-shaped
initializer, and `scope.complete(inputs, outputs)` closes the graph.
"""

import numpy as np

from runtime_shim import CaptureError, Device, Tensor, reveal_device


def trained_weights(device):
    rng = np.random.default_rng(5)
    return {
        "w1": Tensor.from_data(rng.normal(size=(4, 8)).astype(np.float32), device),
        "b1": Tensor.from_data(np.zeros((1, 8), dtype=np.float32), device),
        "w2": Tensor.from_data(rng.normal(size=(8, 2)).astype(np.float32), device),
    }


def mlp(x, params):
    hidden = (x @ params["w1"] + params["b1"]).relu()
    return (hidden @ params["w2"]).sigmoid()


def main():
    weights = trained_weights(Device.flex())
    capture = Device.capture()

    def build(scope):
        params = {name: w.to_device(capture) for name, w in weights.items()}
        x = Tensor.zeros((1, 4), capture)  # the graph input: shape and dtype only matter
        y = mlp(x, params)
        print("input:", reveal_device(x), "| output:", reveal_device(y), y.shape)
        nested = capture.capture_scope(lambda inner: None)
        assert nested is CaptureError.ALREADY_ACTIVE, nested
        return scope.complete([x], [y])

    graph = capture.capture_scope(build)
    initializers = [v for v in graph.values if v.kind == "initializer"]
    print(f"graph on {graph.device}: {len(graph.values)} values "
          f"({len(initializers)} initializers), {len(graph.operations)} operations")
    for op in graph.operations:
        print(f"  %{op.output} = {op.name}({', '.join(f'%{i}' for i in op.inputs)})")
    print("inputs:", graph.inputs, "outputs:", graph.outputs)

    # each tensor made in or copied into the scope is an Init (the weights, then the input), as Burn records them
    assert [op.name for op in graph.operations] == [
        "Init", "Init", "Init", "Init", "Tensor.matmul", "Tensor.add", "Tensor.relu", "Tensor.matmul", "Tensor.sigmoid",
    ]
    # Only capture devices can capture; anything else gets an error value, not an exception.
    assert Device.flex().capture_scope(build) is CaptureError.INVALID_DEVICE


if __name__ == "__main__":
    main()
