"""Paper-ready exports: figures as PNG, SVG and PDF, tables as CSV, LaTeX and Markdown, each
carrying its provenance (the README's Command line section).

Provenance = kbench version, the runs (name and content hash) and the options that made the
figure or table. It travels inside the file: PDF document information (``/kbench``, via pypdf),
an SVG ``<metadata>`` element, a PNG ``tEXt`` chunk, a ``#`` comment header in CSV, a ``%``
comment in LaTeX and an HTML comment in Markdown.

Nothing from a run can break out of where it is written: names in provenance comment lines are
written plainly only when they hold nothing but letters, digits and harmless punctuation, and
otherwise as JSON string literals with control characters, ``,``, ``;`` and ``--`` escaped
(:func:`kbench_core.text.json_quote`), so a name with a newline cannot start a live LaTeX line,
a CSV row or HTML after ``-->``. CSV text cells that a spreadsheet would run as a formula are
prefixed with ``'`` (the OWASP rule), Markdown cells are HTML-escaped with their Markdown
punctuation backslash-escaped, and line breaks inside a LaTeX or Markdown cell become spaces.

Static figures are rendered by kaleido (1.x), which drives the Chromium found on the PATH
(Debian's ``chromium``; nothing is downloaded). :class:`FigureExporter` starts kaleido's render
server once and reuses it for every figure of a command.
"""

from __future__ import annotations

import contextlib
import csv
import html
import io
import json
import os
import re
import signal
import struct
import threading
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal
from xml.sax.saxutils import escape as xml_escape

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import kbench_core
from kbench_core.text import csv_cell, escape_controls, json_quote, json_safe, safe_name

__all__ = [
    "FIGURE_FORMATS",
    "PAPER_SIZES",
    "TABLE_FORMATS",
    "FigureExporter",
    "Provenance",
    "provenance_of",
    "safe_name",
    "table_bytes",
    "to_csv",
    "to_latex",
    "to_markdown",
]

FigureFormat = Literal["png", "svg", "pdf"]
TableFormat = Literal["csv", "latex", "markdown"]
FIGURE_FORMATS: tuple[str, ...] = ("png", "svg", "pdf")
TABLE_FORMATS: tuple[str, ...] = ("csv", "latex", "markdown")
# Width x height in CSS pixels (1/96 in): a one-column figure is 3.5 in wide, a two-column
# figure 7 in, the widths of ACL/NeurIPS-style two-column and one-column layouts.
PAPER_SIZES: dict[str, tuple[int, int]] = {"one-column": (336, 260), "two-column": (672, 360),
                                           "screen": (900, 520)}


