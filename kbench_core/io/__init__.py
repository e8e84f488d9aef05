"""Loading and validating runs (``docs/formats.md``).

:func:`load_run` is the one door through which data enters kbench: it reads CSV, TSV, JSON,
JSON Lines and Parquet (each optionally gzipped) from a path or ``(filename, bytes)``, detects the
run kind from the columns, validates every row against :mod:`kbench_core.schema` and returns a
frozen :class:`Run`. Everything downstream trusts the frame it gets. The benchmarks' own output
formats (a KahneBench result JSON, a folder or archive of BlockBench judge outputs, ...) are
recognised by :mod:`kbench_core.native`, reshaped to canonical columns and then validated the same
way.

Invalid input raises :class:`RunFormatError`, whose message names the file, the row (1-based, as
a user counts: CSV/TSV/JSON Lines by line with the header as line 1, JSON lists by record,
Parquet by row) and the field. Nothing else escapes the loader: parser exceptions are caught at
this edge and re-raised as :class:`RunFormatError`, and its messages never carry a raw control
character (they are written as ````-style escapes), so printing one is safe on a terminal.

Limits are checked before the work they bound (``docs/formats.md``, File formats): regular files
only (no devices or FIFOs), the file size, the decompressed size, :data:`MAX_COLUMNS` columns (from
the header, the Parquet schema or the JSON keys), :data:`MAX_ROWS` rows and the Parquet file's own
row count and uncompressed size (from its metadata, before reading), the Parquet rows' decoded size
(summed batch by batch while reading, so a dictionary bomb stops at the decompressed-size limit),
every archive entry (see :mod:`kbench_core.bundles`) and :data:`MAX_CELL_CHARS` per cell.


Memory (at most 3x the frame, ``benchmarks/README.md``): a CSV/TSV over 1 MB, uncompressed on disk
or gzipped, is parsed as its bytes come (pyarrow's streaming reader), never held whole beside the
table; label columns are read as dictionaries. A JSON array or JSON Lines file of flat records
over 1 MB is parsed the same way, in batches (:mod:`kbench_core.readers.streamed`). A file the
streaming parser would have to look at more closely (a parse error, odd quotes, UTF-16, nested
or NaN values, ...) is parsed whole, with the same result.

Parsers do not lose data: a quote that runs to the end of a CSV file is an error naming its
line, JSON Lines are split on ``
`` only, and JSON is parsed strictly
(:func:`kbench_core.native.load_json`).

Data never runs as code: JSON is parsed with :mod:`json`, tables with :mod:`pyarrow`; no
``eval`` and no ``pickle`` anywhere.

The package's modules, all re-exported here:

===============  ======================================================================
module           holds
===============  ======================================================================
``run``          :class:`Run`, :func:`detect_kind`, load progress
``load``         :func:`load_run`: files, folders, archives, bytes; streamed large files
``finish``       parsed table to validated :class:`Run`; :func:`run_name`,
                 :func:`combine_runs`
``batches``      many files at once: :func:`batch_groups`, :func:`load_files`
===============  ======================================================================
"""

from __future__ import annotations

from kbench_core.problems import (  # noqa: F401  (re-exported, as the old module did)
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DECOMPRESSED,
    MAX_CELL_CHARS,
    MAX_COLUMNS,
    MAX_JSON_DEPTH,
    MAX_LISTED_PROBLEMS,
    MAX_ROWS,
    OnError,
    Problem,
    RunFormatError,
    Source,
)

from .batches import (
    batch_groups,
    batch_hash,
    batch_name,
    load_files,
)
from .finish import (  # noqa: F401  (re-exported: the names of the old module)
    MAX_RUN_NAME,
    _finish,
    _lookalikes,
    _native_table,
    _without_nul,
    combine_runs,
    run_name,
)
from .load import (  # noqa: F401  (re-exported: the names of the old module)
    _STREAM_HEAD,
    GROUP_PARSE_LIMIT,
    _folder_hash,
    _format_alone,
    _format_by_content,
    _load,
    _load_file_streamed,
    _parse_bundle,
    _stream_table,
    load_run,
)
from .run import (  # noqa: F401  (re-exported: the names of the old module)
    LazyTables,
    Run,
    SummedRun,
    _CallbackFailed,
    _Progress,
    _source_name,
    _undetected,
    detect_kind,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DECOMPRESSED",
    "MAX_CELL_CHARS",
    "MAX_COLUMNS",
    "MAX_JSON_DEPTH",
    "MAX_LISTED_PROBLEMS",
    "MAX_ROWS",
    "Problem",
    "Run",
    "RunFormatError",
    "batch_groups",
    "batch_hash",
    "batch_name",
    "combine_runs",
    "detect_kind",
    "load_files",
    "load_run",
]
