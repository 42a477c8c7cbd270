"""`python -m genebench.cli`."""

import sys

from genebench.cli import main

sys.exit(main())
