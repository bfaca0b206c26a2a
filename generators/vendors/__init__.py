"""Switch configs, one renderer module per network OS: each switch is rendered by the module its OS's
row in ``generators.model.netos`` names (``render_frontend``, ``render_backend`` and ``render_oob``
below are the only dispatch). A module defines ``render_frontend(plan)`` if its OS serves the frontend,
``render_backend(plan)`` for an InfiniBand or RoCE backend, ``render_storage(plan)`` if it serves an
InfiniBand storage fabric, and ``render_oob(plan, views)`` for out-of-band switches;
tests/test_vendors.py holds every row to that.
"""

from __future__ import annotations

from collections import defaultdict
from importlib import import_module
from types import ModuleType

from generators.model.netos import network_os
from generators.model.plan import Plan
from generators.views.switches import SwitchView, oob_views


def renderer(os: str) -> ModuleType:
    """The module that renders switches of network OS `os`."""
    return import_module(f"{__name__}.{network_os(os).renderer}")


def render_frontend(plan: Plan) -> dict[str, str]:
    os_ = plan.networks.frontend.vendor
    if os_ is None:  # no network plan
        return {}
    files: dict[str, str] = renderer(os_).render_frontend(plan)
    return files


def render_backend(plan: Plan) -> dict[str, str]:
    model = plan.networks.backend.switch
    # the design check refuses a backend switch whose OS does not serve its technology
    files: dict[str, str] = renderer(plan.catalog.switches[model].os).render_backend(plan)
    return files


def render_storage(plan: Plan) -> dict[str, str]:
    """A dedicated storage fabric's switch files, by the OS of its switches. An InfiniBand one is a
    subnet of its own; an Ethernet one gets none yet (its PlanWarning says so)."""
    if plan.networks.technology("storage") != "infiniband":
        return {}
    assert plan.networks.storage is not None
    files: dict[str, str] = renderer(plan.catalog.switches[plan.networks.storage.switch].os).render_storage(plan)
    return files


def render_oob(plan: Plan) -> dict[str, str]:
    if plan.netplan is None:
        return {}
    catalog = plan.catalog
    by_os: dict[str, dict[str, SwitchView]] = defaultdict(dict)
    for name, v in oob_views(plan).items():
        by_os[catalog.switches[v.device.model].os][name] = v
    files: dict[str, str] = {}
    for os_, views in by_os.items():
        files.update(renderer(os_).render_oob(plan, views))
    return files
