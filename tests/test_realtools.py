"""Prove tests/realtools.py against the real tools, on small hand-written inputs.

If one of these fails, every generator test built on the same helper is suspect: fix here first.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.realtools import (
    ToolFailed,
    chromium_print_pdf,
    frr_check,
    ib_links_by_desc,
    ibsim_fabric,
    kea_check,
    parse_ibnetdiscover,
    pdf_page_count,
    run_slurmctld,
)

pytestmark = pytest.mark.daemons

# ---------------------------------------------------------------------------------------------
# slurmctld
# ---------------------------------------------------------------------------------------------

SLURM_CONF = """\
ClusterName=t
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
TopologyPlugin=topology/tree
MpiDefault=none
GresTypes=gpu
NodeName=gpu[001-004] NodeAddr=127.0.0.1 CPUs=8 RealMemory=1000 Gres=gpu:8 State=CLOUD
PartitionName=batch Nodes=ALL Default=YES State=UP
"""
# Keys a generated file will carry; run_slurmctld must replace them, not choke on them.
SLURM_CONF_GENERATED = SLURM_CONF + "SlurmctldHost=head01\nAuthType=auth/munge\nSlurmUser=slurm\n"

TOPOLOGY_OK = """\
SwitchName=leaf1 Nodes=gpu[001-002]
SwitchName=leaf2 Nodes=gpu[003-004]
SwitchName=spine Switches=leaf[1-2]
"""
# gpu002 sits under both leaves.
TOPOLOGY_DOUBLE_HOMED = """\
SwitchName=leaf1 Nodes=gpu[001-002]
SwitchName=leaf2 Nodes=gpu[002-004]
SwitchName=spine Switches=leaf[1-2]
"""


def test_slurmctld_topology_tree(tmp_path: Path) -> None:
    r = run_slurmctld(tmp_path, SLURM_CONF_GENERATED, {"topology.conf": TOPOLOGY_OK})
    assert r.topology_parsed == {
        "leaf1": {"level": 0, "link_speed": 1, "switches": [], "nodes": ["gpu001", "gpu002"]},
        "leaf2": {"level": 0, "link_speed": 1, "switches": [], "nodes": ["gpu003", "gpu004"]},
        "spine": {
            "level": 1,
            "link_speed": 1,
            "switches": ["leaf1", "leaf2"],
            "nodes": ["gpu001", "gpu002", "gpu003", "gpu004"],
        },
    }
    assert r.warnings == [], r.log
    assert r.errors == [], r.log
    nodes = r.nodes_parsed
    assert sorted(nodes) == ["gpu001", "gpu002", "gpu003", "gpu004"]
    assert nodes["gpu001"]["Gres"] == "gpu:8"
    assert "CLOUD" in nodes["gpu001"]["State"]
    assert r.partitions_parsed["batch"]["TotalNodes"] == "4"


def test_slurmctld_node_under_two_leaves_warns(tmp_path: Path) -> None:
    r = run_slurmctld(tmp_path, SLURM_CONF, {"topology.conf": TOPOLOGY_DOUBLE_HOMED})
    assert any("WARNING: Multiple leaf switches contain nodes: gpu002" in w for w in r.warnings), r.log
    # Slurm keeps the double-homed node under both leaves; the daemon ran on regardless.
    topo = r.topology_parsed
    assert "gpu002" in topo["leaf1"]["nodes"]
    assert "gpu002" in topo["leaf2"]["nodes"]


def test_slurmctld_fatal_topology_raises_with_log(tmp_path: Path) -> None:
    bad = TOPOLOGY_OK.replace("leaf[1-2]", "leaf[1-3]")
    with pytest.raises(ToolFailed) as exc:
        run_slurmctld(tmp_path, SLURM_CONF, {"topology.conf": bad})
    assert "Switch configuration spine has invalid child (leaf3)" in exc.value.log


# ---------------------------------------------------------------------------------------------
# ibsim + OpenSM
# ---------------------------------------------------------------------------------------------

SPINE_GUID = 0x0002C90300000001
# CA node GUIDs 0x10 apart: ibsim gives port 1 the GUID node+1, so neighbours must not be +1.
CA_GUIDS = {f"gpu00{i}": 0x0C42A10300000000 + 0x10 * i for i in range(1, 5)}


def _fabric_text() -> str:
    """2 leaves, 1 spine, 4 CAs at HDR, every link written at both ends."""
    leaf_of = {"gpu001": 1, "gpu002": 1, "gpu003": 2, "gpu004": 2}
    recs = [
        f"switchguid=0x{SPINE_GUID:016x}\n"
        'Switch 8 "S-spine" # "spine" enhanced port 0 lid 0 lmc 0\n'
        '[1] "S-leaf1"[5] # "leaf1" lid 0 4xHDR\n'
        '[2] "S-leaf2"[5] # "leaf2" lid 0 4xHDR\n'
    ]
    for leaf in (1, 2):
        lines = [
            f"switchguid=0x{SPINE_GUID + 0x10 * leaf:016x}",
            f'Switch 8 "S-leaf{leaf}" # "leaf{leaf}" enhanced port 0 lid 0 lmc 0',
        ]
        hosts = [h for h, lf in leaf_of.items() if lf == leaf]
        for port, host in enumerate(hosts, start=1):
            lines.append(f'[{port}] "H-{host}"[1] # "{host} mlx5_0" lid 0 4xHDR')
        lines.append(f'[5] "S-spine"[{leaf}] # "spine" lid 0 4xHDR')
        recs.append("\n".join(lines) + "\n")
    for host, guid in CA_GUIDS.items():
        leaf = leaf_of[host]
        port = sorted(h for h, lf in leaf_of.items() if lf == leaf).index(host) + 1
        recs.append(
            f"caguid=0x{guid:016x}\n"
            f'Ca 1 "H-{host}" # "{host} mlx5_0"\n'
            f'[1] "S-leaf{leaf}"[{port}] # lid 0 lmc 0 "leaf{leaf}" lid 0 4xHDR\n'
        )
    return "\n".join(recs)


@pytest.fixture
def fabric_file(tmp_path: Path) -> Path:
    p = tmp_path / "fabric.net"
    p.write_text(_fabric_text())
    return p


def test_ibsim_opensm_ftree_partitions_trace(tmp_path: Path, fabric_file: Path) -> None:
    roots = tmp_path / "root_guids.conf"
    roots.write_text(f"0x{SPINE_GUID:016x}\n")
    with ibsim_fabric(fabric_file, tmp_path / "sim") as fab:
        # First sweep without partitions: LIDs and port GUIDs come from the SM.
        first = fab.opensm(routing="ftree", root_guids=roots)
        assert first.returncode == 0
        assert first.subnet_up, first.log
        assert first.engine_used == "ftree", first.log
        assert first.fat_tree_identified and not first.fell_back, first.log
        # Without roots ftree also validates that the tree is pure; this one is.
        auto = fab.opensm(routing="ftree")
        assert auto.fat_tree_identified and auto.errors == [], auto.log

        # Members are port GUIDs (node GUID + 1 in ibsim), not the caguid= of the file.
        g1, g3 = fab.port_guid("gpu001"), fab.port_guid("gpu003")
        assert g1 == CA_GUIDS["gpu001"] + 1
        parts = tmp_path / "partitions.conf"
        parts.write_text(
            "Default=0x7fff : ALL=limited, SELF=full ;\n"
            f"rail0=0x8001, ipoib, defmember=full : 0x{g1:016x}, 0x{g3:016x} ;\n"
        )
        second = fab.opensm(routing="ftree", root_guids=roots, partitions=parts)
        assert second.parse_errors == [], second.log
        assert second.fat_tree_identified, second.log

        pkeys = {h: fab.smpquery_pkeys(fab.lid(h), 1) for h in CA_GUIDS}
        assert pkeys == {
            "gpu001": [0x7FFF, 0x8001],  # 0x7fff limited (no high bit), rail0 full (high bit)
            "gpu002": [0x7FFF],
            "gpu003": [0x7FFF, 0x8001],
            "gpu004": [0x7FFF],
        }

        same_leaf = fab.ibtracert(fab.lid("gpu001"), fab.lid("gpu002"))
        assert same_leaf.switch_hops == 1
        assert same_leaf.path == ["leaf1", "gpu002 mlx5_0"]
        across = fab.ibtracert(fab.lid("gpu001"), fab.lid("gpu004"))
        assert across.switch_hops == 3
        assert across.path == ["leaf1", "spine", "leaf2", "gpu004 mlx5_0"]

        # Round trip: what the fabric reports is what the file said (by description and port).
        discovered = fab.ibnetdiscover()
        assert ib_links_by_desc(parse_ibnetdiscover(discovered)) == ib_links_by_desc(
            parse_ibnetdiscover(fabric_file.read_text())
        )
        assert len(ib_links_by_desc(parse_ibnetdiscover(discovered))) == 6

        ports = {p.desc: p for p in fab.ports() if p.kind == "CA"}
        assert ports["gpu004 mlx5_0"].speed == "4x HDR"
        assert ports["gpu004 mlx5_0"].lid == fab.lid("gpu004")


def test_opensm_fallbacks_are_reported(tmp_path: Path, fabric_file: Path) -> None:
    leaf_as_root = tmp_path / "bad_roots.conf"
    leaf_as_root.write_text(f"0x{SPINE_GUID + 0x10:016x}\n")
    broken_parts = tmp_path / "partitions.conf"
    broken_parts.write_text("rail0=0x8001, ipoib : 0xnothex ;\n")
    with ibsim_fabric(fabric_file, tmp_path / "sim") as fab:
        r = fab.opensm(routing="ftree", root_guids=leaf_as_root, partitions=broken_parts)
    assert r.returncode == 0  # the exit code says nothing; the log does
    assert r.engine_used == "minhop"
    assert r.fell_back and not r.fat_tree_identified
    assert any("ftree: cannot build lid matrices" in e for e in r.errors), r.log
    assert r.parse_errors and "PARSE ERROR: line 1" in r.parse_errors[0], r.log


def test_ftree_validates_pure_tree_only_without_roots(tmp_path: Path, fabric_file: Path) -> None:
    # A second spine cabled to leaf1 only: the leaves no longer look alike.
    lopsided = fabric_file.read_text().replace(
        '[5] "S-spine"[1] # "spine" lid 0 4xHDR',
        '[5] "S-spine"[1] # "spine" lid 0 4xHDR\n[6] "S-spine2"[1] # "spine2" lid 0 4xHDR',
    )
    lopsided += (
        f"\nswitchguid=0x{SPINE_GUID + 1:016x}\n"
        'Switch 8 "S-spine2" # "spine2" enhanced port 0 lid 0 lmc 0\n'
        '[1] "S-leaf1"[6] # "leaf1" lid 0 4xHDR\n'
    )
    net = tmp_path / "lopsided.net"
    net.write_text(lopsided)
    roots = tmp_path / "root_guids.conf"
    roots.write_text(f"0x{SPINE_GUID:016x}\n0x{SPINE_GUID + 1:016x}\n")
    with ibsim_fabric(net, tmp_path / "sim") as fab:
        auto = fab.opensm(routing="ftree")
        given = fab.opensm(routing="ftree", root_guids=roots)
    assert any("ERR AB0D: Fabric topology hasn't been identified as FatTree" in e for e in auto.errors)
    assert auto.fell_back and auto.engine_used == "minhop" and not auto.fat_tree_identified
    # With a root GUID file the same fabric passes: ftree skips the purity check.
    assert given.fat_tree_identified and not given.fell_back, given.log


def test_ibsim_rejects_one_sided_link(tmp_path: Path, fabric_file: Path) -> None:
    one_sided = fabric_file.read_text().replace('[2] "S-leaf2"[5] # "leaf2" lid 0 4xHDR\n', "")
    bad = tmp_path / "bad.net"
    bad.write_text(one_sided)
    with pytest.raises(ToolFailed), ibsim_fabric(bad, tmp_path / "sim"):
        pass


# ---------------------------------------------------------------------------------------------
# FRR, Kea
# ---------------------------------------------------------------------------------------------

FRR_CONF = """\
frr version 8.4
frr defaults datacenter
hostname leaf1
!
interface lo
 ip address 10.0.0.1/32
