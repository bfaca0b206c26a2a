"""The compiled plan: the one serializable object every renderer reads (written as DIR/plan.json).

Plain dataclasses inside (fast and small at 65k GPUs); `to_dict`/`from_dict` define the public JSON
contract, whose shape later stages extend with new top-level keys rather than by changing these.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

PLAN_SCHEMA = "railyard.plan/1"


@dataclass(slots=True)
class Device:
    name: str
    kind: str  # server, switch, storage, management, pdu
    role: str  # compute, leaf, spine, core, storage, management, oob-leaf, oob-agg
    model: str  # catalog key
    network: str | None = None  # switches only: backend, frontend, oob
    ports: int = 0  # front-panel ports (switches)
    attrs: dict[str, Any] = field(default_factory=dict)  # su, rail, pod, plane, index, ...
    spare_ports: list[str] = field(default_factory=list)  # switches: ports left free for growth
    rack: str | None = None  # placement: the rack it stands in
    unit: int | None = None  # placement: lowest rack unit it occupies (1 = bottom); None for 0U (PDUs)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "kind": self.kind, "role": self.role, "model": self.model}
        if self.network is not None:
            d["network"] = self.network
        if self.ports:
            d["ports"] = self.ports
            d["spare_ports"] = self.spare_ports
        if self.attrs:
            d["attrs"] = self.attrs
        if self.rack is not None:
            d["rack"] = self.rack
            d["unit"] = self.unit
        return d


@dataclass(slots=True)
class Link:
    network: str  # backend, frontend, oob
    tier: str  # server-leaf, leaf-spine, spine-core, mgmt
    speed_gbps: int
    a_device: str
    a_port: str
    b_device: str
    b_port: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "network": self.network,
            "tier": self.tier,
            "speed_gbps": self.speed_gbps,
            "a": {"device": self.a_device, "port": self.a_port},
            "b": {"device": self.b_device, "port": self.b_port},
        }


@dataclass(slots=True)
class Plan:
    design: dict[str, Any]  # the resolved, validated design
    catalog: dict[str, Any]  # the catalog the plan was compiled against (self-contained plan)
    devices: list[Device]
    links: list[Link]
    networks: dict[str, dict[str, Any]]  # per-network facts: tiers, oversubscription, spare ports, ...
    extra: dict[str, Any] = field(default_factory=dict)  # later stages: racks, cables, ...

    def device(self, name: str) -> Device:
        return self.index()[name]

    def index(self) -> dict[str, Device]:
        return {d.name: d for d in self.devices}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "schema": PLAN_SCHEMA,
            "design": self.design,
            "networks": self.networks,
            "devices": [d.to_dict() for d in self.devices],
            "links": [lk.to_dict() for lk in self.links],
        }
        for k in sorted(self.extra):
            out[k] = self.extra[k]
        out["catalog"] = self.catalog
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan:
        if d.get("schema") != PLAN_SCHEMA:
            raise ValueError(f"not a {PLAN_SCHEMA} document (schema={d.get('schema')!r})")
        known = {"schema", "design", "networks", "devices", "links", "catalog"}
        return cls(
            design=d["design"],
            catalog=d["catalog"],
            devices=[Device(x["name"], x["kind"], x["role"], x["model"], x.get("network"), x.get("ports", 0),
                            x.get("attrs", {}), x.get("spare_ports", []), x.get("rack"), x.get("unit"))
                     for x in d["devices"]],
            links=[Link(x["network"], x["tier"], x["speed_gbps"], x["a"]["device"], x["a"]["port"],
                        x["b"]["device"], x["b"]["port"]) for x in d["links"]],
            networks=d["networks"],
            extra={k: v for k, v in d.items() if k not in known},
        )


def dumps(plan: Plan) -> str:
    """Deterministic JSON: stable key order from construction, fixed separators, trailing newline.
    Lists of records (devices, links, cables, racks, ...) are written one compact record per line: a
    diff then shows one line per changed device or cable, and the C encoder keeps a 65,536-GPU plan
    (hundreds of thousands of records) fast; the other sections are indented. Strict JSON: a
    non-finite number is a bug (inputs refuse .inf/.nan), never `Infinity` in the file."""
    parts = []
    for key, value in plan.to_dict().items():
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            body = ",\n".join("  " + json.dumps(x, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
                               for x in value)
            text = f"[\n{body}\n ]"
        else:
            text = json.dumps(value, indent=1, ensure_ascii=False, allow_nan=False).replace("\n", "\n ")
        parts.append(f" {json.dumps(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}\n"
