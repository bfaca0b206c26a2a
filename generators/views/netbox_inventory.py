"""Everything a site needs in NetBox, from the compiled plan only: `inventory(plan)` lists the objects
(`netbox_model.NbObject`) in `ENDPOINTS` order, each keyed by a railyard name that survives a
recompile, so the REST sync can create, update and remove them idempotently.

What railyard writes and why it is shaped so:
- one site; one location per rack row (NetBox racks have no floor coordinates, so the row is the
  location and the rack's description carries its position and millimetres on the floor);
- racks with the design's height (NetBox defaults to 42U, railyard's racks are mostly 48U);
- device types named by catalog key whose interface templates carry railyard's own port names
  (`1/12/2` on a QM9700, `Ethernet8` on SONiC, `mlx5_3` on a server): the community device-type
  library names ports otherwise, and every link, cable label and address of the plan uses these;
- one NetBox cable per physical cable: a pair of optics whose fibers go to different ends is as many
  cables as fibers (`<cable id>.<n>`), a twin or splitter copper cable is one cable with several
  terminations on the side(s) with several ports (one row per link overcounts: 3,021 rows for 2,509
  cables on the top-of-rack design);
- every address bound to the interface it lives on, keyed by VRF and address (an anycast gateway,
  the same address on every leaf carrying its VLAN, once per leaf), so a second push finds each
  again instead of duplicating it as re-importing the old ipam.csv did.

The sync adds the `railyard` tag and the `railyard_id` custom field itself; fields here are the REST
body railyard owns. Cable colours are the sheets' (`views.colours`), tenants, VRFs, prefixes
and addresses the IP plan's (`views.addresses`). The bulk-import files
(`renderers.netbox_csv`) are this inventory translated to NetBox's import columns, so the push and
the imports hand over the same site.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from generators.model.geometry import device_size
from generators.model.plan import Device, Plan, required
from generators.model.planes import device_plane, link_plane
from generators.model.ports import End, port_ends
from generators.model.sections import Cable
from generators.model.vocabulary import Role
from generators.views.addresses import HOST_BOND, Address, addresses, loopback_name, prefixes, tenant_rows, vrf_rows
from generators.views.colours import COLOR, ROLE_COLOR
from generators.views.netbox_model import (
    ENDPOINTS,
    NETBOX_TYPE,
    NO_LATE,
    PLANE_FIELD,
    TAG,
    NbObject,
    Ref,
    Termination,
)
from generators.views.switches import PortUse, frontend_views, oob_views

# The NetBox 4.x interface type slugs railyard uses (dcim.choices.InterfaceTypeChoices), checked
# against NetBox's choice list; the tests hold every interface to this set.
INTERFACE_TYPES: frozenset[str] = frozenset(
    {
        "virtual",
        "lag",
        "1000base-t",
        "10gbase-t",
        "10gbase-x-sfpp",
        "25gbase-x-sfp28",
        "40gbase-x-qsfpp",
        "100gbase-x-qsfp28",
        "200gbase-x-qsfp56",
        "400gbase-x-qsfp112",
        "400gbase-x-qsfpdd",
        "400gbase-x-osfp",
        "800gbase-x-osfp",
        "infiniband-hdr",
        "infiniband-ndr",
        "infiniband-xdr",
        "other",
    }
)
# Ethernet: NetBox types name a cage and a speed. QSFP112 exists only as 400GE (ConnectX-7's
# 2 x 200G cards use that cage), so the cage wins there and the interface's speed says 200G.
_ETHERNET = {
    ("rj45", 1): "1000base-t",
    ("rj45", 10): "10gbase-t",
    ("sfp28", 10): "10gbase-x-sfpp",
    ("sfp28", 25): "25gbase-x-sfp28",
    ("qsfp28", 40): "40gbase-x-qsfpp",
    ("qsfp28", 100): "100gbase-x-qsfp28",
    ("qsfp56", 200): "200gbase-x-qsfp56",
    ("qsfp112", 200): "400gbase-x-qsfp112",
    ("qsfp112", 400): "400gbase-x-qsfp112",
    ("qsfp-dd", 400): "400gbase-x-qsfpdd",
    ("osfp", 400): "400gbase-x-osfp",
    ("osfp", 800): "800gbase-x-osfp",
    ("osfp-rhs", 400): "400gbase-x-osfp",
    ("osfp-rhs", 800): "800gbase-x-osfp",
}  # osfp-rhs: a flat-top (riding heat sink) OSFP cage
# InfiniBand: NetBox types name the generation (per-lane rate), which the 4x port speed gives
_INFINIBAND = {200: "infiniband-hdr", 400: "infiniband-ndr", 800: "infiniband-xdr"}
GENERIC_MANUFACTURER = "Generic"  # catalog servers, storage and PDUs name no vendor
PRIVATE_ASNS = "RFC 6996"  # every railyard ASN is 4-byte private
STATUS = "planned"  # railyard plans a site; operators move objects on as they are built


def interface_type(end: End) -> str:
    if end.protocol == "infiniband":
        return _INFINIBAND.get(end.speed_gbps, "other")
    return _ETHERNET.get((end.connector, end.speed_gbps), "other")


def slug(name: str) -> str:
    """A NetBox slug (letters, digits, '-' and '_') of a railyard name."""
    return re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-") or "x"


def interface_key(device: str, port: str) -> str:
    # interned: the key of an interface is also its peer's description and each of its cable ends' Ref,
    # one string for all of them instead of one each (~1M interfaces and 406k cables at 98,304 GPUs)
    return sys.intern(f"{device}:{port}")


def _iface(device: str, port: str) -> Ref:
    return Ref("dcim/interfaces", interface_key(device, port))


def _role_key(d: Device) -> str:
    # a leaf of the backend, the frontend and the out-of-band network are different jobs
    return f"{d.network}-{d.role}" if d.kind == "switch" and d.network else d.role


def _role_color(d: Device) -> str:
    if d.kind == "switch" and d.network == "frontend":
        c = ROLE_COLOR["frontend"]
    elif d.kind == "switch" and d.network == "oob":
        c = ROLE_COLOR["management"]
    else:
        c = ROLE_COLOR.get(d.role, "#9e9e9e")
    return c.lstrip("#")


def _device_type_keys(maps: dict[str, dict[str, End]]) -> dict[str, str]:
    """ "kind:model" -> device-type key: the catalog key, unless one model serves two kinds with
    different ports (a server model as compute and as management node with another frontend NIC),
    which then gives a type per kind, since a NetBox device type has one set of interfaces."""
    kinds: dict[str, list[str]] = defaultdict(list)
    for km in maps:
        kinds[km.split(":", 1)[1]].append(km)
    out: dict[str, str] = {}
    for model, kms in kinds.items():
        same = all(list(maps[k].items()) == list(maps[kms[0]].items()) for k in kms)
        for k in kms:
            out[k] = model if same else f"{model}-{k.split(':', 1)[0]}"
    return out


def inventory(plan: Plan) -> list[NbObject]:
    """Every NetBox object of the plan's site, in ENDPOINTS order (pure: the same plan gives the same list)."""
    floor = required(plan.floor, "floor")
    cables = required(plan.cables, "cables")
    np_ = required(plan.netplan, "netplan")
    catalog = plan.catalog
    site = floor.site
    site_ref = Ref("dcim/sites", site)
    out: dict[str, list[NbObject]] = {e: [] for e in ENDPOINTS}

    def add(endpoint: str, key: str, fields: dict[str, Any], late: dict[str, Ref] | None = None) -> None:
        out[endpoint].append(NbObject(endpoint, key, fields, late or NO_LATE))

    add(
        "extras/tags",
        TAG,
        {
            "name": TAG,
            "slug": TAG,
            "color": "ff5722",
            "description": "made by railyard: a push updates and removes only what carries it",
        },
    )

    # ---- tenancy, site, floor
    for t in tenant_rows(plan):
        add("tenancy/tenants", t["name"], {"name": t["name"], "slug": slug(t["slug"]), "description": t["description"]})
    tenant_of_vrf = {n["vrf"]: n["tenant"] for n in np_.networks}

    add(
        "dcim/sites",
        site,
        {"name": site, "slug": slug(site), "status": STATUS, "description": f"railyard design {plan.design.name}"},
    )
    for row in floor.rows:
        add(
            "dcim/locations",
            f"{site}/{row.name}",
            {
                "name": row.name,
                "slug": slug(row.name),
                "site": site_ref,
                "status": STATUS,
                "description": f"rack row {row.name}: {row.positions} positions"
                f" from x {row.x_mm:g} mm, y {row.y_mm:g} mm",
            },
        )
    rack_row = {}
    for r in plan.racks:
        rack_row[r.name] = r.row
        add(
            "dcim/racks",
            r.name,
            {
                "name": r.name,
                "site": site_ref,
                "location": Ref("dcim/locations", f"{site}/{r.row}"),
                "status": STATUS,
                "u_height": r.units,
                "width": 19,
                "outer_width": round(r.width_mm),
                "outer_depth": round(r.depth_mm),
                "outer_unit": "mm",
                "description": f"{r.role} rack, row {r.row} position {r.position}, front-left corner at "
                f"x {r.x_mm:g} mm, y {r.y_mm:g} mm; {r.power_kw:g} of {r.power_budget_kw:g} kW",
            },
        )

    for o in _power(plan, site_ref, rack_row):
        out[o.endpoint].append(o)

    # ---- manufacturers, roles, device types and their interfaces
    maps = port_ends(plan, catalog, plan.design)
    type_key = _device_type_keys(maps)
    roles: dict[str, Device] = {}
    types: dict[str, Device] = {}
    for d in plan.devices:
        roles.setdefault(_role_key(d), d)
        types.setdefault(type_key[f"{d.kind}:{d.model}"], d)
    for m in dict.fromkeys(_manufacturer(plan, d) for d in types.values()):
        add("dcim/manufacturers", m, {"name": m, "slug": slug(m)})
    for key, d in roles.items():
        add("dcim/device-roles", key, {"name": key, "slug": slug(key), "color": _role_color(d), "vm_role": False})
    for key, d in types.items():
        height = device_size(catalog, d)[0]
        fields: dict[str, Any] = {
            "manufacturer": Ref("dcim/manufacturers", _manufacturer(plan, d)),
            "model": key,
            "slug": slug(key),
            "u_height": height,
            "is_full_depth": height > 0,
            "description": _description(plan, d),
        }
        if d.kind == "switch":
            fields["part_number"] = catalog.switches[d.model].sku
        add("dcim/device-types", key, fields)
        for port, end in maps[f"{d.kind}:{d.model}"].items():
            add(
                "dcim/interface-templates",
                f"{key}:{port}",
                {
                    "device_type": Ref("dcim/device-types", key),
                    "name": port,
                    "type": interface_type(end),
                    "mgmt_only": end.mgmt,
                },
            )

    # ---- devices and interfaces
    addrs = addresses(plan)
    devs = plan.index()
    # primary: a switch's router-id loopback, a host's frontend bond; OOB: its BMC or management port
    primary: dict[str, str] = {}
    for a in addrs:
        for dev, port in a.on:
            if port == HOST_BOND or (
                a.role == "loopback" and port == loopback_name(catalog.switches[devs[dev].model].os)
            ):
                primary[dev] = _ip_key(a.vrf, a.address, a.role, dev)
    oob = {r["device"]: _ip_key("", r["address"], "", r["device"]) for r in np_.oob["ports"]}
    for d in plan.devices:
        placed: dict[str, Any] = {}
        if d.rack is not None:
            placed = {
                "location": Ref("dcim/locations", f"{site}/{rack_row[d.rack]}"),
                "rack": Ref("dcim/racks", d.rack),
            }
            if d.unit is not None:
                placed |= {"position": float(d.unit), "face": "front"}
        late = {}
        if d.name in primary:
            late["primary_ip4"] = Ref("ipam/ip-addresses", primary[d.name])
        if d.name in oob:
            late["oob_ip"] = Ref("ipam/ip-addresses", oob[d.name])
        host = np_.hosts.get(d.name)
        add(
            "dcim/devices",
            d.name,
            {
                "name": d.name,
                "role": Ref("dcim/device-roles", _role_key(d)),
                "device_type": Ref("dcim/device-types", type_key[f"{d.kind}:{d.model}"]),
                "site": site_ref,
                **placed,
                "status": STATUS,
                **_tenant(tenant_of_vrf.get(host["vrf"]) if host else None),
                **_plane(device_plane(d)),
            },
            late,
        )

    peer: dict[tuple[str, str], tuple[str, str, int]] = {}
    for lk in plan.links:
        peer[(lk.a_device, lk.a_port)] = (lk.b_device, lk.b_port, lk.speed_gbps)
        peer[(lk.b_device, lk.b_port)] = (lk.a_device, lk.a_port, lk.speed_gbps)
    # the virtual interfaces addresses live on (loopbacks, SVIs, a server's bond), per device in
    # the order the IP plan names them
    virtual: dict[str, dict[str, str]] = defaultdict(dict)
    for a in addrs:
        for dev, port in a.on:
            if port not in maps[f"{devs[dev].kind}:{devs[dev].model}"]:
                virtual[dev].setdefault(port, "lag" if port == HOST_BOND else "virtual")
    # the VLANs of the frontend and out-of-band switches' access and trunk ports, as their configs set them
    vlan_use: dict[tuple[str, str], dict[str, Any]] = {}
    for net, views in (("frontend", frontend_views(plan)), ("oob", oob_views(plan))):
        for sw, view in views.items():
            for use in view.ports.values():
                vlan_use[(sw, use.port)] = _vlan_fields(net, use)
    # one Ref per device and one int per speed, shared by its interfaces: ~1M interfaces at 98,304 GPUs
    kbps: dict[int, int] = {}
    for d in plan.devices:
        ports = maps[f"{d.kind}:{d.model}"]
        bonded = d.name in virtual and HOST_BOND in virtual[d.name]
        device = Ref("dcim/devices", d.name)
        for port, end in ports.items():
            # speed, peer and VLANs are always named, so a port whose link the design drops is
            # cleared (an unconnected port then matches what NetBox made from the template)
            fields = {
                "device": device,
                "name": port,
                "type": interface_type(end),
                "mgmt_only": end.mgmt,
                "speed": None,
                "description": "",
                **vlan_use.get((d.name, port), _NO_VLANS),
            }
            late = {}
            p = peer.get((d.name, port))
            if p is not None:
                # NetBox counts interface speed in kbit/s
                fields["speed"] = kbps.setdefault(p[2], p[2] * 1_000_000)
                fields["description"] = interface_key(p[0], p[1])  # the peer port, `device:port`
                if bonded and devs[p[0]].network == "frontend":
                    # the server's frontend ports are the bond's members; the bond is created in
                    # the same endpoint, so the member is linked in the second pass
                    late["lag"] = _iface(d.name, HOST_BOND)
            add("dcim/interfaces", interface_key(d.name, port), fields, late)
        for port, kind in virtual.get(d.name, {}).items():
            add(
                "dcim/interfaces",
                interface_key(d.name, port),
                {"device": device, "name": port, "type": kind, "mgmt_only": False},
            )

    for o in [*_cables(plan, cables), *_ipam(plan, site_ref, addrs)]:
        out[o.endpoint].append(o)
    return [o for e in ENDPOINTS for o in out[e]]


