"""The ibnetdiscover topology format, as railyard writes it: the expected fabric (`infiniband/topology.net`,
what `ibnetdiscover` should print on the finished site, and what ibsim loads) and test fabrics. The
reader of discovered fabrics is `generators.asbuilt.ibnetdiscover`.

Record shape (a blank line ends a record; every link appears at both of its ends)::

    switchguid=0x0200000000000010
    Switch 64 "S-0200000000000010" # "su1-rail0-leaf" enhanced port 0 lid 0 lmc 0
    [1] "H-0200000000000020"[1](200000000000021) # "gpu001 mlx5_0" lid 0 4xNDR

    caguid=0x0200000000000020
    Ca 1 "H-0200000000000020" # "gpu001 mlx5_0"
    [1](200000000000021) "S-0200000000000010"[1] # lid 0 lmc 0 "su1-rail0-leaf" lid 0 4xNDR
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

# Per-lane signalling names InfiniBand uses for a 4x port's total speed (what ibnetdiscover prints).
IB_SPEED_NAMES: dict[int, str] = {
    800: "XDR",
    400: "NDR",
    200: "HDR",
    100: "EDR",
    56: "FDR",
    40: "QDR",
    20: "DDR",
    10: "SDR",
}
# ibsim 0.10 parses speeds up to HDR; faster links are simulated at HDR (routing does not care).
IBSIM_MAX_SPEED_GBPS = 200


def ib_speed(gbps: int, width: int = 4) -> str:
    """'4xNDR' for a 400G port: what ibnetdiscover prints for a link at that speed."""
    name = IB_SPEED_NAMES.get(gbps)
    if name is None:
        raise ValueError(f"no InfiniBand speed name for {gbps} Gb/s")
    return f"{width}x{name}"


@dataclass(slots=True)
class NetLink:
    port: int
    peer: str  # the peer's quoted id
    peer_port: int
    speed: str | None = None  # "4xNDR"; None when the line does not say
    port_guid: int | None = None  # this port's own GUID, printed on HCA port lines ("[1](guid)")


@dataclass(slots=True)
class NetNode:
    kind: str  # "Switch", "Ca" or "Rt"
    ident: str  # the quoted id, e.g. "S-0200000000000010"
    guid: int  # node GUID
    nports: int
    desc: str  # node description: the name that survives a round trip
    links: dict[int, NetLink] = field(default_factory=dict)

    def port_guid(self, port: int) -> int:
        """The GUID printed for the port, else the convention: a switch's ports share its node GUID (port
        0); a CA port's is node GUID + port (ibsim's rule; railyard's GUIDs leave the low bits free)."""
        lk = self.links.get(port)
        if lk is not None and lk.port_guid is not None:
            return lk.port_guid
        return self.guid if self.kind == "Switch" else self.guid + port


_ID_PREFIX = {"Switch": "S", "Ca": "H", "Rt": "R"}


def node_ident(kind: str, guid: int) -> str:
    """The id ibnetdiscover gives a node: S-/H-/R- and the 16-digit GUID."""
    return f"{_ID_PREFIX[kind]}-{guid:016x}"


# A node to write: (key, number of ports, [(port, peer key, peer port, speed)]); keys index `NodeInfo`.
Record = tuple[str, int, list[tuple[int, str, int, str | None]]]
NodeInfo = tuple[str, str, int, str]  # (kind, quoted id, node GUID, description)


def format_records(
    records: Iterable[Record],
    info: Mapping[str, NodeInfo],
    header: Iterable[str] = (),
    port_guids: Mapping[tuple[str, int], int] | None = None,
) -> str:
    """Write records in the given order; every peer must be in `info`. Plain tuples rather than NetNode
    objects, so a 65k-HCA fabric is written without building an object per port. HCA port GUIDs come
    from `port_guids` ((key, port) -> GUID) when given, else node GUID + port."""
    out: list[str] = [f"# {h}" if h else "#" for h in header]
    if out:
        out.append("")

    def pg(key: str, guid: int, port: int) -> int:
        return port_guids.get((key, port), guid + port) if port_guids else guid + port

    for key, nports, links in records:
        kind, ident, guid, desc = info[key]
        links = sorted(links)
        if kind == "Switch":
            out.append(f"switchguid=0x{guid:016x}")
            out.append(f'Switch\t{nports} "{ident}"\t\t# "{desc}" enhanced port 0 lid 0 lmc 0')
            for port, peer, peer_port, speed in links:
                pk, pid, pguid, pdesc = info[peer]
                ppg = f"({pg(peer, pguid, peer_port):x})" if pk != "Switch" else ""
                out.append(f'[{port}]\t"{pid}"[{peer_port}]{ppg}\t\t# "{pdesc}" lid 0 {speed}')
        else:
            out.append(f"{'caguid' if kind == 'Ca' else 'rtguid'}=0x{guid:016x}")
            out.append(f'{kind}\t{nports} "{ident}"\t\t# "{desc}"')
            for port, peer, peer_port, speed in links:
                _, pid, _, pdesc = info[peer]
                out.append(
                    f'[{port}]({pg(key, guid, port):x}) \t"{pid}"[{peer_port}]\t\t# lid 0 lmc 0 "{pdesc}" lid 0 {speed}'
                )
        out.append("")
    return "\n".join(out)


def format_net(nodes: Iterable[NetNode], header: Iterable[str] = ()) -> str:
    """Write NetNode records in the given order. Peers must be among `nodes`."""
    nodes = list(nodes)
    info = {n.ident: (n.kind, n.ident, n.guid, n.desc) for n in nodes}
    records = [(n.ident, n.nports, [(p, lk.peer, lk.peer_port, lk.speed) for p, lk in n.links.items()]) for n in nodes]
    port_guids = {(n.ident, p): lk.port_guid for n in nodes for p, lk in n.links.items() if lk.port_guid is not None}
    return format_records(records, info, header, port_guids)