!
router bgp 65001
 bgp router-id 10.0.0.1
 neighbor FABRIC peer-group
 neighbor FABRIC remote-as external
 neighbor swp1 interface peer-group FABRIC
 address-family ipv4 unicast
  network 10.0.0.1/32
 exit-address-family
!
"""


def test_frr_check(tmp_path: Path) -> None:
    good = tmp_path / "frr.conf"
    good.write_text(FRR_CONF)
    ok, out = frr_check(good)
    assert ok, out
    bad = tmp_path / "bad.conf"
    bad.write_text(FRR_CONF.replace("remote-as external", "remote-ass external"))
    ok, out = frr_check(bad)
    assert not ok
    assert "line 11: % Unknown command" in out


KEA_CONF = """\
{
  "Dhcp4": {
    "interfaces-config": {"interfaces": ["lo"]},
    "lease-database": {"type": "memfile", "persist": false},
    "host-reservation-identifiers": ["circuit-id", "hw-address"],
    "valid-lifetime": 3600,
    "subnet4": [
      {
        "id": 1,
        "subnet": "192.0.2.0/24",
        "pools": [{"pool": "192.0.2.100 - 192.0.2.200"}],
        "reservations": [
          {"circuit-id": "'leaf1:swp1'", "ip-address": "192.0.2.11", "hostname": "gpu001-bmc"},
          {"circuit-id": "'leaf1:swp2'", "ip-address": "192.0.2.12", "hostname": "gpu002-bmc"}
        ]
      }
    ]
  }
}
"""


def test_kea_check(tmp_path: Path) -> None:
    good = tmp_path / "kea.json"
    good.write_text(KEA_CONF)
    ok, out = kea_check(good)
    assert ok, out
    bad = tmp_path / "bad.json"
    bad.write_text(KEA_CONF.replace('"192.0.2.12"', '"192.0.2.300"'))
    ok, out = kea_check(bad)
    assert not ok
    assert "Failed to convert string to address '192.0.2.300'" in out
    dup = tmp_path / "dup.json"
    dup.write_text(KEA_CONF.replace('"192.0.2.12"', '"192.0.2.11"'))
    ok, out = kea_check(dup)
    assert not ok
    assert "There's already a reservation for this address" in out


# ---------------------------------------------------------------------------------------------
# Chromium
# ---------------------------------------------------------------------------------------------

TWO_PAGES = """\
<!doctype html><html><head><meta charset="utf-8"><style>
@page { size: A4; margin: 15mm; }
section { break-after: page; page-break-after: always; }
section:last-child { break-after: auto; page-break-after: auto; }
</style></head><body>
<section><h1>Cable plan</h1><p>page one</p></section>
<section><h1>Bill of materials</h1><p>page two</p></section>
</body></html>
"""


@pytest.mark.browser
def test_chromium_prints_two_pages(tmp_path: Path) -> None:
    html = tmp_path / "report.html"
    html.write_text(TWO_PAGES)
    pdf = chromium_print_pdf(html, tmp_path / "report.pdf")
    assert pdf_page_count(pdf) == 2
    # Cross-check the pure-Python count against poppler when it is there.
    if shutil.which("pdfinfo"):
        info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True).stdout
        assert "Pages:           2" in info
