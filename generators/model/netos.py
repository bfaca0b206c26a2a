"""What railyard knows of each network operating system, as data: one row per OS (Arista AVD keeps its
platform facts the same way). The design checks, the network plan and the renderers read these rows;
the files come from the row's renderer module under ``generators.vendors``.

A new network OS is one row here plus its renderer module (an InfiniBand OS reuses ``infiniband``: the
subnet manager programs those switches, railyard renders no per-switch config for them).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from generators.model.vocabulary import Duty


@dataclass(frozen=True, slots=True)
class NetworkOs:
    name: str  # the catalog's switch `os`; also the design's frontend.vendor value when it serves the frontend
    serves: frozenset[Duty]  # where its switches can stand
    renderer: str  # the module of generators.vendors that writes its switches' files
    # frontend: the fabric and server port MTU when frontend.mtu is unset (the OS's jumbo MTU); RoCE
    # backend: the switch ports' MTU
    mtu: int | None = None
    # frontend leaves source VXLAN from a loopback of their own, planned beside the router-id loopback
    vtep_loopback: bool = False
    # option 82 circuit-id its DHCP relay stamps, over {switch} (hostname) and {port}
    circuit_id: str = "{switch}:{port}"
    summary: str = ""  # the compile summary's "frontend vendor" / "backend configs" value
    # RoCE backend: what the switch OS could do that railyard leaves unconfigured (the summary says so)
    roce_unconfigured: str = ""
    # the Python package its renderer needs beyond railyard's own, and the pip extra that installs it
    requires: str = ""
    extra: str = ""
    # Zero-touch provisioning (generators.views.ztp, docs/howto/ztp.md): the files its renderer writes per
    # switch (under <network>/<switch>/), the DHCP option whose URL starts its ZTP, the file under
    # ztp/<switch>/ that URL names, and whether a bare switch installs it through ONIE. An OS with no
    # ztp_option gets its address reservation and nothing else.
    config_files: tuple[str, ...] = ()
    ztp_option: int | None = None
    ztp_entry: str = ""
    onie: bool = False

    def missing(self) -> str:
        """The package this OS's renderer needs and this Python lacks ("" when none)."""
        if not self.requires:
            return ""
        try:
            return "" if importlib.util.find_spec(self.requires) is not None else self.requires
        except (ImportError, ValueError):
            return self.requires

    def circuit_id_of(self, switch: str, port: str) -> str:
        return self.circuit_id.format(switch=switch, port=port)

    @property
    def circuit_id_format(self) -> str:
        """The circuit-id's shape for people (Kea's user-context): "hostname:port" or "port"."""
        return self.circuit_id_of("hostname", "port")


