"""``python -m kbench_core.cli``: the ``kbench`` command."""

from kbench_core.cli.entry import main

raise SystemExit(main())
