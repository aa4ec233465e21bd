"""The bench contract: ``[tool.tclint.bench]`` budgets, and the check ``tclint bench --check`` runs.

Budgets (all optional except ``recompiles-after-warmup``, which defaults to 0: an unexplained
recompile in production is the finding that matters most)::

    [tool.tclint.bench]
    cold-start-s = 60            # process start to the first compiled result, seconds
    peak-memory = "4G"           # peak resident memory of the run (bytes, or 512M / 4G)
    max-variants = 4             # compiled variants (compiles that produced code), all phases
    recompiles-after-warmup = 0  # compiles during the steady state
    p99-p50-ratio = 3.0          # steady-state jitter
    min-speedup = 1.0            # eager p50 / compiled p50

Each broken budget is one :class:`Violation`: which budget, in which mode, the limit, the actual
figure, by how much, and why (the guard behind a recompile, the phase that blew the budget).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from tclint.rules.config import ConfigError
from tclint.runtime_probe.options import parse_memory

BUDGET_KEYS = (
    "cold-start-s",
    "peak-memory",
    "max-variants",
    "recompiles-after-warmup",
    "p99-p50-ratio",
    "min-speedup",
)


@dataclass
class Budgets:
    cold_start_s: float | None = None
    peak_memory: int | None = None
    max_variants: int | None = None
    recompiles_after_warmup: int = 0
    p99_p50_ratio: float | None = None
    min_speedup: float | None = None

    @classmethod
    def from_table(cls, table: dict[str, Any], path: str | None = None) -> Budgets:
        b = cls()
        for key in BUDGET_KEYS:
            if key not in table:
                continue
            value = table[key]
            if key == "peak-memory":
                b.peak_memory = parse_memory(value, "bench.peak-memory")
                continue
            if value < 0:
                raise ConfigError(f"`bench.{key}` must not be negative", path, f"bench.{key}")
            setattr(b, key.replace("-", "_"), value)
        return b

    def as_dict(self) -> dict[str, Any]:
        return {k.replace("_", "-"): v for k, v in asdict(self).items()}


@dataclass
class Violation:
    budget: str
    mode: str
    limit: Any
    actual: Any
    by: str
    why: str

    def line(self) -> str:
        return f"{self.budget} ({self.mode}): {self.actual_text()} against a budget of {self.limit_text()} ({self.by}); {self.why}"

    def _fmt(self, v: Any) -> str:
        if self.budget == "peak-memory" and isinstance(v, (int, float)):
            return f"{v / 2**20:.0f} MiB"
        if isinstance(v, float):
            return f"{v:.3g}" + (" s" if self.budget == "cold-start-s" else "")
        return str(v)

    def actual_text(self) -> str:
        return self._fmt(self.actual)

    def limit_text(self) -> str:
        return self._fmt(self.limit)


def _peak_phase(run: dict[str, Any]) -> str:
    """The phase in which the run's resident memory grew the most (what blew a memory budget)."""
    marks = [
        ("cold", (run.get("cold") or {}).get("peak_rss_bytes")),
        ("warm-up", (run.get("warmup") or {}).get("peak_rss_bytes")),
        ("steady", (run.get("steady") or {}).get("peak_rss_bytes")),
    ]
    best, grown, last = "cold", -1, 0
    for name, value in marks:
        if value is None:
            continue
        if value - last > grown:
            best, grown = name, value - last
        last = value
    return best


