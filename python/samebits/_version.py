"""The package version; it must equal the C library's sb_version()."""
__version__ = "0.1.0"
