"""`railyard verify --lldp`: LLDP tables of the Ethernet networks against the plan, and the splitter-aware
advice of both verify paths. Parsers read fixtures shaped like each format's real output
(tests/data/lldp/README.md says where each shape comes from); the faults are made in tables generated
from a compiled plan (tests/lldpfaults.py). The real lldpd run is in tests/test_lldp_daemons.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generators.asbuilt.ibnetdiscover import parse_net
from generators.asbuilt.lldp import LldpParseError, parse_lldp
from generators.asbuilt.verify import LinkReport, Port, verify_fabric, verify_lldp
from generators.model.plan import Plan
from generators.vendors.infiniband import render_infiniband
from generators.views.ibnetdiscover import format_net
from tests.conftest import DESIGNS
from tests.ibfaults import swap as ib_swap
from tests.lldpfaults import Wiring, drop, swap, tables, wiring_of

Compiled = Callable[..., Plan]
DATA = Path(__file__).parent / "data" / "lldp"


# ------------------------------------------------------------------------------------------ parsers


def neighbours(name: str) -> tuple[str, set[tuple[str, str | None, tuple[str, ...]]]]:
    fmt, ns = parse_lldp((DATA / name).read_text())
    return fmt, {(n.local_port, n.system, tuple(n.port_names())) for n in ns}


def test_lldpctl_json0_real_output() -> None:
    fmt, got = neighbours("fe-leaf01.lldpctl-json0.json")
    doc = json.loads((DATA / "fe-leaf01.lldpctl-json0.json").read_text())
    macs = {i["name"]: i["port"][0]["id"][0]["value"] for i in doc["lldp"][0]["interface"]}
    assert fmt == "lldpctl json0"
    # fe-spine01 ran `portidsubtype ifname` (name as id); gpu001 sent lldpd's default, its MAC as id
    assert got == {
        ("Ethernet0", "fe-spine01", ("Ethernet8", "Ethernet8")),
        ("Ethernet4", "gpu001.cluster.example", (macs["Ethernet4"], "eth0")),
    }


def test_lldpctl_json_changes_shape_with_one_interface_and_reads_the_same() -> None:
    fmt, several = neighbours("fe-leaf01.lldpctl-json.json")
    assert fmt == "lldpctl json"
    assert several == neighbours("fe-leaf01.lldpctl-json0.json")[1]
    assert isinstance(json.loads((DATA / "fe-spine01.lldpctl-json.json").read_text())["lldp"]["interface"], dict)
    _, one = neighbours("fe-spine01.lldpctl-json.json")
    ((local, system, names),) = one
    assert (local, system, names[-1]) == ("Ethernet8", "fe-leaf01", "Ethernet0")


def test_cumulus_net_show_lldp_is_json0() -> None:
    fmt, got = neighbours("sw-nclu.net-show-lldp.json")
    assert (fmt, got) == ("lldpctl json0", {("swp51", "spine01", ("swp1", "swp1"))})


def test_nvue_interfaces() -> None:
    fmt, got = neighbours("sw-nvue.nvue.json")
    assert fmt == "NVUE"
    # lo and the unplugged swp2 hear nothing; the rest name system, port id and description
    assert got == {
        ("eth0", "oob01", ("Ethernet2",)),
        ("swp1", "fe-spine01.cluster.example", ("60:22:32:00:00:46", "Ethernet8")),
    }


@pytest.mark.parametrize("name", ["sw-eos.eos.json", "sw-eapi.eos-eapi.json"])
def test_eos_neighbors_detail(name: str) -> None:
    fmt, got = neighbours(name)
    assert fmt == "EOS"
    # interfaceId is quoted in the JSON; the bare name is what the peer calls its port
    assert got == {
        ("Ethernet3", "fe-spine01", ("swp52", "fe-leaf01:Et3")),
        ("Ethernet4", "gpu001", ("0a:f2:32:dc:a5:01", "eth0")),
    }


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "[1, 2]",
        '{"interfaces": 3}',
        '"lldp"',
        '{"lldp": [{"interface": [{"name": "e0", "chassis": "x"}]}]}',
        '{"lldp": {"interface": [3]}}',
        '{"lldpNeighbors": {"e1": {"lldpNeighborInfo": 5}}}',
        '{"swp1": {"lldp": {"neighbor": {"x": []}}}}',
    ],
)
def test_not_a_table_is_refused(text: str) -> None:
    with pytest.raises(LldpParseError):
        parse_lldp(text)


# -------------------------------------------------------------------------------- faults from a plan


@pytest.fixture(scope="module")
def plan256() -> Plan:
    from generators.compiler import compile_file

    return compile_file(DESIGNS / "h100-256.yaml")[0]


def run(plan: Plan, w: Wiring, devices: list[str] | None = None) -> Any:
    return verify_lldp(plan, {d: parse_lldp(t)[1] for d, t in tables(plan, w, devices).items()})


def located(plan: Plan, port: Port) -> None:
    """Every reported end carries the rack and unit placement gave its device."""
    d = plan.index()[port.device]
    assert (port.rack, port.unit) == (d.rack, d.unit) and d.rack is not None


def label_of(plan: Plan, a: tuple[str, str], b: tuple[str, str]) -> tuple[str, str]:
    for c in plan.cables or []:
        for k, label in zip(c.links, c.labels, strict=True):
            lk = plan.links[k]
            if {(lk.a_device, lk.a_port), (lk.b_device, lk.b_port)} == {a, b}:
                return c.id, label
    raise AssertionError(f"no cable for {a} {b}")


def ends(lk: LinkReport) -> set[tuple[str, str]]:
    return {(lk.a.device, lk.a.port), (lk.b.device, lk.b.port)}


def silent_links(plan: Plan) -> int:
    """Planned Ethernet links no table can see: an out-of-band port of a PDU or of a host's BMC."""
    idx = plan.index()
    return sum(
        1
        for lk in plan.links
        if lk.network == "oob"
        and {idx[lk.a_device].kind, idx[lk.b_device].kind} & {"pdu", "server", "storage", "management"}
    )


