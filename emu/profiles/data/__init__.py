"""Shipped device profiles (JSON). See emu/profiles/README.md for the format."""
