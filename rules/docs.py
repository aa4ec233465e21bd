"""Rule documentation, from the rules' own docstrings and examples: ``tclint rule``, hover, SARIF
and the generated reference pages in ``rules/docs/`` (kept in sync by a test)."""

from __future__ import annotations

import os

from tclint.rules.model import gb_url

DOCS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "docs")


def render_rule(rule: type) -> str:
    sections = rule.doc_sections()
    lines = [f"# {rule.code} {rule.name}", ""]
    meta = [f"Family: {rule.family}", f"Lifecycle: {rule.lifecycle}", f"Default severity: {rule.default_severity.value}"]
    if rule.gb_ids:
        meta.append("PyTorch graph-break ids: " + ", ".join(f"[{g}]({gb_url(g)})" for g in rule.gb_ids))
    meta.append(f"Applies to torch {rule.torch_versions}")
    fix = rule.fix_applicability.value if rule.fix_applicability else "none"
    meta.append(f"Fix: {fix}")
    lines.append(rule.summary)
    lines.append("")
    lines.extend(f"- {m}" for m in meta)
    lines.append("")
    for title, body in sections.items():
        lines.append(f"## {title}")
        lines.append(body)
        lines.append("")
    if rule.invalid or rule.valid:
        lines.append("## Examples checked by the test suite")
        lines.append("")
        for label, examples in (("Flagged", rule.invalid), ("Not flagged", rule.valid)):
            for ex in examples:
                title = f" — {ex.title}" if ex.title else ""
                settings = f" (with settings {ex.settings})" if ex.settings else ""
                lines.append(f"{label}{title}{settings}:")
                lines.append("```python")
                lines.append(ex.code.strip("\n"))
                lines.append("```")
                lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def reference_index(rules: list[type]) -> str:
    lines = ["# tclint rules", "", "Generated from the rules' docstrings by `python -m tclint.rules.docs`; a test keeps it in sync.", ""]
    lines.append("| Code | Name | Family | Lifecycle | GB ids | Summary |")
    lines.append("|---|---|---|---|---|---|")
    for r in rules:
        lines.append(f"| [{r.code}]({r.code}.md) | {r.name} | {r.family} | {r.lifecycle} | {', '.join(r.gb_ids) or '—'} | {r.summary} |")
    return "\n".join(lines) + "\n"


def generate(directory: str = DOCS_DIR) -> dict[str, str]:
    """{file name: content} of the whole reference."""
    from tclint.rules.registry import all_rules

    rules = list(all_rules())
    pages = {f"{r.code}.md": render_rule(r) for r in rules}
    pages["README.md"] = reference_index(rules)
    return pages


def main() -> int:
    os.makedirs(DOCS_DIR, exist_ok=True)
    pages = generate()
    for name in os.listdir(DOCS_DIR):
        if name.endswith(".md") and name not in pages:
            os.remove(os.path.join(DOCS_DIR, name))
    for name, content in pages.items():
        with open(os.path.join(DOCS_DIR, name), "w", encoding="utf-8") as fh:
            fh.write(content)
    print(f"wrote {len(pages)} pages to {DOCS_DIR}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