def test_the_plan_verifies_from_its_own_tables(plan256: Plan) -> None:
    rep = run(plan256, wiring_of(plan256))
    assert rep.ok, rep.text()
    eth = [lk for lk in plan256.links if lk.network in ("frontend", "oob")]
    assert rep.planned_links == len(eth)
    # BMCs and PDUs send no LLDP: their links are counted as not covered, never as missing
    assert rep.not_covered == silent_links(plan256) > 0
    assert rep.discovered_links == len(eth) - rep.not_covered
    assert (
        "Ethernet (frontend, oob)" in rep.text()
        and "OK: the discovered fabric matches the plan where covered" in rep.text()
    )
    # switch management ports are eth0 in the tables and "mgmt" in the plan
    assert any(lk.tier == "mgmt-access" and plan256.index()[lk.a_device].kind == "switch" for lk in eth)


def test_two_swapped_and_one_missing_with_rack_unit_and_label(plan256: Plan) -> None:
    w = wiring_of(plan256)
    leaf = "fe-leaf01"
    ups = sorted(e for e in w if e[0] == leaf and w[e][0].startswith("fe-spine"))
    x = ups[0]
    y = next(e for e in ups if w[e][0] != w[x][0])  # an uplink to another spine
    planned = {frozenset((x, w[x])), frozenset((y, w[y]))}
    gone = ("gpu001", "eth0")
    gone_link = frozenset((gone, w[gone]))
    swap(w, x, y)
    drop(w, gone)
    rep = run(plan256, w)
    assert not rep.extra and not rep.one_sided and not rep.slow and not rep.unknown_nodes
    assert rep.faulty_links == 3
    (s,) = rep.swapped
    assert {frozenset(ends(lk)) for lk in s.planned} == planned
    assert {(p.device, p.port) for p in s.at} == {x, y} and s.advice is None
    (m,) = rep.missing
    assert frozenset(ends(m)) == gone_link
    for lk in (*s.planned, *s.found, m):
        located(plan256, lk.a)
        located(plan256, lk.b)
    for lk in (*s.planned, m):
        assert (lk.cable_id, lk.label) == label_of(plan256, (lk.a.device, lk.a.port), (lk.b.device, lk.b.port))
    text = rep.text()
    assert "1 swapped pair, 1 missing, 0 extra; speeds not checked: LLDP carries none" in text
    assert f"label {m.label!r}" in text and f"[rack {m.a.rack} U{m.a.unit}]" in text


