"""Fixtures for the language-server tests: real server processes driven by pytest-lsp with the
capability snapshots of real clients (VS Code, Neovim 0.7 push-only, Neovim 0.11 pull, Emacs)."""

from __future__ import annotations

import pytest
import pytest_asyncio

from tests.helpers.lsputil import start_client


@pytest_asyncio.fixture
async def start():
    """``await start(profile, root, ...)`` -> an initialized pytest-lsp client; shut down after."""
    clients = []

    async def _start(*args, **kwargs):
        client = await start_client(*args, **kwargs)
        clients.append(client)
        return client

    yield _start
    for client in clients:
        try:
            await client.shutdown_session()
        except Exception:
            pass
        try:
            await client.stop()
        except Exception:
            pass


@pytest.fixture
def project(tmp_path):
    """A small project: a model package, a training script that compiles it, a pyproject."""
    from tests.helpers.lsputil import write_project

    return write_project(tmp_path / "proj")
