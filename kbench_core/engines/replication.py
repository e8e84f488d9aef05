"""A replication run's ECS sufficient table computed in the engine (issue 39): one group-by
of the tests on model × study × finding [× domain] with the moments of each finding's valid
(human d, agent d) pairs, the table :func:`kbench_core.replication.ecs.finding_sums` makes
of a loaded run, so :func:`kbench_core.replication.ecs.ecs_from_sums` finishes both alike.

Each test's d is worked out where the row lies, as the loader's run gives it
(:func:`kbench_core.replication.effects.prepare_tests`): ``human_d``/``agent_d`` where
finite, else the native effect converted by its test type
(:func:`kbench_core.replication.effects.effect_to_d`, written here in the engine's
functions). The tests' text (their names, notes) never leaves the engine: the table has a
row per finding, not per test.

Supported where the file holds its columns in their natural Parquet types (effects as
numbers, labels as text): :func:`supported` says so; another file is read by the loader.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from kbench_core.engines.keys import Labels
from kbench_core.engines.source import FILE, ROW
from kbench_core.replication.effects import EPSILON
from kbench_core.replication.scatter import DensityGrid

__all__ = ["fetch_sums", "finding_pas_sums", "finding_sums", "no_prior_count", "per_item",
           "scatter_grid", "scatter_points", "supported"]

_NUMBERS = ("human_d", "agent_d", "human_effect", "agent_effect", "human_pi", "agent_pi",
            "human_bf10", "agent_bf10", "n_eff")
_LABELS = ("model", "study", "finding", "domain", "test_type")
_FLAGS = ("human_significant",)
_KEYS = ("model", "study", "finding", "domain")


def supported(table: Any) -> bool:
    """Whether the engine reads the columns ECS needs as the loader would: effects stored as
    numbers, labels as text (a column with no value at all, Parquet's null type, passes)."""
    from kbench_core.engines.judged import _empty

    schema = table.schema()
    for name in table.columns:
        kind = schema[name]
        if name in _NUMBERS and not kind.is_numeric():
            return False
        if name in _LABELS and not kind.is_string() and not (kind.is_integer()
                                                               and _empty(table, name)):
            return False
        if name in _FLAGS and not kind.is_boolean() and not (kind.is_integer()
                                                               and _empty(table, name)):
            return False
    return True


def _finite(value: Any) -> Any:
    return value.notnull() & ~value.isnan() & ~value.isinf()


def _native_d(table: Any, value: str, kind: str, out: str) -> Any:
    """``table`` with ``out``: :func:`kbench_core.replication.effects.effect_to_d` of the
    column ``value`` by the test type in the column ``kind``, as an engine expression (NaN
    there is null here): tanh of a Fisher z as sign·(1 − e^{−2|z|})/(1 + e^{−2|z|}), which
    no exponent overflows.

    Written in stages, one ``mutate`` each (r, then d, then d where finite): a stage a later
    one reads several times stays a column of its own (Ibis inlines a projection only where
    that does not grow the query), where one expression would hold r four times and d four
    times over, each a copy of every stage below it: 192 exponentials in the ECS query, whose
    plan Spark's code generator could not compile."""
    import ibis

    v, k = table[value].cast("float64"), table[kind]
    shrink = (v.abs() * -2.0).exp()
    staged = table.mutate(__kbench_r=ibis.ifelse(
        k == "correlation", v.sign() * (1.0 - shrink) / (1.0 + shrink), v))
    v, k, r = staged[value].cast("float64"), staged[kind], staged["__kbench_r"]
    from_r = ibis.ifelse(r.abs() < 1 - EPSILON, 2 * r / (1 - r * r).sqrt(),
                         ibis.null("float64"))
    binomial = ibis.ifelse((v >= 0) & (v <= 1), 2 * (v - 0.5) / math.sqrt(0.25),
                           ibis.null("float64"))
    staged = staged.mutate(__kbench_raw=ibis.cases(
        (k.isin(["t", "f", "anova"]), v), (k.isin(["correlation", "mann_whitney"]), from_r),
        (k == "chi2", v * math.sqrt(3) / math.pi), (k == "binomial", binomial),
        else_=ibis.null("float64")))
    d = staged["__kbench_raw"]
    return staged.mutate(**{out: ibis.ifelse(_finite(d), d, ibis.null("float64"))}).drop(
        "__kbench_r", "__kbench_raw")


def _with_d(table: Any, kind: Any) -> Any:
    """``table`` with ``__d_human`` and ``__d_agent``: each side's Cohen's d per test,
    ``{side}_d`` where finite, else the native effect's by the test type ``kind`` (an
    expression of ``table``; None: no native effect converts), each stage a column of its
    own (:func:`_native_d`)."""
    import ibis

    staged = table.mutate(__kbench_kind=kind if kind is not None else ibis.null("string"))
    for side in ("human", "agent"):
        native = ibis.null("float64")
        if f"{side}_effect" in staged.columns and kind is not None:
            staged = _native_d(staged, f"{side}_effect", "__kbench_kind", f"__native_{side}")
            native = staged[f"__native_{side}"]
        given = (staged[f"{side}_d"].cast("float64") if f"{side}_d" in staged.columns
                 else ibis.null("float64"))
        staged = staged.mutate(**{f"__d_{side}": ibis.ifelse(_finite(given), given, native)})
    return staged


def finding_sums(table: Any, files: Sequence[str] = (), labels: Labels | None = None) -> Any:
    """The ECS sufficient table of a replication ``table`` (as
    :func:`~kbench_core.engines.source.open_table` opens it; ``files`` its files in the
    order the memory engine reads them) as an Ibis expression: per model × study × finding
    [× domain] (labels stripped as the loader strips them) ``n`` valid pairs, ``mean_x,
    mean_y``, the centred sums ``m2_x, m2_y, c_xy`` (the engine's population covariances ×
    n) and ``place``, the place of its first row in the run. ``labels``: ``table``'s
    distinct labels when the caller has them (the validation's)."""

    rows = _pairs(table, files, labels=labels)
    n = rows["__x"].count()
    return rows.group_by(_group_keys(rows)).aggregate(
        n=n, mean_x=rows["__x"].mean(), mean_y=rows["__y"].mean(),
        m2_x=rows["__x"].cov(rows["__x"], how="pop") * n,
        m2_y=rows["__y"].cov(rows["__y"], how="pop") * n,
        c_xy=rows["__x"].cov(rows["__y"], how="pop") * n,
        place=rows["place"].min())


def per_item(table: Any, labels: Labels | None = None) -> Any:
    """``table`` with the per-item column a comparison of models pairs (the family's
    ``per_item``: :func:`kbench_core.families.replication._per_item`) worked out by the
    engine: ``abs_diff`` = |agent d − human d| per test, null where either d is undefined
    (each side's d as :func:`finding_sums` takes it); every other column as it is, labels of
    no value at all (Parquet's null type) as text. ``labels``: ``table``'s distinct labels
    when the caller has them."""
    import ibis

    from kbench_core.engines.keys import _loader_text

    table, _ = _keyed(table, labels)
    kind = _loader_text(table, "test_type", strip=True, labels=labels) \
        if "test_type" in table.columns else None
    staged = _with_d(table, kind)
    x, y = staged["__d_human"], staged["__d_agent"]
    return staged.mutate(abs_diff=ibis.ifelse(x.notnull() & y.notnull(), (y - x).abs(),
                                              ibis.null("float64"))).select(
        *table.columns, "abs_diff")


def _keyed(table: Any, labels: Labels | None = None) -> tuple[Any, dict[str, Any]]:
    """``table`` with its labels of no value at all (Parquet's null type, read as integers:
    :func:`supported`) as text, and its key labels (model, study, finding, domain) as the
    loader strips them (``labels``: the distinct values of ``table`` as given, when at hand;
    a column cast here has none)."""
    from kbench_core.engines.keys import _loader_text

    schema = table.schema()
    table = table.mutate(**{name: table[name].cast("string") for name in table.columns
                            if name in _LABELS and schema[name].is_integer()})
    return table, {name: _loader_text(table, name, strip=True, labels=labels)
                   for name in _KEYS if name in table.columns}


def _group_keys(rows: Any) -> list[str]:
    return [name for name in _KEYS if name in rows.columns]


def _pairs(table: Any, files: Sequence[str], *, extra: Sequence[str] = (),
           labels: Labels | None = None) -> Any:
    """Each test's keys (labels stripped as the loader strips them; ``extra`` text columns
    kept as the loader keeps them), its place in the run and ``__x``, ``__y``: its human and
    agent d where both are finite (else both null)."""
    import ibis

    from kbench_core.engines.keys import _loader_text

    table, keys = _keyed(table, labels)
    kept = {name: _loader_text(table, name, strip=False, labels=labels) for name in extra
            if name in table.columns}
    kind = _loader_text(table, "test_type", strip=True, labels=labels) \
        if "test_type" in table.columns else None
    staged = _with_d(table, kind)
    x, y = staged["__d_human"], staged["__d_agent"]
    valid = x.notnull() & y.notnull()
    return staged.select(**keys, **kept, __x=ibis.ifelse(valid, x, ibis.null("float64")),
                         __y=ibis.ifelse(valid, y, ibis.null("float64")),
                         place=_place(table, files))


def scatter_grid(table: Any, files: Sequence[str], sums: pd.DataFrame, *,
                 weighting: str = "structure", labels: Labels | None = None,
                 ) -> DensityGrid | None:
    """The effect scatter's :class:`~kbench_core.replication.scatter.DensityGrid` of a
    replication ``table`` computed by the engine (``sums``: its ECS sufficient table, for the
    tests' weights): the axes' range from the effects' extremes, each model's counts on
    numpy's ``histogram2d`` bins (the bin found from the edges themselves, so a value on an
    edge falls where numpy puts it), the tests beyond the axes, and per finding the moments
    of the drawn (clamped) effects, from which each model's weighted fit line is finished.
    None for a run of at most :data:`~kbench_core.replication.scatter.MAX_POINTS` valid
    pairs (the figure draws each test: :func:`scatter_points`). ``labels``: ``table``'s
    distinct labels when the caller has them."""
    import ibis

    from kbench_core.replication.scatter import (
        DENSITY_BINS,
        MAX_POINTS,
        axis_range,
        fit_from_moments,
    )

    if int(sums["n"].sum()) <= MAX_POINTS:
        return None
    rows = _pairs(table, files, labels=labels)
    rows = rows.filter(rows["__x"].notnull())
    low, high = rows.aggregate(low=ibis.least(rows["__x"].min(), rows["__y"].min()),
                               high=ibis.greatest(rows["__x"].max(), rows["__y"].max())
                               ).to_pyarrow().to_pylist()[0].values()
    lo, hi = axis_range(float(low), float(high))
    edges = np.linspace(lo, hi, DENSITY_BINS + 1)
    low_x, high_x = _exact(lo), _exact(hi)
    clamped = rows.mutate(
        __cx=ibis.greatest(ibis.least(rows["__x"], high_x), low_x),
        __cy=ibis.greatest(ibis.least(rows["__y"], high_x), low_x),
        __out=(rows["__x"] < low_x) | (rows["__x"] > high_x) | (rows["__y"] < low_x)
        | (rows["__y"] > high_x))
    binned = clamped.mutate(__bx=_bin(clamped["__cx"], edges), __by=_bin(clamped["__cy"], edges))
    cells = binned.group_by(["model", "__bx", "__by"]).aggregate(n=binned.count()).to_pyarrow()
    n = clamped["__cx"].count()
    moments = clamped.group_by(_group_keys(clamped)).aggregate(
        n=n, mean_x=clamped["__cx"].mean(), mean_y=clamped["__cy"].mean(),
        m2_x=clamped["__cx"].cov(clamped["__cx"], how="pop") * n,
        c_xy=clamped["__cx"].cov(clamped["__cy"], how="pop") * n,
        out=clamped["__out"].cast("int64").sum())
    moments = moments.to_pyarrow().to_pandas()
    keys = _group_keys(clamped)
    moments = moments.merge(_weights(sums, keys, weighting, "w"), on=keys, how="left",
                            validate="one_to_one")
    cell_frame = cells.to_pandas()
    models = sorted(map(str, cell_frame["model"].unique()))
    counts = {}
    for name in models:
        mine = cell_frame[cell_frame["model"] == name]
        grid = np.zeros((DENSITY_BINS, DENSITY_BINS))
        grid[mine["__bx"].to_numpy(np.int64), mine["__by"].to_numpy(np.int64)] = \
            mine["n"].to_numpy(float)
        counts[name] = grid

    def fit(part: pd.DataFrame):
        w, k = part["w"].to_numpy(float), part["n"].to_numpy(float)
        mx_f, my_f = part["mean_x"].to_numpy(float), part["mean_y"].to_numpy(float)
        sw = float((w * k).sum())
        if not sw > 0:
            return None
        mx, my = float((w * k * mx_f).sum() / sw), float((w * k * my_f).sum() / sw)
        dx, dy = mx_f - mx, my_f - my
        sxx = float((w * (part["m2_x"].to_numpy(float) + k * dx * dx)).sum())
        sxy = float((w * (part["c_xy"].to_numpy(float) + k * dx * dy)).sum())
        return fit_from_moments(sw, mx, my, sxx, sxy, float(k.sum()))

    fits = {name: fit(moments[moments["model"] == name]) for name in models}
    fits[None] = fit(moments)
    return DensityGrid(lo, hi, tuple(models), counts, fits, int(moments["out"].sum()),
                       int(moments["n"].sum()))


def _weights(sums: pd.DataFrame, keys: list[str], weighting: str, name: str) -> pd.DataFrame:
    """Each finding's test weight (column ``name``) beside its ``keys`` as the engine gives
    them (a missing label None): the ECS weights of the ECS table ``sums``, so the scatter
    weighs each test as ECS does."""
    from kbench_core.replication.ecs import _finding_weights

    s = sums.sort_values("place", kind="stable").reset_index(drop=True)
    n_f = s["n"].to_numpy(np.int64)
    return pd.DataFrame({**{k: s[k].astype(object).where(s[k].notna(), None) for k in keys},
                         name: _finding_weights(s, weighting, n_f, n_f > 0)})


def _bin(value: Any, edges: np.ndarray) -> Any:
    """numpy's ``histogram2d`` bin of a value in ``[edges[0], edges[-1]]``: the edges at or
    below it, less one, the last edge in the last bin; estimated by division, then moved by
    one where an edge (each the very double numpy's ``linspace`` made: :func:`_exact`) says
    otherwise."""
    import ibis

    last = len(edges) - 2
    lo, hi = float(edges[0]), float(edges[-1])
    # int32: Spark's element_at takes an INT index
    guess = ((value - lo) / (hi - lo) * (last + 1)).floor().cast("int32").clip(0, last)
    listed = ibis.array([_exact(float(e)) for e in edges])
    below = ibis.ifelse(value < listed[guess], 1, 0)
    above = ibis.ifelse(value >= listed[guess + 1], 1, 0)
    return (guess - below + above).clip(0, last)


def _exact(x: float) -> Any:
    """The double ``x`` as an engine expression that is exactly it: a literal such as
    ``0.10000000000000053`` is read by DuckDB as a decimal, whose cast to a double can miss
    by a bit (to ``0.10000000000000052``), which moves a value on a bin's edge. Written as
    an integer (exact below 2^53) times a power of two (exact)."""
    import math

    import ibis

    if x == 0 or not math.isfinite(x):
        return ibis.literal(x, type="float64")
    fraction, exponent = math.frexp(x)
    mantissa = int(fraction * (1 << 53))
    return (ibis.literal(mantissa, type="int64").cast("float64")
            * ibis.literal(2, type="int64").cast("float64").pow(exponent - 53))


def scatter_points(table: Any, files: Sequence[str], sums: pd.DataFrame, *,
                   weighting: str = "structure", labels: Labels | None = None,
                   ) -> pd.DataFrame:
    """The tests the effect scatter draws one by one (a run of at most
    :data:`~kbench_core.replication.scatter.MAX_POINTS` valid pairs), as
    :func:`kbench_core.replication.scatter_points` gives them of a loaded run: keys, test,
    title, ``d_h``, ``d_a`` and ``weight`` (the ECS weight of ``sums``), in file order.
    ``labels``: ``table``'s distinct labels when the caller has them."""

    rows = _pairs(table, files, extra=("test", "title"), labels=labels)
    rows = rows.filter(rows["__x"].notnull()).order_by("place")
    points = rows.to_pyarrow().to_pandas().rename(columns={"__x": "d_h", "__y": "d_a"})
    keys = _group_keys(rows)
    points = points.merge(_weights(sums, keys, weighting, "weight"), on=keys, how="left",
                          validate="many_to_one")
    for name in keys:
        points[name] = points[name].astype("category")
    return points.drop(columns="place")


def _number(table: Any, name: str) -> Any:
    import ibis

    return table[name].cast("float64") if name in table.columns else ibis.null("float64")


def _posterior(table: Any, side: str, prior: str) -> Any:
    """``table`` with ``__pi_{side}``: one side's posterior per test, as
    :func:`kbench_core.replication.effects.prepare_tests` gives it: ``{side}_pi`` where
    finite, else from the Bayes factor and the prior odds in the column ``prior`` (an
    infinite product 1); the posterior from the Bayes factor a column of its own (staged as
    :func:`_native_d` stages d)."""
    import ibis

    odds = _number(table, f"{side}_bf10") * table[prior]
    staged = table.mutate(**{f"__bf_{side}": ibis.ifelse(odds.isinf() & (odds > 0), 1.0,
                                                         odds / (1 + odds))})
    given, from_bf = _number(staged, f"{side}_pi"), staged[f"__bf_{side}"]
    return staged.mutate(**{f"__pi_{side}": ibis.ifelse(
        _finite(given), given, ibis.ifelse(_finite(from_bf), from_bf, ibis.null("float64")))})


def _place(table: Any, files: Sequence[str]) -> Any:
    import ibis

    place = table[ROW].cast("int64")
    if len(files) > 1:
        rank = ibis.cases(*((table[FILE] == name, i) for i, name in enumerate(files)),
                          else_=len(files))
        place = rank.cast("int64") * (1 << 40) + place
    return place


def finding_pas_sums(table: Any, files: Sequence[str] = (), *,
                     finding_weights: str = "equal", human_prior_significant: float = 10.0,
                     human_prior_null: float = 0.1, agent_prior: float = 1.0,
                     labels: Labels | None = None) -> Any:
    """PAS's sufficient table of a replication ``table`` as an Ibis expression, the columns
    of :func:`kbench_core.replication.pas.finding_pas_sums` (per model × study × finding:
    the counts, Σw, Σwz, Σz, ΣPAS of its usable tests, the domain of its first row), each
    test's posteriors and PAS worked out by the engine (z = ½ ln((1 + r)/(1 − r)) of the
    clamped r = 2·PAS − 1). ``labels``: ``table``'s distinct labels when the caller has
    them."""
    rows, keys = _pas_rows(table, files, finding_weights=finding_weights,
                           human_prior_significant=human_prior_significant,
                           human_prior_null=human_prior_null, agent_prior=agent_prior,
                           labels=labels)

    def count(flag: Any) -> Any:
        return flag.fill_null(False).cast("int64").sum()

    measures = dict(n_tests=rows.count(), n_posteriors=count(rows["__p"]),
                    n_usable=count(rows["__u"]), sum_w=rows["__w"].sum(),
                    sum_wz=(rows["__w"] * rows["__z"]).sum(), sum_z=rows["__z"].sum(),
                    sum_pas=rows["__v"].sum(), n_no_prior=count(rows["__np"]),
                    n_no_weight=count(rows["__nw"]), place=rows["place"].min())
    if "domain" in rows.columns:
        measures["domain"] = rows["domain"].argmin(rows["place"])
    return rows.group_by(keys).aggregate(**measures)


def no_prior_count(table: Any, labels: Labels | None = None) -> int:
    """The tests with a human Bayes factor but no posterior (no ``human_significant`` flag:
    no prior odds), which PAS leaves out and the loader warns of: one count over the rows,
    as :func:`finding_pas_sums` counts them per finding."""
    rows, _ = _pas_rows(table, (), labels=labels)
    return int(rows.aggregate(n=rows["__np"].cast("int64").sum()).to_pyarrow()
               .column(0)[0].as_py() or 0)


def _pas_rows(table: Any, files: Sequence[str], *, finding_weights: str = "equal",
              human_prior_significant: float = 10.0, human_prior_null: float = 0.1,
              agent_prior: float = 1.0, labels: Labels | None = None,
              ) -> tuple[Any, list[str]]:
    """Each test's keys, its PAS terms (usable, posteriors, weight, z, PAS, no prior, no
    weight) and place, and the key columns (model, study, finding)."""
    import ibis

    schema = table.schema()
    if "human_significant" in table.columns and schema["human_significant"].is_integer():
        table = table.mutate(human_significant=table["human_significant"].cast("boolean"))
    table, keys = _keyed(table, labels)
    domain = keys.pop("domain", None)
    if "human_significant" in table.columns:  # no flag: no prior odds
        flag = table["human_significant"]
        prior_h = ibis.cases((flag == True, human_prior_significant),  # noqa: E712
                             (flag == False, human_prior_null),  # noqa: E712
                             else_=ibis.null("float64"))
    else:
        prior_h = ibis.null("float64")
    # each term a column of its own (as _native_d stages d): one expression would copy the
    # posteriors into PAS, r and z over and over (a 331 kB query)
    staged = table.mutate(__prior_human=prior_h, __prior_agent=ibis.literal(float(agent_prior)))
    staged = _posterior(_posterior(staged, "human", "__prior_human"), "agent", "__prior_agent")
    pi_h, pi_a = staged["__pi_human"], staged["__pi_agent"]
    staged = staged.mutate(__pas=pi_h * pi_a + (1 - pi_h) * (1 - pi_a))
    staged = staged.mutate(__r=(2 * staged["__pas"] - 1).clip(-(1 - EPSILON), 1 - EPSILON))
    pi_h, pi_a, value, r = (staged[c] for c in ("__pi_human", "__pi_agent", "__pas", "__r"))
    posteriors = pi_h.notnull() & pi_a.notnull()
    if finding_weights == "n_eff":
        weight = _number(staged, "n_eff")
        weighable = _finite(weight)
    else:
        weight, weighable = ibis.literal(1.0), ibis.literal(True)
    usable = posteriors & weighable
    z = ((1 + r) / (1 - r)).ln() * 0.5
    no_prior = ~_finite(pi_h) & _finite(_number(staged, "human_bf10"))
    extra = {"domain": domain} if domain is not None else {}
    rows = staged.select(**keys, **extra, __u=usable, __p=posteriors,
                         __w=ibis.ifelse(usable, weight, 0.0),
                         __z=ibis.ifelse(usable, z, 0.0), __v=ibis.ifelse(usable, value, 0.0),
                         __np=no_prior.fill_null(False),
                         __nw=(posteriors & ~weighable).fill_null(False),
                         place=_place(table, files))
    return rows, list(keys)


def fetch_sums(expr: Any) -> pd.DataFrame:
    """The sufficient table as :func:`kbench_core.replication.ecs.ecs_from_sums` reads it:
    keys as categories (a missing label NaN, as the loader's), in order of first rows.
    Fetched in batches and refused past the loader's decompressed-size limit
    (:func:`kbench_core.engines.fetch.bounded`), dictionary-encoded and ordered here, not in
    the engine: at 6M tests (2.5M findings) an engine sort cost 0.6 GiB and text keys as
    Python strings as much again."""
    import pyarrow.compute as pc

    from kbench_core.engines.fetch import bounded

    table = bounded(expr, "per-finding sums",
                    too_many="its findings are too many for these per-finding sums")
    for name in _KEYS:
        if name in table.column_names:
            i = table.column_names.index(name)
            table = table.set_column(i, name, pc.dictionary_encode(table.column(name)))
    # sorted once the keys are codes: taking 2.5M strings cost 2.3 s, their codes little
    table = table.take(pc.sort_indices(table, [("place", "ascending")]))
    # each Arrow column freed once converted: the two copies of 4M findings were the peak
    frame = table.to_pandas(split_blocks=True, self_destruct=True)
    del table
    for name in frame.columns:
        if name == "place" or name == "n" or name.startswith("n_"):
            frame[name] = frame[name].fillna(0).astype(np.int64)
        elif name not in _KEYS:
            frame[name] = frame[name].astype(float)
    return frame