def test_a_table_short_is_not_covered_not_missing(plan256: Plan) -> None:
    w = wiring_of(plan256)
    every = tables(plan256, w)
    # the spine gives no table: its leaves' tables still see every one of its links
    rep = run(plan256, w, [d for d in every if d != "fe-spine01"])
    assert rep.ok and rep.not_covered == silent_links(plan256)
    # a server gives no table, and its leaf's port hears nothing: unplugged, or a host without lldpd
    peer = w[("gpu002", "eth1")]
    drop(w, ("gpu002", "eth1"))
    rep = run(plan256, w, [d for d in every if d != "gpu002"])
    assert rep.ok and rep.not_covered == silent_links(plan256) + 1 and "gpu002" in rep.no_table
    assert "NOT COVERED" in rep.text() and "gpu002" in rep.text()
    # with gpu002's table the same hole is a missing link
    rep = run(plan256, w)
    assert [ends(m) for m in rep.missing] == [{("gpu002", "eth1"), peer}]


def test_one_direction_down_is_one_sided(plan256: Plan) -> None:
    w = wiring_of(plan256)
    texts = tables(plan256, w)
    spine_table = json.loads(texts["fe-spine01"])
    heard = spine_table["lldp"][0]["interface"]
    lost = heard.pop(0)  # the spine's receive side of one link is dead; the leaf still hears the spine
    texts["fe-spine01"] = json.dumps(spine_table)
    rep = verify_lldp(plan256, {d: parse_lldp(t)[1] for d, t in texts.items()})
    (o,) = rep.one_sided
    assert ("fe-spine01", lost["name"]) in ends(o) and not rep.missing
    assert "hears nothing on that port" in rep.text()


def test_an_unknown_neighbour_is_extra(plan256: Plan) -> None:
    w = wiring_of(plan256)
    texts = tables(plan256, w)
    doc = json.loads(texts["fe-leaf01"])
    entry = next(i for i in doc["lldp"][0]["interface"] if i["name"] == "Ethernet0")
    entry["chassis"][0]["name"][0]["value"] = "laptop-of-someone"
    texts["fe-leaf01"] = json.dumps(doc)
    rep = verify_lldp(plan256, {d: parse_lldp(t)[1] for d, t in texts.items()})
    (e,) = rep.extra
    assert not e.b.known or not e.a.known
    assert rep.unknown_nodes == ["'laptop-of-someone' heard on fe-leaf01 Ethernet0"]
    # the server's own table still hears the leaf: the planned link is found, so not missing
    assert not rep.missing


def test_verify_lldp_cli(cli: Callable[..., Any], plan256: Plan, tmp_path: Path) -> None:
    w = wiring_of(plan256)
    drop(w, ("gpu003", "eth0"))
    files = []
    for dev, text in tables(plan256, w).items():
        (tmp_path / f"{dev}.json").write_text(text)
        files += ["--lldp", tmp_path / f"{dev}.json"]
    r = cli("verify", DESIGNS / "h100-256.yaml", *files)
    assert r.exit_code == 1, r.output
    assert "MISSING  gpu003 eth0" in r.output
    r = cli("verify", DESIGNS / "h100-256.yaml", *files, "--json")
    doc = json.loads(r.output)
    assert doc["faulty_links"] == 1 and doc["source"].startswith("LLDP: ")
    assert {doc["missing"][0]["a"]["device"], doc["missing"][0]["b"]["device"]} >= {"gpu003"}


def test_verify_lldp_cli_refuses_bad_input(cli: Callable[..., Any], tmp_path: Path) -> None:
    design = DESIGNS / "h100-256.yaml"
    bad = tmp_path / "fe-leaf01.json"
    bad.write_text("show lldp neighbors\n")
    r = cli("verify", design, "--lldp", bad)
    assert r.exit_code == 2 and "fe-leaf01.json" in r.output and "not JSON" in r.output
    stray = tmp_path / "switch-x.json"
    stray.write_text('{"lldp": [{}]}')
    r = cli("verify", design, "--lldp", stray)
    assert r.exit_code == 2 and "no device 'switch-x' in the plan" in r.output
    r = cli("verify", design)
    assert r.exit_code == 2 and "--ibnetdiscover" in r.output and "--lldp" in r.output


# --------------------------------------------------------------------------- splitter-aware advice


def splitters_of(plan: Plan) -> list[Any]:
    cabs = [c for c in plan.cables or [] if c.network == "backend" and c.shape == "split-b" and c.physical == 1]
    assert cabs, "no DAC splitter in the design"
    return cabs


