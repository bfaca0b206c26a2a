"""The parts catalog: switches, servers, NICs, CPUs, cables and optics, racks, PDUs, licenses.

The catalog is data (designs/catalog.yaml); this module only describes its shape so a typo in a part
fails loudly with the YAML line instead of silently pricing or cabling the wrong thing.
"""

from __future__ import annotations

import datetime
import difflib
import math
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError, model_validator

from generators.model.errors import DesignError, Problem, did_you_mean
from generators.model.netos import NETWORK_OSES, OsName
from generators.model.yamlload import SourceMap, deep_merge, load_yaml_file, where


def _pattern(*fields: str) -> Callable[[str], str]:
    """The check of a port name pattern (str.format) over exactly these fields: a design's `catalog:` may
    write one, so a typo is refused here by field, not met as a KeyError while the fabric is built."""

    def check(v: str) -> str:
        try:
            used = [name for _, name, _, _ in string.Formatter().parse(v) if name is not None]
            v.format(**dict.fromkeys(fields, 1))
        except (KeyError, IndexError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a name pattern over {{{'}, {'.join(fields)}}}: {exc!r}") from None
        if bad := [u for u in used if u not in fields]:  # {n.real}, {n[0]}, {}: only the plain names
            raise ValueError(f"{{{bad[0]}}} is not one of {{{'}, {'.join(fields)}}}")
        return v

    return check


# a switch port's name over its number n, index i, cage, sub, s and lane (PortGroup says what each is)
SwitchPortPattern = Annotated[str, AfterValidator(_pattern("n", "i", "cage", "sub", "s", "lane"))]
# a server port's name over its 0-based index i
IndexPattern = Annotated[str, AfterValidator(_pattern("i"))]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Price(_Strict):
    usd: float = Field(ge=0)
    source: str = Field(min_length=3)  # where the figure comes from, or "estimate: why"
    date: str = Field(pattern=r"^\d{4}-\d{2}(-\d{2})?$")


class PortGroup(_Strict):
    """A run of identical front-panel ports. Names are str.format patterns over
    n (1-based port number on the switch), i (0-based), cage, sub (1-based port within the cage), s
    (0-based port within the cage, the way Cumulus Linux names a split port: swp1s0) and lane (first
    SerDes lane, 0-based, the way SONiC names Ethernet ports)."""

    count: int = Field(gt=0)
    speed_gbps: int = Field(gt=0)  # native speed
    speeds_gbps: list[int] = Field(default_factory=list)  # other speeds a port can be set to
    connector: str  # cage type: osfp, qsfp112, qsfp56, qsfp28, sfp28, rj45
    ports_per_cage: int = Field(default=1, ge=1, le=8)
    # SerDes lanes of a port at its native speed: speed_gbps / lanes is the lane rate, which lane-keyed
    # media rules and parts go by (a slower speed runs fewer lanes at the same rate: XDR 400G = 2 x 200G).
    # Omitted, the port's lane rate is unknown (a link then goes by its other end's) and {lane} counts 1
    lanes: int | None = Field(default=None, ge=1)
    name: SwitchPortPattern = "{n}"
    # the name of a port once split by `breakout`, when the NOS renames split ports apart from whole
    # ones (Cumulus: swp1 splits into swp1s0 and swp1s1); omitted, split ports follow `name` (SONiC's
    # Ethernet{lane} names both). Left out of the dump when unset, so entries without one dump as before
    breakout_name: SwitchPortPattern | None = Field(default=None, exclude_if=lambda v: v is None)
    role: Literal["any", "down", "up"] = "any"
    # speed -> logical ports one port splits into at that speed, its lanes shared evenly (SN5600 at 800G:
    # {400: 2} gives 2 x 400G per OSFP). Left out of the dump when empty, so entries without one dump as before
    breakout: dict[int, int] = Field(default_factory=dict, exclude_if=lambda v: not v)

    @model_validator(mode="after")
    def _breakout_splits_lanes(self) -> PortGroup:
        if self.breakout_name is not None and not self.breakout:
            raise ValueError(
                "breakout_name: names split ports, but the group has no breakout; remove it or add the breakout"
            )
        if self.breakout and self.lanes is None:
            # the split ports' names and lane rates come from the lanes each one keeps
            raise ValueError(
                "breakout: needs lanes (the port's SerDes lanes at its native speed), which the split shares evenly"
            )
        for sp, n in self.breakout.items():
            assert self.lanes is not None
            if n < 2 or self.lanes % n or sp >= self.speed_gbps:
                raise ValueError(
                    f"breakout.{sp}: {n} ports of {self.lanes} lanes each below the native "
                    f"{self.speed_gbps}G: the split must be at least 2 and divide the lanes, and the "
                    "speed below the native one"
                )
            if sp in self.speeds_gbps:
                raise ValueError(
                    f"breakout.{sp}: {sp}G is also in speeds_gbps; a speed is reached one way, "
                    "either a whole port set to it or a breakout"
                )
            if self.ports_per_cage * n > 8:
                # a cage's plug serves at most 8 ports: a twin-port optic or cable, or an optic broken
                # out through a fan-out (Transceiver.breakout)
                raise ValueError(
                    f"breakout.{sp}: {self.ports_per_cage * n} ports per cage; an OSFP cage's 8 lanes "
                    "split into 8 ports at most"
                )
        return self

    @property
    def lane_gbps(self) -> int | None:
        """The lane rate: native speed over lanes; None when the catalog does not give the lanes."""
        return None if self.lanes is None else self.speed_gbps // self.lanes

    def broken_out(self, speed: int) -> PortGroup:
        """This group with every port split for `speed`: more, narrower ports sharing each cage."""
        n = self.breakout[speed]
        assert self.lanes is not None  # a group with a breakout names its lanes (_breakout_splits_lanes)
        return PortGroup(
            count=self.count * n,
            speed_gbps=speed,
            speeds_gbps=[s for s in self.speeds_gbps if s < speed],
            connector=self.connector,
            ports_per_cage=self.ports_per_cage * n,
            lanes=self.lanes // n,
            name=self.breakout_name or self.name,
            role=self.role,
        )


class LaserModules(_Strict):
    """A co-packaged-optics switch's external laser sources (ELS): field-replaceable modules on its front
    panel that feed light to the optical engines beside the ASICs. Bought with the switch, spares apart:
    the BoM lists them as a line of their own (quantity per switch x switches) and their draw adds to
    the switch's (Switch.draw_w)."""

    sku: str
    description: str
    count: int = Field(ge=1)  # modules per switch
    power_w: float = Field(gt=0)  # one module's draw
    price: Price  # one module


class Switch(_Strict):
    vendor: str
    sku: str
    description: str
    # nvlink: a rack-scale system's NVLink switch tray, wired by the rack's fixed backplane (never routed);
    # only its management port is on a network railyard plans (the OOB); ualink: a rack's UALink
    # scale-up switch tray (AMD Helios), planned the same way
    technology: Literal["infiniband", "ethernet", "nvlink", "ualink"]
    os: OsName  # a row of generators.model.netos
    port_groups: list[PortGroup] = Field(min_length=1)
    rack_units: int = Field(ge=1)
    power_w: float = Field(gt=0)  # typical with optics, for rack power budgets (a CPO switch: without its lasers)
    mgmt_port: str = "mgmt0"
    # a co-packaged-optics switch's external laser modules (FRUs); left out of the dump when unset
    lasers: LaserModules | None = Field(default=None, exclude_if=lambda v: v is None)
    # switching planes inside the box: every port's lanes go one to each of `planes` ASICs, so the box
    # is `planes` switches of `count` x (speed / planes) ports, one per network plane, each port's lane k
    # in plane k (Quantum-X800 Q3450-LD: 4). A host port on it runs planarized (one lane per plane), and
    # each plane is an InfiniBand subnet of its own. Left out of the dump when unset
    planes: int | None = Field(default=None, ge=2, le=8, exclude_if=lambda v: v is None)
    price: Price

    @property
    def ports(self) -> int:
        return sum(g.count for g in self.port_groups)

    @property
    def draw_w(self) -> float:
        """What the switch draws in its rack: its own power plus its external laser modules'."""
        return self.power_w + (self.lasers.count * self.lasers.power_w if self.lasers else 0.0)

    def port_names(self) -> list[str]:
        """Every front-panel port's name, in port order (cages numbered on across the groups)."""
        out: list[str] = []
        n = lane = base = 0
        for g in self.port_groups:
            for i in range(g.count):
                out.append(
                    g.name.format(
                        n=n + 1,
                        i=n,
                        cage=base + i // g.ports_per_cage + 1,
                        sub=i % g.ports_per_cage + 1,
                        s=i % g.ports_per_cage,
                        lane=lane,
                    )
                )
                n += 1
                lane += g.lanes or 1
            base += g.count // g.ports_per_cage
        return out

    def breakout_for(self, speed: int) -> int:
        """Logical ports per physical port the model splits into at `speed` (1: no breakout there)."""
        return max((g.breakout.get(speed, 1) for g in self.port_groups), default=1)

    def broken_out(self, speed: int) -> Switch:
        """The model as its ports run split for `speed`: what the fabric wires, cables and prices (the
        same chassis, SKU and price; port names follow the lanes, as the NOS renames split ports)."""
        groups = [g.broken_out(speed) if speed in g.breakout else g for g in self.port_groups]
        n = self.breakout_for(speed)
        return self.model_copy(
            update={"port_groups": groups, "description": f"{self.description} (ports split {n} x {speed}G)"}
        )

    @model_validator(mode="after")
    def _planes_split_lanes(self) -> Switch:
        if self.planes is not None and any(g.lanes is None or g.lanes % self.planes for g in self.port_groups):
            raise ValueError(
                f"planes: {self.planes} ASICs each take one share of every port's lanes; give every port group "
                f"lanes that {self.planes} divides"
            )
        return self

    @model_validator(mode="after")
    def _unique_ports(self) -> Switch:
        names = self.port_names()
        if len(set(names)) != len(names):
            dup = next(x for i, x in enumerate(names) if x in names[:i])
            raise ValueError(
                f"port_groups: two ports are named {dup!r}; the name patterns must tell every port "
                "apart (use {n}, {i}, {lane}, or {cage} with {sub} or {s})"
            )
        return self


class Nic(_Strict):
    description: str
    ports: int = Field(ge=1)
    speed_gbps: int = Field(gt=0)
    speeds_gbps: list[int] = Field(default_factory=list)
    connector: str
    # SerDes lanes per port at the native speed (ConnectX-8 800G: 4 x 200G); omitted, a link's lane rate
    # is its switch port's
    lanes: int | None = Field(default=None, ge=1)
    # port speeds on Ethernet when they are fewer than on InfiniBand (ConnectX-8: 800G is XDR only; a
    # port runs at most 400GbE); omitted, a port runs every speed above on either protocol
    ethernet_speeds_gbps: list[int] | None = Field(default=None, exclude_if=lambda v: v is None)
    # the PCI device id NVIDIA's Network Operator selects the card by (NicConfigurationTemplate
    # nicSelector.nicType, e.g. "1023" for a ConnectX-8); left out of the dump when unset
    pci_device_id: str | None = Field(default=None, exclude_if=lambda v: v is None)
    is_dpu: bool = False
    price: Price

    @property
    def lane_gbps(self) -> int | None:
        """The lane rate: native speed over lanes; None when the catalog does not give the lanes."""
        return None if self.lanes is None else self.speed_gbps // self.lanes


class Cpu(_Strict):
    description: str
    cores: int = Field(ge=1)
    price: Price


class Memory(_Strict):
    description: str
    gb_per_dimm: int = Field(ge=1)
    price: Price  # per DIMM


class ServerConfig(_Strict):
    """A server's configurable parts. The playbook's chassis choices (CPU, RAM, DPUs) live here."""

    cpu: str
    memory_gb: int = Field(ge=64)
    frontend_nic: str
    frontend_nic_count: int = Field(default=1, ge=0, le=4)
    nvme_tb: float = Field(default=0, ge=0)


class SystemCages(_Strict):
    """The chassis' own cages the backend ports are brought out to, instead of each NIC's own cage: on
    a DGX H100/B200 the eight ConnectX-7 sit on two mezzanine boards, cabled to four twin-port OSFP
    cages on the rear panel, so one twin transceiver serves two NICs (two rails)."""

    connector: str  # the cage type, e.g. osfp-rhs: a flat-top module under the cage's riding heat sink
    ports: list[list[int]] = Field(min_length=1)  # the backend ports ({i}) in each cage, cage by cage


class BackendPorts(_Strict):
    """A server's backend NICs. Every port of every NIC is one backend port (one rail); `cages` says
    which ports share a chassis cage when the NICs' ports are not in cages of their own."""

    nic: str
    count: int = Field(ge=1, le=16)
    name: IndexPattern = "mlx5_{i}"  # the RDMA device of port i (NCCL_IB_HCA names these)
    cages: SystemCages | None = None
    # the Linux interface of port i, which the host's netplan addresses (RoCE): the OS image names it (a
    # systemd .link file or udev rule per PCI address, which the catalog cannot know); out of plan.json unset
    netdev: IndexPattern | None = Field(default=None, exclude_if=lambda v: v is None)


class ServerModel(_Strict):
    description: str
    gpus: int = Field(ge=0)
    gpu_model: str = ""
    rack_units: int = Field(ge=1)
    power_kw: float = Field(gt=0)
    cpu_sockets: int = Field(default=2, ge=1)
    backend: BackendPorts | None = None
    frontend_port_name: IndexPattern = "eth{i}"
    # the frontend-NIC ports (frontend_port_name names) that join a dedicated storage fabric
    # (storage.network: dedicated); empty: the model has none, and such a design is refused
    storage_ports: list[str] = Field(default_factory=list, exclude_if=lambda v: not v)  # out of plan.json when empty
    bmc_port: str = "bmc"
    defaults: ServerConfig
    price: Price  # the chassis with GPUs and baseboard, without the configurable parts above
    nvme_per_tb: Price | None = None  # local NVMe, priced per TB so `compute.config.nvme_tb` is a knob


class StorageModel(_Strict):
    """A storage server sold with empty bays: the design's capacity target decides how many drives
    go in (the playbook: start small and leave bays, ports and power for expansion)."""

    description: str
    rack_units: int = Field(ge=1)
    power_kw: float = Field(gt=0)
    drive_bays: int = Field(ge=1)
    drive_tb: float = Field(gt=0)  # one NVMe drive, decimal TB
    drive_price: Price
    usable_fraction: float = Field(gt=0, le=1)  # after erasure coding / protection
    drive_read_gbps: float = Field(default=6.0, gt=0)  # sequential read of one drive, GB/s
    throughput_gbps: float = Field(gt=0)  # large-block read a server's software stack delivers, GB/s
    nic: str
    nic_count: int = Field(default=1, ge=1)
    frontend_port_name: IndexPattern = "eth{i}"
    bmc_port: str = "bmc"
    price: Price  # chassis with CPUs and RAM, without drives and NICs (priced from their own entries)


class License(_Strict):
    description: str
    unit: Literal["endpoint", "gpu_year", "tb", "switch", "server"]
    price: Price


class Rack(_Strict):
    """An empty rack enclosure; its geometry is what the floor plan and cable routing use."""

    description: str
    units: int = Field(ge=10, le=60)
    width_mm: int = Field(ge=400)
    depth_mm: int = Field(ge=600)
    price: Price


def _unset(v: object) -> bool:
    return v is None


class Pdu(_Strict):
    """A rack power distribution unit, a rack system's power shelf, or an 800 VDC power sidecar. All are
    managed devices: their network port joins the OOB network.

    A power sidecar (placement in_row) is a rack-sized power rack standing on a row position of its own
    beside the compute racks it feeds: it converts the facility's AC (or medium voltage) to `output_vdc`
    and feeds up to `racks` compute racks over DC busway. A power shelf that takes `input_vdc` (800 VDC
    from sidecars) is what lets a rack system run on them. The fields below are left out of the dump when
    unset, so plan.json of designs whose PDUs and shelves name none is unchanged."""

    description: str
    capacity_kw: float = Field(gt=0)  # continuous load one PDU may carry (already derated)
    rack_units: int = Field(default=0, ge=0)  # 0 = vertical, mounted in the rear zero-U channel
    mgmt_port: str = "net"
    # rack: in a rack (a PDU or shelf); in_row: a power sidecar on a row position of its own
    placement: Literal["rack", "in_row"] = Field(default="rack", exclude_if=lambda v: v == "rack")
    input_vdc: int | None = Field(default=None, gt=0, exclude_if=_unset)  # a DC-input shelf: the DC it takes
    output_vdc: int | None = Field(default=None, gt=0, exclude_if=_unset)  # the DC it puts out (busbar, busway)
    psus: int | None = Field(default=None, ge=1, exclude_if=_unset)  # a shelf's or sidecar's PSUs (rectifiers)
    psu_kw: float | None = Field(default=None, gt=0, exclude_if=_unset)  # one PSU's rating
    racks: int | None = Field(default=None, ge=1, exclude_if=_unset)  # a sidecar: compute racks its outputs feed
    weight_kg: float | None = Field(default=None, gt=0, exclude_if=_unset)  # a sidecar: as it loads the floor
    # its AC input (a PDU, or a rack system's AC power shelf): the whip's line voltage, rated current and
    # phases, and whips per unit; the NetBox power feeds of the AC racks are made of these
    input_vac: int | None = Field(default=None, gt=0, exclude_if=_unset)
    input_a: int | None = Field(default=None, gt=0, exclude_if=_unset)
    input_phases: Literal[1, 3] | None = Field(default=None, exclude_if=_unset)
    whips: int = Field(default=1, ge=1, le=8, exclude_if=lambda v: v == 1)
    price: Price

    @model_validator(mode="after")
    def _sidecar_fields(self) -> Pdu:
        if (self.psus is None) != (self.psu_kw is None):
            raise ValueError("psus and psu_kw: give both (the PSUs and one PSU's rating) or neither")
        if self.placement == "in_row":
            missing = [f for f in ("output_vdc", "racks", "weight_kg") if getattr(self, f) is None]
            if missing:
                raise ValueError(
                    f"an in_row power sidecar needs {', '.join(missing)} (the DC it puts out, the compute "
                    "racks it feeds, its weight on the floor)"
                )
            if self.rack_units:
                raise ValueError("an in_row power sidecar stands on a row position of its own: rack_units must be 0")
        if len({self.input_vac is None, self.input_a is None, self.input_phases is None}) != 1:
            raise ValueError("input_vac, input_a and input_phases: give all three (the AC whip) or none")
        return self

    def whip_kw(self) -> float | None:
        """One whip's nominal power (kW): V x A, times sqrt(3) when three-phase (V line to line)."""
        if self.input_vac is None or self.input_a is None:
            return None
        return self.input_vac * self.input_a * (math.sqrt(3) if self.input_phases == 3 else 1) / 1000


class Cdu(_Strict):
    """A coolant distribution unit: the heat exchanger and pumps between the facility water and the racks'
    liquid loop. In-row units stand on a rack position of the row and serve the racks beside them; in-rack
    units take rack units in the one rack they serve. CDUs are managed devices: their network port joins
    the OOB network."""

    description: str
    placement: Literal["in_row", "in_rack"]
    capacity_kw: float = Field(gt=0)  # liquid heat one unit removes at its rated facility-water temperature
    power_kw: float = Field(ge=0)  # its pumps' and controls' draw
    rack_units: int = Field(default=0, ge=0)  # in-rack units only; an in-row unit takes a whole position
    weight_kg: float = Field(gt=0)  # filled, as it loads the floor
    mgmt_port: str = "net"
    price: Price

    @model_validator(mode="after")
    def _units_by_placement(self) -> Cdu:
        if self.placement == "in_rack" and self.rack_units < 1:
            raise ValueError("an in_rack CDU needs rack_units (the units it takes in the rack)")
        if self.placement == "in_row" and self.rack_units:
            raise ValueError("an in_row CDU stands on a row position of its own: rack_units must be 0")
        return self


Media = Literal["dac", "acc", "aoc", "mmf", "smf", "cat6"]
COPPER: frozenset[str] = frozenset({"dac", "acc"})
FIBER: frozenset[str] = frozenset({"aoc", "mmf", "smf"})


class StockedLength(_Strict):
    """One orderable length of a cable family: its own SKU and its own price."""

    m: float = Field(gt=0)
    sku: str
    price: Price


class CableEnd(_Strict):
    """A plug that goes straight into a port cage (direct-attach cables: DAC, ACC, AOC, RJ45 patch cords)."""

    fits: list[str] = Field(min_length=1)  # cage connectors it plugs into (a QSFP28 plug fits a QSFP56 cage)
    ports: int = Field(default=1, ge=1, le=2)  # switch ports the plug serves: 2 for a twin-port OSFP plug


class Cable(_Strict):
    """A cable family sold in stocked lengths. `direct` cables plug into cages at both ends (one
    `a_end`, `legs` x `b_end`: legs 2 is a splitter); `fiber` cables join two transceivers."""

    description: str
    media: Media
    # fanout: a short cable from a broken-out optic's connector (fiber_connector) to `legs` connectors
    # of kind leg_connector, one per port of the split cage, bought one per such cage; each leg then
    # meets a link's own fiber (a duplex patch cord) at a panel in the rack
    kind: Literal["direct", "fiber", "fanout"]
    protocols: list[Literal["infiniband", "ethernet"]] = Field(min_length=1)
    speeds_gbps: list[int] = Field(min_length=1)  # per port (per leg)
    reach_m: float = Field(gt=0)
    diameter_mm: float = Field(gt=0)  # outer diameter, for tray fill
    a_end: CableEnd | None = None  # direct cables
    b_end: CableEnd | None = None
    # 2: a splitter. A direct splitter plugs a twin cage and two single cages; a fiber splitter joins one
    # connector of a twin transceiver to two single-port transceivers (NDR200: two lanes to each host)
    legs: int = Field(default=1, ge=1, le=8)
    fiber_connector: str | None = None  # fiber cables: mpo12-apc, lc-duplex, ...
    # fanout cables: the connector of each leg; left out of the dump when unset
    leg_connector: str | None = Field(default=None, exclude_if=lambda v: v is None)
    lane_gbps: list[int] = Field(default_factory=list)  # the lane rates it runs; empty: any
    lengths: list[StockedLength] = Field(min_length=1)

    @model_validator(mode="after")
    def _shape(self) -> Cable:
        if self.kind == "direct" and (self.a_end is None or self.b_end is None):
            raise ValueError("a direct cable needs a_end and b_end")
        if self.kind in ("fiber", "fanout") and not self.fiber_connector:
            raise ValueError(f"a {self.kind} cable needs fiber_connector")
        if (self.kind == "fanout") != (self.leg_connector is not None) or (self.kind == "fanout" and self.legs < 2):
            raise ValueError("leg_connector: a fanout cable (and only one) names its legs' connector and has 2+ legs")
        if self.kind != "fanout" and self.legs > 2:
            raise ValueError("legs: a direct or fiber splitter has 2 legs at most (a fanout has more)")
        ms = [x.m for x in self.lengths]
        if ms != sorted(set(ms)):
            raise ValueError("lengths must be listed shortest first, each once")
        return self


class Transceiver(_Strict):
    """A pluggable optic. `ports` is how many switch ports it serves (2 = twin-port OSFP, one fiber per port)."""

    description: str
    fits: list[str] = Field(min_length=1)
    ports: int = Field(default=1, ge=1, le=2)
    protocols: list[Literal["infiniband", "ethernet"]] = Field(min_length=1)
    speeds_gbps: list[int] = Field(min_length=1)
    media: Literal["mmf", "smf"]
    fiber_connector: str
    reach_m: float = Field(gt=0)
    power_w: float = Field(ge=0)
    lane_gbps: list[int] = Field(default_factory=list)  # the lane rates it runs (XDR optics: 200); empty: any
    # ports per cage it serves broken out -> the connector of each port's leg: a DR8 (MPO-16, 8 lanes)
    # in a cage split 8 ways serves 8 ports, each on a duplex LC leg of a fan-out cable (Cable kind
    # fanout) whose legs go to as many other devices. An optic with a breakout serves only broken-out
    # cages (its whole-port use is an entry of its own). Left out of the dump when empty
    breakout: dict[int, str] = Field(default_factory=dict, exclude_if=lambda v: not v)
    # speeds it runs only on one leg of a 1:2 splitter fiber: a single-port NDR optic runs 400G on a
    # straight fiber and 200G (NDR200, 2 of its 4 lanes) only on a splitter
    split_speeds_gbps: list[int] = Field(default_factory=list)
    # a switch's own co-packaged optics (Spectrum-6 SN6810): the entry names the fiber's end for the cable
    # plan, but nothing is bought or plugged, so it is counted in no transceiver total and on no BoM line.
    # Left out of the dump when false, so plan.json of a design without one is unchanged
    built_in: bool = Field(default=False, exclude_if=lambda v: not v)
    price: Price

    @model_validator(mode="after")
    def _split(self) -> Transceiver:
        if not set(self.split_speeds_gbps) <= set(self.speeds_gbps):
            raise ValueError("split_speeds_gbps: every split speed must also be in speeds_gbps")
        if any(n <= self.ports or n > 8 for n in self.breakout):
            raise ValueError(
                f"breakout: ports per broken-out cage must be more than the optic's own {self.ports} and at most 8"
            )
        return self


class MediaRule(_Strict):
    """Which media a link of these speeds or lane rates and protocols may use, whatever the catalog's parts
    could do: e.g. XDR (200G per lane, at 800G or 400G) has no multimode optics, no AOC and no passive
    copper that reaches. A rule names speeds, lane rates or both (then a link must match both)."""

    description: str
    protocols: list[Literal["infiniband", "ethernet"]] = Field(min_length=1)
    speeds_gbps: list[int] = Field(default_factory=list)  # per port, as links carry them; empty: any speed
    # the link's lane rate: its ports' native speed / lanes (the slower end's, if they differ); empty: any
    lane_gbps: list[int] = Field(default_factory=list)
    media: list[Media] = Field(min_length=1)  # allowed; everything else is never chosen
    max_dac_m: float | None = Field(default=None, gt=0)  # passive copper only up to this stocked length
    # copper (passive or active) whose plugs are flat-top (cage_forms: top flat) at both ends only up to this
    # stocked length: XDR's 1.1 m between two riding-heat-sink cages. Left out of the dump when unset
    max_copper_flat_m: float | None = Field(default=None, gt=0, exclude_if=lambda v: v is None)
    source: str = Field(min_length=3)
    date: str = Field(pattern=r"^\d{4}-\d{2}(-\d{2})?$")

    @model_validator(mode="after")
    def _shape(self) -> MediaRule:
        if self.max_dac_m is not None and "dac" not in self.media:
            raise ValueError("max_dac_m limits passive copper, but dac is not among the allowed media")
        if self.max_copper_flat_m is not None and not COPPER & set(self.media):
            raise ValueError("max_copper_flat_m limits copper, but neither dac nor acc is among the allowed media")
        if not self.speeds_gbps and not self.lane_gbps:
            raise ValueError("speeds_gbps: a rule names the speeds or the lane rates (lane_gbps) it governs")
        return self

    def matches(self, speed: int, lane: int | None, protocol: str) -> bool:
        return (
            protocol in self.protocols
            and (not self.speeds_gbps or speed in self.speeds_gbps)
            and (not self.lane_gbps or lane in self.lane_gbps)
        )

    def allows(self, media: str, longest_m: float, flat_both: bool = False) -> bool:
        """Whether a cable of this medium, its longest stocked length `longest_m`, keeps to the rule (the
        stocked length counts: a passive-copper limit is what the cable is, not what the route measured).
        `flat_both`: both of the link's cages take flat-top plugs (Catalog.flat_top)."""
        if media not in self.media:
            return False
        if media == "dac" and self.max_dac_m is not None and longest_m > self.max_dac_m + 1e-9:
            return False
        cap = self.max_copper_flat_m
        return not (flat_both and media in COPPER and cap is not None and longest_m > cap + 1e-9)


class CageForm(_Strict):
    """The form of a cage connector's plugs, as NVIDIA names OSFP's: finned top (IHS, integrated heat sink: the
    plug carries its own fins, for air-cooled switch cages) or flat top (RHS, riding heat sink: the cage's heat
    sink rides on the plug, in adapters, DGX system cages and liquid-cooled switches). Both kinds link to each
    other; a media rule may limit copper between two flat-top ends (MediaRule.max_copper_flat_m)."""

    description: str
    top: Literal["finned", "flat"]


class RackSystem(_Strict):
    """A rack-scale system bought as one rack (GB200/GB300 NVL72): compute trays, each a server of the
    plan (the `tray` server model: GPUs, CPUs, backend NICs, frontend DPUs, BMC), the NVLink switch trays
    wired to them by the rack's copper backplane, power shelves on the rack busbar and the in-rack
    management switches. Its parts name entries of the other tables, so each is described (ports,
    power, price) once."""

    description: str
    # the scale-up fabric the rack's switch trays and backplane carry (NVIDIA: NVLink; AMD Helios: UALink);
    # the nvlink_* fields below describe it whichever it is. Left out of the dump at its default, so
    # plan.json of an NVLink rack is unchanged.
    scale_up: Literal["nvlink", "ualink"] = Field(default="nvlink", exclude_if=lambda v: v == "nvlink")
    tray: str  # servers: the compute tray model
    trays: int = Field(ge=1, le=72)
    nvlink_switch: str  # switches: the NVLink switch tray (technology nvlink)
    nvlink_switches: int = Field(ge=1)
    # the backplane: NVLink links from the GPUs to the switch trays, and the copper pairs that carry them;
    # listed per rack in the cable outputs as internal (not routed, not in any tray fill)
    nvlink_links: int = Field(ge=1)
    nvlink_cables: int = Field(ge=1)
    # NVLink ports of one GPU (NVLink 5 on Blackwell: 18): every one meets a switch tray port
    nvlink_ports_per_gpu: int = Field(ge=1)
    power_shelf: str  # pdus: one power shelf (capacity_kw, rack_units, mgmt_port)
    power_shelves: int = Field(ge=1)
    # the voltage of the rack's busbar (the shelves' output), for the busbar current I = P / V; left out of
    # the dump when unset, so plan.json of a rack system without it is unchanged
    busbar_vdc: int | None = Field(default=None, gt=0, exclude_if=_unset)
    # the facility water the rack's liquid loop takes (a Kyber-class rack: 45 C); left out of the dump when unset
    coolant_inlet_c: float | None = Field(default=None, gt=0, le=80, exclude_if=_unset)
    mgmt_switch: str  # switches: the in-rack management switches, the rack's out-of-band access switches
    mgmt_switches: int = Field(ge=1, le=4)
    rack_units: int = Field(ge=10, le=60)  # the rack's height, e.g. an MGX 48U rack
    weight_kg: float = Field(gt=0)
    liquid_fraction: float = Field(gt=0, le=1)  # share of the rack's heat taken by the liquid loop
    su_racks: int = Field(default=8, ge=1)  # racks per scalable unit (NVIDIA's SuperPOD: 8)
    price: Price  # the rack as sold, with its trays, switch trays, shelves and backplane

    @property
    def scale_up_name(self) -> str:
        """The scale-up fabric as a person names it in sheets and the BoM: NVLink or UALink."""
        return {"nvlink": "NVLink", "ualink": "UALink"}[self.scale_up]

    def power_kw(self, catalog: Catalog) -> float:
        """The rack's draw: its trays, NVLink switch trays and management switches (the shelves convert)."""
        tray = catalog.servers[self.tray].power_kw * self.trays
        sw = (
            catalog.switches[self.nvlink_switch].power_w * self.nvlink_switches
            + catalog.switches[self.mgmt_switch].power_w * self.mgmt_switches
        )
        return round(tray + sw / 1000, 3)

    def liquid_kw(self, catalog: Catalog) -> float:
        return round(self.power_kw(catalog) * self.liquid_fraction, 3)

    def air_kw(self, catalog: Catalog) -> float:
        return round(self.power_kw(catalog) - self.liquid_kw(catalog), 3)

    def units_used(self, catalog: Catalog) -> int:
        return (
            catalog.servers[self.tray].rack_units * self.trays
            + catalog.switches[self.nvlink_switch].rack_units * self.nvlink_switches
            + catalog.pdus[self.power_shelf].rack_units * self.power_shelves
            + catalog.switches[self.mgmt_switch].rack_units * self.mgmt_switches
        )


class Catalog(_Strict):
    version: int = 1
    notes: str = ""
    switches: dict[str, Switch]
    nics: dict[str, Nic]
    cpus: dict[str, Cpu]
    memory: dict[str, Memory]
    servers: dict[str, ServerModel]
    storage_servers: dict[str, StorageModel]
    licenses: dict[str, License] = Field(default_factory=dict)
    racks: dict[str, Rack] = Field(default_factory=dict)
    pdus: dict[str, Pdu] = Field(default_factory=dict)
    cables: dict[str, Cable] = Field(default_factory=dict)
    transceivers: dict[str, Transceiver] = Field(default_factory=dict)
    media_rules: dict[str, MediaRule] = Field(default_factory=dict)
    # left out of the dump when empty, so plan.json of a design without a rack system is unchanged
    rack_systems: dict[str, RackSystem] = Field(default_factory=dict, exclude_if=lambda v: not v)
    cdus: dict[str, Cdu] = Field(default_factory=dict, exclude_if=lambda v: not v)
    cage_forms: dict[str, CageForm] = Field(default_factory=dict, exclude_if=lambda v: not v)

    def flat_top(self, connector: str) -> bool:
        """Whether plugs of this cage connector are flat-top (RHS); a connector cage_forms does not name is not."""
        form = self.cage_forms.get(connector)
        return form is not None and form.top == "flat"

    def media_rule(self, speed: int, lane: int | None, protocol: str) -> tuple[str, MediaRule] | None:
        """The rule (key, rule) governing links of this speed, lane rate and protocol, if any (at most one
        does: the catalog refuses rules that overlap)."""
        for key, r in self.media_rules.items():
            if r.matches(speed, lane, protocol):
                return key, r
        return None

    def switch_at(self, key: str, speed: int) -> str:
        """The key of switch `key` as it runs at `speed`: itself, or its breakout entry (`with_switch_at`)."""
        n = self.switches[key].breakout_for(speed)
        return key if n == 1 else f"{key}@{n}x{speed}G"

    def with_switch_at(self, key: str, speed: int) -> Catalog:
        """This catalog plus the breakout entry `switch_at` names, when `key` splits its ports at `speed`.
        The entry is a switch of its own (the split port table) so every stage and the plan's catalog
        read the ports the fabric wired, without passing a speed along with each model key."""
        derived = self.switch_at(key, speed)
        if derived == key or derived in self.switches:
            return self
        return self.model_copy(update={"switches": {**self.switches, derived: self.switches[key].broken_out(speed)}})

    def nic_at_planes(self, key: str, planes: int) -> str:
        """The key of NIC `key` with every port broken out into `planes` ports (`with_nic_planes`)."""
        nic = self.nics[key]
        return f"{key}@{planes}x{nic.speed_gbps // planes}G"

    def with_nic_planes(self, server: str, planes: int) -> Catalog:
        """This catalog with server model `server` as its backend NIC ports run broken out into `planes`
        ports each (backend.plane_split: nic_port): a NIC entry of its own for the split card (the same
        card and price; ports x planes, speed and lanes / planes) and the server under the same key with
        that NIC, port k x planes + p being port k's leg in plane p, the legs of a port in its one cage.
        Every stage then reads the ports the fabric wires, as with a switch's breakout (`with_switch_at`).
        The caller has checked the split (validation.check_plane_split)."""
        srv = self.servers[server]
        assert srv.backend is not None and srv.backend.cages is None
        nic = self.nics[srv.backend.nic]
        assert nic.lanes is not None and nic.lanes % planes == 0
        nic_key = self.nic_at_planes(srv.backend.nic, planes)
        speed = nic.speed_gbps // planes
        split = nic.model_copy(
            update={
                "description": f"{nic.description} (each port broken out {planes} x {speed}G, one per plane)",
                "ports": nic.ports * planes,
                "speed_gbps": speed,
                "speeds_gbps": [],
                "lanes": nic.lanes // planes,
                "ethernet_speeds_gbps": None,
            }
        )
        n = nic.ports * srv.backend.count
        cages = SystemCages(connector=nic.connector, ports=[[c * planes + p for p in range(planes)] for c in range(n)])
        backend = srv.backend.model_copy(update={"nic": nic_key, "cages": cages})
        return self.model_copy(
            update={
                "nics": {**self.nics, nic_key: split},
                "servers": {**self.servers, server: srv.model_copy(update={"backend": backend})},
            }
        )

    @model_validator(mode="after")
    def _references_exist(self) -> Catalog:
        rules = list(self.media_rules.items())
        for n, (key, r) in enumerate(rules):
            for other, o in rules[:n]:
                if (
                    _overlap(r.protocols, o.protocols)
                    and _overlap(r.speeds_gbps, o.speeds_gbps, True)
                    and _overlap(r.lane_gbps, o.lane_gbps, True)
                ):
                    raise ValueError(
                        f"media_rules.{key}: links it governs are already governed by media_rules."
                        f"{other} (the same protocol, and speeds and lane rates that meet); one "
                        "rule per speed, lane rate and protocol"
                    )
        for key, s in self.servers.items():
            if s.backend and s.backend.nic not in self.nics:
                raise ValueError(f"servers.{key}.backend.nic: unknown NIC {s.backend.nic!r}")
            if s.backend and s.backend.cages:
                _check_cages(
                    f"servers.{key}.backend.cages.ports",
                    s.backend.cages,
                    self.nics[s.backend.nic].ports * s.backend.count,
                )
            d = s.defaults
            if d.cpu not in self.cpus:
                raise ValueError(f"servers.{key}.defaults.cpu: unknown CPU {d.cpu!r}")
            if d.frontend_nic not in self.nics:
                raise ValueError(f"servers.{key}.defaults.frontend_nic: unknown NIC {d.frontend_nic!r}")
            if d.nvme_tb and s.nvme_per_tb is None:
                raise ValueError(f"servers.{key}.nvme_per_tb: needed to price defaults.nvme_tb")
        for key, st in self.storage_servers.items():
            if st.nic not in self.nics:
                raise ValueError(f"storage_servers.{key}.nic: unknown NIC {st.nic!r}")
        for key, rs in self.rack_systems.items():
            _check_rack_system(self, key, rs)
        return self


def _check_rack_system(cat: Catalog, key: str, rs: RackSystem) -> None:
    """A rack system's parts exist and are of their kind, and the rack holds and can power them."""
    at = f"rack_systems.{key}"
    tray = cat.servers.get(rs.tray)
    if tray is None or not tray.gpus or tray.backend is None:
        raise ValueError(f"{at}.tray: {rs.tray!r} is not a GPU server model with backend NICs in servers")
    for field_, sw_key, tech in (
        ("nvlink_switch", rs.nvlink_switch, rs.scale_up),
        ("mgmt_switch", rs.mgmt_switch, "ethernet"),
    ):
        sw = cat.switches.get(sw_key)
        if sw is None or sw.technology != tech:
            raise ValueError(f"{at}.{field_}: {sw_key!r} is not a switch of technology {tech} in switches")
    if rs.power_shelf not in cat.pdus:
        raise ValueError(f"{at}.power_shelf: unknown power shelf {rs.power_shelf!r} (a pdus entry)")
    if cat.pdus[rs.power_shelf].placement != "rack":
        raise ValueError(
            f"{at}.power_shelf: {rs.power_shelf!r} is a power sidecar on the floor, not a shelf in the rack"
        )
    ports = cat.switches[rs.nvlink_switch].ports * rs.nvlink_switches
    gpu_links = rs.trays * tray.gpus * rs.nvlink_ports_per_gpu
    if gpu_links != ports:
        per_tray = tray.gpus * rs.nvlink_ports_per_gpu
        fit = f"{ports // per_tray} trays" if ports % per_tray == 0 else "a tray count whose GPU links fill them"
        raise ValueError(
            f"{at}.trays: {rs.trays} trays x {tray.gpus} GPUs ({rs.tray}) x {rs.nvlink_ports_per_gpu} NVLink "
            f"ports is {gpu_links} GPU links, but its {rs.nvlink_switches} x {rs.nvlink_switch} have {ports} NVLink "
            f"ports: in one NVLink domain every GPU port meets one switch port; {fit} fill them"
        )
    if rs.nvlink_links != ports:
        raise ValueError(
            f"{at}.nvlink_links: {rs.nvlink_links} backplane links, but {rs.nvlink_switches} x "
            f"{rs.nvlink_switch} have {ports} NVLink ports; every port is one backplane link"
        )
    if (used := rs.units_used(cat)) > rs.rack_units:
        raise ValueError(f"{at}.rack_units: its parts take {used}U, more than the {rs.rack_units}U rack")
    cap = cat.pdus[rs.power_shelf].capacity_kw * rs.power_shelves
    if (kw := rs.power_kw(cat)) > cap + 1e-9:
        raise ValueError(
            f"{at}.power_shelves: {rs.power_shelves} x {rs.power_shelf} supply {cap:g} kW, less than "
            f"the rack's {kw:g} kW"
        )


def _overlap(a: list[Any], b: list[Any], empty_is_all: bool = False) -> bool:
    if empty_is_all and (not a or not b):
        return True
    return bool(set(a) & set(b))


def _check_cages(field: str, cages: SystemCages, ports: int) -> None:
    """Every backend port sits in exactly one cage, and every cage holds as many ports as a plug serves."""
    seen = sorted(i for cage in cages.ports for i in cage)
    if seen != list(range(ports)):
        raise ValueError(
            f"{field}: must list each backend port 0..{ports - 1} exactly once "
            f"(nic ports x count = {ports}), got {seen}"
        )
    sizes = {len(cage) for cage in cages.ports}
    if len(sizes) > 1 or not sizes <= {1, 2, 4, 8}:
        raise ValueError(
            f"{field}: every cage must hold the same number of ports, 1, 2, 4 or 8 (a plug serves "
            f"one or two ports, a broken-out optic up to 8), got cages of {sorted(sizes)}"
        )


# The shipped designs and the parts catalog are package data: generators/designs is the repository's
# designs/ (a symlink in the checkout, its files in an installed wheel), so a pip-installed railyard
# finds its catalog as a checkout does.
SHIPPED = (Path(__file__).resolve().parents[1] / "designs").resolve()
DEFAULT_CATALOG = SHIPPED / "catalog.yaml"


def load_catalog(
    path: Path = DEFAULT_CATALOG,
    overlay: dict[str, dict[str, dict[str, Any]]] | None = None,
    design_src: SourceMap | None = None,
) -> Catalog:
    """The catalog at `path`, with a design's `catalog:` overlay merged over it (yamlload.deep_merge:
    mappings field by field, lists replaced). A bad entry is reported at the line that set it: the
    design's for an overlay field (as `catalog.<table>...`), the catalog file's otherwise."""
    data, src = load_yaml_file(path)
    over_src: SourceMap = {}
    if overlay:
        design_src = design_src or {}
        over_src = {k[1:]: v for k, v in design_src.items() if k[:1] == ("catalog",) and len(k) > 1}
        for k, v in list(over_src.items()):  # `--set` records only the leaf it set, not the part it made
            for n in range(1, len(k)):
                over_src.setdefault(k[:n], v)
        base = data if isinstance(data, dict) else {}
        data = deep_merge(base, _resourced(overlay, base, over_src, ()))
        # a list or value the overlay replaced no longer has the catalog file's lines inside it
        gone = _replaced(overlay, ())
        src = {k: v for k, v in src.items() if not any(len(k) > len(g) and k[: len(g)] == g for g in gone)}
    try:
        return Catalog.model_validate(data)
    except ValidationError as exc:
        problems: list[Problem] = []
        for err in exc.errors():
            p = _problem(err, src, over_src, path)
            new = p.field.split(".")[:3]
            if err["type"] == "missing" and p.field.startswith("catalog.") and tuple(new[1:]) not in src:
                # one problem per incomplete new part, listing what it lacks, not one per field
                head = ".".join(new)
                old = next((i for i, q in enumerate(problems) if q.field == head), None)
                what = p.field.removeprefix(head + ".")
                if old is None:
                    problems.append(Problem(head, f"a new part lacks {what}", p.hint, p.where))
                else:
                    problems[old] = Problem(head, f"{problems[old].message}, {what}", p.hint, p.where)
                continue
            problems.append(p)
        raise DesignError(problems) from None


def _resourced(over: Any, base: Any, src: SourceMap, path: tuple[str, ...]) -> Any:
    """The overlay, where a price's figure is changed without a `source`: the source then says where the
    figure was set and what the catalog's source was, so the BoM never shows a new price under the old
    figure's source (`--set catalog.switches.QM9700.price.usd=21000` is a what-if without a source)."""
    if not isinstance(over, dict) or not isinstance(base, dict):
        return over
    out = {k: _resourced(v, base.get(k), src, (*path, str(k))) for k, v in over.items()}
    if (
        "usd" in over
        and "source" not in over
        and isinstance(base.get("source"), str)
        and over["usd"] != base.get("usd")
    ):
        at = src.get((*path, "usd"), "the design")
        out["source"] = f"{at}: no source given (the catalog's ${base.get('usd')}: {base['source']})"
    return out


def _replaced(over: Any, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    """Paths where the overlay replaces the catalog's value whole (anything but a mapping)."""
    if not isinstance(over, dict):
        return [path]
    return [p for k, v in over.items() for p in _replaced(v, (*path, str(k)))]


def _deepest(src: SourceMap, loc: tuple[str, ...]) -> tuple[int, str]:
    """How many leading parts of `loc` have a recorded line, and that line."""
    for n in range(len(loc), 0, -1):
        if loc[:n] in src:
            return n, src[loc[:n]]
    return 0, ""


def _problem(err: Any, src: SourceMap, over_src: SourceMap, path: Path) -> Problem:
    loc = tuple(str(p) for p in err["loc"])
    msg = err["msg"].removeprefix("Value error, ")
    rule = False  # a rule across fields of one part, or across tables
    # the cross-table rule (_references_exist) names its field at the start of the message
    if not loc and (m := re.match(r"([a-z_]+\.[^:\s]+): (.*)", msg)):
        loc, msg, rule = tuple(m.group(1).split(".")), m.group(2), True
    elif loc and err["type"] == "value_error" and (m := re.match(r"([a-z_]+): (.*)", msg)):  # a part's own rule
        loc, msg, rule = (*loc, m.group(1)), m.group(2), True
    depth, at = _deepest(over_src, loc)
    in_design = depth > 0 and depth >= _deepest(src, loc)[0]  # a tie: the design's value won the merge
    if rule and not in_design and len(loc) > 2 and loc[:2] in over_src:
        # the rule's field is the catalog's, but the design changed the part: blame what it wrote
        touched = sorted(k for k in over_src if len(k) > 2 and k[:2] == loc[:2])
        if touched:
            mine = touched[0]
            return Problem(
                "catalog." + ".".join(mine),
                f"makes {'.'.join(loc)} wrong: {msg}",
                "change it back, or set the part's other fields to match in the same overlay",
                over_src[mine],
            )
    field = ".".join(loc) or "(catalog)"
    if err["type"] == "extra_forbidden":
        msg, fix = "unknown field", did_you_mean(Catalog, loc) + f"{path.name} shows every field of a part"
    elif err["type"] == "missing" and in_design and loc[:2] not in src:
        close = difflib.get_close_matches(loc[1], [k[1] for k in src if len(k) == 2 and k[0] == loc[0]], n=1)
        fix = (
            f"{loc[1]} is not in {path.name}'s {loc[0]}, so it is a new part and must be complete: copy an "
            f"entry of {path.name} and change it" + (f"; or did you mean {close[0]!r}?" if close else "")
        )
    elif err["type"] == "missing" and in_design:
        fix = (
            "add this field: an override replaces a list (or a value the catalog leaves empty) whole, so "
            "what it writes there must be complete"
        )
    elif rule and in_design and msg.startswith("unknown "):
        fix = "name a part the catalog has, or add that part in the same overlay"
    elif rule and in_design:
        fix = "change it (the message says what fits), or set the part's other fields to match in the same overlay"
    else:
        msg, fix = _message(
            err, msg, f"write it as {path.name} writes this field" if in_design else "fix the catalog entry"
        )
    if in_design:
        return Problem(f"catalog.{field}", msg, fix, at)
    return Problem(field, msg, fix, where(src, loc))


def _message(err: Any, msg: str, fix: str) -> tuple[str, str]:
    loc = err["loc"]
    if err["type"] == "literal_error" and len(loc) == 3 and loc[0] == "switches" and loc[2] == "os":
        return (
            f"no renderer for switch OS {err['input']!r}",
            f"use one of the registered network OSes: {', '.join(NETWORK_OSES)}",
        )
    if err["type"] == "string_type" and isinstance(err["input"], datetime.date):  # YAML reads 2026-11-05 as a date
        return msg, f'quote it: "{err["input"]}"'
    ctx = err.get("ctx") or {}
    return msg, f"use one of {ctx['expected']}" if "expected" in ctx else fix
