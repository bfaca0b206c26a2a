"""Cumulus Linux (NVIDIA): one NVUE ``startup.yaml`` per out-of-band switch (``oob/<switch>/``) and per
RoCE backend switch (``backend/<switch>/``, Spectrum-X on the SN5600).

Access and aggregation switches route like the SONiC ones (eBGP unnumbered uplinks to the aggregation
pair, or to the frontend service leaves with oob.uplink: frontend); an access switch's BMC and
management VLANs end on SVIs whose DHCP relay stamps option 82.
A backend switch renders plan.backend_net as it stands (see ``backend_nvue``).
Railyard renders no Cumulus frontend: frontend.vendor names sonic or eos.

The documents are what ``nv config show -o yaml`` prints (a list holding one ``set:`` mapping), loaded
with ``nv config replace startup.yaml`` and ``nv config apply``; features are switched with the
``enable: on`` form of Cumulus Linux 5.14 and earlier (5.15 renamed it ``state: enabled``, per the NVUE
reference: https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Set-and-Unset-Commands/Adaptive-Routing/).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from generators.model.errors import DesignError
from generators.model.netos import network_os
from generators.model.plan import Plan, required
from generators.model.ports import port_table
from generators.model.secrets import placeholder, salt
from generators.model.sections import BackendNet, BackendPort, BackendSwitch, RoceQos
from generators.text.yamltext import dump_block
from generators.views.switches import SwitchView, mgmt_addresses

MTU = network_os("cumulus").mtu  # Cumulus Linux's jumbo MTU, its row's (ifupdown2's default for swp ports)


def oob_nvue(plan: Plan, v: SwitchView, mgmt: dict[str, str] | None = None) -> str:
    """Cumulus Linux 5.x NVUE startup.yaml (``nv config replace``, then ``nv config apply``)."""
    np_ = required(plan.netplan, "netplan")
    subnets = np_.oob["subnets"].get(v.device.name)
    iface: dict[str, Any] = {"lo": {"type": "loopback", "ip": {"address": {v.loopback: {}}}}}
    neighbors: dict[str, Any] = {}
    networks: dict[str, Any] = {v.loopback: {}}
    for p in v.ports.values():
        if p.fabric:
            iface[p.port] = {"type": "swp", "description": p.description, "link": {"mtu": MTU}}
            neighbors[p.port] = {"type": "unnumbered", "remote-as": "external"}
        elif p.untagged is not None:
            iface[p.port] = {
                "type": "swp",
                "description": p.description,
                "bridge": {"domain": {"br_default": {"access": p.untagged}}},
            }
    relay_ifaces: dict[str, Any] = {}
    vlans: dict[str, Any] = {}
    if subnets:
        for kind in ("bmc", "mgmt"):
            s = subnets[kind]
            iface[f"vlan{s['vlan']}"] = {
                "type": "svi",
                "vlan": s["vlan"],
                "ip": {"address": {f"{s['gateway']}/{s['subnet'].split('/')[1]}": {}}},
            }
            vlans[str(s["vlan"])] = {}
            networks[s["subnet"]] = {}
            relay_ifaces[f"vlan{s['vlan']}"] = {}
    relay_ifaces.update({p.port: {} for p in v.fabric_ports})  # upstream side of the relay
    config = {
        "system": {"hostname": v.device.name},
        "interface": iface,
        "bridge": {"domain": {"br_default": {"vlan": vlans}}},
        "router": {"bgp": {"enable": "on", "autonomous-system": v.asn, "router-id": v.router_id}},
        "vrf": {
            "default": {
                "router": {
                    "bgp": {
                        "enable": "on",
                        "neighbor": neighbors,
                        "address-family": {"ipv4-unicast": {"enable": "on", "network": networks}},
                    }
                }
            }
        },
        "service": {
            "dhcp-relay": {
                "default": {
                    "interface": relay_ifaces,
                    "server": {a: {} for a in np_.dhcp_servers},
                    # the physical port, not the SVI, goes into option 82 circuit-id
                    "agent": {"enable": "on", "use-pif-circuit-id": {"enable": "on"}, "remote-id": {v.device.name: {}}},
                }
            }
        },
    }
    return _document(
        plan,
        v.device.name,
        f"out-of-band {'access' if v.device.role == 'leaf' else 'aggregation'}, ASN {v.asn}",
        management(plan, v.device.name, config, mgmt_addresses(plan).get(v.device.name) if mgmt is None else mgmt),
    )


NVUE_ROLE = {"admin": "system-admin", "operator": "nvue-monitor"}
MGMT_VRF = "mgmt"  # Cumulus Linux's management VRF (eth0 is in it by default)


def management(plan: Plan, switch: str, config: dict[str, Any], mgmt: dict[str, str] | None) -> dict[str, Any]:
    """The management plane of plan.netplan.management merged into a switch's NVUE `set` document
    (NVUE reference: System/AAA, Service/NTP, Syslog, DNS, SNMP-Server; Cumulus Linux 5.x paths):
    eth0 with its OOB address in the management VRF, local users (SHA-512 crypt hashes, SSH keys),
    SNMPv3 users listening on the management address, NTP, syslog, DNS, TACACS+/RADIUS before local
    logins, and the BGP session password on every neighbor. Secrets are placeholders."""
    mp = required(plan.netplan, "netplan").management
    # a switch with no management port planned (an access switch) reaches the services in-band
    vrf = MGMT_VRF if mp.vrf and mgmt else "default"
    users: dict[str, Any] = {}
    for u in mp.users:
        user: dict[str, Any] = {
            "role": NVUE_ROLE[u.role],
            "hashed-password": placeholder(u.password_secret, "sha512-crypt", salt(plan.design.name, switch, u.name)),
        }
        if u.ssh_keys:
            user["ssh"] = {
                "authorized-key": {
                    f"key{i + 1}": {"type": k.split()[0], "key": k.split()[1]} for i, k in enumerate(u.ssh_keys)
                }
            }
        users[u.name] = user
    aaa: dict[str, Any] = {"user": users}
    order: dict[int, str] = {}
    if mp.tacacs:
        aaa["tacacs"] = {
            "enable": "on",
            "vrf": vrf,
            "server": {
                len(mp.tacacs) - i: {
                    "host": s.address,
                    "port": s.port,
                    "timeout": s.timeout,
                    "secret": placeholder("tacacs_key"),
                }
                for i, s in enumerate(mp.tacacs)
            },
        }
        order[len(order) + 1] = "tacacs"
    if mp.radius:
        aaa["radius"] = {
            "enable": "on",
            "vrf": vrf,
            "server": {
                s.address: {
                    "priority": len(mp.radius) - i,
                    "port": s.port,
                    "timeout": s.timeout,
                    "secret": placeholder("radius_key"),
                }
                for i, s in enumerate(mp.radius)
            },
        }
        order[len(order) + 1] = "radius"
    if order:
        aaa["authentication-order"] = {**{k: {"method": v} for k, v in order.items()}, 10: {"method": "local"}}
    listen = {mgmt["address"].split("/")[0]: {"vrf": vrf}} if mgmt else {"localhost": {}}
    snmp_users: dict[str, Any] = {
        u.name: {"auth-sha": {placeholder(u.auth_secret): {"encrypt-aes": {placeholder(u.priv_secret): {}}}}}
        for u in mp.snmp_users
    }
    service: dict[str, Any] = {
        "ntp": {vrf: {"server": {a: {"iburst": "on"} for a in mp.ntp}}},
        "syslog": {vrf: {"server": {a: {"port": 514, "protocol": "udp"} for a in mp.syslog}}},
        "dns": {vrf: {"server": {a: {} for a in mp.dns}, "search": {required(plan.netplan, "netplan").domain: {}}}},
        "snmp-server": {"enable": "on", "listening-address": listen, "username": snmp_users},
    }
    config["system"] = {**config["system"], "aaa": aaa}
    config["service"] = {**config.get("service", {}), **service}
    if mgmt:
        config["interface"]["eth0"] = {
            "type": "eth",
            "ip": {"address": {mgmt["address"]: {}}, "gateway": {mgmt["gateway"]: {}}, "vrf": vrf},
        }
    if mp.bgp_auth == "md5":
        for n in config["vrf"]["default"]["router"]["bgp"]["neighbor"].values():
            n["password"] = placeholder(mp.bgp_secret)
    return config


def _document(plan: Plan, switch: str, what: str, config: dict[str, Any]) -> str:
    """The startup.yaml of one switch: a comment naming it, then the ``- set:`` document."""
    head = (
        f"# {switch}: Cumulus Linux 5.x NVUE startup config, generated by railyard from design "
        f"{plan.design.name}\n# {what}\n"
    )
    return head + dump_block([{"set": config}], sort_keys=True)


def render_oob(plan: Plan, views: dict[str, SwitchView]) -> dict[str, str]:
    addresses = mgmt_addresses(plan)
    return {f"oob/{name}/startup.yaml": oob_nvue(plan, v, addresses.get(name, {})) for name, v in views.items()}


# ----------------------------------------------------------------------------------- RoCE backend

# What ``qos roce mode lossless`` configures on Spectrum switches, so the document sets nothing more
# when the plan asks for exactly this: trust L3 (DSCP 26 -> switch priority 3 -> traffic class 3,
# lossless with PFC on priority 3 and ECN; DSCP 48 -> 6 -> traffic class 6, the CNPs, strict priority)
# and ETS WRR 50/50 between RoCE and the rest. Cumulus Linux, "RDMA over Converged Ethernet - RoCE",
# https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-514/Layer-1-and-Switch-Ports/Quality-of-Service/RDMA-over-Converged-Ethernet-RoCE
ROCE_LOSSLESS = RoceQos(roce_dscp=26, roce_priority=3, cnp_dscp=48, cnp_priority=6)
# FRR's ECMP width on Cumulus Linux: the most next hops `multipaths ebgp` takes
MAX_PATHS = 128
_SPLIT = re.compile(r"^(swp\d+)s\d+$")
_PORT = re.compile(r"^swp\d+(s\d+)?$")


def backend_nvue(
    plan: Plan,
    bn: BackendNet,
    sw: BackendSwitch,
    ports: list[BackendPort],
    breakout: dict[str, tuple[int, int | None]],
    mgmt: dict[str, str] | None = None,
) -> str:
    """A RoCE backend switch's NVUE startup.yaml, from plan.backend_net.

    - Interfaces: a split port's parent gets ``link breakout Nx lanes-per-port L`` (NVUE wants the lanes
      with the split); every used port the plan's MTU and
      the PFC watchdog (a stuck lossless queue is drained rather than pausing the fabric); a server
      port its /31 in its tenant's VRF; a fabric port no address (BGP unnumbered over IPv6 link-local,
      IPv4 over RFC 5549 next hops) and adaptive routing.
    - Underlay: eBGP unnumbered to every fabric port (``remote-as external``: the peer's ASN comes from
      its OPEN), the plan's ASN and router id, its loopback announced, multipath across ASNs (the
      spines of a group share one, but a leaf's paths through different groups must still be equal).
    - Tenants: the plan's overlay, EVPN type-5: the leaves are VTEPs sourced at their loopback and each
      VRF gets its L3VNI and one route target, imported and exported; the spines only carry the EVPN
      address family. Nothing leaks a tenant's /31s into the default VRF.
    - QoS: ``qos roce mode lossless`` (the plan's classes are its defaults, checked in render) and
      adaptive routing, the Spectrum-X load balancing of the RA: on Spectrum-4 since Cumulus Linux 5.6
      (https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Show-Commands/Adaptive-Routing/),
      per port ``router adaptive-routing`` on the fabric ports, where there is more than one path.
    Sources: NVUE reference, https://docs.nvidia.com/networking-ethernet-software/nvue-reference
    (Interface, QoS, BGP, BGP EVPN, Adaptive Routing) and the Cumulus Linux EVPN "Inter-subnet Routing"
    page (symmetric routing with an L3VNI per VRF), https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-58/Network-Virtualization/Ethernet-Virtual-Private-Network-EVPN/Inter-subnet-Routing
    """
    router_id = sw.loopback.split("/")[0]
    vtep = sw.role == "leaf" and bool(sw.vrfs)
    iface: dict[str, Any] = {"lo": {"type": "loopback", "ip": {"address": {sw.loopback: {}}}}}
    neighbors: dict[str, Any] = {}
    fabric = 0
    for p in ports:
        parent = _SPLIT.match(p.port)
        if parent:
            n, lanes = breakout[parent.group(1)]
            # lanes unknown (a catalog group without them): NVUE's own split of the port's lanes
            split_as = {"lanes-per-port": lanes} if lanes else {}
            iface[parent.group(1)] = {"type": "swp", "link": {"breakout": {f"{n}x": split_as}}}
        # `pfc-watchdog state enable` (Cumulus Linux 5.6 and later) on the lossless ports
        port: dict[str, Any] = {
            "type": "swp",
            "description": f"{p.peer}:{p.peer_port}",
            "link": {"mtu": bn.switch_mtu},
            "qos": {"pfc-watchdog": {"state": "enable"}},
        }
        if p.fabric:
            fabric += 1
            port["router"] = {"adaptive-routing": {"enable": "on"}}
            neighbors[p.port] = {
                "type": "unnumbered",
                "remote-as": "external",
                "address-family": {"ipv4-unicast": {"enable": "on"}, "l2vpn-evpn": {"enable": "on"}},
            }
        else:
            assert p.address is not None and p.vrf is not None  # the plan gives every host port both
            port["ip"] = {"vrf": p.vrf, "address": {p.address: {}}}
        iface[p.port] = port
    vrfs: dict[str, Any] = {
        "default": {
            "router": {
                "bgp": {
                    "enable": "on",
                    "neighbor": neighbors,
                    "path-selection": {"multipath": {"aspath-ignore": "on"}},
                    "address-family": {
                        "ipv4-unicast": {
                            "enable": "on",
                            "network": {sw.loopback: {}},
                            "multipaths": {"ebgp": max(1, min(fabric, MAX_PATHS))},
                        },
                        "l2vpn-evpn": {"enable": "on"},
                    },
                }
            }
        }
    }
    for v in bn.vrfs:
        if v.name not in sw.vrfs:
            continue
        rt: dict[str, dict[str, Any]] = {v.route_target: {}}
        vrfs[v.name] = {
            "evpn": {"enable": "on", "vni": {v.l3vni: {}}},
            "router": {
                "bgp": {
                    "enable": "on",
                    "autonomous-system": sw.asn,
                    "router-id": router_id,
                    "address-family": {
                        "ipv4-unicast": {
                            "enable": "on",
                            "redistribute": {"connected": {"enable": "on"}},
                            "route-export": {"to-evpn": {"enable": "on"}},
                        }
                    },
                    "route-export": {"to-evpn": {"route-target": rt}},
                    "route-import": {"from-evpn": {"route-target": rt}},
                }
            },
        }
    config: dict[str, Any] = {
        "system": {"hostname": sw.name},
        "interface": iface,
        "qos": {"roce": {"enable": "on", "mode": "lossless"}},
        "router": {
            "bgp": {"enable": "on", "autonomous-system": sw.asn, "router-id": router_id},
            "adaptive-routing": {"enable": "on"},
        },
        "evpn": {"enable": "on"},
        "vrf": vrfs,
    }
    if vtep:
        config["nve"] = {"vxlan": {"enable": "on", "source": {"address": router_id}}}
    config = management(plan, sw.name, config, mgmt)
    return _document(plan, sw.name, f"RoCE backend {sw.role}, ASN {sw.asn}", config)


def render_backend(plan: Plan) -> dict[str, str]:
    """``backend/<switch>/startup.yaml`` per backend switch (the folder the SONiC backend uses)."""
    bn = required(plan.backend_net, "backend_net")
    if bn.overlay != "evpn-type5":
        raise ValueError(
            f"the backend plan carries tenants as {bn.overlay!r}; the Cumulus renderer configures EVPN type-5 only"
        )
    if bn.qos != ROCE_LOSSLESS:
        raise ValueError(
            f"the backend plan's RoCE classes {bn.qos} are not what `qos roce mode lossless` sets "
            f"({ROCE_LOSSLESS}); the Cumulus renderer configures those only"
        )
    devs = plan.index()
    by_switch = bn.ports_by_switch()
    addresses = mgmt_addresses(plan)
    files: dict[str, str] = {}
    for sw in bn.switches:
        model_key = devs[sw.name].model
        model = plan.catalog.switches[model_key]
        names = [p.name for p in port_table(model)]
        if bad := [n for n in names if not _PORT.match(n)]:
            key = model_key.split("@")[0]  # a split model is its catalog entry's breakout (Catalog.switch_at)
            raise DesignError.one(
                f"catalog.switches.{key}.port_groups",
                f"runs Cumulus Linux (os: cumulus), which "
                f"names its ports swpN and a split port swpNsM, but a port is named {bad[0]!r}",
                'name the ports "swp{n}" (and breakout_name "swp{cage}s{s}"), or give the '
                "switch the OS that names them so",
            )
        # a split port's parent: how many ports it splits into, and the SerDes lanes each keeps
        split = [(m.group(1), p) for p in port_table(model) if (m := _SPLIT.match(p.name))]
        count = Counter(parent for parent, _ in split)
        breakout = {parent: (count[parent], model.port_groups[p.group].lanes) for parent, p in split}
        files[f"backend/{sw.name}/startup.yaml"] = backend_nvue(
            plan, bn, sw, by_switch[sw.name], breakout, addresses.get(sw.name, {})
        )
    return files
