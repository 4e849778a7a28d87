"""shared.ruleset: presets as TOML data, inheritance, typed overrides and errors (RULES.md
§12-13)."""

from __future__ import annotations

import pytest

from shared import ruleset as R
from shared.ruleset import RulesetError, load_ruleset, resolve_ruleset


def test_default_preset_names_every_rules_option():
    rs = load_ruleset()
    assert rs.name == R.DEFAULT_RULESET == "shanghai-qiaoma"
    # RULES.md §12 defaults
    assert rs.ready.require_declare_ready is True
    assert rs.hands.honors_include_dragons is True
    assert rs.table.multi_win_dealer == "nearest_winner"
    assert rs.table.reserved_tiles == 0
    assert rs.table.tile_swap is False
    assert rs.table.tile_swap_seconds == 15
    assert rs.table.tile_swap_count == 5
    assert rs.scoring.base_points == 2
    assert rs.scoring.lezi_points == 10
    assert rs.scoring.hand_cap_lezi == 5
    assert rs.payment.chengbao_threshold == 3
    assert rs.scoring.dice_huangfan is False
    assert rs.scoring.kaibao is True
    assert rs.scoring.menqing is True
    assert rs.timers.discard_seconds == 20
    assert rs.timers.claim_seconds == 20
    assert rs.timers.ready_seconds == 15


def test_classic_inherits_and_overrides():
    base, classic = load_ruleset("shanghai-qiaoma"), load_ruleset("shanghai-classic")
    assert classic.scoring.lezi_points == 50
    assert classic.scoring.dice_huangfan is True
    assert classic.scoring.kaibao is False
    # not written in the classic file: inherited unchanged
    assert classic.timers.as_dict() == base.timers.as_dict()
    assert classic.table.as_dict() == base.table.as_dict()
    assert set(classic.as_dict()) == set(base.as_dict())


def test_presets_are_cached_and_read_only():
    rs = load_ruleset("shanghai-qiaoma")
    assert load_ruleset("shanghai-qiaoma") is rs
    with pytest.raises(AttributeError, match="read-only"):
        rs.scoring.base_points = 5
    with pytest.raises(AttributeError, match=r"no option scoring\.nope"):
        _ = rs.scoring.nope
    with pytest.raises(AttributeError, match="no section 'nope'"):
        _ = rs.nope


def test_overrides_coerce_strings_and_leave_the_preset_alone():
    rs = resolve_ruleset(
        "", {"table.tile_swap": "on", "scoring.lezi_points": "20", "table.reserved_tiles": 14}
    )
    assert rs.table.tile_swap is True
    assert rs.scoring.lezi_points == 20
    assert rs.table.reserved_tiles == 14
    assert load_ruleset().table.tile_swap is False
    assert rs.option("scoring.lezi_points") == 20
    assert resolve_ruleset("shanghai-classic").name == "shanghai-classic"
    assert load_ruleset().with_overrides({}) is load_ruleset()


@pytest.mark.parametrize(
    ("overrides", "words"),
    [
        ({"table.nope": 1}, "unknown ruleset option 'table.nope'"),
        ({"nope.x": 1}, "unknown ruleset option 'nope.x'"),
        ({"table.tile_swap": "perhaps"}, "takes true or false"),
        ({"scoring.lezi_points": "ten"}, "takes int"),
        ({"scoring.lezi_points": 1.5}, "takes int"),
        ({"scoring.lezi_points": -1}, "must not be negative"),
        ({"table.multi_win_dealer": "random"}, "takes one of nearest_winner"),
    ],
)
def test_bad_overrides_name_the_option(overrides, words):
    with pytest.raises(RulesetError, match=words):
        resolve_ruleset("", overrides)


def test_unknown_and_unimplemented_presets():
    with pytest.raises(RulesetError, match=r"unknown ruleset 'nope'; known: .*shanghai-qiaoma"):
        load_ruleset("nope")
    with pytest.raises(RulesetError, match="拉西胡 is named in seed 000 with no rules"):
        load_ruleset("laxihu")
    with pytest.raises(RulesetError, match="empty"):
        load_ruleset("")
    with pytest.raises(RulesetError, match="unknown ruleset option"):
        load_ruleset().option("scoring")
    assert {"shanghai-qiaoma", "shanghai-classic"} <= set(R.available_rulesets())


@pytest.fixture
def preset_dir(tmp_path, monkeypatch):
    """A private ruleset directory holding a copy of the default preset."""
    (tmp_path / "shanghai-qiaoma.toml").write_bytes(
        (R.RULESET_DIR / "shanghai-qiaoma.toml").read_bytes()
    )
    monkeypatch.setattr(R, "RULESET_DIR", tmp_path)
    R.load_ruleset.cache_clear()
    yield tmp_path
    R.load_ruleset.cache_clear()


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('inherits = "shanghai-qiaoma"\n[nope]\nx = 1\n', "unknown section 'nope'"),
        ('inherits = "shanghai-qiaoma"\n[table]\nnope = 1\n', "unknown option 'table.nope'"),
        ('inherits = "shanghai-qiaoma"\n[table]\ntile_swap = 3\n', "takes bool"),
        ('name = "other"\ninherits = "shanghai-qiaoma"\n', "names itself 'other'"),
        ('inherits = "missing"\n', "unknown ruleset 'missing'"),
        ("x = 1\n", "top-level key 'x' is not a section"),
    ],
)
def test_bad_preset_files_are_named_errors(preset_dir, body, words):
    (preset_dir / "house.toml").write_text(body, encoding="utf-8")
    with pytest.raises(RulesetError, match=words):
        load_ruleset("house")


def test_a_preset_file_can_inherit(preset_dir):
    (preset_dir / "house.toml").write_text(
        'description = "our house"\ninherits = "shanghai-qiaoma"\n[table]\nreserved_tiles = 16\n',
        encoding="utf-8",
    )
    rs = load_ruleset("house")
    assert (rs.name, rs.description, rs.table.reserved_tiles) == ("house", "our house", 16)
    assert rs.scoring.base_points == 2
