"""The ibnetdiscover topology format read back from a discovered fabric (the writer is
`generators.views.ibnetdiscover`).

One format serves both directions on purpose: `infiniband/topology.net` is what `ibnetdiscover`
should print on the finished site (so the two can be compared line by line, and so ibsim can load
the plan), and `railyard verify` reads the real output. The reader accepts what infiniband-diags
prints (``vendid=``/``devid=``/``sysimgguid=`` lines, port GUIDs in parentheses, LIDs in comments,
``S-<guid>``/``H-<guid>`` node ids) as well as hand-written files.

Record shape (a blank line ends a record; every link appears at both of its ends)::

    switchguid=0x0200000000000010
    Switch 64 "S-0200000000000010" # "su1-rail0-leaf" enhanced port 0 lid 0 lmc 0
    [1] "H-0200000000000020"[1](200000000000021) # "gpu001 mlx5_0" lid 0 4xNDR

    caguid=0x0200000000000020
    Ca 1 "H-0200000000000020" # "gpu001 mlx5_0"
    [1](200000000000021) "S-0200000000000010"[1] # lid 0 lmc 0 "su1-rail0-leaf" lid 0 4xNDR
"""

from __future__ import annotations

import re

from generators.views.ibnetdiscover import (
    NetLink,
    NetNode,
)

_GUID_LINE = re.compile(r"^(switchguid|caguid|rtguid)=(0x[0-9a-fA-F]+)")
_NODE_LINE = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"([^"]*)")?')
_PORT_LINE = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-Fx]+)\))?\s*"([^"]+)"\[(\d+)\](?:\([0-9a-fA-Fx]+\))?\s*(?:#(.*))?$')
_SPEED = re.compile(r"\b(\d+x[A-Z0-9]+)\s*$")


class NetParseError(ValueError):
    """The text is not ibnetdiscover topology output; the message names the line."""


def parse_net(text: str) -> dict[str, NetNode]:
    """Parse topology text into {ident: NetNode}. Raises NetParseError on records it cannot place."""
    nodes: dict[str, NetNode] = {}
    guid: int | None = None
    node: NetNode | None = None
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            node = None
            continue
        if line.startswith("#") or line.startswith(("vendid=", "devid=", "sysimgguid=")):
            continue
        if m := _GUID_LINE.match(line):
            guid = int(m.group(2), 16)
            continue
        if m := _NODE_LINE.match(line):
            if guid is None:
                raise NetParseError(f"line {lineno}: node record without a preceding *guid= line")
            ident = m.group(3)
            if ident in nodes:
                raise NetParseError(f"line {lineno}: node {ident} appears twice")
            node = NetNode(m.group(1), ident, guid, int(m.group(2)), m.group(4) if m.group(4) is not None else ident)
            nodes[ident] = node
            guid = None
            continue
        if m := _PORT_LINE.match(line):
            if node is None:
                raise NetParseError(f"line {lineno}: port line outside a node record")
            speed = _SPEED.search(m.group(5) or "")
            try:
                pguid = int(m.group(2), 16) if m.group(2) else None
            except ValueError:
                raise NetParseError(f"line {lineno}: port GUID {m.group(2)!r} is not hexadecimal") from None
            if int(m.group(1)) in node.links:
                raise NetParseError(f"line {lineno}: port {m.group(1)} of {node.ident} appears twice")
            node.links[int(m.group(1))] = NetLink(
                int(m.group(1)), m.group(3), int(m.group(4)), speed.group(1) if speed else None, pguid
            )
            continue
        raise NetParseError(f"line {lineno}: not ibnetdiscover topology output: {line[:80]!r}")
    for n in nodes.values():
        for lk in n.links.values():
            if lk.peer not in nodes:
                raise NetParseError(f"{n.ident} ({n.desc!r}) port {lk.port} names {lk.peer}, which has no record")
    return nodes


def _confirmed(nodes: dict[str, NetNode], n: NetNode, p: int, lk: NetLink) -> bool:
    back = nodes[lk.peer].links.get(lk.peer_port)
    return back is not None and back.peer == n.ident and back.peer_port == p


def links_of(nodes: dict[str, NetNode]) -> list[tuple[NetNode, int, NetNode, int, str | None]]:
    """Each link that both of its ends report, once: (node, port, peer, peer_port, speed), taken from the
    end whose (ident, port) sorts first. A link only one end reports is in one_sided() instead."""
    out = []
    for n in nodes.values():
        for p, lk in n.links.items():
            if (n.ident, p) <= (lk.peer, lk.peer_port) and _confirmed(nodes, n, p, lk):
                out.append((n, p, nodes[lk.peer], lk.peer_port, lk.speed))
    return out


def one_sided(nodes: dict[str, NetNode]) -> list[tuple[NetNode, int, NetNode, int, str | None]]:
    """Every port line whose peer does not report the link back (a corrupt or hand-edited file, or a
    fabric that changed while ibnetdiscover walked it): (node, port, peer, peer_port, speed)."""
    return [
        (n, p, nodes[lk.peer], lk.peer_port, lk.speed)
        for n in nodes.values()
        for p, lk in n.links.items()
        if not _confirmed(nodes, n, p, lk)
    ]
