"""fmbench: publish Foundation Models benchmark runs as a site readers can trust."""

__version__ = "0.1.0"
