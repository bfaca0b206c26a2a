"""A Pulumi program for the engine tests: the `railyard:design` site plus `railyard:count` synthetic artifacts
through the same Site component and provider, so the engine is driven past 2,000 file resources
before the renderers of every issue exist. `railyard:racked` groups the files of a device under the
row of the rack placement put it in (true, as the real program does) or not (false: Site is given no
device's rack), moving the synthetic per-server files between groups without changing a byte;
`railyard:bmcPassword` (secret) fills one artifact that embeds a credential; `railyard:overrides` (a
list, optional) are the design's what-if overrides, as in the real program."""

import copy
from pathlib import Path

import pulumi

import components.program
import components.site
from components.program import secret_config
from components.site import Site

try:
    from components.site import site_layout
except ImportError:  # the frozen components/ of an earlier railyard: its Site takes the plan and files
    site_layout = None
from generators.compiler import compile_file
from generators.model.secrets import placeholder
from generators.renderers import render_all

ROOT = Path(__file__).resolve().parent.parent.parent
# as the real program does; the frozen components/ of earlier railyards (engine_program_before_*) had none
getattr(components.program, "lean_stack_traces", lambda: None)()
cfg = pulumi.Config("railyard")
count = cfg.require_int("count")
plan = copy.deepcopy(compile_file(ROOT / cfg.require("design"), cfg.get_object("overrides") or [])[0])
servers = [d for d in plan.devices if d.kind == "server"]
if not cfg.require_bool("racked"):
    components.site.rack_index = lambda plan: ({r.name: r.row for r in plan.racks}, {})
files = render_all(plan)
for i in range(count):
    d = servers[i % len(servers)].name
    files[f"synthetic/{d}/f{i:05d}.cfg"] = f"# artifact {i} of {d}\nvalue = {i * 7919 % 10007}\n"
files["oob/bmc-credentials.env"] = f"BMC_USER=admin\nBMC_PASSWORD={placeholder('bmc_password')}\n"
files = dict(sorted(files.items()))
site = Site(
    "engine-test",
    *((site_layout(plan, files),) if site_layout else (plan, files)),
    cfg.require("outDir"),
    secret_config(cfg),
)
pulumi.export("artifacts", site.facts["artifacts"])
