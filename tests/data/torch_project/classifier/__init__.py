"""A sentiment classifier trained on the GPU."""
