"""The ``kbench`` command line: ``app``, ``validate``, ``metrics``, ``figures``, ``compare``,
``report`` and ``profile``.

The dashboard runs in its own Streamlit process; this module only builds its command line, so
``kbench_core`` stays importable without Streamlit. ``metrics``, ``figures`` and ``report`` use
each kind's catalog (``kbench_core.families.items_for``), the same tables and figures the app's
Export page offers.

Every failure ends in one line on standard error (``kbench: ...``) and a non-zero status, never a
traceback: invalid files (:class:`~kbench_core.io.RunFormatError`), paths that cannot be read or
written, an interrupt. Text from a run (file and model names, warnings, table cells) never reaches
a terminal raw: control and bidi characters are printed as ````-style escapes.
``--models`` takes model names that start with ``-`` (``--models -a -b``); a name that equals an
option of ``compare`` can be given as ``--model=NAME``.

One module per subcommand (``app``, ``check`` = validate, ``tables`` = metrics, ``figures``,
``compare``, ``html_report`` = report, ``profiles`` = profile), each with ``add_parser(sub)``;
``entry`` holds :func:`main` and the list of subcommands (``COMMANDS``), ``_common`` the shared
helpers. Adding a subcommand is a new module and one entry in ``entry.COMMANDS``. Every name
of the old ``cli.py`` is re-exported here; ``python -m kbench_core.cli`` runs :func:`main`.
"""

from __future__ import annotations

from ._common import (  # noqa: F401  (re-exported: the names of the old module)
    _bounded,
    _browser_failed,
    _check_out_file,
    _emit,
    _judge_arguments,
    _judge_choice,
    _judges,
    _load_all,
    _make_folder,
    _progress,
    _safe,
    _size,
    _write,
)
from .app import (  # noqa: F401  (re-exported: the names of the old module)
    APP_PATH,
    STOP_GRACE_S,
    STOP_SIGNALS,
    app_command,
    run_app,
)
from .check import (  # noqa: F401  (re-exported: the names of the old module)
    validate,
)
from .compare import (  # noqa: F401  (re-exported: the names of the old module)
    _COMPARE_OPTIONS,
    _models_argv,
    compare_command,
)
from .entry import (  # noqa: F401  (re-exported: the names of the old module)
    _main,
    main,
)
from .figures import (  # noqa: F401  (re-exported: the names of the old module)
    write_figures,
)
from .html_report import (  # noqa: F401  (re-exported: the names of the old module)
    report,
)
from .tables import (  # noqa: F401  (re-exported: the names of the old module)
    metrics,
)
