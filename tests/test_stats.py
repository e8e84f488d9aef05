"""kbench_core.stats: Wilson and t intervals against statsmodels and scipy, within-group draws."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from kbench_core.stats import WithinGroups, check_choice, t_interval, wilson


def test_wilson_matches_statsmodels_and_is_nan_without_data() -> None:
    low, high = wilson(np.array([3, 0, 5]), np.array([10, 4, 0]))
    ref = proportion_confint(3, 10, alpha=0.05, method="wilson")
    assert (low[0], high[0]) == pytest.approx(ref)
    assert low[1] == 0 and high[1] > 0          # 0 of 4: Wilson stays informative
    assert np.isnan(low[2]) and np.isnan(high[2])


def test_t_interval_matches_scipy() -> None:
    values = np.array([0.2, 0.5, 0.4, 0.9])
    low, high = t_interval(values.mean(), values.std(ddof=1), 4)
    ref = stats.t.interval(0.95, 3, loc=values.mean(), scale=stats.sem(values))
    assert (float(low), float(high)) == pytest.approx(ref)
    assert np.isnan(t_interval(0.5, 0.1, 1)[0])


def test_within_group_draws_keep_every_group_size_and_stay_inside_it() -> None:
    owner = np.array([0, 0, 0, 1, 1, 2, 0, 1])
    draws = WithinGroups(owner)
    rng = np.random.default_rng(0)
    for _ in range(50):
        counts = draws.draw(rng)
        assert counts.sum() == owner.size
        for group in range(3):
            assert counts[owner == group].sum() == (owner == group).sum()


def test_check_choice_names_the_option() -> None:
    check_choice("ci", None, (None, "bootstrap"))
    with pytest.raises(ValueError, match="ci must be one of None, 'bootstrap'; got 'x'"):
        check_choice("ci", "x", (None, "bootstrap"))
