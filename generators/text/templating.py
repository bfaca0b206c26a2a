"""The one way railyard loads its Jinja2 templates (generators/templates/*.j2).

Compiling the templates to Python took ~0.1 s of every compile (more than rendering them at 1,024
GPUs), so the compiled code is kept in a bytecode cache under the user's cache folder
(`$RAILYARD_CACHE/jinja`, default ~/.cache/railyard/jinja): Jinja2 keys it by template name and source
checksum and its format by Python version, so an edited template or another interpreter recompiles.
A cache folder that cannot be made or written costs only that time, never a compile.
"""

from __future__ import annotations

import contextlib
from functools import cache

import jinja2

from generators.cachedir import cache_folder


class _QuietCache(jinja2.FileSystemBytecodeCache):
    """A cache that cannot be read or written (full disk, permissions) is a miss, not a failed compile."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError:
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    folder = cache_folder("jinja")
    return _QuietCache(str(folder)) if folder is not None else None


@cache
def environment(*, autoescape: bool, trim: bool) -> jinja2.Environment:
    """HTML/SVG templates autoescape; config templates (frr.conf) trim the newline after a block tag."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("generators", "templates"),
        autoescape=autoescape,
        trim_blocks=trim,
        lstrip_blocks=trim,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache(),
    )
