"""``python -m kubectl_karmada``."""

import sys

from kubectl_karmada.cli import main

sys.exit(main())