@dataclass(frozen=True)
class Provenance:
    """What made an exported figure or table: kbench version, runs (name, SHA-256), options."""

    runs: tuple[tuple[str, str], ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    what: str = ""
    version: str = kbench_core.__version__
    created: str = field(default_factory=lambda: datetime.now(UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"))

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["runs"] = [{"name": n, "sha256": h} for n, h in self.runs]
        data["options"] = {k: _plain(v) for k, v in self.options.items()}
        return {"generator": "kbench", **data}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=True)

    def lines(self) -> list[str]:
        """Human-readable lines for comment headers: each is one line that cannot end a
        comment or start a spreadsheet cell, whatever the run names hold."""
        out = [f"kbench {_comment_text(self.version)}"
               + (f" · {_comment_text(self.what)}" if self.what else ""),
               f"created {_comment_text(self.created)}"]
        out += [f"run {_comment_text(name)} sha256:{_comment_text(sha)}"
                for name, sha in self.runs]
        if self.options:
            out.append("options " + json_safe({k: _plain(v) for k, v in self.options.items()}))
        return out


_PLAIN_TEXT = re.compile(r"[A-Za-z0-9][A-Za-z0-9 ._:/()+=@'-]*")


def _comment_text(value: Any) -> str:
    """``value`` as is when plainly safe in a comment line, else as a JSON string literal
    (:func:`kbench_core.text.json_quote`; ``json.loads`` reads it back)."""
    text = str(value)
    if _PLAIN_TEXT.fullmatch(text) and "--" not in text and not text.endswith((" ", "-")):
        return text
    return json_quote(text)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value if isinstance(value, str | int | float | bool | type(None)) else str(value)


def provenance_of(runs: Sequence[Any], *, what: str = "",
                  options: Mapping[str, Any] | None = None) -> Provenance:
    """Provenance of an export made from ``runs`` (:class:`kbench_core.io.Run` objects). A
    run shown with a judge audit's labels (its ``meta`` has ``audit_labels_sha256``) records
    them among the options: ``audit_labels[<run>]`` and ``audit_labels_sha256[<run>]``."""
    recorded = dict(options or {})
    for run in runs:
        meta = getattr(run, "meta", {}) or {}
        if meta.get("audit_labels_sha256"):
            recorded[f"audit_labels[{run.name}]"] = meta.get("audit_labels")
            recorded[f"audit_labels_sha256[{run.name}]"] = meta["audit_labels_sha256"]
    return Provenance(runs=tuple((str(r.name), str(r.content_hash)) for r in runs),
                      options=recorded, what=what)


# ------------------------------------------------------------------------------ figures


def _png_with_text(png: bytes, key: str, text: str) -> bytes:
    """Insert a ``tEXt`` chunk after IHDR. Hand-written (the PNG chunk layout is four fields:
    length, type, data, CRC-32) because no dependency of ours edits PNG metadata."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    ihdr_end = 8 + 4 + 4 + struct.unpack(">I", png[8:12])[0] + 4
    data = key.encode("latin-1") + b"\0" + text.encode("latin-1", "replace")
    chunk = (struct.pack(">I", len(data)) + b"tEXt" + data
             + struct.pack(">I", zlib.crc32(b"tEXt" + data) & 0xFFFFFFFF))
    return png[:ihdr_end] + chunk + png[ihdr_end:]


def _svg_with_metadata(svg: bytes, text: str) -> bytes:
    source = svg.decode("utf-8")
    head_end = source.index(">", source.index("<svg")) + 1
    element = f"<metadata><kbench:provenance xmlns:kbench=\"https://kbench.dev/provenance\">" \
              f"{xml_escape(text)}</kbench:provenance></metadata>"
    return (source[:head_end] + element + source[head_end:]).encode("utf-8")


def _pdf_with_info(pdf: bytes, provenance: Provenance) -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf)))
    writer.add_metadata({"/Producer": f"kbench {provenance.version} (kaleido)",
                         "/Creator": "kbench", "/Title": provenance.what or "kbench figure",
                         "/kbench": provenance.to_json()})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


CLOSE_SECONDS = 60.0  # for the render server's browser to exit before it is killed


def _browser_children() -> list[int]:
    """The browsers kaleido started for this process: Chromium processes among its
    descendants (from ``/proc``; none elsewhere) whose parent is a Python process
    (choreographer's launcher), which leaves a Playwright browser (launched by Node) alone."""
    names: dict[int, str] = {}
    parents: dict[int, int] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(entry.path, "stat").read_text()
                pid = int(entry.name)
                names[pid] = stat[stat.index("(") + 1:stat.rindex(")")].lower()
                parents[pid] = int(stat[stat.rindex(")") + 2:].split()[1])
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    found, stack = [], list(children.get(os.getpid(), []))
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        if "chrom" in names[pid] and names.get(parents[pid], "").startswith("python"):
            found.append(pid)
    return found


class FigureExporter:
    """Renders plotly figures to PNG/SVG/PDF with provenance; one render server per instance.

    >>> with FigureExporter() as export:            # doctest: +SKIP
    ...     pdf = export.to_bytes(fig, "pdf", provenance=prov)
    """

    def __init__(self) -> None:
        self._started = False

    def __enter__(self) -> FigureExporter:
        import kaleido

        kaleido.start_sync_server(silence_warnings=True)
        self._started = True
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Stop the render server, waiting at most :data:`CLOSE_SECONDS` for its browser to
        exit, then killing it: kaleido's own stop waits for ever, and once in CI a read on
        the browser's pipe never returned (a 300 s test timeout). kaleido's server is a
        singleton (``kaleido._global_server``); its close is done here as kaleido does it,
        with the wait bounded (kaleido's own stop where its internals are not the expected
        ones)."""
        if not self._started:
            return
        import kaleido

        self._started = False
        server = getattr(kaleido, "_global_server", None)
        thread = getattr(server, "_thread", None)
        if (server is None or not isinstance(thread, threading.Thread)
                or not hasattr(server, "_task_queue") or not server.is_running()):
            kaleido.stop_sync_server(silence_warnings=True)
            return
        browsers = _browser_children()
        server._task_queue.put(None)
        thread.join(CLOSE_SECONDS)
        if thread.is_alive():
            for pid in browsers:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            thread.join(10)
        for name in ("_thread", "_task_queue", "_return_queue"):
            if hasattr(server, name):
                delattr(server, name)
        server._initialized = False

    def to_bytes(self, fig: go.Figure, fmt: str, *, width: int | None = None,
                 height: int | None = None, scale: float = 1.0,
                 provenance: Provenance | None = None) -> bytes:
        """The figure in ``fmt`` (png, svg or pdf), ``width`` × ``height`` CSS pixels (default:
        the figure's own size, else 900 × 520), PNG pixels multiplied by ``scale``.

        ``scale`` is a PNG's pixel density only: an SVG is ``width`` CSS pixels wide and a PDF
        ``width`` × 0.75 pt (96 CSS px = 1 in = 72 pt), so a one-column figure (336 px) is
        3.5 in = 252 pt wide whatever the density asked for its PNG."""
        if fmt not in FIGURE_FORMATS:
            raise ValueError(f"format must be one of {', '.join(FIGURE_FORMATS)}; got {fmt!r}")
        import kaleido

        from kbench_core.figures.base import fit_to_width

        if width:  # titles, legends, labels and panels laid out for the paper's width
            fig = fit_to_width(fig, width)
        layout = fig.layout
        opts = {"format": fmt, "width": width or layout.width or PAPER_SIZES["screen"][0],
                "height": height or layout.height or PAPER_SIZES["screen"][1],
                # kaleido multiplies vector sizes by scale too: a paper size must stay one
                "scale": scale if fmt == "png" else 1}
        if self._started:
            data = kaleido.calc_fig_sync(fig, opts=opts)
        else:
            with self:
                data = kaleido.calc_fig_sync(fig, opts=opts)
        if provenance is None:
            return data
        if fmt == "png":
            return _png_with_text(data, "kbench", provenance.to_json())
        if fmt == "svg":
            return _svg_with_metadata(data, provenance.to_json())
        return _pdf_with_info(data, provenance)


# ------------------------------------------------------------------------------ tables


def _cells(frame: pd.DataFrame, intervals: Mapping[str, tuple[str, str]], digits: int,
           ) -> pd.DataFrame:
    """Display strings (:mod:`kbench_core.tables`: integers, ranks, costs with their unit,
    ``digits`` significant digits): ``0.6214 [0.5502, 0.6903]`` where a column has interval
    columns."""
    from kbench_core.tables import column_kind, cost_decimals, format_value

    shown = [c for c in frame.columns
             if not any(c in pair for pair in intervals.values())]
    out = pd.DataFrame(index=frame.index)
    for column in shown:
        kind = column_kind(str(column), frame[column])
        places = cost_decimals(frame[column]) if kind == "cost" else None  # one per column
        text = pd.Series([format_value(v, kind, digits=digits, decimals=places)
                          for v in frame[column]], index=frame.index, dtype=object)
        if column in intervals:
            low, high = (frame[c] for c in intervals[column])
            bounds = [f" [{format_value(lo, kind, digits=digits, decimals=places)}, "
                      f"{format_value(hi, kind, digits=digits, decimals=places)}]"
                      if pd.notna(lo) and pd.notna(hi) else ""
                      for lo, hi in zip(low, high, strict=True)]
            text = text + pd.Series(bounds, index=frame.index)
        out[column] = text
    return out


def _interval_columns(frame: pd.DataFrame) -> dict[str, tuple[str, str]]:
    return {c: (f"{c}_low", f"{c}_high") for c in frame.columns
            if f"{c}_low" in frame and f"{c}_high" in frame}


def _best_rows(frame: pd.DataFrame, best: Mapping[str, str]) -> dict[str, set[int]]:
    """Rows to bold: the best among comparable rows, never a few-samples row
    (:func:`kbench_core.tables.best_marks`)."""
    from kbench_core.tables import best_marks

    return best_marks(frame, dict(best))


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
                  "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}


_LINE_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029\t]")


def _one_line(text: str) -> str:
    """Line breaks (and tabs) inside a cell as one space, other control characters as
    visible escapes: a cell stays one cell on one line."""
    return escape_controls(_LINE_BREAKS.sub(" ", text))


def latex_escape(text: str) -> str:
    """Text safe inside a LaTeX table cell: every special character escaped, line breaks
    joined (a blank line would end the tabular's row), control characters shown as escapes."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in _one_line(str(text)))


LATEX_WIDE_COLUMNS = 8  # beyond this many columns a table is scaled to the text width


def to_latex(frame: pd.DataFrame, *, best: Mapping[str, str] | None = None, digits: int = 4,
             caption: str | None = None, label: str | None = None,
             provenance: Provenance | None = None) -> str:
    """A booktabs LaTeX table: intervals as ``0.62 [0.55, 0.69]`` (from ``<col>_low`` and
    ``<col>_high``), the best value of each column in ``best`` (``"max"`` or ``"min"``) in bold
    among comparable rows (one judge, one bias, ...; never a few-samples row; where the column
    has its interval, only when that interval is clear of the other rows':
    :func:`kbench_core.tables.best_marks`),
    every cell escaped. Needs ``\\usepackage{booktabs}``; a table of more than
    :data:`LATEX_WIDE_COLUMNS` columns is scaled to the text width with ``\\resizebox``
    (``\\usepackage{graphicx}``), so it never runs into the margin."""
    frame = frame.reset_index(drop=True)
    cells = _cells(frame, _interval_columns(frame), digits)
    bold = _best_rows(frame, best or {})
    numeric = [pd.api.types.is_numeric_dtype(frame[c]) and not pd.api.types.is_bool_dtype(
        frame[c]) for c in cells.columns]
    lines = [f"% {line}" for line in (provenance.lines() if provenance else [])]
    lines += [r"\begin{table}[t]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    wide = len(cells.columns) > LATEX_WIDE_COLUMNS  # scaled to the text width, not over it
    if wide:
        lines.append(r"\resizebox{\linewidth}{!}{%")
    lines.append(r"\begin{tabular}{" + "".join("r" if n else "l" for n in numeric) + "}")
    lines.append(r"\toprule")
    lines.append(" & ".join(latex_escape(str(c)) for c in cells.columns) + r" \\")
    lines.append(r"\midrule")
    for i, row in cells.iterrows():
        out = []
        for column, value in row.items():
            text = latex_escape(str(value))
            if i in bold.get(str(column), set()):
                text = rf"\textbf{{{text}}}"
            out.append(text)
        lines.append(" & ".join(out) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if wide:
        lines.append("}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def to_markdown(frame: pd.DataFrame, *, best: Mapping[str, str] | None = None,
                digits: int = 4, provenance: Provenance | None = None) -> str:
    """A GitHub-flavoured Markdown table, intervals and bold best values as in
    :func:`to_latex`; pipes in cells escaped."""
    frame = frame.reset_index(drop=True)
    cells = _cells(frame, _interval_columns(frame), digits)
    bold = _best_rows(frame, best or {})
    esc = markdown_escape
    lines = [f"<!-- {' · '.join(provenance.lines())} -->"] if provenance else []
    lines.append("| " + " | ".join(esc(c) for c in cells.columns) + " |")
    lines.append("|" + "|".join("---" for _ in cells.columns) + "|")
    for i, row in cells.iterrows():
        lines.append("| " + " | ".join(
            f"**{esc(v)}**" if i in bold.get(str(c), set()) else esc(v)
            for c, v in row.items()) + " |")
    return "\n".join(lines) + "\n"


# Emphasis, code, strikethrough and the cell separator; "[" only where it would open a link
# or image ("](" and "][", and "[" itself), so an interval "[0.55, 0.69]" reads as written.
_MARKDOWN_PUNCTUATION = re.compile(r"([\\`*_~|]|\[(?=.*\][(\[]))")


def markdown_escape(value: Any) -> str:
    """A Markdown table cell that shows ``value`` literally: HTML-escaped (no tag, comment or
    entity from data), Markdown punctuation backslash-escaped (no link, image, emphasis or
    code span), line breaks joined, ``|`` escaped so the cell stays one cell."""
    text = html.escape(_one_line(str(value)), quote=True)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", text)


def neutralised(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell (and column name) that a spreadsheet would run as a
    formula prefixed with ``'`` and NUL written as ``\\x00``; numbers untouched
    (:func:`kbench_core.text.csv_cell`)."""
    out = frame.copy(deep=False)
    out.columns = [csv_cell(c) if isinstance(c, str) else c for c in frame.columns]
    for index in range(frame.shape[1]):
        series = frame.iloc[:, index]
        if isinstance(series.dtype, pd.CategoricalDtype):
            cats = series.cat.categories
            fixed = [csv_cell(c) for c in cats]
            if fixed == list(cats):
                continue
            if len(set(fixed)) == len(fixed):
                out.isetitem(index, series.cat.rename_categories(fixed))
            else:  # a NUL and a written "\x00" met: the cells as text, no category lost
                out.isetitem(index, series.astype(object).map(csv_cell))
        elif pd.api.types.is_object_dtype(series.dtype) or pd.api.types.is_string_dtype(
                series.dtype):
            fixed = _fixed_cells(series)
            if fixed is not None:
                out.isetitem(index, fixed)
    return out


def _fixed_cells(series: pd.Series) -> pd.Series | None:
    """``series`` with :func:`~kbench_core.text.csv_cell` applied, each distinct value once
    (a million-row table repeats its labels: 5M cells took 5 s one by one), or None when no
    cell changes in a text column. Only the cells whose text changes are replaced, so a value
    that hashes like another (1, 1.0 and True are one key to ``factorize``) is never swapped
    for it; an object column's types are then inferred as ``Series.map`` infers them (``[None,
    0]`` becomes floats), so the file is what mapping each cell wrote."""
    text = isinstance(series.dtype, pd.StringDtype)
    try:
        codes, uniques = pd.factorize(series, use_na_sentinel=True)
    except TypeError:  # a cell that cannot be hashed (a list): each cell, as before
        return series.map(csv_cell)
    fixed = [csv_cell(u) for u in uniques]
    changed = np.array([f is not u and f != u for f, u in zip(fixed, uniques, strict=True)],
                       dtype=bool)
    if not changed.any():
        return None if text else series.infer_objects()
    values = (series.to_numpy(dtype=object, na_value=None) if text
              else series.to_numpy(dtype=object)).copy()
    rows = (codes >= 0) & changed[np.maximum(codes, 0)]
    replaced = np.empty(len(fixed), dtype=object)
    replaced[:] = fixed
    values[rows] = replaced[codes[rows]]
    out = pd.Series(values, index=series.index, name=series.name, dtype=object)
    return out.astype(series.dtype) if text else out.infer_objects()


def to_csv(frame: pd.DataFrame, *, provenance: Provenance | None = None,
           precision: str = "display") -> str:
    """CSV of every column (intervals as their own columns), provenance as ``#`` comments
    (``pandas.read_csv(..., comment="#")`` reads it back). Numbers are written with 4
    significant digits and their trailing zeros (residues below 1e-12 as 0) unless
    ``precision="full"``; cost columns are named with their unit (``cost_usd``). Text
    cells starting with ``= + - @``, TAB, CR, NUL, full-width ``＝ ＋ － ＠`` or ``'`` get a
    leading ``'`` so no spreadsheet runs them as formulas
    (:func:`kbench_core.text.restore_cell` undoes it), and NUL is written as ``\\x00``."""
    if precision not in ("display", "full"):
        raise ValueError(f"precision must be 'display' or 'full'; got {precision!r}")
    from kbench_core.tables import csv_frame

    head = "".join(f"# {line}\n" for line in (provenance.lines() if provenance else []))
    # neutralised first: the numbers csv_frame formats stay numbers (written unquoted)
    table = csv_frame(neutralised(frame), precision=precision)  # 4 significant digits, cost_usd
    # Text quoted: a "#" inside a cell would otherwise start a comment for read_csv.
    return head + table.to_csv(index=False, quoting=csv.QUOTE_NONNUMERIC)


def table_bytes(frame: pd.DataFrame, fmt: str, *, best: Mapping[str, str] | None = None,
                provenance: Provenance | None = None, caption: str | None = None,
                precision: str = "display") -> bytes:
    """``frame`` as a CSV, LaTeX or Markdown file (UTF-8 bytes); ``precision="full"`` keeps
    every digit in CSV."""
    if fmt == "csv":
        return to_csv(frame, provenance=provenance, precision=precision).encode()
    if fmt == "latex":
        return to_latex(frame, best=best, provenance=provenance, caption=caption).encode()
    if fmt == "markdown":
        return to_markdown(frame, best=best, provenance=provenance).encode()
    raise ValueError(f"format must be one of {', '.join(TABLE_FORMATS)}; got {fmt!r}")