def test_ib_crossed_splitters_are_fixed_at_the_servers_not_the_leaf(compiled: Compiled) -> None:
    """h100-1024-tor: DAC splitters from a leaf's twin cage (one plug, two ports) to a server's HCAs. Two
    servers' legs found crossed: trading at the leaf would move both ports of each plug, so the fix is
    at the servers' legs, and the report says why."""
    plan = compiled("h100-1024-tor")
    cabs = splitters_of(plan)
    c1 = cabs[0]
    l1 = plan.links[c1.links[0]]
    c2 = next(
        c
        for c in cabs[1:]
        if plan.links[c.links[0]].b_device == l1.b_device and plan.links[c.links[0]].a_device != l1.a_device
    )
    l2 = plan.links[c2.links[0]]
    nodes = parse_net(render_infiniband(plan)["infiniband/topology.net"])
    ib_swap(nodes, (f"{l1.a_device} {l1.a_port}", 1), (f"{l2.a_device} {l2.a_port}", 1))
    rep = verify_fabric(plan, format_net(nodes.values()))
    (s,) = rep.swapped
    assert not rep.missing and not rep.extra
    assert {(p.device, p.port) for p in s.at} == {(l1.a_device, l1.a_port), (l2.a_device, l2.a_port)}
    assert {p.plug for p in s.at} == {f"leg 1 of splitter {c1.id}", f"leg 1 of splitter {c2.id}"}
    assert s.advice is not None and f"not at {l1.b_device}" in s.advice
    assert f"one plug with {plan.links[c1.links[1]].b_port}, splitter {c1.id}" in s.advice
    text = rep.text()
    assert (
        f"exchange the cables at {l1.a_device} {l1.a_port}" in text
        or f"exchange the cables at {l2.a_device} {l2.a_port}" in text
    )
    assert f"exchange the cables at {l1.b_device}" not in text


def test_ib_legs_of_one_splitter_crossed_at_one_server(compiled: Compiled) -> None:
    """Both legs of one splitter reach one server: trading them there is right, and names the legs."""
    plan = compiled("h100-1024-tor")
    cab = splitters_of(plan)[0]
    l1, l2 = (plan.links[k] for k in cab.links)
    nodes = parse_net(render_infiniband(plan)["infiniband/topology.net"])
    ib_swap(nodes, (f"{l1.a_device} {l1.a_port}", 1), (f"{l2.a_device} {l2.a_port}", 1))
    (s,) = verify_fabric(plan, format_net(nodes.values())).swapped
    assert {(p.device, p.port, p.plug) for p in s.at} == {
        (l1.a_device, l1.a_port, f"leg 1 of splitter {cab.id}"),
        (l2.a_device, l2.a_port, f"leg 2 of splitter {cab.id}"),
    }
    assert s.advice is None


def test_twin_cables_crossed_say_to_move_whole_plugs(plan256: Plan) -> None:
    """h100-256 leaf-spine runs on twin DACs: every end is a plug carrying two ports."""
    twins = [c for c in plan256.cables or [] if c.network == "backend" and c.shape == "straight" and c.physical == 1]
    a = plan256.links[twins[0].links[0]]
    b = next(
        plan256.links[c.links[0]]
        for c in twins[1:]
        if plan256.links[c.links[0]].a_device == a.a_device and plan256.links[c.links[0]].b_device != a.b_device
    )
    nodes = parse_net(render_infiniband(plan256)["infiniband/topology.net"])
    from generators.stages.infiniband import switch_port_numbers

    num = switch_port_numbers(plan256.catalog, plan256.index()[a.a_device].model)
    ib_swap(nodes, (a.a_device, num[a.a_port]), (a.a_device, num[b.a_port]))
    rep = verify_fabric(plan256, format_net(nodes.values()))
    (s,) = rep.swapped
    assert s.advice is not None and "every end of these links is a shared plug" in s.advice
    assert twins[0].id in s.advice


def test_an_ethernet_backend_is_checked_too(compiled: Compiled) -> None:
    """b300-spectrumx: the Spectrum-X backend is Ethernet, so its links are in the LLDP check with the
    frontend and out-of-band networks; a server's two rail ports crossed is one swap at that server."""
    plan = compiled("b300-spectrumx")
    w = wiring_of(plan)
    rep = run(plan, w)
    assert rep.ok and "Ethernet (backend, frontend, oob)" in rep.text()
    srv = next(d.name for d in plan.devices if d.kind == "server")
    rails = sorted(e for e in w if e[0] == srv and plan.index()[w[e][0]].network == "backend")
    swap(w, rails[0], rails[1])
    rep = run(plan, w)
    (s,) = rep.swapped
    assert {(p.device, p.port) for p in s.at} == {rails[0], rails[1]}
    assert not rep.missing and not rep.extra and rep.faulty_links == 2
