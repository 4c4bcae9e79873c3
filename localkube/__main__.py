"""``python -m localkube``."""

import sys

from localkube.cli import main

sys.exit(main())
