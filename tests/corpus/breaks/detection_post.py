"""Detection post-processing: thresholds, class-wise NMS, top-k."""

import torch
import torch.nn as nn


def box_area(boxes: torch.Tensor) -> torch.Tensor:
    return (boxes[:, 2] - boxes[:, 0]).clamp(min=0) * (boxes[:, 3] - boxes[:, 1]).clamp(min=0)


def box_iou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    return inter / (box_area(a)[:, None] + box_area(b)[None, :] - inter)


def nms(boxes: torch.Tensor, scores: torch.Tensor, iou_threshold: float) -> torch.Tensor:
    order = scores.argsort(descending=True)
    keep = []
    while order.numel() > 0:
        i = order[0]
        keep.append(i)
        if order.numel() == 1:
            break
        iou = box_iou(boxes[i][None], boxes[order[1:]])[0]
        order = order[1:][iou <= iou_threshold]
    return torch.stack(keep)


class PostProcess(nn.Module):
    def __init__(self, score_threshold: float = 0.3, iou_threshold: float = 0.5, max_dets: int = 10):
        super().__init__()
        self.score_threshold = score_threshold
        self.iou_threshold = iou_threshold
        self.max_dets = max_dets

    def forward(self, boxes: torch.Tensor, logits: torch.Tensor):
        scores, labels = logits.sigmoid().max(-1)
        keep = scores > self.score_threshold
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]
        results = []
        for cls in torch.unique(labels):
            m = labels == cls
            idx = nms(boxes[m], scores[m], self.iou_threshold)
            results.append(boxes[m][idx])
        return results


def topk_detections(boxes: torch.Tensor, logits: torch.Tensor, k: int = 5):
    # the static-shape variant: no thresholds, fixed k
    scores = logits.sigmoid().amax(-1)
    top = scores.topk(k).indices
    return boxes[top], scores[top]


post = torch.compile(PostProcess())
topk = torch.compile(topk_detections)


def run():
    torch.manual_seed(0)
    xy = torch.rand(12, 2) * 10
    boxes = torch.cat([xy, xy + torch.rand(12, 2) * 5 + 1], dim=1)
    logits = torch.randn(12, 3)
    post(boxes, logits)
    topk(boxes, logits)
