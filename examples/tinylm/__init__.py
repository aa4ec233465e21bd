"""tinylm: a tiny decoder-only transformer used by tclint's demo and tests."""

from tinylm.config import LMConfig
from tinylm.model import TinyLM

__all__ = ["LMConfig", "TinyLM"]
