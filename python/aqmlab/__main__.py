"""``python -m aqmlab``: the ``aqmlab`` command."""

import sys

from aqmlab.cli import main

sys.exit(main())