def _power(plan: Plan, site_ref: Ref, rack_row: dict[str, str]) -> Iterator[NbObject]:
    """The site's power as NetBox models it: power panels, and one power feed per circuit into a rack.

    AC (every rack on 415-480 VAC, and the PDU racks of an 800 VDC site): a panel per row and feed letter
    (`r01-A`: the row's A-side distribution, busway or row PDU, that placement's feed letters name), and a
    feed per whip: one per PDU (its feed letter and number, `pdu-r01-01-a1`), or per whip of a rack
    system's AC power shelf (`pwr01-1-a`, `-b`, ... on feeds A, B, ...) when the catalog gives the shelf's
    input. Voltage, phases and amperage are the catalog's whip; max utilization is the part's continuous
    rating over the whips' nominal V x A (x sqrt 3), 80 % for the 415 V PDUs.

    800 VDC (site.power): a panel per power sidecar (its DC busway), and a feed per (rack, sidecar) the
    power section pairs, at the rack's feed voltage with its draw (I = P / V, rounded up) as amperage:
    each is sized to carry the rack alone, as N+1 asks of the group's sidecars."""
    cat = plan.catalog
    site = str(site_ref.key)
    panels: dict[str, dict[str, Any]] = {}
    feeds: list[tuple[str, dict[str, Any]]] = []
    dc = plan.power is not None

    def panel(key: str, row: str, description: str) -> Ref:
        panels.setdefault(
            key,
            {
                "site": site_ref,
                "location": Ref("dcim/locations", f"{site}/{row}"),
                "name": key,
                "description": description,
            },
        )
        return Ref("dcim/power-panels", key)

    for d in plan.devices:
        if d.kind != "pdu" or d.rack is None or d.role == Role.POWER_SIDECAR or (dc and d.role != Role.PDU):
            continue
        part = cat.pdus[d.model]
        whip_kw = part.whip_kw()
        if whip_kw is None or part.input_vac is None or part.input_a is None:
            continue  # the catalog does not give this shelf's AC input
        row = rack_row[d.rack]
        if "feed" in d.attrs:  # a PDU: one whip on its feed
            whips = [(str(d.attrs["feed"]), d.name)]
        else:  # an AC power shelf: its whips on feeds A, B, ...
            whips = [("ABCDEFGH"[w], f"{d.name}-{'abcdefgh'[w]}") for w in range(part.whips)]
        util = min(100, round(100 * part.capacity_kw / (part.whips * whip_kw)))
        for letter, name in whips:
            ref = panel(
                f"{row}-{letter}",
                row,
                f"row {row} feed {letter}: the {part.input_vac} VAC distribution (busway or row PDU) "
                f"of the row's {letter} whips",
            )
            feeds.append(
                (
                    f"{ref.key}/{name}",
                    {
                        "power_panel": ref,
                        "rack": Ref("dcim/racks", d.rack),
                        "name": name,
                        "status": STATUS,
                        "type": "primary" if letter == "A" else "redundant",
                        "supply": "ac",
                        "phase": "three-phase" if part.input_phases == 3 else "single-phase",
                        "voltage": part.input_vac,
                        "amperage": part.input_a,
                        "max_utilization": util,
                        "description": f"whip {letter} of {d.name} ({d.model})",
                    },
                )
            )
    if plan.power is not None:
        for sc in plan.power.sidecars:
            panel(
                sc.name,
                rack_row[sc.rack],
                f"{sc.model} on {sc.rack}: {cat.pdus[sc.model].output_vdc} VDC busway of racks "
                f"{', '.join(sc.serves)}, {sc.capacity_kw:g} kW",
            )
        for rp in plan.power.racks:
            for k, sc_name in enumerate(rp.sidecars):
                feeds.append(
                    (
                        f"{sc_name}/{rp.rack}",
                        {
                            "power_panel": Ref("dcim/power-panels", sc_name),
                            "rack": Ref("dcim/racks", rp.rack),
                            "name": rp.rack,
                            "status": STATUS,
                            "type": "primary" if k == 0 else "redundant",
                            "supply": "dc",
                            "phase": "single-phase",
                            "voltage": rp.feed_vdc,
                            "amperage": math.ceil(rp.feed_a),
                            "max_utilization": 100,
                            "description": f"{rp.kw:g} kW at {rp.feed_vdc} VDC ({rp.feed_a:g} A) to {rp.shelves} x "
                            f"{rp.shelf}, from {sc_name} ({plan.power.redundancy} over {len(rp.sidecars)} sidecars)",
                        },
                    )
                )
    for key, fields in sorted(panels.items()):
        yield NbObject("dcim/power-panels", key, fields, NO_LATE)
    for key, fields in sorted(feeds):
        yield NbObject("dcim/power-feeds", key, fields, NO_LATE)


