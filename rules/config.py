"""Configuration: ``[tool.tclint]`` in pyproject.toml, or the same keys at the top of tclint.toml.

As with ruff, the nearest configuration file above a file applies to it (tclint.toml wins over
pyproject.toml in the same folder; a pyproject.toml without ``[tool.tclint]`` is skipped), and
``--config`` replaces discovery.  Unknown keys and wrong types are errors that name the key and the
file: a silently ignored typo in ``ignore`` would make tclint quietly report what the user asked
it not to.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tclint.rules.model import Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


CONFIG_FILES = ("tclint.toml", ".tclint.toml", "pyproject.toml")
DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".git-rewrite", ".hg", ".mypy_cache", ".nox", ".pants.d",
    ".pytype", ".ruff_cache", ".svn", ".tox", ".venv", "__pypackages__", "_build", "buck-out",
    "build", "dist", "node_modules", "venv", ".tclint_cache", "site-packages",
)  # fmt: skip


class ConfigError(Exception):
    """A configuration problem, with the file and key it is about."""

    def __init__(self, message: str, path: str | None = None, key: str | None = None) -> None:
        self.path = path
        self.key = key
        where = f"{path}: " if path else ""
        super().__init__(f"{where}{message}")


DYNAMO_KEYS: dict[str, type | tuple[type, ...]] = {
    "capture_scalar_outputs": bool,
    "capture_dynamic_output_shape_ops": bool,
    "trace_numpy": bool,
    "reorderable_logging_functions": list,
    "ignore_logging_functions": list,
    "recompile_limit": int,
    "cache_size_limit": int,
    "automatic_dynamic_shapes": bool,
    "allow_unspec_int_on_nn_module": bool,
    "specialize_float": bool,
    "assume_static_by_default": bool,
    "trace_autograd_ops": bool,
}

PROBE_KEYS: dict[str, type | tuple[type, ...]] = {
    "python": str,
    "timeout": (int, float),
    "memory-limit": (int, str),
    "backend": str,
    "inputs": list,
    "device": str,
    "map-cuda-to-cpu": bool,
    "max-calls": int,
    "env": dict,
    "mode": str,
    "fullgraph": bool,
    "dynamic": bool,
    "cwd": str,
}

# [tool.tclint.bench]: the protocol of `tclint bench` and the budgets `tclint bench --check` enforces
BENCH_KEYS: dict[str, type | tuple[type, ...]] = {
    "backend": str,
    "modes": list,
    "iterations": int,
    "seconds": (int, float),
    "warmup-calls": int,
    "train-steps": int,
    "timeout": (int, float),
    "cache-run": bool,
    "cold-start-s": (int, float),
    "peak-memory": (int, str),
    "max-variants": int,
    "recompiles-after-warmup": int,
    "p99-p50-ratio": (int, float),
    "min-speedup": (int, float),
}


@dataclass
class Settings:
    """Resolved settings for one configuration file (or the defaults)."""

    path: str | None = None  # the file they came from
    root: str | None = None  # the folder that file is in: relative patterns are relative to it
    select: list[str] = field(default_factory=lambda: ["TC"])
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    severity: dict[str, Severity] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    force_exclude: bool = False
    respect_gitignore: bool = True
    assume_compiled: list[str] = field(default_factory=list)
    assume_compiled_forward: bool = False
    follow_libraries: bool = False  # follow regions into installed packages (tclint.rules.libfollow)
    compiling_predicates: list[str] = field(default_factory=list)
    target_torch_version: str = "2.13"
    preview: bool = False
    min_confidence: str = "medium"
    unsafe_fixes: bool = False
    output_format: str = "concise"
    cache_dir: str = ".tclint_cache"
    max_file_size: int = 10 * 1024 * 1024
    dynamo: dict[str, Any] = field(default_factory=dict)
    probe: dict[str, Any] = field(default_factory=dict)
    bench: dict[str, Any] = field(default_factory=dict)

    def severity_for(self, code: str, default: Severity) -> Severity:
        # longest matching prefix wins: {"TC1" = "error", "TC104" = "info"}
        best = None
        for prefix, sev in self.severity.items():
            if code.startswith(prefix) and (best is None or len(prefix) > len(best[0])):
                best = (prefix, sev)
        return best[1] if best else default

    def cache_key(self) -> str:
        """The settings that change analysis results, for cache invalidation."""
        import hashlib
        import json

        relevant = {
            "assume_compiled": self.assume_compiled,
            "assume_compiled_forward": self.assume_compiled_forward,
            "compiling_predicates": self.compiling_predicates,
            "dynamo": self.dynamo,
        }
        return hashlib.sha1(json.dumps(relevant, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _str_list(value: Any, key: str, path: str | None) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"`{key}` must be a list of strings, got {_describe(value)}", path, key)
    return list(value)


def _bool(value: Any, key: str, path: str | None) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"`{key}` must be true or false, got {_describe(value)}", path, key)
    return value


def _describe(value: Any) -> str:
    return f"{type(value).__name__} {value!r}"[:80]


def _codes(value: Any, key: str, path: str | None) -> list[str]:
    items = _str_list(value, key, path)
    if items:
        from tclint.rules.registry import validate_selector  # (only then: a warm run may need none)
    for item in items:
        problem = validate_selector(item)
        if problem:
            raise ConfigError(f"`{key}`: {problem}", path, key)
    return items


def _severity_map(value: Any, key: str, path: str | None) -> dict[str, Severity]:
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table of code = severity, got {_describe(value)}", path, key)
    out = {}
    from tclint.rules.model import Severity
    from tclint.rules.registry import validate_selector

    for code, sev in value.items():
        problem = validate_selector(code)
        if problem:
            raise ConfigError(f"`{key}.{code}`: {problem}", path, key)
        if not isinstance(sev, str):
            raise ConfigError(f"`{key}.{code}` must be a string", path, key)
        try:
            out[code] = Severity.parse(sev)
        except ValueError:
            raise ConfigError(
                f"`{key}.{code}`: unknown severity {sev!r} (use error, warning, info or hint)", path, key
            ) from None
    return out


def _per_file(value: Any, key: str, path: str | None) -> dict[str, list[str]]:
    if not isinstance(value, dict):
        raise ConfigError(f"`{key}` must be a table of glob = [codes]", path, key)
    return {str(k): _codes(v, f"{key}.{k}", path) for k, v in value.items()}


def _typed_table(schema: dict[str, Any], name: str) -> Callable[[Any, str, str | None], dict[str, Any]]:
    def parse(value: Any, key: str, path: str | None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ConfigError(f"`{key}` must be a table", path, key)
        out = {}
        for k, v in value.items():
            norm = k.replace("-", "_") if name == "dynamo" else k
            expected = schema.get(norm)
            if expected is None:
                known = ", ".join(sorted(schema))
                alt = closest_key(norm, schema)
                hint = f"did you mean `{key}.{alt}`? " if alt else ""
                raise ConfigError(f"unknown key `{key}.{k}` ({hint}known: {known})", path, f"{key}.{k}")
            if isinstance(v, bool) and expected in (int, (int, float), (int, str)):
                raise ConfigError(
                    f"`{key}.{k}` must be {_type_name(expected)}, got {_describe(v)}", path, key
                )
            if not isinstance(v, expected):
                raise ConfigError(
                    f"`{key}.{k}` must be {_type_name(expected)}, got {_describe(v)}", path, key
                )
            out[norm] = v
        return out

    return parse


def _type_name(t: Any) -> str:
    if isinstance(t, tuple):
        return " or ".join(_type_name(x) for x in t)
    return {
        bool: "true or false",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(t, t.__name__)


def _choice(*choices: str) -> Callable[[Any, str, str | None], str]:
    def parse(value: Any, key: str, path: str | None) -> str:
        if value not in choices:
            raise ConfigError(f"`{key}` must be one of {', '.join(choices)}; got {value!r}", path, key)
        return value

    return parse


def _str(value: Any, key: str, path: str | None) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"`{key}` must be a string, got {_describe(value)}", path, key)
    return value


def _cache_dir(value: Any, key: str, path: str | None) -> str:
    text = _str(value, key, path)
    norm = os.path.normpath(text) if text else ""
    if (
        not text.strip()
        or norm in (".", "..")
        or norm.startswith(".." + os.sep)
        or os.path.isabs(norm)
        and path
        and os.path.dirname(os.path.abspath(path)).startswith(norm.rstrip(os.sep) + os.sep)
    ):
        raise ConfigError(
            f'`{key}` must name a folder of its own inside the project (e.g. ".tclint_cache"), got {text!r}',
            path,
            key,
        )
    return text


def _int(value: Any, key: str, path: str | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"`{key}` must be a positive integer, got {_describe(value)}", path, key)
    return value


def _version(value: Any, key: str, path: str | None) -> str:
    text = _str(value, key, path)
    parts = text.split(".")
    if not (1 <= len(parts) <= 3 and all(p.isdigit() for p in parts)):
        raise ConfigError(f'`{key}` must look like "2.13", got {text!r}', path, key)
    return text


KEYS: dict[str, tuple[str, Callable[[Any, str, str | None], Any]]] = {
    "select": ("select", _codes),
    "extend-select": ("extend_select", _codes),
    "ignore": ("ignore", _codes),
    "per-file-ignores": ("per_file_ignores", _per_file),
    "severity": ("severity", _severity_map),
    "exclude": ("exclude", _str_list),
    "extend-exclude": ("extend_exclude", _str_list),
    "force-exclude": ("force_exclude", _bool),
    "respect-gitignore": ("respect_gitignore", _bool),
    "assume-compiled": ("assume_compiled", _str_list),
    "assume-compiled-forward": ("assume_compiled_forward", _bool),
    "follow-libraries": ("follow_libraries", _bool),
    "compiling-predicates": ("compiling_predicates", _str_list),
    "target-torch-version": ("target_torch_version", _version),
    "preview": ("preview", _bool),
    "min-confidence": ("min_confidence", _choice("high", "medium", "low")),
    "unsafe-fixes": ("unsafe_fixes", _bool),
    "output-format": ("output_format", _choice("concise", "full", "json", "json-lines", "sarif", "github")),
    "cache-dir": ("cache_dir", _cache_dir),
    "max-file-size": ("max_file_size", _int),
    "dynamo": ("dynamo", _typed_table(DYNAMO_KEYS, "dynamo")),
    "probe": ("probe", _typed_table(PROBE_KEYS, "probe")),
    "bench": ("bench", _typed_table(BENCH_KEYS, "bench")),
}
SETTING_FIELDS = {f.name for f in fields(Settings)}


def closest_key(key: str, known: Iterable[str]) -> str | None:
    """The known key a misspelt one most likely meant (`ignroe` -> `ignore`), or None."""
    names = list(known)
    if key in names:
        return key
    import difflib  # only for a misspelt key

    matches = difflib.get_close_matches(key, names, n=1, cutoff=0.7)
    return matches[0] if matches else None


def parse_table(table: dict[str, Any], path: str | None, base: Settings | None = None) -> Settings:
    settings = (
        Settings() if base is None else Settings(**{f.name: getattr(base, f.name) for f in fields(Settings)})
    )
    settings.path = path
    settings.root = os.path.dirname(os.path.abspath(path)) if path else settings.root
    for key, value in table.items():
        spec = KEYS.get(key)
        if spec is None:
            alt = closest_key(key.replace("_", "-"), KEYS)
            hint = f" (did you mean `{alt}`?)" if alt else ""
            raise ConfigError(f"unknown key `{key}`{hint}", path, key)
        attr, parser = spec
        setattr(settings, attr, parser(value, key, path))
    if settings.dynamo.get("cache_size_limit") and "recompile_limit" not in settings.dynamo:
        settings.dynamo["recompile_limit"] = settings.dynamo["cache_size_limit"]
    check_overlap(settings, path)
    return settings


def check_overlap(settings: Settings, path: str | None) -> None:
    """The same code both selected and ignored is a contradiction, not a preference."""
    overlap = (set(settings.select) | set(settings.extend_select)) & set(settings.ignore)
    if overlap:
        where = "`select`/`extend-select` and `ignore`"
        raise ConfigError(f"{where} both name {', '.join(sorted(overlap))}", path, "select")


def load_file(path: str | os.PathLike[str]) -> Settings | None:
    """Settings from one file; None for a pyproject.toml without [tool.tclint]."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"cannot read configuration: {exc.strerror or exc}", path) from None
    if raw.startswith(b"\xef\xbb\xbf"):
        raise ConfigError(
            "invalid TOML: the file starts with a UTF-8 byte-order mark (BOM); save it without one", path
        )
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"invalid TOML: {exc}", path) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"invalid TOML: not UTF-8 ({exc.reason})", path) from None
    except (ValueError, RecursionError) as exc:  # e.g. integers past Python's int/str digit limit
        raise ConfigError(f"invalid TOML: {exc}", path) from None
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool", {})
        if not isinstance(tool, dict) or "tclint" not in tool:
            return None
        table = tool["tclint"]
        if not isinstance(table, dict):
            raise ConfigError("`[tool.tclint]` must be a table", path)
        return parse_table(table, path)
    return parse_table(data, path)


