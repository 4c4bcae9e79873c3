"""The project's version, shared by every program."""

__version__ = "0.1.0"