def _cables(plan: Plan, cables: list[Cable]) -> Iterator[NbObject]:
    """One NetBox cable per physical cable."""
    links = plan.links
    devs = plan.index()
    for cab in cables:
        common = {"type": NETBOX_TYPE[cab.media], "color": COLOR[cab.media], "status": STATUS, "length_unit": "m"}
        if cab.physical == len(cab.links):
            # one cable per link (a single cable, or one fiber of a pair of optics each)
            for j, k in enumerate(cab.links):
                lk = links[k]
                key = cab.id if cab.physical == 1 else f"{cab.id}.{j + 1}"
                yield NbObject(
                    "dcim/cables",
                    key,
                    {
                        "a_terminations": [Termination(_iface(lk.a_device, lk.a_port))],
                        "b_terminations": [Termination(_iface(lk.b_device, lk.b_port))],
                        **common,
                        **_plane(link_plane(devs, lk)),
                        "label": cab.labels[j],
                        "length": cab.length_m[j],
                    },
                )
        else:
            # a twin or splitter cable: one cable whose side(s) with several ports get several terminations
            a_side = list(dict.fromkeys((links[k].a_device, links[k].a_port) for k in cab.links))
            b_side = list(dict.fromkeys((links[k].b_device, links[k].b_port) for k in cab.links))
            # a splitter whose legs reach two planes is in both: "plane1 plane2"
            plane = " ".join(dict.fromkeys(p for k in cab.links if (p := link_plane(devs, links[k]))))
            yield NbObject(
                "dcim/cables",
                cab.id,
                {
                    "a_terminations": [Termination(_iface(*e)) for e in a_side],
                    "b_terminations": [Termination(_iface(*e)) for e in b_side],
                    # the label of a cable with several legs is its id, as the rack sheets print it on
                    # every leg's row; the legs' own labels go in the description
                    **common,
                    "label": cab.id,
                    "description": "; ".join(cab.labels),
                    "length": cab.length_m[0],
                    **_plane(plane),
                },
            )


