"""The observer's stand-in for ``torchvision.ops`` (see :mod:`.stand_ins`): the box ops, which (as torchvision's
kernels do) need their tensors on one device; the results are computed with torch ops, so a mismatch fails as
PyTorch's does."""

from __future__ import annotations

import torch

__path__: list[str] = []


def box_area(boxes: torch.Tensor) -> torch.Tensor:
    return (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])


def box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    lt = torch.max(boxes1[:, None, :2], boxes2[:, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[:, 2:])
    inter = (rb - lt).clamp(min=0).prod(2)
    return inter / (box_area(boxes1)[:, None] + box_area(boxes2) - inter)


generalized_box_iou = distance_box_iou = complete_box_iou = box_iou


def nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    order = torch.argsort(scores + boxes[:, 0] * 0, descending=True)  # (one device: as the kernel checks)
    iou = box_iou(boxes[order], boxes[order])
    keep = [i for i in range(len(order)) if not bool((iou[i, :i] > iou_threshold).any())]
    return order[torch.tensor(keep, dtype=torch.long, device=order.device)]


def batched_nms(boxes: torch.Tensor, scores: torch.Tensor, idxs: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    offsets = idxs.to(boxes) * (boxes.max() + 1)
    return nms(boxes + offsets[:, None], scores + idxs * 0, iou_threshold)
