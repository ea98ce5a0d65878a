"""``python -m dualad.bench``: the same as ``python -m dualad bench``."""

import sys

from .cli import main

sys.exit(main())
