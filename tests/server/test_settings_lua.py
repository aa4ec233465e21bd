"""Settings from a Lua client: Neovim encodes an empty table as ``[]``, so a user's ``settings = {}``
(the packaged Neovim config's default) reaches workspace/configuration as an empty list.  It is an
empty settings object, not a "tclint settings must be an object, got list" warning on every start
(seen in Neovim 0.11.4; tests/editors/test_neovim_related.py checks the real client)."""

from __future__ import annotations

from tclint.server.settings import EditorSettings, parse_settings


def test_an_empty_lua_table_is_an_empty_settings_object():
    assert parse_settings([]) == (EditorSettings(), [])
    # the same inside initializationOptions and didChangeConfiguration's wrappers
    settings, problems = parse_settings({"settings": [], "workspaceTrusted": False})
    assert problems == [] and settings == EditorSettings(trusted=False)
    assert parse_settings({"tclint": []}) == (EditorSettings(), [])
    # and for the nested objects
    assert parse_settings({"severity": [], "probe": [], "select": []}) == (EditorSettings(), [])


def test_a_list_with_items_is_still_refused():
    _, problems = parse_settings(["TC1"])
    assert problems == ["tclint settings must be an object, got list"]
    _, problems = parse_settings({"severity": ["TC101"]})
    assert problems and problems[0].startswith("`tclint.severity` must be an object")
