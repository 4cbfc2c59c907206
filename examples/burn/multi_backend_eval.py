"""Evaluate a classifier on Flex with batches prepared on a CUDA device.

The input pipeline runs on `Cuda(0)` (decoding and normalization would be
GPU work), the model's weights live on the `Flex` backend. Each batch is moved
Cuda -> Flex with `to_device`: for plain tensors a move to another backend is
a host copy, for features (floats) and for labels (ints) alike. Inference
needs no autodiff, so everything here is plain.
"""

import numpy as np

from runtime_shim import Device, Tensor, reveal_device

NUM_CLASSES = 3
FEATURES = 4


def make_dataset(rng, n):
    """Gaussian blobs, one per class, with integer labels."""
    centers = rng.normal(scale=3.0, size=(NUM_CLASSES, FEATURES)).astype(np.float32)
    labels = rng.integers(0, NUM_CLASSES, size=n)
    features = centers[labels] + rng.normal(size=(n, FEATURES)).astype(np.float32)
    return features, labels, centers


def load_batches(features, labels, batch_size, device):
    """Yield (features, labels) batches on ``device``, normalized there."""
    mean = Tensor.from_data(features.mean(axis=0, keepdims=True), device)
    std = Tensor.from_data(features.std(axis=0, keepdims=True), device)
    for start in range(0, len(labels), batch_size):
        x = Tensor.from_data(features[start:start + batch_size], device)
        y = Tensor.from_ints(labels[start:start + batch_size].reshape(-1, 1).tolist(), device)
        yield (x - mean) / std, y


def nearest_centroid_model(centers, features, device):
    """A linear classifier equivalent to nearest-centroid in the normalized space."""
    mean, std = features.mean(axis=0), features.std(axis=0)
    c = (centers - mean) / std
    weight = Tensor.from_data(c.T.astype(np.float32), device)  # [FEATURES, NUM_CLASSES]
    bias = Tensor.from_data((-0.5 * (c * c).sum(axis=1, keepdims=True).T).astype(np.float32), device)
    return weight, bias


def main():
    rng = np.random.default_rng(7)
    features, labels, centers = make_dataset(rng, 256)
    data_device = Device.cuda(0)
    model_device = Device.flex()
    weight, bias = nearest_centroid_model(centers, features, model_device)

    correct = total = 0
    for i, (x, y) in enumerate(load_batches(features, labels, 64, data_device)):
        x = x.to_device(model_device)
        y = y.to_device(model_device)
        if i == 0:
            print("batch:", reveal_device(x), "| labels:", reveal_device(y), "| weights:", reveal_device(weight))
        logits = x @ weight + bias
        predicted = logits.argmax(1)
        correct += predicted.equal(y).int().sum().into_scalar()
        total += y.shape[0]

    accuracy = correct / total
    print(f"accuracy {correct}/{total} = {accuracy:.3f}")
    assert accuracy > 0.9


if __name__ == "__main__":
    main()
