"""Hand-over of a compiled plan to the site's systems of record (NetBox)."""

# list requests in flight at once: NetBox spends ~0.2 s of server time per cable and ~70 ms per
# interface, so one request at a time leaves all but one of its workers idle (here, not in netbox_sync,
# so the CLI's --workers default does not import the HTTP client)
WORKERS = 4
