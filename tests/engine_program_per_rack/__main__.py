"""The real railyard program (components/program.py) with the grouping it had until groups became per
row: one FileGroup per rack and top folder, `<top folder>/<rack>` (a rack's sheets, the files of the
switches placed in it). Each rack stands for its own row here, which gives exactly those group names,
parents and aliases. The engine tests and `bench/pulumi_up.py --migrate per-rack` deploy this, then
switch the same stack to the real program, which moves every rack's files into its row's group."""

import os

import components.site
from components.program import main

# a record of this patched grouping would be found by today's program under the same key (same design,
# catalog and source) and registered as today's
os.environ["RAILYARD_SITE_CACHE"] = "off"
components.site.rack_index = lambda plan: (
    {r.name: r.name for r in plan.racks},
    {d.name: d.rack for d in plan.devices if d.rack is not None},
)
main()
