"""Tenant isolation audit of the rendered SONiC frontend configs (not of the plan that produced them).

Reads every ``frontend/<switch>/config_db.json`` and ``frr.conf`` and checks, across the whole fabric:
- each VLAN is bound to one VRF and one VNI everywhere, each VRF to one L3VNI, and no VLAN, VNI or
  VRF belongs to two networks (tenants or infra);
- every host port's access VLAN is the hosts VLAN of the VRF its server belongs to (from the plan);
- storage VLANs end in their own tenant's VRF, so a tenant reaches the storage front-ends only there;
- frr.conf agrees with config_db.json on VRF -> L3VNI, and route targets are never shared.

Returns human-readable findings; an empty list means isolated. ``railyard`` runs the plan-level
checks on every compile; this audit proves the files say the same.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Mapping

from generators.model.plan import Plan, required

_VRF_BLOCK = re.compile(r"^vrf (\S+)\n vni (\d+)$", re.M)
_BGP_VRF = re.compile(r"^router bgp \d+ vrf (\S+)\n(.*?)^exit$", re.M | re.S)
_RT = re.compile(r"route-target (?:import|export) (\S+)")
_L2VNI = re.compile(r"^  vni (\d+)\n((?:   .*\n)+?)  exit-vni", re.M)


def audit_frontend(plan: Plan, files: Mapping[str, str]) -> list[str]:
    np_ = required(plan.netplan, "netplan")
    findings: list[str] = []
    network_of_vrf = {n["vrf"]: n["name"] for n in np_.networks}
    vrf_of_host = {h: a["vrf"] for h, a in np_.hosts.items()}
    vlan_vrf: dict[int, set[str]] = defaultdict(set)
    vlan_vni: dict[int, set[int]] = defaultdict(set)
    vrf_vni: dict[str, set[int]] = defaultdict(set)
    rt_owner: dict[str, set[str]] = defaultdict(set)
    switches = sorted({p.split("/")[1] for p in files if p.startswith("frontend/") and p.endswith("config_db.json")})
    for sw in switches:
        db = json.loads(files[f"frontend/{sw}/config_db.json"])
        frr = files.get(f"frontend/{sw}/frr.conf", "")
        svi_vrf = {k: v.get("vrf_name") for k, v in db.get("VLAN_INTERFACE", {}).items() if "|" not in k}
        for name, vrf in svi_vrf.items():
            vlan_vrf[int(name.removeprefix("Vlan"))].add(vrf or "default")
        for m in db.get("VXLAN_TUNNEL_MAP", {}).values():
            vlan_vni[int(m["vlan"].removeprefix("Vlan"))].add(int(m["vni"]))
        for vrf, v in db.get("VRF", {}).items():
            vrf_vni[vrf].add(int(v["vni"]))
        frr_vrfs = {name: int(vni) for name, vni in _VRF_BLOCK.findall(frr)}
        if frr_vrfs != {k: int(v["vni"]) for k, v in db.get("VRF", {}).items()}:
            findings.append(f"{sw}: frr.conf VRF/L3VNI {frr_vrfs} differ from config_db.json")
        for vrf, body in _BGP_VRF.findall(frr):
            for t in _RT.findall(body):
                rt_owner[t].add(vrf)
        for vni, body in _L2VNI.findall(frr):
            for t in _RT.findall(body):
                rt_owner[t].add(f"vni {vni}")
        # every access port carries the hosts VLAN of its server's own VRF
        for key in db.get("VLAN_MEMBER", {}):
            vlan_name, port = key.split("|")
            desc = db["PORT"].get(port, {}).get("description", "")
            peer = desc.split(":")[0]
            vid = int(vlan_name.removeprefix("Vlan"))
            if db["VLAN_MEMBER"][key]["tagging_mode"] == "untagged" and peer in vrf_of_host:
                got = svi_vrf.get(vlan_name)
                if got != vrf_of_host[peer]:
                    findings.append(
                        f"{sw} {port} ({peer}): access VLAN {vid} is in {got}, but {peer} belongs to "
                        f"{vrf_of_host[peer]}"
                    )
    for vid, vrfs in sorted(vlan_vrf.items()):
        if len(vrfs) > 1:
            findings.append(f"VLAN {vid} is bound to several VRFs: {sorted(vrfs)}")
    for vid, vnis in sorted(vlan_vni.items()):
        if len(vnis) > 1:
            findings.append(f"VLAN {vid} maps to several VNIs: {sorted(vnis)}")
    for vrf, vnis in sorted(vrf_vni.items()):
        if len(vnis) > 1:
            findings.append(f"{vrf} has several L3VNIs: {sorted(vnis)}")
    vni_users: dict[int, set[str]] = defaultdict(set)
    for vid, vnis in vlan_vni.items():
        for vni in vnis:
            # SONiC carries an L3VNI on a VLAN bound to that VRF: the same owner, not a second one
            vrfs = vlan_vrf.get(vid, set())
            same = len(vrfs) == 1 and vni in vrf_vni.get(next(iter(vrfs)), set())
            vni_users[vni].add(next(iter(vrfs)) if same else f"Vlan{vid}")
    for vrf, vnis in vrf_vni.items():
        for vni in vnis:
            vni_users[vni].add(vrf)
    for vni, users in sorted(vni_users.items()):
        if len(users) > 1:
            findings.append(f"VNI {vni} is used by {sorted(users)}")
    for t, users in sorted(rt_owner.items()):
        if len(users) > 1:
            findings.append(f"route target {t} is shared by {sorted(users)}")
    # storage VLANs: in their own network's VRF and nowhere else
    for n in np_.networks:
        got = vlan_vrf.get(n["storage"]["vlan"], set())
        if got and got != {n["vrf"]}:
            findings.append(f"{n['name']}'s storage VLAN {n['storage']['vlan']} is in {sorted(got)}, not {n['vrf']}")
    for vrf in vrf_vni:
        if vrf not in network_of_vrf:
            findings.append(f"{vrf} is configured but belongs to no network of the plan")
    return findings
