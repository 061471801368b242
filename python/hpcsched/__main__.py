"""``python -m hpcsched``: the same command as ``hpcsched``."""

import sys

from hpcsched.cli import main

sys.exit(main())
