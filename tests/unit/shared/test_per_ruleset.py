"""PerRuleset: one derived object per ruleset object, built once, the cache bounded."""

from __future__ import annotations

from shared.per_ruleset import PerRuleset
from shared.ruleset import load_ruleset


def test_built_once_per_ruleset_object() -> None:
    built: list[str] = []

    def build(ruleset):
        built.append(ruleset.name)
        return [ruleset.name]

    cache = PerRuleset(build)
    qiaoma = load_ruleset("shanghai-qiaoma")
    changed = qiaoma.with_overrides({"scoring.base_points": "2"})
    first = cache.get(qiaoma)
    assert cache.get(qiaoma) is first
    assert cache.get(changed) is not first  # a ruleset with overrides is a ruleset of its own
    assert built == [qiaoma.name, qiaoma.name]


def test_bounded_by_its_limit() -> None:
    builds = 0

    def build(ruleset):
        nonlocal builds
        builds += 1
        return builds

    cache = PerRuleset(build, limit=2)
    base = load_ruleset("shanghai-qiaoma")
    rulesets = [base.with_overrides({"scoring.base_points": str(n)}) for n in (2, 3, 4)]
    assert [cache.get(r) for r in rulesets] == [1, 2, 3]  # the third emptied the cache
    assert cache.get(rulesets[2]) == 3  # still held
    assert cache.get(rulesets[0]) == 4  # built again
