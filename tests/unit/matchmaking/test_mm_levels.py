import pytest

from services.matchmaking.domain.queues import levels
from shared.errors import FailedPrecondition, InvalidArgument


@pytest.mark.parametrize(
    ("silver", "name", "base"),
    [
        (-5, "待业", 0),
        (0, "待业", 0),
        (99, "待业", 0),
        (100, "临时工", 1),
        (199, "临时工", 1),
        (200, "合同工", 2),
        (400, "正式工", 4),
        (1000, "副主管", 8),
        (1600, "主管", 16),
        (6553600, "集团主席", 65536),
        (10**9, "集团主席", 65536),
    ],
)
def test_level_for_silver_follows_the_seed_001_table(silver, name, base):
    level = levels.level_for(silver)
    assert (level.name, level.base_chips) == (name, base)


def test_table_has_eighteen_levels_doubling():
    assert len(levels.LEVELS) == 18
    for lower, upper in zip(levels.LEVELS[1:], levels.LEVELS[2:], strict=False):
        assert upper.min_silver == 2 * lower.min_silver
        assert upper.base_chips == 2 * lower.base_chips


def test_allowed_stakes_are_own_tier_and_below():
    assert levels.allowed_stakes(levels.level_for(450)) == (1, 2, 4)
    assert levels.allowed_stakes(levels.level_for(50)) == ()


def test_unemployed_may_not_join_rated_games():
    with pytest.raises(FailedPrecondition) as err:
        levels.check_rated_stake(99, 1)
    assert err.value.reason == "SILVER_TOO_LOW"
    assert "待业" in err.value.message


def test_stake_above_level_is_refused_and_names_the_level_needed():
    with pytest.raises(FailedPrecondition) as err:
        levels.check_rated_stake(250, 4)
    assert err.value.reason == "STAKE_NOT_ALLOWED"
    assert "正式工" in err.value.message and "合同工" in err.value.message


def test_stake_that_is_no_tier_is_invalid():
    with pytest.raises(InvalidArgument):
        levels.check_rated_stake(5000, 3)


def test_zero_stake_means_own_tier():
    assert levels.check_rated_stake(1000, 0) == 8
    assert levels.check_rated_stake(1000, 2) == 2
