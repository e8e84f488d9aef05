"""``python -m kbench_core.samples [DIR]``: (re)write the bundled sample files."""

import sys

from kbench_core.samples import main

sys.exit(main())
