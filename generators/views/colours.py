"""The colours every sheet, label, floor map and NetBox object shows, so a technician sees one colour
for one thing wherever they look."""

from __future__ import annotations

# cable jacket colours technicians expect, by medium: aqua OM4, yellow OS2 (TIA-598), black copper,
# blue Cat6 (RGB hex, as NetBox takes them)
COLOR = {"dac": "111111", "acc": "444444", "aoc": "ff8c00", "mmf": "00bcd4", "smf": "ffeb3b", "cat6": "1e63d6"}
# rack roles on the floor map and the sheets (NetBox device roles take the same)
ROLE_COLOR = {
    "compute": "#8fb8de",
    "leaf": "#f4a259",
    "spine": "#e05d5d",
    "core": "#9b5de5",
    "frontend": "#5fbf77",
    "storage": "#c9b458",
    "management": "#a0a0a0",
    "cdu": "#3fb8c8",
    "sidecar": "#e8b12f",  # an 800 VDC power sidecar's position
    "power-sidecar": "#e8b12f",  # the sidecar device (NetBox role)
}
