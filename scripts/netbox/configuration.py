"""NetBox configuration for railyard's tests: a throwaway instance on loopback.

scripts/install-netbox.sh (building the migrated template) and tests/netbox_service.py (each test
session) copy this file to $NETBOX_ROOT/conf/configuration.py, where the pip-installed NetBox looks
for it. Ports come from the environment because every session picks free ones, so one file serves
the template build and any number of concurrent sessions.

The secrets are fixed and public on purpose: the database lives in a temp dir for one session and
listens on 127.0.0.1 only, and a fixed pepper keeps v2 tokens valid however the instance was
started. Never point a real site at this file.
"""

import os

ALLOWED_HOSTS = ["127.0.0.1", "localhost"]

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "netbox",
        "USER": "netbox",
        "PASSWORD": "",
        "HOST": "127.0.0.1",
        "PORT": os.environ["RAILYARD_NETBOX_PG_PORT"],
        "CONN_MAX_AGE": 300,
    }
}

_REDIS_PORT = int(os.environ["RAILYARD_NETBOX_REDIS_PORT"])
REDIS = {
    name: {"HOST": "127.0.0.1", "PORT": _REDIS_PORT, "USERNAME": "", "PASSWORD": "", "DATABASE": db, "SSL": False}
    for name, db in (("tasks", 0), ("caching", 1))
}

SECRET_KEY = "railyard-test-secret-key-not-for-production-use-0123456789abcdef"
# v2 tokens (the `Bearer nbt_<key>.<secret>` kind) need a pepper of at least 50 characters.
API_TOKEN_PEPPERS = {1: "railyard-test-token-pepper-not-for-production-use-0123456789abcdef"}

# No calls home from a test run: the machine reaches only package registries anyway, and a
# release check or census ping would just time out.
CENSUS_REPORTING_ENABLED = False
RELEASE_CHECK_URL = None

# Large list POSTs (the batching the push relies on) and deep pages.
MAX_PAGE_SIZE = 5000
DATA_UPLOAD_MAX_MEMORY_SIZE = 64 * 1024 * 1024

DEBUG = False
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
