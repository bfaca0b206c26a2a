"""Reading a file the user named (design, `extends:`, --ibnetdiscover, --node-name-map), bounded.

Regular files only (a device such as /dev/zero, a FIFO or a folder is refused before a byte is read),
at most `limit` bytes, decoded as UTF-8; every failure is a DesignError naming the option, the file
and (for bad bytes) the line; the caller sets `where` (e.g. the extends: line that named the file).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from generators.model.errors import DesignError

MiB = 1 << 20
DESIGN_LIMIT = 1 * MiB  # the largest shipped design is ~3 KB; a 16k-server design ~1 KB
DISCOVERY_LIMIT = 256 * MiB  # ibnetdiscover of h100-16k as railyard writes it is ~8 MB
# one device's LLDP neighbour table: lldpctl's json0 is ~1-2 KB a port, so a 512-port switch ~1 MB;
# parsed JSON takes ~20x its size in memory, so this also bounds a run's memory per table
LLDP_LIMIT = 8 * MiB


def read_bytes(path: Path, option: str, limit: int, what: str) -> bytes:
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        hint = {
            errno.ENOENT: "check the path",
            errno.ELOOP: "the path runs through a symlink loop: use the real file",
            errno.EACCES: "make the file readable",
            errno.EISDIR: f"name {what}, not a folder",
            errno.ENAMETOOLONG: "use a shorter path",
        }.get(exc.errno or 0, "check the path")
        raise DesignError.one(option, f"cannot read {path}: {exc.strerror}", hint) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = "a folder" if stat.S_ISDIR(st.st_mode) else "not a regular file (a device, FIFO or socket)"
            raise DesignError.one(option, f"{path} is {kind}", f"name {what}")
        if st.st_size > limit:
            raise DesignError.one(
                option,
                f"{path} is {st.st_size:,} bytes, more than the {limit:,} allowed",
                f"name {what}; this is far larger than any real one",
            )
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(MiB, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise DesignError.one(
                option, f"{path} grew past the {limit:,} bytes allowed while being read", f"name {what}"
            )
        return b"".join(chunks)
    except OSError as exc:
        raise DesignError.one(option, f"cannot read {path}: {exc.strerror}", "check the file") from None
    finally:
        os.close(fd)


def decode_utf8(data: bytes, option: str, label: str, what: str) -> str:
    """UTF-8 text (a UTF-8 byte-order mark is dropped); UTF-16/32, bad bytes and NUL bytes are refused
    with the line they are on."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DesignError.one(
            option,
            "the file is UTF-16 (or UTF-32), not UTF-8",
            "save it as UTF-8 (e.g. `iconv -f UTF-16 -t UTF-8`)",
            f"{label}:1",
        )
    data = data.removeprefix(b"\xef\xbb\xbf")
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise DesignError.one(
            option, f"{what} holds a NUL byte (a binary file?)", f"name {what}, a text file", f"{label}:{line}"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise DesignError.one(
            option, f"byte 0x{data[exc.start]:02x} is not UTF-8", "save the file as UTF-8", f"{label}:{line}"
        ) from None


def read_text(path: Path, option: str, limit: int, what: str, label: str | None = None) -> str:
    return decode_utf8(read_bytes(path, option, limit, what), option, label or str(path), what)
