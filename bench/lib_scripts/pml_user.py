"""A user's script for pytorch-metric-learning: metric-learning losses and miners inside compiled
train steps, as the library's README shows (a miner feeding a triplet loss, a contrastive loss
compiled directly, a classification-style loss held by the model, a self-supervised NT-Xent step)
(bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import torch
from pytorch_metric_learning import distances, losses, miners, reducers
from torch import nn


class Embedder(nn.Module):
    def __init__(self, dim: int = 8) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, dim))

    def forward(self, x):
        return self.net(x)


def batch(n: int, classes: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(n)
    return torch.randn(n, 6, generator=g), torch.arange(n) % classes


def mined_triplet_train():
    model = Embedder()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    distance = distances.CosineSimilarity()
    reducer = reducers.ThresholdReducer(low=0)
    loss_func = losses.TripletMarginLoss(margin=0.2, distance=distance, reducer=reducer)
    miner = miners.TripletMarginMiner(margin=0.2, distance=distance, type_of_triplets="semihard")

    @torch.compile(backend="eager")
    def train_step(x, y):
        emb = model(x)
        triplets = miner(emb, y)
        return loss_func(emb, y, triplets)

    for n in (9, 12):
        loss = train_step(*batch(n))
        loss.backward()
        opt.step()
        opt.zero_grad()


def compiled_contrastive_loss():
    model = Embedder().train()
    loss_fn = torch.compile(losses.ContrastiveLoss(pos_margin=0, neg_margin=1), backend="eager")
    miner = miners.MultiSimilarityMiner(epsilon=0.1)
    for n in (9, 12):
        x, y = batch(n)
        emb = model(x)
        loss = loss_fn(emb, y, miner(emb, y))
        loss.backward()


class ArcFaceModel(nn.Module):
    """A model that owns its loss (ArcFace has learnable class centres) and returns it from forward."""

    def __init__(self, classes: int = 3, dim: int = 8) -> None:
        super().__init__()
        self.embedder = Embedder(dim)
        self.loss = losses.ArcFaceLoss(num_classes=classes, embedding_size=dim, margin=28.6, scale=64)

    def forward(self, x, y):
        return self.loss(self.embedder(x), y)


def arcface_train():
    model = torch.compile(ArcFaceModel().train(), backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for n in (9, 12):
        loss = model(*batch(n))
        loss.backward()
        opt.step()
        opt.zero_grad()


def ntxent_self_supervised():
    model = Embedder()
    loss_func = losses.SelfSupervisedLoss(losses.NTXentLoss(temperature=0.1))

    def step(x):
        view_a = x + 0.05 * torch.randn_like(x)
        view_b = x + 0.05 * torch.randn_like(x)
        return loss_func(model(view_a), model(view_b))

    step = torch.compile(step, backend="eager")
    for n in (9, 12):
        x, _ = batch(n)
        step(x).backward()


PHASES = [mined_triplet_train, compiled_contrastive_loss, arcface_train, ntxent_self_supervised]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
