"""The component tree and stack outputs under pulumi.runtime.set_mocks (no engine)."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pytest
from pulumi.runtime import mocks, rpc

from components import program
from components.artifact import BLOBS, OWNERS, entry_text, sha256_text, store_blob, summary
from components.moves import PLACEMENT_T
from components.site import (
    FOLDER_T,
    GROUP_T,
    NETWORK_T,
    RACK_T,
    SECRET_SUFFIX,
    Site,
    place,
    rack_index,
    site_layout,
)
from generators.model.secrets import config_key, fill_files, placeholder, referenced
from generators.renderers import render_all
from generators.reports.diff import placement, placement_entries
from tests.pulumi_engine import SECRET_KEY, SITE_SECRETS

ROOT = Path(__file__).resolve().parent.parent
SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270"  # pulumi's wire signature of a secret value (under SECRET_KEY)
ORIGINAL_STACK_TRACE = pulumi.runtime.resource._get_stack_trace


class Recorder(mocks.MockMonitor):
    """Keeps what the program registered: type, name, parent URN, raw inputs and secret options."""

    def __init__(self, m):
        super().__init__(m)
        self.registered = {}

    def RegisterResource(self, request):
        resp = super().RegisterResource(request)
        self.registered[resp.urn] = {
            "type": request.type,
            "name": request.name,
            "parent": request.parent,
            "object": json.loads(json.dumps(_struct(request.object))),
            "secret_outputs": list(request.additionalSecretOutputs),
            "aliases": [a.urn for a in request.aliases] + list(request.aliasURNs),
            "dependencies": list(request.dependencies),
            "stack_trace": [(f.pc.uri, f.pc.line) for f in request.stackTrace.frames],
            "source_position": (request.sourcePosition.uri, request.sourcePosition.line),
        }
        return resp


def _struct(s):
    from google.protobuf import json_format

    return json_format.MessageToDict(s)


class Mocks(pulumi.runtime.Mocks):
    def new_resource(self, args):
        outs = dict(args.inputs)
        if args.typ == GROUP_T:
            # the mock monitor hands secrets over wrapped; the provider's outputs are its inputs
            outs = {k: rpc.unwrap_rpc_secret(v) for k, v in outs.items()}
            return f"{outs['dir']}#{outs['group']}", outs
        return f"{args.name}-id", outs

    def call(self, args):
        return {}


@pytest.fixture
def monitor(tmp_path_factory, monkeypatch):
    # the program's compiled-site records (components.sitecache) go to a folder of the test's own
    monkeypatch.setenv("RAILYARD_CACHE", str(tmp_path_factory.mktemp("cache")))
    mon = Recorder(Mocks())
    pulumi.runtime.set_mocks(Mocks(), project="railyard", stack="unit", preview=False, monitor=mon)
    yield mon
    pulumi.runtime.set_all_config({})
    pulumi.runtime.resource._get_stack_trace = ORIGINAL_STACK_TRACE  # program.main() trims it


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


def site_values() -> dict[str, pulumi.Output[str]]:
    """The stack secrets a shipped design's switch configs need, as the program hands them to Site."""
    return {n: pulumi.Output.secret(v) for n, v in SITE_SECRETS.items()}


@pytest.fixture(scope="module")
def h100_256_files(compiled):
    return render_all(compiled("h100-256"))


def _files(mon) -> dict[str, str]:
    """path -> name of the FileGroup that registered it."""
    return {path: name for name, (_, r) in _by_name(mon, GROUP_T).items() for path in _plain(r["object"]["files"])}


def _plain(value):
    return value["value"] if isinstance(value, dict) and value.get(SECRET_KEY) == SECRET_SIG else value