class ConfigResolver:
    """Finds the settings for each file: the nearest config above it, cached per folder."""

    def __init__(
        self, explicit: str | None = None, overrides: dict[str, Any] | None = None, isolated: bool = False
    ) -> None:
        self.explicit = explicit
        self.overrides = overrides or {}
        self.isolated = isolated
        self._dir_cache: dict[str, Settings] = {}
        self._file_cache: dict[str, Settings | None] = {}
        self._explicit_settings: Settings | None = None
        self._default: Settings | None = None
        if explicit is not None:
            loaded = (
                load_file(explicit) if os.path.basename(explicit) != "pyproject.toml" else load_file(explicit)
            )
            if loaded is None:
                raise ConfigError("no [tool.tclint] table in this file", explicit)
            self._explicit_settings = self._apply_overrides(loaded)

    def _apply_overrides(self, settings: Settings) -> Settings:
        if not self.overrides:
            return settings
        merged = Settings(**{f.name: getattr(settings, f.name) for f in fields(Settings)})
        return self._merge(merged)

    def _merge(self, merged: Settings) -> Settings:
        """Command-line options over a file's settings; checked like the file itself."""
        for attr, value in self.overrides.items():
            if attr.startswith("extend:"):
                real = attr[len("extend:") :]
                setattr(merged, real, [*getattr(merged, real), *value])
            elif attr.startswith("dynamo:"):
                merged.dynamo = {**merged.dynamo, attr[len("dynamo:") :]: value}
            else:
                setattr(merged, attr, value)
        check_overlap(merged, None)
        return merged

    def default(self) -> Settings:
        """The built-in settings with the overrides: one object per resolver, so that everything
        keyed by settings (the cache's settings fingerprint) is computed once, not per file."""
        if self._default is None:
            self._default = self._apply_overrides(Settings())
        return self._default

    def for_dir(self, directory: str) -> Settings:
        if self._explicit_settings is not None:
            return self._explicit_settings
        if self.isolated:
            return self.default()
        directory = os.path.abspath(directory)
        cached = self._dir_cache.get(directory)
        if cached is not None:
            return cached
        found = None
        for name in CONFIG_FILES:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                loaded = self._load(candidate)
                if loaded is not None:
                    found = loaded
                    break
        if found is None:
            parent = os.path.dirname(directory)
            if parent != directory and not _is_boundary(directory):
                found = self.for_dir(parent)
            else:
                found = self.default()
        self._dir_cache[directory] = found
        return found

    def for_file(self, path: str) -> Settings:
        return self.for_dir(os.path.dirname(os.path.abspath(path)))

    def _load(self, path: str) -> Settings | None:
        if path not in self._file_cache:
            loaded = load_file(path)
            self._file_cache[path] = self._apply_overrides(loaded) if loaded is not None else None
        return self._file_cache[path]


def _is_boundary(directory: str) -> bool:
    """Stop walking up at a repository root (configs above a repo are not the project's)."""
    return os.path.isdir(os.path.join(directory, ".git")) or os.path.isfile(os.path.join(directory, ".git"))


PROJECT_MARKERS = (*CONFIG_FILES, "setup.py", "setup.cfg", ".git")


def project_root(paths: list[str]) -> str | None:
    """The folder whose files form the project index: the nearest folder above the linted paths
    holding a configuration file, a setup file or a repository root.  None when there is none:
    then only the given paths are indexed (a stray script is not a reason to walk a home folder).
    """
    absolute = [os.path.abspath(p) for p in paths] or [os.getcwd()]
    dirs = [p if os.path.isdir(p) else os.path.dirname(p) for p in absolute]
    common = os.path.commonpath(dirs)
    current = Path(common)
    for folder in [current, *current.parents]:
        if str(folder) == os.path.abspath(os.sep):
            break
        if any((folder / name).exists() for name in PROJECT_MARKERS):
            return str(folder)
    return None