def _ipam(plan: Plan, site_ref: Ref, addrs: list[Address]) -> Iterator[NbObject]:
    """ASNs, VRFs, VLANs, prefixes and addresses, as the IP plan has them."""
    np_ = required(plan.netplan, "netplan")
    by_asn: dict[int, list[str]] = defaultdict(list)
    for sw, asn in np_.asn.items():
        by_asn[asn].append(sw)
    if by_asn:
        yield NbObject(
            "ipam/rirs",
            PRIVATE_ASNS,
            {
                "name": PRIVATE_ASNS,
                "slug": slug(PRIVATE_ASNS),
                "is_private": True,
                "description": "4-byte private ASNs (64512-65534, 4200000000-4294967294)",
            },
        )
    for asn, sws in sorted(by_asn.items()):
        who = ", ".join(sws[:4]) + (f" and {len(sws) - 4} more" if len(sws) > 4 else "")
        yield NbObject(
            "ipam/asns",
            str(asn),
            {"asn": asn, "rir": Ref("ipam/rirs", PRIVATE_ASNS), "sites": [site_ref], "description": who},
        )
    for v in vrf_rows(plan):
        yield NbObject(
            "ipam/vrfs",
            v["name"],
            {
                "name": v["name"],
                "rd": v["rd"],
                "enforce_unique": True,
                "description": v["description"],
                **_tenant(v["tenant"]),
            },
        )
    for n in np_.networks:
        for seg in ("hosts", "storage"):
            s = n[seg]
            yield NbObject(
                "ipam/vlans",
                f"frontend/{s['vlan']}",
                {
                    "vid": s["vlan"],
                    "name": f"{n['name']}-{seg}",
                    "site": site_ref,
                    "status": "active",
                    "description": f"{n['vrf']} {seg}, L2VNI {s['vni']}",
                    **_tenant(n["tenant"]),
                },
            )
    oob_vlans: dict[int, str] = {}
    for sn in np_.oob["subnets"].values():
        for kind in ("bmc", "mgmt"):
            oob_vlans.setdefault(sn[kind]["vlan"], kind)
    for vid, kind in oob_vlans.items():
        yield NbObject(
            "ipam/vlans",
            f"oob/{vid}",
            {
                "vid": vid,
                "name": f"oob-{kind}",
                "site": site_ref,
                "status": "active",
                "description": f"out-of-band {kind} VLAN of every access switch",
            },
        )
    for x in prefixes(plan):
        fields = {
            "prefix": x.prefix,
            "status": x.status,
            "is_pool": False,
            "description": x.description,
            "scope_type": "dcim.site",
            "scope_id": site_ref,
            **_tenant(x.tenant),
        }
        if x.vrf:
            fields["vrf"] = Ref("ipam/vrfs", x.vrf)
        if x.vlan is not None:
            fields["vlan"] = Ref("ipam/vlans", f"{x.vlan[0]}/{x.vlan[1]}")
        yield NbObject("ipam/prefixes", f"{x.vrf or 'global'}/{x.prefix}", fields)
    for a in addrs:
        base = {
            "address": a.address,
            "status": "active",
            "dns_name": a.dns_name,
            "description": a.description,
            **_tenant(a.tenant),
        }
        if a.vrf:
            base["vrf"] = Ref("ipam/vrfs", a.vrf)
        if a.role:
            base["role"] = a.role
        for dev, port in a.on:
            yield NbObject(
                "ipam/ip-addresses",
                _ip_key(a.vrf, a.address, a.role, dev),
                {**base, "assigned_object_type": "dcim.interface", "assigned_object_id": _iface(dev, port)},
            )
        if not a.on:  # an anycast gateway no leaf carries yet: planned, but bound to nothing
            yield NbObject("ipam/ip-addresses", _ip_key(a.vrf, a.address, a.role, ""), base)


