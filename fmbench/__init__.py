"""fmbench: publish Foundation Models benchmark runs as a site readers can trust."""

__version__ = "0.1.0"

DISTRIBUTION = "fmbench-publish"
"""The name fmbench is installed by (``pip install fmbench-publish``); the package and command are ``fmbench``."""
