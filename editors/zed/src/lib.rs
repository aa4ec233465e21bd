//! Zed runs language servers only through extensions: this one starts the tclint server from the
//! project's environment (`.venv/bin/tclint server`, the console script; else `tclint` on PATH;
//! else the interpreter with `BOOTSTRAP`), or from `lsp.tclint.binary` in Zed's settings, and
//! passes `lsp.tclint.settings` on as the server's settings (initializationOptions and the
//! `tclint` section of workspace/configuration).  Never `python -m tclint.server`: `-m` puts the
//! workspace first on sys.path, so a workspace holding a `tclint/` package would run in its place.
use zed_extension_api::{self as zed, serde_json, settings::LspSettings, LanguageServerId, Result};

/// What `python -c` runs: drops the working folder `-c` puts first on sys.path, then starts the
/// server (tests/editors/test_editor_launch.py runs this exact string against a shadowing package).
const BOOTSTRAP: &str =
    "import sys; sys.path[:] = [p for p in sys.path if p]; from tclint.server.__main__ import main; sys.exit(main())";

struct TclintExtension;

impl TclintExtension {
    /// (command, arguments): the project venv's console script, else its interpreter with the
    /// bootstrap; without a venv the `tclint` on PATH, else `python3` with the bootstrap.
    fn server_command(worktree: &zed::Worktree) -> (String, Vec<String>) {
        let root = worktree.root_path();
        for venv in [".venv", "venv"] {
            if worktree.read_text_file(&format!("{venv}/pyvenv.cfg")).is_ok() {
                if worktree.read_text_file(&format!("{venv}/bin/tclint")).is_ok() {
                    return (format!("{root}/{venv}/bin/tclint"), vec!["server".to_string()]);
                }
                return (format!("{root}/{venv}/bin/python"), vec!["-c".to_string(), BOOTSTRAP.to_string()]);
            }
        }
        if let Some(tclint) = worktree.which("tclint") {
            return (tclint, vec!["server".to_string()]);
        }
        let python = worktree.which("python3").unwrap_or_else(|| "python3".to_string());
        (python, vec!["-c".to_string(), BOOTSTRAP.to_string()])
    }

    fn settings(worktree: &zed::Worktree) -> serde_json::Value {
        LspSettings::for_worktree("tclint", worktree)
            .ok()
            .and_then(|s| s.settings)
            .unwrap_or_else(|| serde_json::json!({}))
    }
}

impl zed::Extension for TclintExtension {
    fn new() -> Self {
        TclintExtension
    }

    fn language_server_command(&mut self, _id: &LanguageServerId, worktree: &zed::Worktree) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree("tclint", worktree).ok().and_then(|s| s.binary);
        if let Some(path) = binary.as_ref().and_then(|b| b.path.clone()) {
            let args = binary.and_then(|b| b.arguments).unwrap_or_else(|| vec!["server".to_string()]);
            return Ok(zed::Command { command: path, args, env: Default::default() });
        }
        let (command, args) = Self::server_command(worktree);
        Ok(zed::Command { command, args, env: Default::default() })
    }

    fn language_server_initialization_options(
        &mut self,
        _id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        Ok(Some(serde_json::json!({ "settings": Self::settings(worktree), "workspaceTrusted": true })))
    }

    fn language_server_workspace_configuration(
        &mut self,
        _id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        Ok(Some(serde_json::json!({ "tclint": Self::settings(worktree) })))
    }
}

zed::register_extension!(TclintExtension);
