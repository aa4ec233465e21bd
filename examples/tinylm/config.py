from dataclasses import dataclass


@dataclass
class LMConfig:
    vocab_size: int = 64
    dim: int = 32
    n_heads: int = 4
    n_layers: int = 4
    max_seq_len: int = 64
    n_experts: int = 4
    top_k: int = 2
    use_moe: bool = True
    layerdrop: float = 0.1
    dropout: float = 0.0
