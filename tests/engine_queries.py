"""The queries DuckDB runs while a test runs, by their SQL (issue 39): an engine command asks
each question of a run once (a label column's distinct values, the judges' names, a table's
sums); the same SQL twice is a scan of the rows repeated, at 100M rows seconds each."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from typing import Any


@contextlib.contextmanager
def recorded(monkeypatch: Any) -> Iterator[Counter[str]]:
    """Count every query any DuckDB backend of Ibis runs inside the block (``execute``,
    ``to_pyarrow``, ``to_pyarrow_batches``), keyed by its compiled SQL."""
    from ibis.backends.duckdb import Backend

    seen: Counter[str] = Counter()
    with monkeypatch.context() as patched:
        for name in ("execute", "to_pyarrow", "to_pyarrow_batches"):
            original = getattr(Backend, name)

            def counted(self: Any, expr: Any, *args: Any, _original: Any = original,
                        **kwargs: Any) -> Any:
                seen[str(self.compile(expr))] += 1
                return _original(self, expr, *args, **kwargs)

            patched.setattr(Backend, name, counted)
        yield seen


def assert_asked_once(seen: Counter[str]) -> None:
    """No query in ``seen`` ran twice (and some ran: the block used DuckDB)."""
    assert seen, "no DuckDB query ran"
    again = {sql: n for sql, n in seen.items() if n > 1}
    assert not again, "asked again: " + "; ".join(
        f"{n}× {' '.join(sql.split())[:240]}" for sql, n in again.items())