NETWORK_OSES: dict[str, NetworkOs] = {
    row.name: row
    for row in (
        NetworkOs(
            name="sonic",
            serves=frozenset({Duty.FRONTEND, Duty.ROCE, Duty.OOB_ACCESS, Duty.OOB_AGGREGATION}),
            renderer="sonic",
            mtu=9100,
            # dhcrelay runs with ``-a %h:%p`` (hostname:port alias; each port's alias is set to its name)
            circuit_id="{switch}:{port}",
            summary="SONiC (config_db.json + frr.conf)",
            config_files=("config_db.json", "frr.conf"),
            # SONiC ZTP reads the ZTP JSON's URL from option 67 (ztp_json_url); its option 239 (a
            # provisioning script) is ignored when 67 is there. SONiC ZTP design, "3.4 DHCP Options":
            # https://github.com/sonic-net/SONiC/blob/master/doc/ztp/ztp.md
            ztp_option=67,
            ztp_entry="ztp.json",
            onie=True,
            roce_unconfigured="adaptive routing and packet spraying (SONiC's config_db has no table for either; "
            "ECMP hashes per flow)",
        ),
        NetworkOs(
            name="cumulus",
            serves=frozenset({Duty.ROCE, Duty.OOB_ACCESS, Duty.OOB_AGGREGATION}),
            renderer="cumulus",
            mtu=9216,  # Cumulus Linux's jumbo MTU (ifupdown2's default for swp ports): the RoCE switch ports
            # ``use-pif-circuit-id`` sends the physical port alone; the Kea subnet is chosen by the relay's
            # gateway address (one per access switch), so the pair (subnet, port) still names switch and port
            circuit_id="{port}",
            config_files=("startup.yaml",),
            # Cumulus Linux ZTP runs the script option 239 names (ISC: cumulus-provision-url), once it
            # finds the CUMULUS-AUTOPROVISIONING flag in it. Cumulus Linux 5.12, "Zero Touch
            # Provisioning - ZTP": https://docs.nvidia.com/networking-ethernet-software/cumulus-linux-512/Installation-Management/Zero-Touch-Provisioning-ZTP/
            ztp_option=239,
            ztp_entry="cumulus-ztp.sh",
            onie=True,
        ),
        NetworkOs(
            name="eos",
            # out-of-band aggregation only: an access switch's BMC VLANs and DHCP relay have no EOS rendering
            serves=frozenset({Duty.FRONTEND, Duty.ROCE, Duty.OOB_AGGREGATION}),
            renderer="eos",
            mtu=9214,
            # AVD sources VXLAN from its own Loopback1 (SONiC uses the router-id loopback as VTEP)
            vtep_loopback=True,
            summary="Arista EOS (AVD via pyavd)",
            roce_unconfigured="dynamic load balancing (adaptive routing) and PFC buffer headroom per cable length "
            "(EOS sizes it from its own defaults); ECMP hashes per flow",
            # Arista's own library builds and validates the structured configs (tens of MB of
            # dependencies: installed only for designs with EOS switches)
            requires="pyavd",
            extra="eos",
            config_files=("eos.cfg",),
            # EOS Zero Touch Provisioning fetches the startup-config or boot script that option 67
            # (bootfile-name) names, runs it and reboots. EOS User Manual, "Initial Switch Access":
            # https://www.arista.com/en/um-eos/eos-initial-switch-access
            ztp_option=67,
            ztp_entry="bootstrap",
        ),
        # NVIDIA MLNX-OS (Quantum InfiniBand): railyard configures no switch of the InfiniBand backend one by
        # one, the subnet manager programs the fabric, so it renders the OpenSM files, the expected topology
        # and the UFM bodies (also with as-built GUIDs by ``railyard verify --write-config``)
        # No ZTP answer for either InfiniBand OS: NVOS has a ZTP of its own (a YAML config or script from a
        # DHCP-named server, NVIDIA NVOS User Manual, "Zero-Touch Provisioning"), but railyard writes no
        # per-switch config for them to fetch, so their management ports get their address reservation only
        NetworkOs(name="mlnx-os", serves=frozenset({Duty.INFINIBAND}), renderer="infiniband"),
        # NVIDIA NVOS (Quantum-X800 XDR InfiniBand): as MLNX-OS; its own OS so the catalog, the BoM and
        # NetBox say what the switch runs, and so NVOS-only settings have a home
        NetworkOs(name="nvos", serves=frozenset({Duty.INFINIBAND}), renderer="infiniband"),
    )
}


def network_os(name: str) -> NetworkOs:
    try:
        return NETWORK_OSES[name]
    except KeyError:
        raise KeyError(f"no network OS {name!r}; known: {', '.join(NETWORK_OSES)}") from None


def serving(duty: Duty) -> list[str]:
    """The OSes whose switches can stand in `duty`, in row order."""
    return [name for name, row in NETWORK_OSES.items() if duty in row.serves]


def _one_of(allowed: list[str]) -> Any:
    """A validator that accepts exactly `allowed`, refusing anything else in the words of a `Literal`."""
    # pydantic's own wording for a Literal: 'a' or 'b'; 'a', 'b' or 'c'
    quoted = [repr(a) for a in allowed]
    expected = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"

    def check(v: str) -> str:
        if v not in allowed:
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
        return v

    return AfterValidator(check)


# A switch model's `os` in the catalog: any row above. The frontend.vendor of a design: a row that
# serves the frontend. The JSON Schema of each is the enum of those names, as a Literal's would be.
OsName = Annotated[str, _one_of(list(NETWORK_OSES)), WithJsonSchema({"enum": list(NETWORK_OSES), "type": "string"})]
FrontendOsName = Annotated[
    str,
    _one_of(serving(Duty.FRONTEND)),
    WithJsonSchema({"enum": serving(Duty.FRONTEND), "type": "string"}),
]
