"""Cabling faults made on purpose in an ibnetdiscover-format fabric, for verify tests (unit and ibsim)."""

from __future__ import annotations

from generators.views.ibnetdiscover import NetLink, NetNode


def by_desc(nodes: dict[str, NetNode], desc: str) -> NetNode:
    hits = [n for n in nodes.values() if n.desc == desc]
    assert len(hits) == 1, f"{desc!r}: {len(hits)} nodes"
    return hits[0]


def swap(nodes: dict[str, NetNode], x: tuple[str, int], y: tuple[str, int]) -> None:
    """Exchange the cables plugged into port x and port y: each now reaches the other's old peer."""
    nx, ny = by_desc(nodes, x[0]), by_desc(nodes, y[0])
    lx, ly = nx.links[x[1]], ny.links[y[1]]
    px, py = nodes[lx.peer], nodes[ly.peer]
    nx.links[x[1]] = NetLink(x[1], py.ident, ly.peer_port, lx.speed)
    ny.links[y[1]] = NetLink(y[1], px.ident, lx.peer_port, ly.speed)
    px.links[lx.peer_port] = NetLink(lx.peer_port, ny.ident, y[1], lx.speed)
    py.links[ly.peer_port] = NetLink(ly.peer_port, nx.ident, x[1], ly.speed)


def drop(nodes: dict[str, NetNode], x: tuple[str, int]) -> None:
    """Unplug (or let die) the link at port x, at both ends."""
    n = by_desc(nodes, x[0])
    lk = n.links.pop(x[1])
    del nodes[lk.peer].links[lk.peer_port]


def set_speed(nodes: dict[str, NetNode], x: tuple[str, int], speed: str) -> None:
    n = by_desc(nodes, x[0])
    lk = n.links[x[1]]
    n.links[x[1]] = NetLink(lk.port, lk.peer, lk.peer_port, speed)
    peer = nodes[lk.peer]
    pl = peer.links[lk.peer_port]
    peer.links[lk.peer_port] = NetLink(pl.port, pl.peer, pl.peer_port, speed)
