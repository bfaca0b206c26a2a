"""The real railyard program (components/program.py) with the grouping it had before the Site read
`Device.rack`: rack names were found, so the cabling rack sheets were grouped by rack (then under
`cabling/<rack>` Rack components, today in `cabling/<rack>` FileGroups), but no device mapped to a
rack, so every switch file was in its network's own group. (Checked against that commit's own
program, b85ae60, on the real engine: the same 14 racks.) The engine tests `pulumi up` this, then
switch the same stack to the real program, which moves the switch files into rack groups."""

import components.site
from components.program import main

components.site.rack_index = lambda plan: ({r.name for r in plan.racks}, {})
main()
