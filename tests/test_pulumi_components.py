"""The component tree and stack outputs under pulumi.runtime.set_mocks (no engine)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pulumi
import pytest
from pulumi.runtime import mocks, rpc

from components import program
from components.artifact import sha256_text
from components.site import ARTIFACT_T, FOLDER_T, NETWORK_T, RACK_T, SITE_T, Site, place, rack_index
from generators.model.secrets import placeholder
from generators.renderers import render_all

ROOT = Path(__file__).resolve().parent.parent
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"  # pulumi's wire signature of a secret value


class Recorder(mocks.MockMonitor):
    """Keeps what the program registered: type, name, parent URN, raw inputs and secret options."""

    def __init__(self, m):
        super().__init__(m)
        self.registered = {}

    def RegisterResource(self, request):
        resp = super().RegisterResource(request)
        self.registered[resp.urn] = {
            "type": request.type, "name": request.name, "parent": request.parent,
            "object": json.loads(json.dumps(_struct(request.object))),
            "secret_outputs": list(request.additionalSecretOutputs),
            "aliases": [a.urn for a in request.aliases] + list(request.aliasURNs),
        }
        return resp


def _struct(s):
    from google.protobuf import json_format

    return json_format.MessageToDict(s)


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        outs = dict(args.inputs)
        if args.typ == ARTIFACT_T:
            text = rpc.unwrap_rpc_secret(outs["content"])  # the mock monitor hands secrets over wrapped
            outs.update(sha256=sha256_text(text), size=len(text.encode()))
            outs.pop("content")
            return f"{outs['dir']}/{outs['path']}", outs
        return f"{args.name}-id", outs

    def call(self, args):
        return {}


@pytest.fixture
def monitor():
    mon = Recorder(Mocks())
    pulumi.runtime.set_mocks(Mocks(), project="railyard", stack="unit", preview=False, monitor=mon)
    yield mon
    pulumi.runtime.set_all_config({})


def _by_name(mon, typ):
    return {r["name"]: (urn, r) for urn, r in mon.registered.items() if r["type"] == typ}


def racked(plan):
    """The plan as the floor-plan stage will hand it over: racks, and devices placed in them."""
    p = copy.deepcopy(plan)
    p.extra["racks"] = [{"name": "r01", "role": "compute"}, {"name": "r02", "role": "compute"},
                        {"name": "n01", "role": "network"}]
    for d in p.devices:
        if d.name.startswith("fe-leaf"):
            d.attrs["rack"] = "n01"
    return p


def run(fn):
    """Run fn under the mocks and wait for every registration to finish."""
    result = {}

    @pulumi.runtime.test
    def body():
        result["value"] = fn()
        return pulumi.Output.from_input(1)

    body()
    return result["value"]


FILES = {
    "plan.json": "{}\n",
    "bom.json": json.dumps({"total_usd": 1000.0, "by_category": {"compute": 900, "backend": 100}}),
    "cabling/cables.csv": "cable_id,label,network,media\nC1,L1,backend,mmf\nC1,L2,backend,mmf\nC2,L3,oob,cat6\n",
    "cabling/racks/r01.csv": "x\n",
    "cabling/racks/r01.html": "<html></html>\n",
    "frontend/fe-leaf01/frr.conf": "hostname fe-leaf01\n",
    "frontend/summary.txt": "fabric\n",
    "slurm/topology.conf": "SwitchName=su1\n",
}


def test_tree_groups_by_top_folder_and_rack(monitor, compiled, tmp_path):
    plan = racked(compiled("h100-256"))
    site = run(lambda: Site("h100-256", plan, FILES, str(tmp_path)))
    assert sorted(site.artifacts) == sorted(FILES)
    reg = monitor.registered
    sites = _by_name(monitor, SITE_T)
    assert list(sites) == ["h100-256"]
    site_urn = sites["h100-256"][0]
    nets, folders, racks = _by_name(monitor, NETWORK_T), _by_name(monitor, FOLDER_T), _by_name(monitor, RACK_T)
    assert sorted(nets) == ["frontend"]  # a top folder named after one of the plan's networks
    assert sorted(folders) == ["cabling", "slurm"]
    assert sorted(racks) == ["cabling/r01", "frontend/n01"]
    assert reg[racks["cabling/r01"][0]]["parent"] == folders["cabling"][0]
    assert reg[racks["frontend/n01"][0]]["parent"] == nets["frontend"][0]
    arts = _by_name(monitor, ARTIFACT_T)
    assert sorted(arts) == sorted(FILES), "one resource per rendered file, named by its path"
    parent = {name: reg[urn]["parent"] for name, (urn, _) in arts.items()}
    assert parent["plan.json"] == parent["bom.json"] == site_urn
    assert parent["cabling/cables.csv"] == folders["cabling"][0]
    assert parent["cabling/racks/r01.csv"] == parent["cabling/racks/r01.html"] == racks["cabling/r01"][0]
    assert parent["frontend/fe-leaf01/frr.conf"] == racks["frontend/n01"][0]  # via the device's rack
    assert parent["frontend/summary.txt"] == nets["frontend"][0]
    assert parent["slurm/topology.conf"] == folders["slurm"][0]
    # inputs: the absolute directory, the relative path, the text; nothing secret here
    obj = reg[arts["slurm/topology.conf"][0]]["object"]
    assert obj["dir"] == str(tmp_path) and obj["path"] == "slurm/topology.conf"
    assert obj["content"] == "SwitchName=su1\n" and obj["mode"] == "0644"
    assert reg[arts["slurm/topology.conf"][0]]["secret_outputs"] == []


def test_aliases_cover_every_other_grouping(monitor, compiled, tmp_path):
    plan = racked(compiled("h100-256"))
    run(lambda: Site("s", plan, FILES, str(tmp_path)))
    arts = _by_name(monitor, ARTIFACT_T)
    chain = "railyard:site:Site$railyard:site:Folder$pulumi-python:dynamic/railyard:FileArtifact"
    aliases = monitor.registered[arts["cabling/racks/r01.csv"][0]]["aliases"]
    # moving out of rack r01 (or the rack disappearing) keeps the same resource
    assert f"urn:pulumi:unit::railyard::{chain}::cabling/racks/r01.csv" in aliases
    assert len(aliases) == 3
    assert monitor.registered[arts["plan.json"][0]]["aliases"] == []


def test_placement_is_generic():
    racks, where = {"r01", "r02"}, {"su1-rail0-leaf": "r02"}
    assert place("plan.json", {"backend"}, racks, where).section is None
    assert place("backend/su1-rail0-leaf.cfg", {"backend"}, racks, where).rack == "r02"
    assert place("backend/su1-rail0-leaf.cfg", {"backend"}, racks, where).network is True
    assert place("newkind/r01/x.txt", {"backend"}, racks, where) == place("newkind/r01/x.txt", set(), racks, where)
    assert place("newkind/deep/thing.txt", {"backend"}, racks, where).rack is None


def test_rack_index_reads_rack_shapes(compiled):
    plan = copy.deepcopy(compiled("h100-256"))
    plan.extra["racks"] = {"r09": {"row": 1}}
    plan.devices[0].attrs["rack"] = {"name": "r10"}
    racks, where = rack_index(plan)
    assert racks == {"r09", "r10"} and where == {plan.devices[0].name: "r10"}


def test_stack_outputs_from_the_real_program(monitor, tmp_path, monkeypatch):
    exported = {}
    monkeypatch.setattr(pulumi, "export", lambda k, v: exported.__setitem__(k, v))
    monkeypatch.chdir(ROOT)
    pulumi.runtime.set_all_config({"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(tmp_path)})
    run(program.main)
    assert exported["design"] == "h100-256"
    assert exported["gpus"] == 256 and exported["servers"] == 32
    arts = _by_name(monitor, ARTIFACT_T)
    assert exported["artifacts"] == len(arts) > 0
    assert exported["outDir"] == str(tmp_path)
    # counts match the plan that was compiled
    from generators.compiler import compile_file

    plan, _, _ = compile_file(ROOT / "designs/h100-256.yaml")
    assert exported["switches"] == sum(d.kind == "switch" for d in plan.devices)
    assert sum(exported["switchesByNetwork"].values()) == exported["switches"]
    assert exported["links"] == len(plan.links)
    assert sorted(arts) == sorted(render_all(plan)), "every file render_all returns is a resource"
    files = render_all(plan)
    # without a cable plan or BoM the figures are unknown (None), never a made-up zero
    if not any(p.endswith("cables.csv") for p in files) and "cables" not in plan.extra:
        assert exported["cables"] is None
    if not any(p.endswith("bom.json") for p in files) and "bom" not in plan.extra:
        assert exported["costTotalUsd"] is None and exported["costPerGpuUsd"] is None


def test_cable_and_cost_outputs_come_from_the_plan(monitor, compiled, tmp_path):
    plan = compiled("h100-256")
    site = run(lambda: Site("s", plan, FILES, str(tmp_path)))
    f = site.facts
    by_medium = plan.extra["cabling"]["cables"]
    assert f["cables"] == sum(by_medium.values()) > 0
    assert f["cables_by_network_medium"] == dict(sorted(by_medium.items()))
    bom = plan.extra["bom"]
    assert f["cost_total_usd"] == bom["total_usd"] > 0
    assert f["cost_per_gpu_usd"] == pytest.approx(bom["total_usd"] / 256)
    assert f["cost_by_category"] == dict(sorted(bom["by_category"].items()))


def test_secret_artifacts_are_secret(monitor, compiled, tmp_path):
    files = {"oob/snmp.conf": f"community {placeholder('snmp_community')}\n", "plan.json": "{}\n"}
    values = {"snmp_community": pulumi.Output.secret("c0mmunity-x")}
    run(lambda: Site("s", compiled("h100-256"), files, str(tmp_path), values))
    arts = _by_name(monitor, ARTIFACT_T)
    snmp = monitor.registered[arts["oob/snmp.conf"][0]]
    assert snmp["object"]["content"] == {SECRET_SIG_KEY: SECRET_SIG, "value": "community c0mmunity-x\n"}
    assert snmp["object"]["mode"] == "0600"
    assert sorted(snmp["secret_outputs"]) == ["sha256", "size"]
    plain = monitor.registered[arts["plan.json"][0]]
    assert plain["object"]["content"] == "{}\n" and plain["secret_outputs"] == []


SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d"


def test_missing_secret_names_the_config_key(monitor, compiled, tmp_path):
    files = {"frontend/fe-leaf01/frr.conf": f"neighbor x password {placeholder('bgp_password')}\n"}
    with pytest.raises(Exception, match=r"railyard:bgpPassword: secret is not set.*frr.conf"):
        run(lambda: Site("s", compiled("h100-256"), files, str(tmp_path), {}))
    assert not _by_name(monitor, ARTIFACT_T), "nothing is registered when a secret is missing"


def test_bad_design_is_a_clean_run_error(monitor, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    pulumi.runtime.set_all_config({"railyard:design": "designs/h100-256.yaml",
                                   "railyard:outDir": str(tmp_path),
                                   "railyard:overrides": json.dumps(["backend.oversubscription=1:2"])})
    with pytest.raises(pulumi.RunError, match=r"backend\.oversubscription"):
        run(program.main)


@pytest.mark.parametrize("out", ["designs", "."])
def test_deploy_folder_holding_the_design_is_refused(monitor, monkeypatch, out):
    monkeypatch.chdir(ROOT)
    pulumi.runtime.set_all_config({"railyard:design": "designs/h100-256.yaml", "railyard:outDir": out})
    with pytest.raises(pulumi.RunError, match=r"railyard:outDir .* holds the design"):
        run(program.main)
    assert not _by_name(monitor, ARTIFACT_T)