_NO_VLANS: dict[str, Any] = {"mode": None, "untagged_vlan": None, "tagged_vlans": []}


def _vlan_fields(network: str, use: PortUse) -> dict[str, Any]:
    """An 802.1Q port as NetBox records it: access with its VLAN, or a trunk of tagged VLANs."""
    if use.tagged:
        return {
            "mode": "tagged",
            "untagged_vlan": None,
            "tagged_vlans": [Ref("ipam/vlans", f"{network}/{v}") for v in use.tagged],
        }
    if use.untagged is not None:
        return {"mode": "access", "untagged_vlan": Ref("ipam/vlans", f"{network}/{use.untagged}"), "tagged_vlans": []}
    return _NO_VLANS


@functools.cache
def _plane(plane: str) -> dict[str, Any]:
    """The plane custom field of a multi-plane backend's device or cable; nothing for any other, so
    the objects of a site without planes are as they were. One dict per plane, shared (read only):
    an 8-plane 131,072-GPU site has ~2M cables."""
    return {"custom_fields": {PLANE_FIELD: plane}} if plane else {}


def _tenant(tenant: str | None) -> dict[str, Any]:
    return {"tenant": Ref("tenancy/tenants", tenant)} if tenant else {}


def _ip_key(vrf: str, address: str, role: str, device: str) -> str:
    """An address in its VRF on one device (an anycast gateway is one NetBox address per leaf that
    holds it, so its key stays when another leaf gains the VLAN). The device is part of the key
    because NetBox refuses to move an address that is a device's primary or OOB IP to another
    device, and deletes an interface's addresses with it: an address the plan gives to another
    device is a new NetBox address, and the old one goes first."""
    del role  # every role is keyed the same way
    base = f"{vrf or 'global'}/{address}"
    return f"{base}@{device}" if device else base


def _manufacturer(plan: Plan, d: Device) -> str:
    return plan.catalog.switches[d.model].vendor if d.kind == "switch" else GENERIC_MANUFACTURER


def _description(plan: Plan, d: Device) -> str:
    cat = plan.catalog
    if d.kind == "switch":
        return cat.switches[d.model].description
    if d.kind == "storage":
        return cat.storage_servers[d.model].description
    if d.kind == "pdu":
        return cat.pdus[d.model].description
    if d.kind == "cdu":
        return cat.cdus[d.model].description
    return cat.servers[d.model].description
