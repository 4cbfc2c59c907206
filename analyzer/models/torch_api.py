"""Which PyTorch names the engine models, and how: creation functions, ops that keep the device, reductions.

Names the model does not list give an unknown value (no finding), never a guess.
What fails and why is :mod:`runtime_shim.torch_semantics`'s.
"""

from __future__ import annotations

#: ``torch.<name>(...)`` that create a tensor (``device=``, ``requires_grad=``; else the default device).
CREATORS = frozenset({
    "tensor", "as_tensor", "zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange", "linspace",
    "logspace", "eye", "randperm", "normal", "bernoulli_like", "tril_indices", "triu_indices", "scalar_tensor",
    "hann_window", "hamming_window", "blackman_window", "bartlett_window", "kaiser_window",
})
#: ``torch.<name>_like(t, ...)``: on ``t``'s device unless ``device=`` says otherwise.
LIKE_CREATORS = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
                           "randint_like"})

#: Ops over tensors that require every tensor operand on one device (torch.<name>, Tensor.<name>,
#: torch.nn.functional.<name>); the result is on that device.
CHECKED_OPS = frozenset({
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "remainder",
    "fmod", "pow", "matmul", "mm", "bmm", "mv", "dot", "vdot", "inner", "outer", "ger", "addmm", "baddbmm",
    "addmv", "addcmul", "addcdiv", "einsum", "tensordot", "kron", "cross", "linalg_cross", "maximum", "minimum",
    "fmax", "fmin", "eq", "ne", "lt", "le", "gt", "ge", "equal", "isclose", "allclose", "where", "masked_fill",
    "masked_select", "masked_scatter", "lerp", "atan2", "hypot", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "cdist", "dist", "cosine_similarity", "pairwise_distance",
    "bilinear", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "layer_norm",
    "group_norm", "batch_norm", "instance_norm", "rms_norm", "prelu", "mse_loss", "l1_loss", "smooth_l1_loss",
    "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "kl_div", "cosine_embedding_loss", "margin_ranking_loss", "triplet_margin_loss", "poisson_nll_loss",
    "gaussian_nll_loss", "soft_margin_loss", "multilabel_soft_margin_loss", "scaled_dot_product_attention",
    "clamp", "clip", "grid_sample", "embedding", "index_select", "gather", "scatter", "scatter_add",
    "scatter_reduce", "index_add", "index_copy", "index_fill", "take", "take_along_dim", "index_put",
    "searchsorted", "bucketize", "isin", "polar", "complex", "mul_", "add_", "sub_", "div_", "masked_fill_",
    "index_add_", "index_copy_", "index_fill_", "scatter_", "scatter_add_", "scatter_reduce_", "index_put_",
    "clamp_", "clip_", "pow_", "lerp_", "addcmul_", "addcdiv_", "baddbmm_", "addmm_", "copysign", "stft", "istft",
    "spmm", "smm", "hspmm", "sspaddmm", "solve", "solve_triangular", "cholesky_solve", "vecdot",
})
#: ``torch.fft`` transforms: one tensor on its input's device (never 0-dim: they need a dimension).
FFT_OPS = frozenset({"fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn",
                     "irfftn", "hfft", "ihfft", "fftshift", "ifftshift"})
#: ``torch.fft`` sample frequencies: created on ``device=``, else the default device.
FFT_FREQUENCIES = frozenset({"fftfreq", "rfftfreq"})
#: Ops over a sequence of tensors (the first argument), all on one device.
SEQUENCE_OPS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack", "column_stack",
                          "block_diag", "cartesian_prod", "meshgrid"})