def test_every_device_file_lands_under_its_rack(monitor, compiled, h100_256_files, tmp_path):
    """On the compiled h100-256 and every file it renders: a file of a placed device (a switch's
    configs) is in the FileGroup `<section>/<rack>` of the rack placement put the device in, a child
    of its section's component; a section's files of no rack in the group named after the section."""
    plan, files = compiled("h100-256"), h100_256_files
    stale = store_blob(tmp_path, "a file of an earlier deploy\n")
    site = run(lambda: Site("h100-256", site_layout(plan, files), str(tmp_path), site_values()))
    assert not (tmp_path / BLOBS / stale).exists(), "the earlier deploy's copy is pruned once all are deployed"
    reg = monitor.registered
    nets, folders = _by_name(monitor, NETWORK_T), _by_name(monitor, FOLDER_T)
    assert {"frontend", "oob"} <= set(nets) and {"cabling", "slurm", "infiniband"} <= set(folders)
    assert not _by_name(monitor, RACK_T), "a rack is its FileGroup, not a component holding one"
    groups = _by_name(monitor, GROUP_T)
    held = _files(monitor)
    assert sorted(held) == sorted(files), "every rendered file is in exactly one group"
    assert held == site.owner and set(site.groups) == set(groups)
    # each group is a child of its section's component (the Site for `.`), named after its section and rack
    sections = {urn: name for name, (urn, _) in {**nets, **folders}.items()}
    for name, (urn, _) in groups.items():
        assert sections.get(reg[urn]["parent"], ".") == name.split("/")[0].removesuffix(SECRET_SUFFIX), name
        assert name == "." or reg[urn]["parent"] in sections
    assert "frontend" not in groups, "every frontend file is a switch's, in its row's group"
    rack_of = {d.name: d.rack for d in plan.devices}
    row_of = {r.name: r.row for r in plan.racks}
    switch_files = [
        p for p in files if p.split("/")[0] in ("frontend", "oob") and p.count("/") == 2 and p.split("/")[1] in rack_of
    ]
    assert len(switch_files) >= 2 * sum(d.kind == "switch" and d.network == "frontend" for d in plan.devices)
    for path in switch_files:
        section, device = path.split("/")[:2]
        rack = rack_of[device]
        assert rack is not None, f"{device} was not placed"
        # a config holding a secret placeholder is in the row's `#secret` group beside it
        secret = SECRET_SUFFIX if referenced(files[path]) else ""
        assert held[path] == f"{section}/{row_of[rack]}{secret}", f"{path} is not with rack {rack}'s row"
        assert reg[groups[f"{section}/{row_of[rack]}{secret}"][0]]["parent"] == nets[section][0]
    # a rack's printed sheets go to its row's group in the cabling folder
    for r in plan.racks:
        assert held[f"cabling/racks/{r.name}.html"] == f"cabling/{r.row}"
    assert held["plan.json"] == held["bom.json"] == "."
    assert held["cabling/cables.csv"] == "cabling"
    # inputs: the absolute directory, the group's name and mode, and per path the content's hash, size
    # and line count (never the text: that goes to the blob store the provider copies from)
    obj = reg[groups["slurm"][0]]["object"]
    obj.pop("__provider")
    slurm = {p: t for p, t in files.items() if p.startswith("slurm/")}
    assert obj == {
        "dir": str(tmp_path),
        "group": "slurm",
        "mode": "0644",
        "files": {p: entry_text(summary(t)) for p, t in slurm.items()},
    }
    text = files["slurm/topology.conf"]
    assert (tmp_path / BLOBS / sha256_text(text)).read_text() == text
    assert reg[groups["slurm"][0]]["secret_outputs"] == []
    # every stored copy is one a file uses (the store was pruned to this site, nothing more)
    deployed = fill_files(files, SITE_SECRETS)[0]
    assert {p.name for p in (tmp_path / BLOBS).iterdir()} == {sha256_text(t) for t in deployed.values()}
    # the owners record the providers read: path -> group, as registered
    assert json.loads((tmp_path / OWNERS).read_text())["paths"] == held
    assert len(groups) < len(files) / 4
    # the Site's Placement record (components/moves.py): where each device stands; every group waits for
    # it, so a run it refuses deploys no file
    ((urn, record),) = _by_name(monitor, PLACEMENT_T).values()
    assert record["name"] == "placement" and record["parent"] == reg[groups["."][0]]["parent"]
    assert {k: v for k, v in record["object"].items() if k != "__provider"} == {
        "design": "h100-256",
        "devices": placement_entries(placement(plan)),
        "allowMoves": False,
    }
    assert all(reg[u]["dependencies"] == [urn] for u, _ in groups.values())


