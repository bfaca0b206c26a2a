"""UFM / management nodes carry the NIC of the fabric they sit on (issue #39 item 5): the shipped management
node has a ConnectX-7; attached to an XDR fabric it is given the compute servers' ConnectX-8, derived from
the fabric, with no catalog overlay in the design."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable

from generators.model.catalog import load_catalog
from generators.model.plan import Plan
from tests.conftest import rendered_files

# h100-256 on Quantum-X800 with HGX B300 (ConnectX-8 at 800G XDR); management.backend_attached left at the
# design's 2: nothing about the management nodes is written
XDR = ("backend.switch=Q3400", "compute.server=hgx-b300")


def test_management_nodes_on_xdr_carry_the_fabrics_connectx8(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *XDR)
    assert not plan.design.catalog.tables(), "no catalog overlay"
    assert load_catalog().servers["mgmt-1u"].backend.nic == "cx7-400g-osfp"  # type: ignore[union-attr]
    mgmt = [d for d in plan.devices if d.kind == "management"]
    assert {d.model for d in mgmt} == {"mgmt-1u@cx8-800g-osfp"}
    model = plan.catalog.servers["mgmt-1u@cx8-800g-osfp"]
    assert model.backend is not None and model.backend.nic == "cx8-800g-osfp"
    # the chassis is the shipped one: only the backend NIC differs
    base = plan.catalog.servers["mgmt-1u"]
    assert model.model_dump(exclude={"backend", "description"}) == base.model_dump(exclude={"backend", "description"})
    links = [lk for lk in plan.links if lk.network == "backend" and lk.a_device.startswith("mgmt")]
    assert len(links) == plan.design.management.backend_attached == 2
    assert {lk.speed_gbps for lk in links} == {800}


def test_their_cables_are_xdr_parts_and_the_bom_prices_the_connectx8(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256", *XDR)
    files = rendered_files(compiled, "h100-256", *XDR)
    rows = [
        r
        for r in csv.DictReader(io.StringIO(files["cabling/cables.csv"]))
        if r["network"] == "backend" and "mgmt" in r["a_device"] + r["b_device"]
    ]
    assert len(rows) == 2
    cat = plan.catalog
    for r in rows:
        optics = [x for x in (r["a_transceiver"], r["b_transceiver"]) if x]
        # XDR optics (200G lanes) or XDR copper: never an NDR part on the ConnectX-8
        assert all(200 in cat.transceivers[x].lane_gbps for x in optics), r
        if not optics:
            assert r["media"] == "acc", r
    mgmt = {ln.part: ln.quantity for ln in plan.bom.lines if ln.category == "management"}  # type: ignore[union-attr]
    assert mgmt["mgmt-1u"] == plan.design.management.count  # the shipped chassis, by its own key
    assert mgmt["cx8-800g-osfp"] == 2 and "cx7-400g-osfp" not in mgmt


def test_on_ndr_the_shipped_model_is_kept(compiled: Callable[..., Plan]) -> None:
    plan = compiled("h100-256")
    assert {d.model for d in plan.devices if d.kind == "management"} == {"mgmt-1u"}
    assert not any("@" in k for k in plan.catalog.servers)
