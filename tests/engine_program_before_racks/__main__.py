"""The real railyard program (components/program.py) with the grouping it had before the Site read
`Device.rack`: rack names were found, so the cabling rack sheets sat under `cabling/<rack>` Rack
components, but no device mapped to a rack, so every switch file hung directly under its Network.
(Checked against that commit's own program, b85ae60, on the real engine: the same 14 Rack components.)
The engine tests `pulumi up` this, then switch the same stack to the real program."""

import components.site
from components.program import main

components.site.rack_index = lambda plan: ({r.name for r in plan.racks}, {})
main()