#: Of those, the ones that take the tensors as separate arguments too (``torch.meshgrid(xs, ys)``).
VARIADIC_SEQUENCE_OPS = frozenset({"block_diag", "cartesian_prod", "meshgrid"})
#: Ops over tensors that check no devices: each result is an expanded view of its input, where it is
#: (``torch.broadcast_tensors``, which ``torch.distributions`` builds every distribution's parameters with).
UNCHECKED_VIEWS = frozenset({"broadcast_tensors"})
#: Ops that return one tensor on the input's device (no device question).
SAME_DEVICE_OPS = frozenset({
    "abs", "neg", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "relu6", "gelu", "silu", "mish", "elu",
    "selu", "celu", "leaky_relu", "hardtanh", "hardswish", "hardsigmoid", "softplus", "softsign", "softmax",
    "log_softmax", "softmin", "dropout", "dropout1d", "dropout2d", "dropout3d", "normalize", "pad", "interpolate",
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool2d", "max_pool3d", "adaptive_avg_pool1d",
    "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "one_hot",
    "floor", "ceil", "round", "trunc", "frac", "sign", "sgn", "reciprocal", "square", "erf", "erfc", "erfinv",
    "logit", "nan_to_num", "cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "flip", "fliplr", "flipud",
    "roll", "rot90", "tril", "triu", "diag", "diagonal", "diag_embed", "trace", "reshape", "view", "view_as",
    "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose", "swapaxes", "swapdims", "movedim",
    "t", "contiguous", "clone", "expand", "expand_as", "repeat", "repeat_interleave", "tile", "narrow",
    "float", "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char", "type", "abs_",
    "relu_", "sigmoid_", "tanh_", "exp_", "zero_", "fill_", "uniform_", "normal_", "bernoulli", "multinomial",
    "argsort", "nonzero", "unique", "detach", "detach_", "clamp_min", "clamp_max", "masked_fill_", "pin_memory",
    "requires_grad_", "retain_grad", "conj", "real", "imag", "angle", "isnan", "isinf", "isfinite", "logical_not",
    "bitwise_not", "square_", "sqrt_", "neg_", "unsqueeze_", "squeeze_", "t_", "transpose_", "resize_",
    "softmax_", "as_strided", "unfold", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
    "affine_grid", "coalesce", "to_dense", "to_sparse", "values", "indices", "_values", "_indices",
})
#: Reductions: a 0-dim result unless a dimension is given.
REDUCTIONS = frozenset({"sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "std", "var",
                        "norm", "all", "any", "median", "nansum", "nanmean", "count_nonzero", "logsumexp"})
#: Arguments that name a reduction's dimension.
DIM_KEYWORDS = ("dim", "axis")
#: Losses in torch.nn.functional (a 0-dim result with the default reduction).
FUNCTIONAL_LOSSES = frozenset({
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss", "margin_ranking_loss",
    "triplet_margin_loss", "poisson_nll_loss", "gaussian_nll_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss",
})
#: Grad-mode switches: ``torch.<name>()`` -> the mode inside the block (or after the call).
GRAD_MODES = {"no_grad": False, "inference_mode": False, "enable_grad": True}
#: nn.Module methods that return the module itself (``model.eval()``).
MODULE_SELF_METHODS = frozenset({"eval", "train", "requires_grad_", "zero_grad", "share_memory", "float", "double",
                                 "half", "bfloat16", "apply", "type"})
#: nn.Module methods the model handles (the rest of nn.Module's API is unknown).
MODULE_METHODS = MODULE_SELF_METHODS | {
    "to", "cuda", "cpu", "parameters", "named_parameters", "buffers", "named_buffers", "register_buffer",
    "register_parameter", "register_forward_hook", "register_forward_pre_hook", "state_dict", "load_state_dict",
    "children", "modules", "named_modules", "named_children", "add_module", "forward",
}
#: Legacy typed constructors: ``torch.LongTensor([1, 2])`` is a CPU tensor whatever the default device
#: (``torch.cuda.LongTensor`` is the CUDA one); the names double as ``Tensor.type(...)`` targets.
LEGACY_TENSOR_TYPES = frozenset({"FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor",
                                 "IntTensor", "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"})
#: Losses whose class weights are registered buffers (they move with the loss): name -> the constructor's
#: (position, keyword) of each weight argument.
WEIGHTED_LOSSES: dict[str, tuple[tuple[int, str], ...]] = {
    "CrossEntropyLoss": ((0, "weight"),), "NLLLoss": ((0, "weight"),), "BCELoss": ((0, "weight"),),
    "BCEWithLogitsLoss": ((0, "weight"), (4, "pos_weight")), "MultiLabelSoftMarginLoss": ((0, "weight"),),
}
#: Names that register a sub-module other than by assigning it to an attribute: a layer a class also keeps
#: in a plain list may then be registered (and moved in place by ``.to()``) after all.
DYNAMIC_REGISTRATION = frozenset({"add_module", "register_module", "setattr", "ModuleList", "ModuleDict",
                                  "Sequential"})
