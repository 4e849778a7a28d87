"""The shanghai-old and shanghai-baida presets as data (RULES-presets §13.D)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shared.ruleset import RulesetError, available_rulesets, load_ruleset, resolve_ruleset
from shared.tile_set import tile_set_of

RULES_PRESETS = Path(__file__).parents[4] / "shared" / "RULES-presets.md"


def _spec_blocks() -> dict[str, dict[str, dict[str, str]]]:
    """The two ```toml blocks of §13.D, as {preset: {section: {option: raw value}}}."""
    text = RULES_PRESETS.read_text(encoding="utf-8")
    out: dict[str, dict[str, dict[str, str]]] = {}
    for block in re.findall(r"```toml\n(.*?)```", text, re.S):
        name = re.search(r'^name = "([^"]+)"', block, re.M).group(1)
        sections: dict[str, dict[str, str]] = {}
        current = None
        for line in block.splitlines():
            line = line.split("#", 1)[0].strip()
            if line.startswith("["):
                current = sections.setdefault(line.strip("[]"), {})
            elif "=" in line and current is not None:
                key, value = (x.strip() for x in line.split("=", 1))
                current[key] = value.strip('"')
        out[name] = sections
    return out


def test_both_presets_load_and_are_listed():
    assert {"shanghai-old", "shanghai-baida"} <= set(available_rulesets())
    assert load_ruleset("shanghai-old").table.scoring_model == "old"
    assert load_ruleset("shanghai-baida").table.tile_set == "baida"


@pytest.mark.skipif(not RULES_PRESETS.exists(), reason="the shared rules are not beside the repo")
@pytest.mark.parametrize("preset", ["shanghai-old", "shanghai-baida"])
def test_every_option_of_the_spec_is_in_the_preset_with_its_value(preset):
    spec = _spec_blocks()[preset]
    ruleset = load_ruleset(preset)
    assert spec, "no §13.D block found"
    for section, options in spec.items():
        for option, raw in options.items():
            value = ruleset.option(f"{section}.{option}")
            assert str(value).lower() == raw.lower(), f"{section}.{option}"


def test_the_new_sections_are_inert_in_the_default_preset():
    qiaoma = load_ruleset()
    assert qiaoma.table.scoring_model == "qiaoma" and qiaoma.table.tile_set == "standard"
    assert qiaoma.payment.chengbao is True
    assert qiaoma.old_fan.seven_pairs == 2 and qiaoma.baida_scoring.base_points == 2
    assert tile_set_of(qiaoma).size == 144


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"old_payment.discard_payment": "both"}, "chuchong, baochong, discarder_only"),
        ({"baida_tiles.wildcards": "jokers"}, "dedicated, flipped"),
        ({"baida_tiles.flipped_wild": "prev"}, "next, same"),
        ({"table.scoring_model": "riichi"}, "qiaoma, old, baida"),
        ({"baida_tiles.jokers": "4"}, "unknown ruleset option 'baida_tiles.jokers'"),
        ({"table.scoring_model": "qiaoma"}, "needs table.scoring_model 'baida'"),
        ({"ready.require_declare_ready": "true"}, "that game has no 敲"),
    ],
)
def test_bad_baida_overrides_are_refused_naming_the_option(overrides, words):
    with pytest.raises(RulesetError, match=re.escape(words)):
        resolve_ruleset("shanghai-baida", overrides)


def test_old_refuses_declare_ready_and_the_baida_set():
    with pytest.raises(RulesetError, match="no 敲"):
        resolve_ruleset("shanghai-old", {"ready.require_declare_ready": "true"})
    with pytest.raises(RulesetError, match=r"needs table\.scoring_model 'baida'"):
        resolve_ruleset("shanghai-old", {"table.tile_set": "baida"})


@pytest.mark.parametrize(
    ("overrides", "size", "wild"),
    [
        ({}, 152, True),
        ({"baida_tiles.extra_bonus_tiles": "false"}, 148, True),
        ({"baida_tiles.wildcards": "flipped"}, 148, True),
        ({"baida_tiles.wildcards": "flipped", "baida_tiles.extra_bonus_tiles": "false"}, 144, True),
    ],
)
def test_baida_tile_set_sizes(overrides, size, wild):
    ts = tile_set_of(resolve_ruleset("shanghai-baida", overrides))
    assert ts.size == size and ts.has_wildcards is wild
    assert ts.dragons_bonus
