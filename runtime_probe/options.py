"""Probe settings: ``[tool.tclint.probe]`` (and ``[tool.tclint.dynamo]``) merged with explicit
overrides from the CLI or the editor.  Validation of the TOML keys lives in
``tclint.rules.config.PROBE_KEYS``; this module turns them into one typed object."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields, replace
from typing import Any

from tclint.rules.config import ConfigError, ConfigResolver, Settings

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tb": 1024**4,
    "tib": 1024**4,
}


def parse_memory(value: Any, key: str = "memory-limit") -> int | None:
    """``4096`` (MiB), ``"4G"``, ``"512MiB"``, ``"none"`` -> bytes (None: no cap)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ConfigError(f'`{key}` must be a size such as "4G" or a number of MiB, got {value!r}', key=key)
    if isinstance(value, (int, float)):
        if value <= 0:
            raise ConfigError(f"`{key}` must be positive, got {value!r}", key=key)
        return int(value * 1024**2)
    text = str(value).strip().lower()
    if text in ("none", "off", "unlimited", "0"):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]*)", text)
    if not match or match.group(2) not in _UNITS:
        raise ConfigError(
            f'`{key}` must be a size such as "4G", "512M" or a number of MiB, got {value!r}', key=key
        )
    number = float(match.group(1))
    unit = match.group(2)
    return int(number * (_UNITS[unit] if unit else 1024**2))


def default_memory_limit() -> int | None:
    """Three quarters of the machine's memory: a runaway probe must not take the machine down."""
    try:
        pages = os.sysconf("SC_PHYS_PAGES")
        size = os.sysconf("SC_PAGE_SIZE")
        return int(pages * size * 0.75)
    except (ValueError, OSError, AttributeError):
        return None


@dataclass
class ProbeOptions:
    """Everything that changes how a probe runs.  ``None`` means "the default"."""

    python: str | None = None  # the interpreter that runs the worker (default: sys.executable)
    backend: str = "eager"
    timeout: float = 120.0
    memory_limit: int | None = field(default_factory=default_memory_limit)  # bytes
    max_calls: int | None = None
    map_cuda_to_cpu: bool = False
    device: str = "auto"
    env: dict[str, str] = field(default_factory=dict)
    compile_mode: str | None = None  # torch.compile(mode=...) in function mode
    fullgraph: bool | None = None
    dynamic: bool | None = None
    dynamo: dict[str, Any] = field(default_factory=dict)  # torch._dynamo.config patches
    inputs: list[str] = field(default_factory=list)  # declared inputs files (absolute)
    cwd: str | None = None
    stream_output: bool = False

    def with_(self, **changes: Any) -> ProbeOptions:
        known = {f.name for f in fields(self)}
        return replace(self, **{k: v for k, v in changes.items() if k in known and v is not None})

    @classmethod
    def from_settings(cls, settings: Settings, **overrides: Any) -> ProbeOptions:
        """The options for files governed by ``settings``; ``overrides`` (not None) win."""
        probe = dict(settings.probe or {})
        root = settings.root or os.getcwd()
        opts = cls()
        for key, name in _AS_GIVEN.items():
            if key in probe:
                setattr(opts, name, probe[key])
        if "python" in probe:
            python = probe["python"]
            opts.python = (
                python if os.path.isabs(python) or os.sep not in python else os.path.join(root, python)
            )
        if "timeout" in probe:
            opts.timeout = float(_positive(probe, "timeout", settings))
        if "memory-limit" in probe:
            try:
                opts.memory_limit = parse_memory(probe["memory-limit"], "probe.memory-limit")
            except ConfigError as exc:
                raise ConfigError(str(exc), settings.path, "probe.memory-limit") from None
        if "inputs" in probe:
            opts.inputs = _inputs(probe["inputs"], root, settings)
        if "device" in probe:
            opts.device = _device(probe["device"], settings)
        if "max-calls" in probe:
            opts.max_calls = _positive(probe, "max-calls", settings)
        if "env" in probe:
            opts.env = {str(k): str(v) for k, v in probe["env"].items()}
        if "cwd" in probe:
            opts.cwd = os.path.normpath(os.path.join(root, probe["cwd"]))
        opts.dynamo = {k: v for k, v in (settings.dynamo or {}).items() if k != "cache_size_limit"}
        return opts.with_(**overrides)


# [tool.tclint.probe] keys taken as they are written: key -> ProbeOptions field
_AS_GIVEN = {
    "backend": "backend",
    "map-cuda-to-cpu": "map_cuda_to_cpu",
    "mode": "compile_mode",
    "fullgraph": "fullgraph",
    "dynamic": "dynamic",
}


def _positive(probe: dict[str, Any], key: str, settings: Settings) -> Any:
    if probe[key] <= 0:
        raise ConfigError(f"`probe.{key}` must be positive", settings.path, f"probe.{key}")
    return probe[key]


def _inputs(items: Any, root: str, settings: Settings) -> list[str]:
    if not all(isinstance(i, str) for i in items):
        raise ConfigError("`probe.inputs` must be a list of file paths", settings.path, "probe.inputs")
    return [os.path.normpath(os.path.join(root, i)) for i in items]


def _device(device: str, settings: Settings) -> str:
    if device not in ("auto", "cpu", "cuda") and not device.startswith("cuda:"):
        raise ConfigError("`probe.device` must be auto, cpu or cuda", settings.path, "probe.device")
    return device


def options_for(
    path: str | None = None, resolver: ConfigResolver | None = None, **overrides: Any
) -> ProbeOptions:
    """Options from the configuration that governs ``path`` (or the current folder)."""
    resolver = resolver or ConfigResolver()
    settings = resolver.for_file(path) if path else resolver.for_dir(os.getcwd())
    return ProbeOptions.from_settings(settings, **overrides)