def test_aliases_cover_the_other_section_type(monitor, compiled, h100_256_files, tmp_path):
    """A group stays the same resource when its top folder becomes (or stops being) one of the plan's
    networks: its alias names the URN it has under the other section type."""
    plan = compiled("h100-256")
    run(lambda: Site("s", site_layout(plan, h100_256_files), str(tmp_path), site_values()))
    groups = _by_name(monitor, GROUP_T)
    rack = f"cabling/{plan.racks[0].row}"
    chain = "railyard:site:Site$railyard:site:Network$pulumi-python:dynamic/railyard:FileGroup"
    assert monitor.registered[groups[rack][0]]["aliases"] == [f"urn:pulumi:unit::railyard::{chain}::{rack}"]
    assert monitor.registered[groups["oob"][0]]["aliases"] == [
        "urn:pulumi:unit::railyard::railyard:site:Site$railyard:site:Folder$pulumi-python:dynamic/railyard:FileGroup"
        "::oob"
    ]
    assert monitor.registered[groups["."][0]]["aliases"] == []


def test_registrations_carry_one_frame_of_stack_trace(monitor, compiled, tmp_path):
    """The SDK sends the whole Python stack with each registration and the engine keeps it in the
    state; the program sends only the frame that constructed the resource, the one the SDK itself
    reports as `sourcePosition`."""
    files = {"plan.json": "{}\n", "slurm/topology.conf": "SwitchName=su1\n"}
    site_py = (ROOT / "components" / "site.py").as_uri()
    run(lambda: Site("s", site_layout(compiled("h100-256"), files), str(tmp_path)))
    full = monitor.registered[_by_name(monitor, GROUP_T)["slurm"][0]]["stack_trace"]
    assert len(full) > 3, "without the program's setting the SDK sends the whole stack"
    monitor.registered.clear()
    program.lean_stack_traces()  # the monitor fixture puts the SDK's own back
    run(lambda: Site("s", site_layout(compiled("h100-256"), files), str(tmp_path)))
    group = monitor.registered[_by_name(monitor, GROUP_T)["slurm"][0]]
    assert group["stack_trace"] == [group["source_position"]] == [full[0]]
    folder = monitor.registered[_by_name(monitor, FOLDER_T)["slurm"][0]]
    assert folder["stack_trace"] == [folder["source_position"]] and folder["source_position"][0] == site_py
    assert {len(r["stack_trace"]) for r in monitor.registered.values()} == {1}


def test_placement_is_generic():
    racks, where = {"r01-01": "r01", "r02-01": "r02"}, {"su1-rail0-leaf": "r02-01"}
    assert place("plan.json", {"backend"}, racks, where).section is None
    assert place("backend/su1-rail0-leaf.cfg", {"backend"}, racks, where).row == "r02"
    assert place("cabling/racks/r01-01.html", {"backend"}, racks, where).row == "r01"
    assert place("backend/su1-rail0-leaf.cfg", {"backend"}, racks, where).network is True
    new = "newkind/r01-01/x.txt"
    assert place(new, {"backend"}, racks, where) == place(new, set(), racks, where)
    assert place("newkind/deep/thing.txt", {"backend"}, racks, where).row is None


def test_rack_index_follows_placement(compiled):
    plan = compiled("h100-256")
    racks, where = rack_index(plan)
    assert racks == {r.name: r.row for r in plan.racks} and len(racks) == 14 and len(set(racks.values())) > 1
    placed = [d for d in plan.devices if d.rack is not None]
    assert len(placed) == len(where) > 100 and all(where[d.name] == d.rack for d in placed)


def test_stack_outputs_from_the_real_program(monitor, tmp_path, monkeypatch):
    exported = {}
    monkeypatch.setattr(pulumi, "export", lambda k, v: exported.__setitem__(k, v))
    monkeypatch.chdir(ROOT)
    # the switch credentials from the stack's config, as `pulumi config set --secret` leaves them
    site_secrets = {config_key(n): v for n, v in SITE_SECRETS.items()}
    pulumi.runtime.set_all_config(
        {"railyard:design": "designs/h100-256.yaml", "railyard:outDir": str(tmp_path), **site_secrets},
        secret_keys=list(site_secrets),
    )
    run(program.main)
    assert exported["design"] == "h100-256"
    assert exported["gpus"] == 256 and exported["servers"] == 32
    held = _files(monitor)
    assert exported["artifacts"] == len(held) > 0
    assert exported["outDir"] == str(tmp_path)
    # counts match the plan that was compiled
    from generators.compiler import compile_file

    plan, _, _ = compile_file(ROOT / "designs/h100-256.yaml")
    assert exported["switches"] == sum(d.kind == "switch" for d in plan.devices)
    assert sum(exported["switchesByNetwork"].values()) == exported["switches"]
    assert exported["links"] == len(plan.links)
    assert sorted(held) == sorted(render_all(plan)), "every file render_all returns is in a group"
    files = render_all(plan)
    # without a cable plan or BoM the figures are unknown (None), never a made-up zero
    if not any(p.endswith("cables.csv") for p in files) and plan.cables is None:
        assert exported["cables"] is None
    if not any(p.endswith("bom.json") for p in files) and plan.bom is None:
        assert exported["costTotalUsd"] is None and exported["costPerGpuUsd"] is None


