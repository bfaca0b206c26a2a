"""Hand-over of a compiled plan to the site's systems of record (NetBox)."""

# list requests in flight at once: NetBox spends ~0.2 s of server time per cable and ~70 ms per
# interface, so one request at a time leaves all but one of its workers idle (here, not in netbox_sync,
# so the CLI's --workers default does not import the HTTP client)
WORKERS = 4
# the HTTP layer's time bounds, seconds (generators/handover/http.py says what each bounds; here for
# the same reason as WORKERS). A bulk POST of 100 cables takes NetBox ~20 s of CPU, ~40 s with 4 in
# flight on 2 cores: READ leaves it 3x that; TOTAL lets a slow request be retried a few times.
CONNECT_TIMEOUT = 10.0
READ_TIMEOUT = 120.0
TOTAL_TIMEOUT = 600.0
# seconds a kept-alive connection may sit idle before railyard opens a new one instead: below every
# common server's keep-alive (gunicorn 2, Apache and uvicorn 5, nginx 75), so railyard never sends on a
# connection the server is closing for idleness. gunicorn (NetBox's own server) drops such a request
# unread with a reset, which for a POST leaves railyard unsure whether it was applied: a test session's
# push of 3,000 objects failed that way once with the earlier 5 s.
KEEPALIVE_EXPIRY = 1.0
