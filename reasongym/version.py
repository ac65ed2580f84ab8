"""The package's version, in a module of its own: any layer can read it without importing the package root
(which registers every environment on import)."""

__version__ = "0.1.0"
