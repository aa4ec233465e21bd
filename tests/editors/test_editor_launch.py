"""Every bundled editor configuration starts the server through an entry point the workspace cannot
shadow.

`python -m tclint.server` (what the configurations used to run) puts the working folder -- the
workspace -- first on sys.path, so a workspace holding a `tclint/` package (or `tclint/server/`)
runs its own code before any guard of ours.  Each test takes the exact command a configuration
builds (from the config file itself, or by asking the editor to evaluate the config's own
function), runs it in a workspace with such a package, completes an LSP ``initialize`` /
``shutdown`` handshake with it, and checks that the package never ran (no MARK file).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest

from tests.helpers.editorutil import EDITORS, PYTHON, ensure_apt, require_server, tool

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

VENV = os.path.dirname(os.path.dirname(PYTHON))
MARK = "MARK"


def _shadowing_workspace(root: str) -> str:
    """A project folder whose `tclint` package (and `tclint.server`, `tclint.rules`) writes MARK;
    its `.venv` is the test environment (a link), as a project's own venv would be."""
    code = f"open({os.path.join(root, MARK)!r}, 'a').write(__name__ + '\\n')\n"
    for rel in ("tclint/__init__.py", "tclint/server/__init__.py", "tclint/server/__main__.py",
                "tclint/rules/__init__.py", "tclint/rules/__main__.py"):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(code)
    with open(os.path.join(root, "pyproject.toml"), "w", encoding="utf-8") as fh:
        fh.write("[project]\nname = 'shadow'\n")
    os.symlink(VENV, os.path.join(root, ".venv"))
    # an interpreter with no console script beside it (a bare system Python would be one)
    bare = os.path.join(root, "bare")
    os.makedirs(bare)
    with open(os.path.join(bare, "python"), "w", encoding="utf-8") as fh:
        fh.write(f'#!/bin/sh\nexec {PYTHON} "$@"\n')
    os.chmod(os.path.join(bare, "python"), 0o755)
    return root


@pytest.fixture
def workspace(tmp_path) -> str:
    return _shadowing_workspace(str(tmp_path / "ws"))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH", "VIRTUAL_ENV")}
    return env


def _frame(msg: dict) -> bytes:
    body = json.dumps(msg).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _unframe(data: bytes) -> list[dict]:
    """The messages in a stream of LSP frames (headers, blank line, Content-Length bytes)."""
    out = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        if not sep:
            break
        length = int(re.search(rb"Content-Length: *(\d+)", head, re.I).group(1))
        out.append(json.loads(rest[:length]))
        data = rest[length:]
    return out


def _handshake(cmd: list[str], cwd: str) -> dict:
    """Start ``cmd`` in ``cwd`` as an editor does (stdio), initialize, shut down; the reply to
    initialize."""
    require_server()
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"processId": None, "rootUri": f"file://{cwd}", "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    proc = subprocess.run(cmd, cwd=cwd, input=b"".join(_frame(m) for m in messages), capture_output=True,
                          timeout=120, env=_env())
    replies = _unframe(proc.stdout)
    init = next((r for r in replies if r.get("id") == 1), None)
    assert init is not None and "capabilities" in init.get("result", {}), (cmd, proc.stdout[-2000:], proc.stderr[-3000:])
    assert proc.returncode == 0, (cmd, proc.returncode, proc.stderr[-3000:])
    return init


def _assert_unshadowed(cmd: list[str], workspace: str) -> None:
    assert "-m" not in cmd, cmd
    _handshake(cmd, workspace)
    assert not os.path.exists(os.path.join(workspace, MARK)), open(os.path.join(workspace, MARK)).read()


def test_the_shadow_is_real(workspace):
    """What the configurations used to run does import the workspace's package."""
    subprocess.run([PYTHON, "-m", "tclint.server", "--version"], cwd=workspace, capture_output=True, timeout=60,
                   env=_env())
    assert os.path.exists(os.path.join(workspace, MARK))


def test_console_scripts(workspace):
    """`tclint server`, what the configurations prefer, and `python -m tclint.rules`' replacement."""
    _assert_unshadowed([os.path.join(workspace, ".venv", "bin", "tclint"), "server"], workspace)
    proc = subprocess.run([os.path.join(workspace, ".venv", "bin", "tclint"), "--version"], cwd=workspace,
                          capture_output=True, timeout=60, env=_env())
    assert proc.returncode == 0 and not os.path.exists(os.path.join(workspace, MARK))


def test_helix(workspace):
    with open(os.path.join(EDITORS, "helix", "languages.toml"), "rb") as fh:
        server = tomllib.load(fh)["language-server"]["tclint"]
    cmd = [server["command"], *server["args"]]
    assert cmd == [".venv/bin/tclint", "server"]  # relative to the workspace root, as Helix runs it
    _assert_unshadowed(cmd, workspace)


def _rust_bootstrap() -> str:
    with open(os.path.join(EDITORS, "zed", "src", "lib.rs"), encoding="utf-8") as fh:
        source = fh.read()
    match = re.search(r'const BOOTSTRAP: &str =\s*"((?:[^"\\]|\\.)*)";', source)
    assert match, "lib.rs has no BOOTSTRAP"
    assert 'format!("{root}/{venv}/bin/tclint"), vec!["server".to_string()]' in source
    assert '"-m"' not in source
    return match.group(1).encode().decode("unicode_escape")


