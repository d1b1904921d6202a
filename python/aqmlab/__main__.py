"""``python -m aqmlab``: the ``aqmlab`` command."""

import sys

from aqmlab.cli.main import main

sys.exit(main())
