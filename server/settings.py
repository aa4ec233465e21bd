"""Editor settings, and how they combine with pyproject.toml / tclint.toml.

The client sends the same object in ``initializationOptions`` (``{"settings": S,
"workspaceTrusted": bool}``; a bare ``S`` or ``{"tclint": S}`` is accepted too) and as the
``tclint`` section of ``workspace/configuration`` (per workspace folder)::

    S = {"enable": bool, "args": [str], "select": [str], "ignore": [str],
         "severity": {code | prefix | level: "Error" | "Warning" | "Information" | "Hint"},
         "lintOnChange": bool, "lintDebounce": milliseconds,
         "probe": {"enable": bool, "timeout": seconds, "interpreter": path | [path]},
         "configurationPreference": "filesystemFirst" | "editorFirst" | "editorOnly",
         "unsafeFixes": bool, "diagnosticMode": "auto" | "push" | "pull"}

Precedence (``configurationPreference``), as in ruff's server: by default the configuration file
wins wherever it says something (so the editor, the CLI and pre-commit report the same findings);
editor settings fill in what the file leaves unsaid.  ``editorFirst`` lets the editor win;
``editorOnly`` ignores configuration files.  A wrong value never stops the server: it is reported
(one ``window/showMessage`` naming the setting) and the default is used instead.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field, fields, replace
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from lsprotocol import types
from tclint.rules.config import KEYS, ConfigError, ConfigResolver, Settings
from tclint.rules.model import Severity

PREFERENCES = ("filesystemFirst", "editorFirst", "editorOnly")
MODES = ("auto", "push", "pull")
LSP_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "warn": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "info": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}
DEFAULT_LSP_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}
LEVELS = {
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "info": Severity.INFO,
    "information": Severity.INFO,
    "hint": Severity.HINT,
}


@dataclass(frozen=True)
class ProbeSettings:
    enable: bool = True
    timeout: float | None = None  # None: [tool.tclint.probe] timeout, else the probe's default
    interpreter: str | None = None  # None: [tool.tclint.probe] python, else this server's Python


@dataclass(frozen=True)
class EditorSettings:
    enable: bool = True
    args: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: tuple[tuple[str, str], ...] = ()  # (code, prefix or level, LSP severity name)
    lint_on_change: bool = True
    debounce_ms: int = 120
    probe: ProbeSettings = field(default_factory=ProbeSettings)
    preference: str = "filesystemFirst"
    unsafe_fixes: bool | None = None  # None: the configuration file's `unsafe-fixes`
    diagnostic_mode: str = "auto"
    trusted: bool = True

    def lsp_severity(
        self, code: str, level: Severity, file_settings: Settings | None
    ) -> types.DiagnosticSeverity:
        """The editor severity of a finding: the editor's map by code (longest prefix), else by
        tclint level, else tclint's own level.  With ``filesystemFirst`` a code the configuration
        file's ``severity`` table covers keeps the file's level."""
        best: tuple[int, str] | None = None
        file_covers = bool(
            file_settings is not None
            and self.preference == "filesystemFirst"
            and any(code.startswith(p) for p in file_settings.severity)
        )
        by_level: str | None = None
        for key, value in self.severity:
            low = key.lower()
            if low in LEVELS:
                if LEVELS[low] is level:
                    by_level = value
                continue
            if not file_covers and code.startswith(key.upper()) and (best is None or len(key) > best[0]):
                best = (len(key), value)
        name = best[1] if best else by_level
        if name is not None:
            return LSP_SEVERITY[name.lower()]
        return DEFAULT_LSP_SEVERITY.get(level, types.DiagnosticSeverity.Warning)


def _as_bool(value: Any, key: str, problems: list[str], default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    problems.append(f"`tclint.{key}` must be true or false, got {value!r}")
    return default


def _as_str_list(value: Any, key: str, problems: list[str]) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    problems.append(f"`tclint.{key}` must be a list of strings, got {value!r}"[:200])
    return ()


def _object(value: Any) -> Any:
    """``value``, with ``[]`` read as ``{}``: a Lua client (Neovim) encodes an empty table, such as
    ``settings = {}``, as an empty JSON array."""
    return {} if isinstance(value, list) and not value else value


def _unwrap(options: Any) -> tuple[dict[str, Any], bool | None]:
    """The settings object out of what a client sends, and the trust flag if there is one."""
    if not isinstance(options, dict):
        return {}, None
    trusted = options.get("workspaceTrusted") if isinstance(options.get("workspaceTrusted"), bool) else None
    for key in ("settings", "tclint"):
        if isinstance(_object(options.get(key)), dict):
            return _object(options[key]), trusted
    return options, trusted


def parse_settings(options: Any, base: EditorSettings | None = None) -> tuple[EditorSettings, list[str]]:
    """Editor settings from a client object; problems are returned, never raised."""
    from tclint.rules.registry import validate_selector

    options = _object(options)
    raw, trusted = _unwrap(options)
    base = base or EditorSettings()
    problems: list[str] = []
    if options is not None and not isinstance(options, dict):
        problems.append(f"tclint settings must be an object, got {type(options).__name__}")
    select = _as_str_list(raw.get("select"), "select", problems)
    ignore = _as_str_list(raw.get("ignore"), "ignore", problems)
    for key, codes in (("select", select), ("ignore", ignore)):
        bad = [c for c in codes if validate_selector(c.upper())]
        if bad:
            problems.append(f"`tclint.{key}`: {validate_selector(bad[0].upper())}")
    select = tuple(c.upper() for c in select if not validate_selector(c.upper()))
    ignore = tuple(c.upper() for c in ignore if not validate_selector(c.upper()))
    severity: list[tuple[str, str]] = []
    sev = _object(raw.get("severity"))
    if sev is not None and not isinstance(sev, dict):
        problems.append(f"`tclint.severity` must be an object of code = severity, got {sev!r}"[:200])
    elif isinstance(sev, dict):
        for k, v in sev.items():
            if not isinstance(v, str) or v.lower() not in LSP_SEVERITY:
                problems.append(
                    f"`tclint.severity.{k}`: unknown severity {v!r} (use Error, Warning, Information or Hint)"
                )
                continue
            if str(k).lower() not in LEVELS and validate_selector(str(k).upper()):
                problems.append(f"`tclint.severity.{k}`: {validate_selector(str(k).upper())}")
                continue
            severity.append((str(k), v))
    debounce = raw.get("lintDebounce", base.debounce_ms)
    if isinstance(debounce, bool) or not isinstance(debounce, (int, float)) or not 0 <= debounce <= 10_000:
        problems.append(f"`tclint.lintDebounce` must be milliseconds between 0 and 10000, got {debounce!r}")
        debounce = base.debounce_ms
    preference = raw.get("configurationPreference", "filesystemFirst")
    if preference not in PREFERENCES:
        problems.append(
            f"`tclint.configurationPreference` must be one of {', '.join(PREFERENCES)}, got {preference!r}"
        )
        preference = "filesystemFirst"
    mode = raw.get("diagnosticMode", "auto")
    if mode not in MODES:
        problems.append(f"`tclint.diagnosticMode` must be one of {', '.join(MODES)}, got {mode!r}")
        mode = "auto"
    unsafe = raw.get("unsafeFixes")
    if unsafe is not None and not isinstance(unsafe, bool):
        problems.append(f"`tclint.unsafeFixes` must be true or false, got {unsafe!r}")
        unsafe = None
    probe = _parse_probe(_object(raw.get("probe")), problems)
    settings = EditorSettings(
        enable=_as_bool(raw.get("enable"), "enable", problems, True),
        args=_as_str_list(raw.get("args"), "args", problems),
        select=select,
        ignore=ignore,
        severity=tuple(severity),
        lint_on_change=_as_bool(raw.get("lintOnChange"), "lintOnChange", problems, True),
        debounce_ms=int(debounce),
        probe=probe,
        preference=preference,
        unsafe_fixes=unsafe,
        diagnostic_mode=mode,
        trusted=base.trusted if trusted is None else trusted,
    )
    if settings.args:
        try:
            args_overrides(settings.args)
        except ValueError as exc:
            problems.append(f"`tclint.args`: {exc}")
            settings = replace(settings, args=())
    return settings, problems


def _parse_probe(value: Any, problems: list[str]) -> ProbeSettings:
    if value is None:
        return ProbeSettings()
    if not isinstance(value, dict):
        problems.append(f"`tclint.probe` must be an object, got {value!r}"[:200])
        return ProbeSettings()
    timeout = value.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0
    ):
        problems.append(f"`tclint.probe.timeout` must be a positive number of seconds, got {timeout!r}")
        timeout = None
    interp = value.get("interpreter", value.get("python"))
    if isinstance(interp, list):
        interp = interp[0] if interp and all(isinstance(x, str) for x in interp) else None
    if interp is not None and not isinstance(interp, str):
        problems.append(f"`tclint.probe.interpreter` must be a path, got {interp!r}")
        interp = None
    return ProbeSettings(
        enable=_as_bool(value.get("enable"), "probe.enable", problems, True),
        timeout=float(timeout) if timeout is not None else None,
        interpreter=interp or None,
    )


def args_overrides(args: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """ConfigResolver overrides for extra ``tclint check`` options (``tclint.args``).

    The CLI's own option table (``tclint.rules.options``), so that the editor understands exactly
    the CLI's options; paths and output options are ignored (the server decides what to lint and
    how to show it)."""
    from tclint.rules import options

    try:
        overrides = options.overrides_from_args(args)
    except options.UsageError as exc:
        raise ValueError(str(exc)) from None
    overrides.pop("output_format", None)
    return overrides


def editor_overrides(settings: EditorSettings) -> dict[str, Any]:
    """The ConfigResolver overrides the editor settings stand for."""
    out: dict[str, Any] = {}
    if settings.args:
        try:
            out.update(args_overrides(settings.args))
        except ValueError:
            pass
    if settings.select:
        out["select"] = list(settings.select)
    if settings.ignore:
        out["extend:ignore"] = [*out.get("extend:ignore", []), *settings.ignore]
    if settings.unsafe_fixes is not None:
        out["unsafe_fixes"] = settings.unsafe_fixes
    return out


_ATTR_TO_KEY = {attr: key for key, (attr, _parser) in KEYS.items()}


def _target_attr(override: str) -> str:
    for prefix in ("extend:", "dynamo:"):
        if override.startswith(prefix):
            return "dynamo" if prefix == "dynamo:" else override[len(prefix) :]
    return override


class EditorResolver(ConfigResolver):
    """A ConfigResolver that applies the editor's settings with the configured precedence.

    ``filesystemFirst``: an editor value is applied only when the nearest configuration file does
    not set that key (``ignore`` from the editor counts as the file's ``ignore`` being unset).
    ``editorFirst``: editor values override the file.  ``editorOnly``: files are not read."""

    def __init__(self, settings: EditorSettings, explicit: str | None = None) -> None:
        self.editor = settings
        self._editor_overrides = editor_overrides(settings)
        super().__init__(explicit=None, overrides={}, isolated=settings.preference == "editorOnly")
        self._applied: dict[int, Settings] = {}
        self._applied_ids: set[int] = set()
        self._file_keys: dict[str, frozenset[str]] = {}
        self.problems: list[ConfigError] = []

    def for_dir(self, directory: str) -> Settings:
        base = super().for_dir(directory)
        if id(base) in self._applied_ids:
            return base
        done = self._applied.get(id(base))
        if done is None:
            done = self._apply_editor(base)
            self._applied[id(base)] = done
            self._applied_ids.add(id(done))
            self._keep = getattr(self, "_keep", [])
            self._keep.append(base)  # ids stay valid while cached
        return done

    def _apply_editor(self, settings: Settings) -> Settings:
        overrides = dict(self._editor_overrides)
        if not overrides:
            return settings
        if self.editor.preference == "filesystemFirst" and settings.path is not None:
            in_file = self._keys_in(settings.path)
            overrides = {
                k: v for k, v in overrides.items() if _ATTR_TO_KEY.get(_target_attr(k)) not in in_file
            }
        merged = Settings(**{f.name: getattr(settings, f.name) for f in fields(Settings)})
        for attr, value in overrides.items():
            if attr.startswith("extend:"):
                real = attr[len("extend:") :]
                setattr(merged, real, [*getattr(merged, real), *value])
            elif attr.startswith("dynamo:"):
                merged.dynamo = {**merged.dynamo, attr[len("dynamo:") :]: value}
            else:
                setattr(merged, attr, value)
        return merged

    def _keys_in(self, path: str) -> frozenset[str]:
        keys = self._file_keys.get(path)
        if keys is None:
            keys = frozenset()
            try:
                with open(path, "rb") as fh:
                    data = tomllib.load(fh)
                table = (
                    data.get("tool", {}).get("tclint", {})
                    if os.path.basename(path) == "pyproject.toml"
                    else data
                )
                if isinstance(table, dict):
                    keys = frozenset(table)
            except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError, AttributeError):
                pass
            self._file_keys[path] = keys
        return keys