#: Those of them that are containers kept in an attribute: what they register, the analysis sees.
REGISTERING_CONTAINERS = frozenset({"ModuleList", "ModuleDict", "Sequential"})
#: numpy functions that convert a tensor argument through ``__dlpack__`` rather than ``__array__``.
NUMPY_DLPACK = frozenset({"from_dlpack"})
#: numpy functions that, given a tensor itself (not a list), do not convert it: they read its attribute
#: (``np.shape(t)`` is ``t.shape``) or call its own method, which works (``np.squeeze``) or raises a TypeError
#: whatever the device (``np.mean(t)`` calls ``t.mean(axis=None, dtype=None, out=None)``). Not here: the
#: functions numpy falls back to converting for when the method call raises a TypeError (``np.argmax(t,
#: axis=1)``, ``np.round``, ``np.clip``, ``np.reshape`` ...): those do convert; so does ``np.array_equal``,
#: which catches the conversion's error and answers False (a wrong answer rather than a crash).
NUMPY_NO_CONVERSION = frozenset({
    "shape", "ndim", "size", "squeeze", "swapaxes", "nonzero", "sum", "prod", "max", "min", "amax", "amin",
    "any", "all", "mean", "std", "var",
})
#: Tensor ops whose result never requires grad (integer or boolean results).
NO_GRAD_RESULTS = frozenset({
    "argmax", "argmin", "argsort", "nonzero", "long", "int", "short", "bool", "byte", "char", "isnan", "isinf",
    "isfinite", "logical_not", "logical_and", "logical_or", "logical_xor", "bitwise_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "eq", "ne", "lt", "le", "gt", "ge", "isin", "isclose", "searchsorted",
    "bucketize", "count_nonzero", "equal", "allclose",
})
#: Reductions with a dimension that return ``(values, indices)``; the indices never require grad.
VALUES_INDICES = frozenset({"max", "min", "sort", "topk", "kthvalue", "median", "mode", "cummax", "cummin"})
#: The fields of what they return (``torch.return_types.topk``), in order.
VALUES_INDICES_FIELDS = ("values", "indices")
#: dtype names: integer and boolean ones (a cast to them drops requires-grad) and float32 (PyTorch's default
#: dtype: ``.float()`` of a tensor created without ``dtype=`` is the tensor itself).
INTEGER_DTYPES = frozenset({"long", "int64", "int", "int32", "short", "int16", "int8", "uint8", "bool", "uint16",
                            "uint32", "uint64"})
DEFAULT_FLOAT_DTYPES = frozenset({"float", "float32"})
#: Legacy typed constructors of integer and boolean tensors (a cast to them drops requires-grad).
INTEGER_TENSOR_TYPES = frozenset(t for t in LEGACY_TENSOR_TYPES if t not in {"FloatTensor", "DoubleTensor",
                                                                             "HalfTensor", "BFloat16Tensor"})
#: ``a < b`` and the like on tensors: a bool tensor (the ops' names as ``torch_binop`` gives them).
COMPARISONS = frozenset({"eq", "noteq", "lt", "lte", "gt", "gte"})
#: Casts and copies that return the tensor itself for a leaf created without ``dtype=`` (contiguous, float32).
LEAF_IDENTITIES = frozenset({"contiguous", "float"})
#: Ops whose result has the input's number of dimensions (a transpose, a cast, an element-wise function): an
#: index tensor's rank survives ``edge_index.t().contiguous()``, so its rows are known not to be 0-dim.
RANK_KEEPING = frozenset({
    "t", "transpose", "swapaxes", "swapdims", "permute", "movedim", "contiguous", "clone", "detach", "float",
    "double", "half", "bfloat16", "long", "int", "short", "bool", "byte", "char", "flip", "fliplr", "flipud", "roll",
    "tril", "triu", "narrow", "pin_memory", "abs", "neg", "exp", "log", "sqrt", "sigmoid", "tanh", "relu",
    "softmax", "log_softmax", "cumsum", "cumprod", "argsort", "clamp_min", "clamp_max", "sign", "round", "floor",
    "ceil", "isnan", "isinf", "logical_not",
})
#: ``kl_divergence(p, q)`` of two distributions: an op over both one's parameters and the other's.
KL_DIVERGENCE = frozenset({"torch.distributions.kl_divergence", "torch.distributions.kl.kl_divergence"})
#: Distributions whose ``log_prob(value)`` gathers with ``value`` as the index (MV207 when it is elsewhere).
INDEXED_LOG_PROB = frozenset({"Categorical"})
#: Layers whose call returns a tuple: (output, hidden) ((h, c) for an LSTM); attention: (output, weights).
TUPLE_OUTPUTS = frozenset({"LSTM", "GRU", "RNN", "MultiheadAttention"})



def devices_equal(a: tuple[str, int | None, bool], b: tuple[str, int | None, bool]) -> bool | None:
    """``torch.device.__eq__`` on two known devices, each (type, index the model gives it, written without an
    index); ``None`` where the model cannot tell. A device written without an index (``torch.device("cuda")``)
    has index ``None`` at run time: it equals only another such device of its type, never a tensor's
    ``.device`` (always indexed); devices of different types are never equal."""
    if a[0] != b[0]:
        return False
    if a[0] in ("cpu", "meta"):
        return True
    if a[2] or b[2]:
        return a[2] == b[2]
    return None if a[1] is None or b[1] is None else a[1] == b[1]


def device_str(kind: str, index: int | None, bare: bool) -> str:
    """``str(torch.device(...))``: ``"cuda:0"``, ``"cpu"``; a device written without an index has none."""
    return kind if bare or index is None else f"{kind}:{index}"
