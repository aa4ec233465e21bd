"""A user's script for torchmetrics: metrics computed inside compiled train and eval steps, as the
torchmetrics docs show (module metrics updated per batch, functional metrics in a step, a metric
compiled directly) (bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import torch
import torchmetrics
import torchmetrics.functional as TMF
from torch import nn
from torchmetrics.classification import MulticlassAccuracy, MulticlassF1Score
from torchmetrics.regression import MeanSquaredError, PearsonCorrCoef


class Classifier(nn.Module):
    def __init__(self, num_classes: int = 4) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, num_classes))

    def forward(self, x):
        return self.net(x)


def batch(n: int, num_classes: int = 4) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(n)
    return torch.randn(n, 6, generator=g), torch.randint(0, num_classes, (n,), generator=g)


# A sanity check run eagerly before anything is compiled. Without it, the first compiled call crashes:
# torchmetrics' lazy import flags (lightning_utilities' RequirementCache, e.g. _XLA_AVAILABLE) are
# first evaluated while Dynamo traces, and the PackageNotFoundError they catch inside becomes an
# InternalTorchDynamoError (torch 2.13).
MulticlassAccuracy(num_classes=4)(torch.randn(2, 4), torch.tensor([0, 1]))


def functional_train_step():
    model = Classifier()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    @torch.compile(backend="eager")
    def train_step(x, y):
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
        acc = TMF.accuracy(logits, y, task="multiclass", num_classes=4)
        f1 = TMF.f1_score(logits, y, task="multiclass", num_classes=4, average="macro")
        return loss, acc, f1

    for n in (8, 12):
        loss, _acc, _f1 = train_step(*batch(n))
        loss.backward()
        opt.step()
        opt.zero_grad()


class EvalModule(nn.Module):
    """A model that keeps its metrics as submodules and updates them in forward (a common pattern)."""

    def __init__(self) -> None:
        super().__init__()
        self.model = Classifier()
        self.acc = MulticlassAccuracy(num_classes=4)
        self.f1 = MulticlassF1Score(num_classes=4, average="macro")

    def forward(self, x, y):
        logits = self.model(x)
        self.acc.update(logits, y)
        self.f1.update(logits, y)
        return logits


def module_metrics_eval():
    model = EvalModule().eval()
    model = torch.compile(model, backend="eager")
    with torch.no_grad():
        for n in (8, 12):
            model(*batch(n))
    model.acc.compute()
    model.f1.compute()


def compiled_metric():
    metric = torch.compile(MulticlassAccuracy(num_classes=4), backend="eager")
    for n in (8, 12):
        x, y = batch(n)
        metric(torch.randn(n, 4), y)
    collection = torchmetrics.MetricCollection([MeanSquaredError(), PearsonCorrCoef()])
    collection = torch.compile(collection, backend="eager")
    for n in (8, 12):
        collection(torch.randn(n), torch.randn(n))


def regression_eval():
    reg = nn.Linear(6, 1).eval()

    def evaluate(x, target):
        pred = reg(x).squeeze(-1)
        return {
            "mse": TMF.mean_squared_error(pred, target),
            "mae": TMF.mean_absolute_error(pred, target),
            "r2": TMF.r2_score(pred, target),
            "pearson": TMF.pearson_corrcoef(pred, target),
        }

    evaluate = torch.compile(evaluate, backend="eager")
    with torch.no_grad():
        for n in (8, 12):
            x, _ = batch(n)
            evaluate(x, torch.randn(n))


PHASES = [functional_train_step, module_metrics_eval, compiled_metric, regression_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