def check(report: dict[str, Any], budgets: Budgets) -> list[Violation]:
    """Every broken budget in every mode that ran (modes that could not run break nothing)."""
    out: list[Violation] = []
    for run in report.get("runs") or []:
        if run.get("status") != "ok":
            continue
        mode = run["mode"]
        steady = run.get("steady") or {}
        recompiles = steady.get("recompiles") or []
        if len(recompiles) > budgets.recompiles_after_warmup:
            first = recompiles[0]
            trig = first.get("trigger") or {}
            if trig.get("kind") == "first":
                why = (
                    f"steady call {first.get('call')} (bucket {first.get('bucket')!r}) compiled `{first.get('function')}` "
                    "for the first time: code the warm-up never reached"
                )
            else:
                why = (
                    f"steady call {first.get('call')} (bucket {first.get('bucket')!r}) recompiled "
                    f"`{first.get('function')}`: {trig.get('text')} [guard: {trig.get('guard')}]"
                )
            out.append(
                Violation(
                    "recompiles-after-warmup",
                    mode,
                    budgets.recompiles_after_warmup,
                    len(recompiles),
                    f"{len(recompiles) - budgets.recompiles_after_warmup} over",
                    why,
                )
            )
        cold = run.get("cold") or {}
        start = cold.get("start_to_first_result_s")
        if budgets.cold_start_s is not None and start is not None and start > budgets.cold_start_s:
            comp = cold.get("compile") or {}
            out.append(
                Violation(
                    "cold-start-s",
                    mode,
                    budgets.cold_start_s,
                    start,
                    f"+{start - budgets.cold_start_s:.3g} s",
                    f"cold phase: importing torch took {cold.get('import_torch_s') or 0:.3g} s, the first call "
                    f"{cold.get('first_call_s') or 0:.3g} s of which compiling {comp.get('total_s') or 0:.3g} s",
                )
            )
        peak = run.get("peak_rss_bytes")
        if budgets.peak_memory is not None and peak is not None and peak > budgets.peak_memory:
            out.append(
                Violation(
                    "peak-memory",
                    mode,
                    budgets.peak_memory,
                    peak,
                    f"+{(peak - budgets.peak_memory) / 2**20:.0f} MiB",
                    f"resident memory grew most in the {_peak_phase(run)} phase",
                )
            )
        variants = run.get("variants")
        if budgets.max_variants is not None and variants is not None and variants > budgets.max_variants:
            out.append(
                Violation(
                    "max-variants",
                    mode,
                    budgets.max_variants,
                    variants,
                    f"{variants - budgets.max_variants} over",
                    "compiled variants: "
                    + "; ".join(
                        f"{c['compile_id']} {c['phase']} {c.get('bucket')!r}: {(c.get('trigger') or {}).get('text')}"
                        for c in run.get("compiles") or []
                        if c.get("produced_code")
                    ),
                )
            )
        ratio = steady.get("p99_over_p50")
        if budgets.p99_p50_ratio is not None and ratio is not None and ratio > budgets.p99_p50_ratio:
            slowest = max(
                (t for t in run.get("timeline") or [] if t["phase"] == "steady"),
                key=lambda t: t["latency_s"],
                default=None,
            )
            where = (
                (
                    f"the slowest steady call is #{slowest['i']} (bucket {slowest['bucket']!r}, "
                    f"{slowest['latency_s'] * 1e3:.3g} ms)"
                )
                if slowest
                else "no steady calls"
            )
            out.append(
                Violation(
                    "p99-p50-ratio",
                    mode,
                    budgets.p99_p50_ratio,
                    ratio,
                    f"+{ratio - budgets.p99_p50_ratio:.3g}",
                    f"steady-state jitter: {where}",
                )
            )
        speedup = (run.get("eager") or {}).get("speedup")
        if budgets.min_speedup is not None and speedup is not None and speedup < budgets.min_speedup:
            out.append(
                Violation(
                    "min-speedup",
                    mode,
                    budgets.min_speedup,
                    speedup,
                    f"-{budgets.min_speedup - speedup:.3g}",
                    f"steady p50 {steady.get('p50_s') or 0:.3g} s compiled against {(run.get('eager') or {}).get('p50_s') or 0:.3g} s eager",
                )
            )
    return out


def attach(report: dict[str, Any], budgets: Budgets, violations: list[Violation]) -> None:
    """Record the contract and its outcome in the report (the JSON schema's ``contract``)."""
    checked = [r["mode"] for r in report.get("runs") or [] if r.get("status") == "ok"]
    report["contract"] = {
        "budgets": budgets.as_dict(),
        "passed": bool(checked) and not violations,
        "checked": checked,
        "violations": [asdict(v) | {"message": v.line()} for v in violations],
    }
