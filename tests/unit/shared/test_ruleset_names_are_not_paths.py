"""A ruleset name comes from the network: it names a preset, never a path on the server."""

from __future__ import annotations

import pytest

from shared.ruleset import RulesetError, resolve_ruleset


@pytest.mark.parametrize(
    "name",
    [
        "../../pyproject",  # a TOML file outside shared/rulesets/ must not become a ruleset
        "../rulesets/shanghai-qiaoma",
        "/etc/hosts",
        "x" * 5000,  # longer than a file name may be: OSError, not RulesetError, before the fix
        "a\x00b",
        "Shanghai-Qiaoma",
    ],
)
def test_a_name_that_is_no_preset_is_a_ruleset_error(name):
    with pytest.raises(RulesetError) as err:
        resolve_ruleset(name)
    assert len(str(err.value)) < 300  # a 5000-character name is not echoed whole


def test_presets_still_load_by_name():
    assert resolve_ruleset("shanghai-classic").name == "shanghai-classic"
    assert resolve_ruleset("").name == "shanghai-qiaoma"
