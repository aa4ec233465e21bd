"""A user's script for gpytorch: an exact GP regression model and a deep-kernel model, trained with a
compiled loss step and evaluated compiled, as gpytorch's README and tutorials build them
(bench/lib_eval.py runs the phases under Dynamo and lints this file)."""

import gpytorch
import torch
from torch import nn


def train_data(n: int = 12) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.linspace(0, 1, n)
    return x, torch.sin(x * 6.0) + 0.05 * torch.randn(n, generator=torch.Generator().manual_seed(n))


class ExactGPModel(gpytorch.models.ExactGP):
    def __init__(self, train_x, train_y, likelihood):
        super().__init__(train_x, train_y, likelihood)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

    def forward(self, x):
        mean_x = self.mean_module(x)
        covar_x = self.covar_module(x)
        return gpytorch.distributions.MultivariateNormal(mean_x, covar_x)


def exact_gp_train():
    train_x, train_y = train_data()
    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = ExactGPModel(train_x, train_y, likelihood)
    model.train()
    likelihood.train()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)

    @torch.compile(backend="eager")
    def loss_step(x, y):
        output = model(x)
        return -mll(output, y)

    for _ in range(2):
        optimizer.zero_grad()
        loss = loss_step(train_x, train_y)
        loss.backward()
        optimizer.step()


def exact_gp_predict():
    train_x, train_y = train_data()
    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = ExactGPModel(train_x, train_y, likelihood).eval()
    likelihood.eval()

    def predict(x):
        pred = likelihood(model(x))
        return pred.mean, pred.variance

    predict = torch.compile(predict, backend="eager")
    with torch.no_grad(), gpytorch.settings.fast_pred_var():
        for n in (5, 7):
            predict(torch.linspace(0, 1, n))


class FeatureExtractor(nn.Sequential):
    def __init__(self) -> None:
        super().__init__(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))


class DKLModel(gpytorch.models.ExactGP):
    """Deep kernel learning: a neural feature extractor in front of a GP kernel."""

    def __init__(self, train_x, train_y, likelihood):
        super().__init__(train_x, train_y, likelihood)
        self.feature_extractor = FeatureExtractor()
        self.scale_to_bounds = gpytorch.utils.grid.ScaleToBounds(-1.0, 1.0)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.MaternKernel(nu=2.5))

    def forward(self, x):
        z = self.scale_to_bounds(self.feature_extractor(x))
        return gpytorch.distributions.MultivariateNormal(self.mean_module(z), self.covar_module(z))


def dkl_train():
    g = torch.Generator().manual_seed(0)
    train_x = torch.randn(10, 3, generator=g)
    train_y = train_x.sum(-1)
    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    model = DKLModel(train_x, train_y, likelihood)
    model.train()
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(likelihood, model)
    step = torch.compile(lambda: -mll(model(train_x), train_y), backend="eager")
    for _ in range(2):
        step().backward()


class SVGPModel(gpytorch.models.ApproximateGP):
    def __init__(self, inducing_points):
        variational_distribution = gpytorch.variational.CholeskyVariationalDistribution(inducing_points.size(0))
        variational_strategy = gpytorch.variational.VariationalStrategy(
            self, inducing_points, variational_distribution, learn_inducing_locations=True
        )
        super().__init__(variational_strategy)
        self.mean_module = gpytorch.means.ConstantMean()
        self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

    def forward(self, x):
        return gpytorch.distributions.MultivariateNormal(self.mean_module(x), self.covar_module(x))


def svgp_train():
    train_x, train_y = train_data(16)
    model = SVGPModel(train_x[:4].clone())
    likelihood = gpytorch.likelihoods.GaussianLikelihood()
    mll = gpytorch.mlls.VariationalELBO(likelihood, model, num_data=train_y.size(0))
    model.train()
    likelihood.train()
    loss_fn = torch.compile(lambda x, y: -mll(model(x), y), backend="eager")
    for n in (8, 12):
        loss_fn(train_x[:n], train_y[:n]).backward()


PHASES = [exact_gp_train, exact_gp_predict, dkl_train, svgp_train]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
