"""`python -m ihbench.cli`: the same as the `ihbench` command."""
import sys

from ihbench.cli import main

sys.exit(main())
