//! Zed runs language servers only through extensions: this one starts the tclint server from the
//! project's Python (`.venv/bin/python -m tclint.server`, else `python3` on PATH), or from
//! `lsp.tclint.binary` in Zed's settings, and passes `lsp.tclint.settings` on as the server's
//! settings (initializationOptions and the `tclint` section of workspace/configuration).
use zed_extension_api::{self as zed, serde_json, settings::LspSettings, LanguageServerId, Result};

struct TclintExtension;

impl TclintExtension {
    fn python(worktree: &zed::Worktree) -> String {
        let root = worktree.root_path();
        for venv in [".venv", "venv"] {
            let candidate = format!("{root}/{venv}/bin/python");
            if worktree.read_text_file(&format!("{venv}/pyvenv.cfg")).is_ok() {
                return candidate;
            }
        }
        worktree.which("python3").unwrap_or_else(|| "python3".to_string())
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
        Ok(zed::Command {
            command: Self::python(worktree),
            args: vec!["-m".to_string(), "tclint.server".to_string()],
            env: Default::default(),
        })
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
