"""Decoding with caches kept on modules: growing lists and dicts versus a preallocated buffer."""

import torch
import torch.nn as nn


class ListCacheAttention(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.kv = nn.Linear(dim, dim)
        self.cache = []

    def forward(self, x):
        k = self.kv(x)
        self.cache.append(k)
        return torch.cat(self.cache, dim=1).sum(1, keepdim=True)


class DictCache(nn.Module):
    def __init__(self, dim: int = 8):
        super().__init__()
        self.kv = nn.Linear(dim, dim)
        self.layers = {}

    def forward(self, x, layer_idx: int):
        self.layers[layer_idx] = self.kv(x)
        return self.layers[layer_idx]


class StaticCache(nn.Module):
    def __init__(self, dim: int = 8, max_len: int = 32):
        super().__init__()
        self.kv = nn.Linear(dim, dim)
        self.register_buffer("keys", torch.zeros(1, max_len, dim))
        self.register_buffer("pos", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.keys.index_copy_(1, self.pos.view(1), self.kv(x)[:, None])
        self.pos += 1
        return self.keys.sum(1, keepdim=True)


list_attn = torch.compile(ListCacheAttention())
dict_cache = torch.compile(DictCache())
static_attn = torch.compile(StaticCache())


def run():
    x = torch.randn(1, 1, 8)
    for i in range(10):
        list_attn(x)
        dict_cache(x, i)
        static_attn(x[:, 0])
