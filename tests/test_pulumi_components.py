"""The component tree and stack outputs under pulumi.runtime.set_mocks (no engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pytest
from pulumi.runtime import mocks, rpc

from components import program
from components.artifact import BLOBS, sha256_text, store_blob
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
            # the mock monitor hands secrets over wrapped; the provider's outputs are its inputs
            outs = {k: rpc.unwrap_rpc_secret(v) for k, v in outs.items()}
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
    "cabling/cables.csv": "cable_id,label,network,media\nC1,L1,backend,mmf\n",
    "slurm/topology.conf": "SwitchName=su1\n",
}


@pytest.fixture(scope="module")
def h100_256_files(compiled):
    return render_all(compiled("h100-256"))


def test_every_device_file_lands_under_its_rack(monitor, compiled, h100_256_files, tmp_path):
    """On the compiled h100-256 and every file it renders: a file of a placed device (a switch's
    configs) hangs under a Rack component named after the rack placement put the device in."""
    plan, files = compiled("h100-256"), h100_256_files
    stale = store_blob(tmp_path, "a file of an earlier deploy\n")
    site = run(lambda: Site("h100-256", plan, files, str(tmp_path)))
    assert not (tmp_path / BLOBS / stale).exists(), "the earlier deploy's copy is pruned once all are deployed"
    assert sorted(site.artifacts) == sorted(files)
    reg = monitor.registered
    (site_urn, _), = _by_name(monitor, SITE_T).values()
    nets, folders, racks = _by_name(monitor, NETWORK_T), _by_name(monitor, FOLDER_T), _by_name(monitor, RACK_T)
    assert {"frontend", "oob"} <= set(nets) and {"cabling", "slurm", "infiniband"} <= set(folders)
    arts = _by_name(monitor, ARTIFACT_T)
    parent = {name: reg[urn]["parent"] for name, (urn, _) in arts.items()}
    rack_of = {d.name: d.rack for d in plan.devices}
    switch_files = [p for p in files if p.split("/")[0] in ("frontend", "oob") and p.count("/") == 2
                    and p.split("/")[1] in rack_of]
    assert len(switch_files) >= 2 * sum(d.kind == "switch" and d.network == "frontend" for d in plan.devices)
    for path in switch_files:
        section, device = path.split("/")[:2]
        rack = rack_of[device]
        assert rack is not None, f"{device} was not placed"
        urn, _ = racks[f"{section}/{rack}"]
        assert parent[path] == urn, f"{path} is not under rack {rack}"
        assert reg[urn]["parent"] == nets[section][0]
    assert parent["frontend/fe-leaf01/frr.conf"] == racks[f"frontend/{plan.device('fe-leaf01').rack}"][0]
    # a rack's printed sheets go under that rack in the cabling folder
    for r in plan.racks:
        assert parent[f"cabling/racks/{r.name}.html"] == racks[f"cabling/{r.name}"][0]
    assert parent["plan.json"] == parent["bom.json"] == site_urn
    assert parent["cabling/cables.csv"] == folders["cabling"][0]
    # inputs: the absolute directory, the relative path, the content's hash, size and line count (never
    # the text: that goes to the blob store the provider copies from); nothing secret here
    obj = reg[arts["slurm/topology.conf"][0]]["object"]
    obj.pop("__provider")
    text = files["slurm/topology.conf"]
    assert obj == {"dir": str(tmp_path), "path": "slurm/topology.conf", "mode": "0644", "sha256": sha256_text(text),
                   "size": len(text.encode()), "lines": text.count("\n")}
    assert (tmp_path / BLOBS / sha256_text(text)).read_text() == text
    assert reg[arts["slurm/topology.conf"][0]]["secret_outputs"] == []
    # every stored copy is one an artifact uses (the store was pruned to this site, nothing more)
    assert {p.name for p in (tmp_path / BLOBS).iterdir()} == {sha256_text(t) for t in files.values()}


def test_aliases_cover_every_other_grouping(monitor, compiled, h100_256_files, tmp_path):
    """A stack made before files were grouped by rack keeps its resources: each racked file carries
    the URNs it had without the Rack (and under the other section type)."""
    plan = compiled("h100-256")
    run(lambda: Site("s", plan, h100_256_files, str(tmp_path)))
    arts = _by_name(monitor, ARTIFACT_T)
    path = f"cabling/racks/{plan.racks[0].name}.csv"
    aliases = monitor.registered[arts[path][0]]["aliases"]
    chain = "railyard:site:Site$railyard:site:Folder$pulumi-python:dynamic/railyard:FileArtifact"
    assert f"urn:pulumi:unit::railyard::{chain}::{path}" in aliases
    assert len(aliases) == 3
    assert monitor.registered[arts["plan.json"][0]]["aliases"] == []


def test_placement_is_generic():
    racks, where = {"r01", "r02"}, {"su1-rail0-leaf": "r02"}
    assert place("plan.json", {"backend"}, racks, where).section is None
    assert place("backend/su1-rail0-leaf.cfg", {"backend"}, racks, where).rack == "r02"
    assert place("backend/su1-rail0-leaf.cfg", {"backend"}, racks, where).network is True
    assert place("newkind/r01/x.txt", {"backend"}, racks, where) == place("newkind/r01/x.txt", set(), racks, where)
    assert place("newkind/deep/thing.txt", {"backend"}, racks, where).rack is None


def test_rack_index_follows_placement(compiled):
    plan = compiled("h100-256")
    racks, where = rack_index(plan)
    assert racks == {r.name for r in plan.racks} and len(racks) == 14
    placed = [d for d in plan.devices if d.rack is not None]
    assert len(placed) == len(where) > 100 and all(where[d.name] == d.rack for d in placed)

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
    if not any(p.endswith("cables.csv") for p in files) and plan.cables is None:
        assert exported["cables"] is None
    if not any(p.endswith("bom.json") for p in files) and plan.bom is None:
        assert exported["costTotalUsd"] is None and exported["costPerGpuUsd"] is None


def test_cable_and_cost_outputs_come_from_the_plan(monitor, compiled, h100_256_files, tmp_path):
    plan = compiled("h100-256")
    site = run(lambda: Site("s", plan, h100_256_files, str(tmp_path)))
    f = site.facts
    # the figures a stack exports are the ones the written files give a reader
    written = json.loads(h100_256_files["bom.json"])
    assert (f["cost_total_usd"], f["cost_by_category"]) == (written["total_usd"], written["by_category"])
    assert f["artifacts"] == len(h100_256_files)
    by_medium = plan.cabling.cables
    assert f["cables"] == sum(by_medium.values()) > 0
    assert f["cables_by_network_medium"] == dict(sorted(by_medium.items()))
    bom = plan.bom
    assert f["cost_total_usd"] == bom.total_usd > 0
    assert f["cost_per_gpu_usd"] == pytest.approx(bom.total_usd / 256)
    assert f["cost_by_category"] == dict(sorted(bom.by_category.items()))


def test_secret_artifacts_are_secret(monitor, compiled, tmp_path):
    files = {"oob/snmp.conf": f"community {placeholder('snmp_community')}\n", "plan.json": "{}\n"}
    values = {"snmp_community": pulumi.Output.secret("c0mmunity-x")}
    run(lambda: Site("s", compiled("h100-256"), files, str(tmp_path), values))
    arts = _by_name(monitor, ARTIFACT_T)
    snmp = monitor.registered[arts["oob/snmp.conf"][0]]
    filled = "community c0mmunity-x\n"
    assert snmp["object"]["sha256"] == {SECRET_SIG_KEY: SECRET_SIG, "value": sha256_text(filled)}
    assert snmp["object"]["lines"] == {SECRET_SIG_KEY: SECRET_SIG, "value": 1}
    assert "content" not in snmp["object"] and "c0mmunity-x" not in json.dumps(snmp["object"])
    assert snmp["object"]["mode"] == "0600"
    assert sorted(snmp["secret_outputs"]) == ["lines", "sha256", "size"]
    blob = tmp_path / BLOBS / sha256_text(filled)  # the filled-in file reaches the provider only here
    assert blob.read_text() == filled and blob.stat().st_mode & 0o777 == 0o600
    plain = monitor.registered[arts["plan.json"][0]]
    assert plain["object"]["sha256"] == sha256_text("{}\n") and plain["secret_outputs"] == []


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


def test_a_preview_stores_nothing(compiled, tmp_path):
    mon = Recorder(Mocks())
    pulumi.runtime.set_mocks(Mocks(), project="railyard", stack="unit", preview=True, monitor=mon)
    try:
        run(lambda: Site("s", compiled("h100-256"), FILES, str(tmp_path / "out")))
    finally:
        pulumi.runtime.set_all_config({})
    assert len(_by_name(mon, ARTIFACT_T)) == len(FILES)
    assert not (tmp_path / "out").exists()
