"""A user's script for torch_geometric: small GNNs compiled as the PyG docs show (bench/lib_eval.py).

Each phase builds its models, compiles them with ``torch.compile`` and calls them on a few random
graphs of different sizes.  lib_eval runs the phases under Dynamo (truth) and lints this file with
the library (static side): the compile sites below are what tclint has to resolve.
"""

import torch
from torch import nn
from torch_geometric.nn import GAT, GCN, GIN, GraphSAGE, global_add_pool, global_max_pool, global_mean_pool
from torch_geometric.nn.conv import GATv2Conv, GCNConv, SAGEConv, TransformerConv
from torch_geometric.nn.models import GraphUNet
from torch_geometric.utils import dropout_edge, to_dense_batch


def random_graph(nodes: int, feats: int, graphs: int = 1, seed: int = 0):
    g = torch.Generator().manual_seed(seed + nodes)
    x = torch.randn(nodes, feats, generator=g)
    edge_index = torch.randint(0, nodes, (2, 3 * nodes), generator=g)
    batch = torch.arange(nodes) * graphs // nodes
    return x, edge_index, batch


class GraphClassifier(nn.Module):
    def __init__(self, feats: int, hidden: int, classes: int) -> None:
        super().__init__()
        self.conv1 = GCNConv(feats, hidden)
        self.conv2 = SAGEConv(hidden, hidden)
        self.conv3 = GATv2Conv(hidden, hidden, heads=2, concat=False)
        self.head = nn.Linear(3 * hidden, classes)

    def forward(self, x, edge_index, batch):
        edge_index, _ = dropout_edge(edge_index, p=0.1, training=self.training)
        x = self.conv1(x, edge_index).relu()
        x = self.conv2(x, edge_index).relu()
        x = self.conv3(x, edge_index)
        pooled = torch.cat([global_mean_pool(x, batch), global_max_pool(x, batch), global_add_pool(x, batch)], -1)
        return self.head(pooled)


class DenseReadout(nn.Module):
    def __init__(self, feats: int, hidden: int) -> None:
        super().__init__()
        self.conv = TransformerConv(feats, hidden, heads=2)
        self.attn = nn.MultiheadAttention(2 * hidden, 2, batch_first=True)

    def forward(self, x, edge_index, batch):
        h = self.conv(x, edge_index)
        dense, mask = to_dense_batch(h, batch)
        out, _ = self.attn(dense, dense, dense, key_padding_mask=~mask)
        return out.mean(1)


def basic_gnns_eval():
    for cls in (GCN, GraphSAGE, GIN, GAT):
        model = cls(8, 16, 2, out_channels=4).eval()
        model = torch.compile(model, backend="eager")
        for nodes in (10, 14, 20):
            x, edge_index, _ = random_graph(nodes, 8)
            with torch.no_grad():
                model(x, edge_index)


def classifier_train():
    model = GraphClassifier(8, 16, 3)
    model.train()
    compiled = torch.compile(model, backend="eager")
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    for nodes, graphs in ((12, 2), (18, 3), (24, 4)):
        x, edge_index, batch = random_graph(nodes, 8, graphs)
        loss = compiled(x, edge_index, batch).logsumexp(-1).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()


def dense_readout_eval():
    model = DenseReadout(8, 8)
    model.eval()
    compiled = torch.compile(model, backend="eager")
    for nodes, graphs in ((12, 2), (18, 3)):
        x, edge_index, batch = random_graph(nodes, 8, graphs)
        with torch.no_grad():
            compiled(x, edge_index, batch)


def graph_unet_eval():
    net = GraphUNet(8, 16, 4, depth=2)
    net.eval()
    compiled = torch.compile(net, backend="eager")
    # one graph size: a second size crashes Dynamo 2.13 (automatic dynamic shapes, IndexError in
    # pgo.is_stride_dynamic on a resume frame of remove_self_loops)
    x, edge_index, _ = random_graph(16, 8)
    with torch.no_grad():
        compiled(x, edge_index)


PHASES = [basic_gnns_eval, classifier_train, dense_readout_eval, graph_unet_eval]

if __name__ == "__main__":
    for phase in PHASES:
        phase()