def test_cable_and_cost_outputs_come_from_the_plan(monitor, compiled, h100_256_files, tmp_path):
    plan = compiled("h100-256")
    site = run(lambda: Site("s", site_layout(plan, h100_256_files), str(tmp_path), site_values()))
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
    """A file that embeds a secret is in its component's `#secret` group: the whole map (hash, size,
    line count) is encrypted, in and out, mode 0600; the other files' group stays readable."""
    files = {
        "oob/snmp.conf": f"community {placeholder('snmp_community')}\n",
        "oob/kea.conf": "{}\n",
        "plan.json": "{}\n",
    }
    values = {"snmp_community": pulumi.Output.secret("c0mmunity-x")}
    run(lambda: Site("s", site_layout(compiled("h100-256"), files), str(tmp_path), values))
    groups = _by_name(monitor, GROUP_T)
    assert set(groups) == {".", "oob", "oob#secret"}
    snmp = monitor.registered[groups["oob#secret"][0]]
    filled = "community c0mmunity-x\n"
    want = {"oob/snmp.conf": entry_text(summary(filled))}
    assert snmp["object"]["files"] == {SECRET_KEY: SECRET_SIG, "value": want}
    assert "c0mmunity-x" not in json.dumps(snmp["object"])
    assert snmp["object"]["mode"] == "0600"
    assert snmp["secret_outputs"] == ["files"]
    assert snmp["parent"] == monitor.registered[groups["oob"][0]]["parent"], "both groups belong to the oob component"
    blob = tmp_path / BLOBS / sha256_text(filled)  # the filled-in file reaches the provider only here
    assert blob.read_text() == filled and blob.stat().st_mode & 0o777 == 0o600
    plain = monitor.registered[groups["oob"][0]]
    assert plain["object"]["files"] == {"oob/kea.conf": entry_text(summary("{}\n"))} and plain["secret_outputs"] == []


def test_missing_secret_names_the_config_key(monitor, compiled, tmp_path):
    files = {"frontend/fe-leaf01/frr.conf": f"neighbor x password {placeholder('bgp_password')}\n"}
    with pytest.raises(Exception, match=r"railyard:bgpPassword: secret is not set.*frr.conf"):
        run(lambda: Site("s", site_layout(compiled("h100-256"), files), str(tmp_path), {}))
    assert not _by_name(monitor, GROUP_T), "nothing is registered when a secret is missing"
    assert not (tmp_path / ".railyard").exists(), "nor any owners record written"


def test_bad_design_is_a_clean_run_error(monitor, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    pulumi.runtime.set_all_config(
        {
            "railyard:design": "designs/h100-256.yaml",
            "railyard:outDir": str(tmp_path),
            "railyard:overrides": json.dumps(["backend.oversubscription=1:2"]),
        }
    )
    with pytest.raises(pulumi.RunError, match=r"backend\.oversubscription"):
        run(program.main)


@pytest.mark.parametrize("out", ["designs", "."])
def test_deploy_folder_holding_the_design_is_refused(monitor, monkeypatch, out):
    monkeypatch.chdir(ROOT)
    pulumi.runtime.set_all_config({"railyard:design": "designs/h100-256.yaml", "railyard:outDir": out})
    with pytest.raises(pulumi.RunError, match=r"railyard:outDir .* holds the design"):
        run(program.main)
    assert not _by_name(monitor, GROUP_T)


def test_a_preview_stores_nothing(compiled, tmp_path):
    mon = Recorder(Mocks())
    pulumi.runtime.set_mocks(Mocks(), project="railyard", stack="unit", preview=True, monitor=mon)
    try:
        run(lambda: Site("s", site_layout(compiled("h100-256"), FILES), str(tmp_path / "out")))
    finally:
        pulumi.runtime.set_all_config({})
    assert _files(mon) == {"plan.json": ".", "cabling/cables.csv": "cabling", "slurm/topology.conf": "slurm"}
    assert not (tmp_path / "out").exists(), "a preview stores no blob and writes no owners record"
