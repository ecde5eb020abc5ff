"""Interop: read other tools' files into run bundles, write bundles as other formats.

One module per format; each defines an `Importer` and/or an `Exporter` subclass (see
rtbench.interop.base).  `importers()` and `exporters()` find them, so adding a format is
adding one file.
"""
