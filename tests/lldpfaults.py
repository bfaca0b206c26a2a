"""Ethernet cabling as LLDP would see it, built from a plan's links, with faults made on purpose, and the
`lldpctl -f json0` table each device would print (for verify --lldp tests, unit and real-tool)."""

from __future__ import annotations

import json

from generators.asbuilt.verify import ethernet_networks
from generators.model.plan import Plan
from generators.stages.netplan import BMC_KINDS

End = tuple[str, str]
Wiring = dict[End, End]  # each end -> the end its cable reaches; symmetric


def wiring_of(plan: Plan, networks: list[str] | None = None) -> Wiring:
    nets = networks or ethernet_networks(plan)
    w: Wiring = {}
    for lk in plan.links:
        if lk.network in nets:
            a, b = (lk.a_device, lk.a_port), (lk.b_device, lk.b_port)
            w[a], w[b] = b, a
    return w


def swap(w: Wiring, x: End, y: End) -> None:
    """Exchange the cables plugged into x and y: each now reaches the other's old peer."""
    px, py = w[x], w[y]
    w[x], w[py] = py, x
    w[y], w[px] = px, y


def drop(w: Wiring, x: End) -> None:
    """Unplug the cable at x (both ends lose it)."""
    del w[w.pop(x)]


def silent_ends(plan: Plan) -> set[End]:
    """Ends that send no LLDP: a host's out-of-band port is its BMC's (most send nothing), and PDUs.
    Switch ports and hosts' own NICs run lldpd."""
    idx = plan.index()
    out = set()
    for lk in plan.links:
        for e in ((lk.a_device, lk.a_port), (lk.b_device, lk.b_port)):
            kind = idx[e[0]].kind
            if kind not in ("switch", *BMC_KINDS) or (lk.network == "oob" and kind in BMC_KINDS):
                out.add(e)
    return out


def os_name(plan: Plan, end: End) -> str:
    """The interface name the device's OS shows: a switch's management port is eth0 (SONiC, Cumulus)."""
    d = plan.index()[end[0]]
    if d.kind == "switch" and end[1] == plan.catalog.switches[d.model].mgmt_port:
        return "eth0"
    return end[1]


def json0(plan: Plan, w: Wiring, device: str, silent: set[End], *, port_id_is_mac: bool = True) -> str:
    """What `lldpctl -f json0` prints on `device`: every port hearing a neighbour that speaks LLDP. The port
    id is a MAC and the name travels as the description, lldpd's default (port_id_is_mac=False: SONiC's
    name as id)."""
    interfaces = []
    for (dev, port), peer in sorted(w.items()):
        if dev != device or (dev, port) in silent or peer in silent:
            continue
        pname = os_name(plan, peer)
        pid = {"type": "mac", "value": "02:00:00:00:00:01"} if port_id_is_mac else {"type": "ifname", "value": pname}
        interfaces.append(
            {
                "name": os_name(plan, (dev, port)),
                "via": "LLDP",
                "rid": "1",
                "chassis": [{"id": [{"type": "mac", "value": "02:00:00:00:00:02"}], "name": [{"value": peer[0]}]}],
                "port": [{"id": [pid], "descr": [{"value": pname}], "ttl": [{"value": "120"}]}],
            }
        )
    return json.dumps({"lldp": [{"interface": interfaces}]}, indent=1)


def tables(plan: Plan, w: Wiring, devices: list[str] | None = None) -> dict[str, str]:
    """device -> json0 text for every device that runs lldpd (switches and hosts), or just `devices`."""
    idx = plan.index()
    names = (
        devices
        if devices is not None
        else sorted({e[0] for e in w if idx[e[0]].kind == "switch" or idx[e[0]].kind in BMC_KINDS})
    )
    silent = silent_ends(plan)
    return {d: json0(plan, w, d, silent) for d in names}
