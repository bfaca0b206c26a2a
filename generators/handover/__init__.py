"""Hand-over of a compiled plan to the site's systems of record (NetBox)."""
