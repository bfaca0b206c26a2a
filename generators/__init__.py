"""railyard: a design compiler for GPU clusters (the pure compiler; the Pulumi side is `components`)."""

__version__ = "0.1.0"
