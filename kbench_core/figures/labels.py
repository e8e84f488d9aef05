"""Short, readable axis labels: abbreviated composite names and category ticks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from .style import APP_WIDTH, CHAR_EM, FONT_SIZE, relayout

# Word separators of model and configuration names; a dot before a digit is part of a
# number (``temp0.1``, ``4.5``), not a separator.
SEPARATORS = r"((?:[_\-/ :]|\.(?!\d))+)"
COMPOSITE = " · "  # joins the parts of a composite label (model · judge, category · bias)


def _word_counts(labels: Sequence[str]) -> dict[str, int]:
    """In how many labels each word occurs: a word most labels share tells them apart least."""
    import re

    counts: dict[str, int] = {}
    for label in labels:
        for word in set(re.split(SEPARATORS, label)[::2]):
            counts[word.lower()] = counts.get(word.lower(), 0) + 1
    return counts


def _middle_cut(text: str, budget: int) -> str:
    """``head…tail`` in ``budget`` characters: a readable head (at least 45% of the budget,
    never fewer than 4 characters) and the tail, where numbered names differ."""
    if len(text) <= budget:
        return text
    if budget < 8:  # too short for both ends: the head
        return text[:budget - 1] + "…"
    head = max(4, int(0.45 * (budget - 1)))
    return text[:head] + "…" + text[len(text) - (budget - 1 - head):]


def _abbreviate(label: str, budget: int, counts: Mapping[str, int]) -> str:
    """``label`` in at most ``budget`` characters: first the words most labels share are cut
    to three letters, then to one (``synthetic-detector-07`` → ``syn-det-07`` → ``s-d-07``),
    most shared first, so the words that tell the labels apart stay whole; what is still too
    long is cut in the middle (:func:`_middle_cut`)."""
    import re

    if len(label) <= budget:
        return label
    parts = re.split(SEPARATORS, label)
    # the label's rarest word (its own name among the others) is never abbreviated
    rarest = min(counts.get(w.lower(), 0) for w in parts[::2])
    shared = sorted((i for i in range(0, len(parts), 2)
                     if len(parts[i]) > 3 and counts.get(parts[i].lower(), 0) >= 2
                     and counts.get(parts[i].lower(), 0) > rarest),
                    key=lambda i: (-counts[parts[i].lower()], -len(parts[i]), i))
    for keep in (3, 1):
        for i in shared:
            if len("".join(parts)) <= budget:
                return "".join(parts)
            # the first word (provider or family: "claude", "mistral") keeps three letters,
            # so a cut name still says whose model it is ("cla-hai-4-5", never "c-hai-4-5")
            parts[i] = parts[i][:max(keep, 3 if i == 0 else keep)]
    # then the label's own words but its last word, from the left (the vendor before the
    # model), so its tail (a number, a version) stays whole
    own = [i for i in range(0, len(parts) - 1, 2) if len(parts[i]) > 3
           and counts.get(parts[i].lower(), 0) == rarest]
    for keep in (3, 1):
        for i in own:
            if len("".join(parts)) <= budget:
                return "".join(parts)
            parts[i] = parts[i][:max(keep, 3 if i == 0 else keep)]
    return _middle_cut("".join(parts), budget)


def _shorten_composite(labels: list[str], max_chars: int) -> list[str]:
    """Composite labels (``model · judge``): the part with fewer distinct values (the less
    informative one) is cut first, down to a few characters, then the other part."""
    split = [label.split(COMPOSITE) for label in labels]
    width = max(len(parts) for parts in split)
    split = [parts + [""] * (width - len(parts)) for parts in split]
    distinct = [len({parts[k] for parts in split}) for k in range(width)]
    # cut order: least informative position first
    order = sorted(range(width), key=lambda k: (distinct[k], k))
    counts = [_word_counts([parts[k] for parts in split]) for k in range(width)]
    out = []
    for parts in split:
        parts = list(parts)
        for k in order:
            over = len(COMPOSITE.join(p for p in parts if p)) - max_chars
            if over <= 0:
                break
            keep = max(4, len(parts[k]) - over) if k != order[-1] else \
                len(parts[k]) - over
            parts[k] = _abbreviate(parts[k], max(4, keep), counts[k])
        out.append(parts)
    # one part, one form on the axis: a part is cut as far as the label that needs it most
    # cut it ("cla-opus-4-5 · mimo-v2-flash" beside "claude-opus-4-5 · codestral" named one
    # detector two ways); every label stays within its budget, as it only gets shorter
    for k in range(width):
        shortest: dict[str, str] = {}
        for whole, parts in zip(split, out, strict=True):
            form = shortest.get(whole[k])
            if form is None or len(parts[k]) < len(form):
                shortest[whole[k]] = parts[k]
        for whole, parts in zip(split, out, strict=True):
            parts[k] = shortest[whole[k]]
    return [COMPOSITE.join(p for p in parts if p) for parts in out]


def shorten(labels: Sequence[str], max_chars: int, *, wrap: bool = False) -> list[str]:
    """Labels shortened to ``max_chars`` so that what tells them apart stays readable: words
    most labels share are abbreviated first (:func:`_abbreviate`), a composite label
    (``model · judge``) gives up its less informative part first, and what is still too long
    keeps a readable head and its tail (``head…tail``). Where two would read the same, the
    budget grows until they differ (else the full names); the full names stay in the hover.
    With ``wrap`` (model names: one name everywhere), a label is never cut: its display name
    is broken into lines at its separators (:func:`kbench_core.text.wrap_name`).
    Hand-written: plotly has no label abbreviation."""
    full = [str(label) for label in labels]
    labels = display_labels(full)
    if wrap:
        return [wrap_label(label, max_chars) for label in labels]
    max_chars = max(6, max_chars)
    composite = any(COMPOSITE in label for label in labels)

    def attempt(budget: int) -> list[str]:
        if composite:
            return _shorten_composite(labels, budget)
        counts = _word_counts(labels)
        return [_abbreviate(label, budget, counts) for label in labels]

    out = attempt(max_chars)
    clashes: dict[str, list[int]] = {}
    for i, text in enumerate(out):
        clashes.setdefault(text, []).append(i)
    for group in (g for g in clashes.values() if len(g) > 1):
        names = [labels[i] for i in group]
        if len(set(names)) < len(names):
            continue  # equal names stay equal
        budget = max_chars
        while True:
            budget += 2
            trial = attempt(budget)
            texts = [trial[i] for i in group]
            if len(set(texts)) == len(texts) or budget > max(map(len, names)):
                if len(set(texts)) < len(texts):
                    texts = names
                for i, text in zip(group, texts, strict=True):
                    out[i] = text
                break
    if len(set(out)) < len(set(labels)):  # a grown label met another one: names in full
        out = labels
    return out


MIN_LABEL_CHARS = 16  # a tick label is never cut below this: "claude-haiku-4-5" stays whole


NAME_ROW_PX = 34  # px a row needs for a model name in two lines (two lines of 12 px type)

def name_rows(names: Sequence[str], row_px: int) -> int:
    """The row height for rows of model ``names`` (ticks with ``wrap``): ``row_px``, or
    :data:`NAME_ROW_PX` when a display name is longer than :data:`MIN_LABEL_CHARS` and may
    take two lines."""
    shown = display_labels(list(map(str, names)))
    long = any(len(name) > MIN_LABEL_CHARS for name in shown)
    # a short chart loses more of its height to title and legend in a narrow column
    need = NAME_ROW_PX if len(shown) > 12 else NAME_ROW_PX + 6
    return max(row_px, need) if long else row_px


def wrap_label(label: str, max_chars: int, lines: int = 2) -> str:
    """``label`` in at most ``lines`` lines (``<br>``), broken at its separators
    (:func:`kbench_core.text.wrap_name`) within ``max_chars`` where it can be, else in the
    narrowest lines that keep it to ``lines``: a row of a figure is tall enough for two, and
    a name is never cut."""
    from kbench_core.text import wrap_name

    width = max(6, max_chars)
    out = wrap_name(label, width)
    while len(out) > lines and width < len(label):
        width += 1
        out = wrap_name(label, width)
    return "<br>".join(out)


def display_labels(labels: Sequence[str]) -> list[str]:
    """``labels`` with every model id in its display name
    (:func:`kbench_core.text.display_names`: release dates dropped, a repeated provider said
    once), each part of a composite label (``model · judge``) on its own; the labels
    unchanged when two would then read the same."""
    from kbench_core.text import display_names

    labels = [str(label) for label in labels]
    split = [label.split(COMPOSITE) for label in labels]
    width = max((len(parts) for parts in split), default=0)
    names = [display_names(parts[k] for parts in split if len(parts) > k)
             for k in range(width)]
    out = [COMPOSITE.join(names[k][part] for k, part in enumerate(parts)) for parts in split]
    return out if len(set(out)) == len(set(labels)) else labels


def two_lines_px(size: float) -> int:
    """The height in px a row needs for a label in two lines of ``size`` px type (34 px at
    12 px, as :data:`NAME_ROW_PX`)."""
    import math

    return 2 * math.ceil(1.25 * size) + 4


def fit_labels(labels: Sequence[str], budget: int, *, wrap: bool = False,
               two_lines: bool = False) -> list[str]:
    """``labels`` as tick labels of at most ``budget`` characters a line: model names
    (``wrap``) in two lines at their separators, never cut; other labels shortened
    (:func:`shorten`), except, where their row has room for two lines (``two_lines``), a
    label that would be shortened is broken into two lines instead
    (``overconfidence_<br>effect``, ``anchoring_effect<br>(1.00)``), never cut."""
    if wrap:
        return shorten(labels, budget, wrap=True)
    out = shorten(labels, budget)
    if not two_lines:
        return out
    whole = display_labels([str(label) for label in labels])
    return [shown if shown == name else wrap_label(name, budget)
            for shown, name in zip(out, whole, strict=True)]


def category_ticks(fig: go.Figure, axis: str, labels: Sequence[str], *, share: float = 0.5,
                   width: int = APP_WIDTH, size: float = FONT_SIZE - 1,
                   row_px: float | None = None, wrap: bool = False) -> None:
    """Label every category of ``axis`` (``"yaxis"``, ``"xaxis2"``), cut to ``share`` (half) of the
    figure ``width``; :func:`fit_to_width` recuts them for an export width. ``row_px``: the
    height of one row (y categories), for :func:`row_pages`; in a row of two lines
    (:func:`two_lines_px`) a label is broken into two lines rather than cut
    (:func:`fit_labels`). ``wrap``: model names, wrapped at their separators instead of cut
    (:func:`shorten`), for rows tall enough for two lines."""
    relayout(fig, category_ticks_update(  # one plotly call
        dict(meta=fig.layout.meta), axis, labels, share=share, width=width, size=size,
        row_px=row_px, wrap=wrap))


def category_ticks_update(layout: Mapping, axis: str, labels: Sequence[str], *,
                          share: float = 0.5, width: int = APP_WIDTH,
                          size: float = FONT_SIZE - 1, row_px: float | None = None,
                          wrap: bool = False) -> dict:
    """The layout update :func:`category_ticks` makes to ``layout`` (as JSON, or its ``meta``
    alone), as a plain dict: for a figure gathered as one dict."""
    axis_update, spec = tick_labels(labels, share=share, width=width, size=size, wrap=wrap,
                                    row_px=row_px if axis == "yaxis" else None)
    meta = dict(layout.get("meta")) if isinstance(layout.get("meta"), Mapping) else {}
    ticks = dict(meta.get("kbench_ticks") or {})
    ticks[axis] = spec
    meta["kbench_ticks"] = ticks
    if row_px is not None and axis == "yaxis":
        meta["kbench_row_px"] = row_px
    return {axis: axis_update, "meta": meta}


def tick_labels(labels: Sequence[str], *, share: float = 0.5, width: int = APP_WIDTH,
                size: float = FONT_SIZE - 1, wrap: bool = False,
                row_px: float | None = None) -> tuple[dict, dict]:
    """What :func:`category_ticks` sets, as plain dicts: the axis's tick settings and the
    entry of ``meta["kbench_ticks"]`` that :func:`fit_to_width` recuts them from (for a
    figure built as one dict). ``row_px``: the rows' height (y categories): a row of two
    lines takes a label in two lines rather than cut (:func:`fit_labels`)."""
    labels = [str(label) for label in labels]
    budget = max(MIN_LABEL_CHARS, int(share * width / (CHAR_EM * size)))
    two = row_px is not None and row_px >= two_lines_px(size)
    spec = dict(labels=labels, share=share, size=size, wrap=wrap)
    if row_px is not None:
        spec["row_px"] = row_px
    return (dict(tickmode="array", tickvals=labels,
                 ticktext=fit_labels(labels, budget, wrap=wrap, two_lines=two),
                 tickfont=dict(size=size)),
            spec)
