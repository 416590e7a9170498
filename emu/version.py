"""The emulator's version, importable from every layer (traces and adapters report it)."""
__version__ = "0.1.0"
