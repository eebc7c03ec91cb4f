"""``python -m fmbench`` is the ``fmbench`` command."""

from fmbench.cli import main

main()