def test_zed(workspace):
    """The extension's two commands (not compiled here: no Zed / wasm toolchain): the venv's
    console script, and an interpreter with BOOTSTRAP, exactly as lib.rs spells them."""
    _assert_unshadowed([os.path.join(workspace, ".venv", "bin", "tclint"), "server"], workspace)
    _assert_unshadowed([os.path.join(workspace, "bare", "python"), "-c", _rust_bootstrap()], workspace)


def _vscode_command(cwd: str) -> list[str]:
    ext = os.path.join(EDITORS, "vscode")
    if not os.path.isdir(os.path.join(ext, "node_modules", "esbuild")):
        tool("ensure-vscode-node-modules.sh")
    script = ("const { load } = require('./test/helpers'); const l = load('launch');"
              "const e = l.serverExecutable([process.argv[1]], [], process.argv[2], {});"
              "process.stdout.write(JSON.stringify([e.command, ...e.args]));")
    proc = subprocess.run(["node", "-e", script, PYTHON, cwd], cwd=ext, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.editor
def test_vscode(workspace):
    """launch.ts's serverExecutable, bundled and run by node as the extension's unit tests do."""
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    cmd = _vscode_command(workspace)
    assert cmd[:2] == [PYTHON, "-c"]
    _assert_unshadowed(cmd, workspace)


def _neovim_command(workspace: str, python: str) -> list[str]:
    ensure_apt("neovim")
    out = os.path.join(workspace, "..", f"nvim-cmd-{os.path.basename(os.path.dirname(python))}.json")
    lua = (f"require('tclint').setup({{ python = {json.dumps(python)} }}); "
           f"vim.fn.writefile({{ vim.fn.json_encode(require('tclint').cmd({json.dumps(workspace)})) }}, {json.dumps(out)})")
    env = _env()
    env.update(HOME=os.path.join(workspace, "..", "home"), XDG_STATE_HOME=os.path.join(workspace, "..", "state"))
    proc = subprocess.run(["nvim", "--headless", "--clean", "-n", "-i", "NONE",
                           "--cmd", f"set rtp^={os.path.join(EDITORS, 'neovim')}", "-c", f"lua {lua}", "-c", "qa!"],
                          cwd=workspace, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert os.path.exists(out), (proc.stdout, proc.stderr)
    with open(out, encoding="utf-8") as fh:
        return json.load(fh)


@pytest.mark.editor
def test_neovim(workspace):
    """M.cmd: the environment's console script; an interpreter without one gets the bootstrap."""
    with_script = _neovim_command(workspace, os.path.join(workspace, ".venv", "bin", "python"))
    assert with_script == [os.path.join(workspace, ".venv", "bin", "tclint"), "server"]
    _assert_unshadowed(with_script, workspace)
    bare = _neovim_command(workspace, os.path.join(workspace, "bare", "python"))
    assert bare[:2] == [os.path.join(workspace, "bare", "python"), "-c"]
    _assert_unshadowed(bare, workspace)


def _emacs_command(workspace: str, python: str) -> list[str]:
    ensure_apt("emacs-nox", "elpa-eglot")
    form = (f"(progn (setq tclint-python {json.dumps(python)}) "
            f"(princ (json-encode (tclint-default-command {json.dumps(workspace)}))))")
    env = _env()
    env.update(HOME=os.path.join(workspace, "..", "home"))
    os.makedirs(env["HOME"], exist_ok=True)
    proc = subprocess.run(["emacs", "--batch", "-q", "-L", os.path.join(EDITORS, "emacs"), "-l", "tclint-eglot",
                           "--eval", "(require 'json)", "--eval", form],
                          cwd=workspace, capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.editor
def test_emacs(workspace):
    """tclint-default-command: the environment's console script, else the bootstrap."""
    with_script = _emacs_command(workspace, os.path.join(workspace, ".venv", "bin", "python"))
    assert with_script == [os.path.join(workspace, ".venv", "bin", "tclint"), "server"]
    _assert_unshadowed(with_script, workspace)
    bare = _emacs_command(workspace, os.path.join(workspace, "bare", "python"))
    assert bare[:2] == [os.path.join(workspace, "bare", "python"), "-c"]
    _assert_unshadowed(bare, workspace)


def test_every_configuration_has_one_bootstrap():
    """The bootstrap is spelled once per editor language; all copies are the same program."""
    with open(os.path.join(EDITORS, "neovim", "lua", "tclint", "init.lua"), encoding="utf-8") as fh:
        lua = fh.read()
    with open(os.path.join(EDITORS, "emacs", "tclint-eglot.el"), encoding="utf-8") as fh:
        elisp = fh.read()
    with open(os.path.join(EDITORS, "vscode", "src", "launch.ts"), encoding="utf-8") as fh:
        ts = fh.read()
    lua_text = "".join(re.findall(r'"([^"]*)"', lua[lua.index("M.BOOTSTRAP ="):lua.index("\n\n", lua.index("M.BOOTSTRAP ="))]))
    elisp_text = re.search(r'\(defconst tclint-server-bootstrap\s+"([^"]*)"', elisp).group(1)
    ts_text = re.search(r'SERVER_BOOTSTRAP =\s*"([^"]*)"', ts).group(1)
    assert lua_text == elisp_text == ts_text == _rust_bootstrap()
