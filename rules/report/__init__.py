"""Output formats: concise and full text, ruff-compatible JSON, SARIF 2.1.0, GitHub annotations."""
