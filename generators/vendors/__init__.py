"""One module per network OS, behind this registry: what each switch operating system renders.

A switch model's catalog ``os`` picks its vendor here; every switch is rendered by exactly that
vendor (``render_frontend``, ``render_backend``, ``render_oob`` below are the only dispatch). The
names are the catalog's ``NetworkOs`` (the model layer cannot import the renderers), asserted equal.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, get_args

from generators.model.catalog import NetworkOs
from generators.model.plan import Plan

if TYPE_CHECKING:
    from generators.renderers.netview import SwitchView
    from generators.vendors.base import Role, Vendor

VENDORS: dict[str, Vendor] = {}  # filled at the bottom, once the functions below exist


def vendor(os: str) -> Vendor:
    try:
        return VENDORS[os]
    except KeyError:
        raise KeyError(f"no vendor module for switch OS {os!r}; registered: {', '.join(VENDORS)}") from None


def frontend_vendor(name: str) -> Vendor:
    """The design's frontend.vendor names the OS of the frontend switches."""
    return vendor(name)


def serving(role: Role) -> list[str]:
    """The registered OSes that can be configured in `role`."""
    return [name for name, v in VENDORS.items() if role in v.serves]


def render_frontend(plan: Plan) -> dict[str, str]:
    fe = plan.networks.get("frontend", {})
    if "vendor" not in fe:  # no network plan
        return {}
    render = frontend_vendor(fe["vendor"]).render_frontend
    return render(plan) if render else {}


def render_backend(plan: Plan) -> dict[str, str]:
    model = plan.networks.get("backend", {}).get("switch")
    if model is None:
        return {}
    catalog = plan.catalog
    render = vendor(catalog.switches[model].os).render_backend
    # the design check refuses a backend switch whose OS does not serve its technology
    return render(plan) if render else {}


def render_oob(plan: Plan) -> dict[str, str]:
    if plan.netplan is None:
        return {}
    catalog = plan.catalog
    by_os: dict[str, dict[str, SwitchView]] = defaultdict(dict)
    for name, v in netview.oob_views(plan).items():
        by_os[catalog.switches[v.device.model].os][name] = v
    files: dict[str, str] = {}
    for os_, views in by_os.items():
        render = vendor(os_).render_oob
        if render is None:
            raise RuntimeError(f"{', '.join(views)} run {os_}, which renders no out-of-band switch")
        files.update(render(plan, views))
    return files


# The vendor modules import generators.renderers.netview (and so the renderers package, whose renderer
# list, loaded on first use, holds the dispatch functions above): importing them last lets either package
# be imported first.
from generators.renderers import netview  # noqa: E402
from generators.vendors import cumulus, eos, mlnx_os, nvos, sonic  # noqa: E402

VENDORS.update({m.VENDOR.name: m.VENDOR for m in (sonic, cumulus, eos, mlnx_os, nvos)})
assert set(VENDORS) == set(get_args(NetworkOs)), "the catalog's NetworkOs must list exactly the registered vendors"
