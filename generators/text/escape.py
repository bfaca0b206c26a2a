"""Text from outside (a discovered fabric, a server's answer, a user's note) made safe to show."""

from __future__ import annotations

import unicodedata


def printable(text: str, keep: str = "\n") -> str:
    """Text safe to echo to a terminal: control and format characters (escape sequences, bidi
    overrides) are shown as \\xNN / \\uNNNN instead of being obeyed; `keep` lists the ones left as is."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch in keep or unicodedata.category(ch) not in ("Cc", "Cf", "Cs", "Co", "Cn"):
            out.append(ch)
        else:
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
    return "".join(out)
