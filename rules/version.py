"""tclint's version, and the torch release its rules were measured against."""

__version__ = "0.1.0"
TARGET_TORCH = "2.13"
