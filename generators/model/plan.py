"""The compiled plan: the one serializable object every renderer reads (written as DIR/plan.json).

Plain dataclasses inside (fast and small at 65k GPUs); `to_dict`/`from_dict` define the public JSON
contract. Each stage after the fabric owns one typed section (generators.model.sections) under its
own top-level key; the design and catalog are the validated pydantic objects, dumped as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from generators.model.catalog import Catalog
from generators.model.design import Design
from generators.model.sections import (
    BackendNet,
    Bom,
    Cable,
    CablingTotals,
    Cooling,
    Floor,
    InfinibandFacts,
    NetPlan,
    Networks,
    PlanShapeError,
    PlanWarning,
    Power,
    Rack,
    Record,
    SlurmFacts,
    Trays,
)
from generators.model.vocabulary import Kind, Network, Role, Tier
from generators.text.jsontext import dumps_indented, record_encoder

PLAN_SCHEMA = "railyard.plan/1"
T = TypeVar("T")


@dataclass(slots=True)
class Device:
    name: str
    kind: Kind
    role: Role
    model: str  # catalog key
    network: Network | None = None  # switches only
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
    network: Network
    tier: Tier
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
    """Every stage refines one Plan; every renderer and report reads one. The fabric builder fills
    design, catalog, devices, links and networks; each later stage owns one typed section (None, or
    empty, until that stage has run)."""

    design: Design  # the resolved, validated design
    catalog: Catalog  # the catalog the plan was compiled against (the plan is self-contained)
    devices: list[Device]
    links: list[Link]
    networks: Networks  # per-network facts: tiers, oversubscription, spare ports, ...
    racks: list[Rack] = field(default_factory=list)  # placement
    floor: Floor | None = None  # placement
    trays: Trays | None = None  # cabling
    cables: list[Cable] | None = None  # cabling; None: no cable plan (not "no cables")
    cabling: CablingTotals | None = None  # cabling
    cooling: Cooling | None = None  # placement (site.cooling only)
    netplan: NetPlan | None = None  # network plan
    power: Power | None = None  # placement (site.power: 800vdc only)
    backend_net: BackendNet | None = None  # network plan of a RoCE backend
    slurm: SlurmFacts | None = None  # Slurm
    infiniband: InfinibandFacts | None = None  # InfiniBand (backend on InfiniBand only)
    infiniband_storage: InfinibandFacts | None = None  # InfiniBand (a dedicated InfiniBand storage fabric)
    bom: Bom | None = None  # BoM
    warnings: list[PlanWarning] = field(default_factory=list)  # any stage

    def device(self, name: str) -> Device:
        return self.index()[name]

    def index(self) -> dict[str, Device]:
        return {d.name: d for d in self.devices}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in self._fields():
            out[key] = [x.to_dict() for x in value] if isinstance(value, _RecordList) else value
        return out

    def _fields(self) -> Iterator[tuple[str, Any]]:
        """plan.json's keys in order with their JSON values, except that lists of records come as a
        _RecordList of the records themselves (dumps converts them one at a time)."""
        yield "schema", PLAN_SCHEMA
        yield "design", self.design.model_dump(mode="json")
        yield "networks", self.networks.to_dict()
        yield "devices", _RecordList(self.devices)
        yield "links", _RecordList(self.links)
        for key in SECTIONS:  # alphabetical, as plan.json has always had them
            value = getattr(self, key)
            if isinstance(value, list):
                if value or (key == "cables" and value is not None):
                    yield key, _RecordList(value)
            elif value is not None:
                yield key, value.to_dict()
        yield "catalog", self.catalog.model_dump(mode="json")

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Plan:
        if not isinstance(d, dict) or d.get("schema") != PLAN_SCHEMA:
            schema = d.get("schema") if isinstance(d, dict) else None
            raise PlanShapeError(f"not a {PLAN_SCHEMA} document (schema={schema!r})")
        unknown = set(d) - {"schema", "design", "networks", "devices", "links", "catalog", *SECTIONS}
        if unknown:
            raise PlanShapeError(f"plan.json: unknown sections {sorted(unknown)}")
        kw: dict[str, Any] = {}
        for key, typ in SECTIONS.items():
            if key not in d:
                continue
            v = d[key]
            kw[key] = (
                [typ.from_dict(x, f"{key}[{i}]") for i, x in enumerate(v)]
                if key in LIST_SECTIONS
                else typ.from_dict(v, key)
            )
        return cls(
            design=Design.model_validate(d["design"]),
            catalog=Catalog.model_validate(d["catalog"]),
            devices=[
                Device(
                    x["name"],
                    Kind(x["kind"]),
                    Role(x["role"]),
                    x["model"],
                    Network(x["network"]) if x.get("network") is not None else None,
                    x.get("ports", 0),
                    x.get("attrs", {}),
                    x.get("spare_ports", []),
                    x.get("rack"),
                    x.get("unit"),
                )
                for x in d["devices"]
            ],
            links=[
                Link(
                    Network(x["network"]),
                    Tier(x["tier"]),
                    x["speed_gbps"],
                    x["a"]["device"],
                    x["a"]["port"],
                    x["b"]["device"],
                    x["b"]["port"],
                )
                for x in d["links"]
            ],
            networks=Networks.from_dict(d["networks"], "networks"),
            **kw,
        )


# plan.json key -> record type, in the order plan.json writes them
SECTIONS: dict[str, type[Record]] = {
    "backend_net": BackendNet,
    "bom": Bom,
    "cables": Cable,
    "cabling": CablingTotals,
    "cooling": Cooling,
    "floor": Floor,
    "infiniband": InfinibandFacts,
    "infiniband_storage": InfinibandFacts,
    "netplan": NetPlan,
    "power": Power,
    "racks": Rack,
    "slurm": SlurmFacts,
    "trays": Trays,
    "warnings": PlanWarning,
}
LIST_SECTIONS = frozenset({"cables", "racks", "warnings"})


def dumps(plan: Plan) -> str:
    """Deterministic JSON: stable key order from construction, fixed separators, trailing newline.
    Lists of records (devices, links, cables, racks, ...) are written one compact record per line: a
    diff then shows one line per changed device or cable, and the C encoder keeps a 65,536-GPU plan
    (hundreds of thousands of records) fast; the other sections are indented. Strict JSON: a
    non-finite number is a bug (inputs refuse .inf/.nan), never `Infinity` in the file."""
    # records are converted to dicts one at a time, written by one reused C encoder, and every piece is
    # joined once: building every record's dict first, json.dumps per record (a new encoder per call) and
    # joining per section peaked at 1.2 GB above a 98,304-GPU plan (324 MB of text), now ~0.5 GB
    record = record_encoder(ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
    out = ["{\n"]
    for key, value in plan._fields():
        if len(out) > 1:
            out.append(",\n")
        out.append(f" {json.dumps(key)}: ")
        if isinstance(value, _RecordList) and value:
            out.append("[\n  ")
            out.append(record(value[0].to_dict()))
            for x in value[1:]:
                out.append(",\n  ")
                out.append(record(x.to_dict()))
            out.append("\n ]")
        else:
            out.append(
                dumps_indented(
                    [] if isinstance(value, _RecordList) else value, 1, ensure_ascii=False, allow_nan=False
                ).replace("\n", "\n ")
            )
    out.append("\n}\n")
    return "".join(out)


class _RecordList(list[Any]):
    """A plan list of records (devices, links, cables, ...), each with to_dict."""


def required(section: T | None, name: str) -> T:
    """A section a reader cannot do without: present, or a clear error naming the stage that makes it."""
    if section is None:
        raise PlanShapeError(f"the plan has no {name!r} section: it was compiled without the stage that writes it")
    return section
