"""`python -m genebench`: the `genebench` command."""

import sys

from genebench.cli import main

sys.exit(main())
