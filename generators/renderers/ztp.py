"""The zero-touch provisioning tree, ``ztp/``: per switch, the file its OS's ZTP fetches first (the URL in
the DHCP option of its Kea reservation, ``generators.views.ztp``), which fetches that switch's own
compiled configs by URL; and ``ztp/switches.json``, the index `railyard serve-ztp` serves from.

- SONiC: ``ztp/<switch>/ztp.json`` (SONiC ZTP JSON: a ``01-frr-conf`` section whose plugin is
  ``frr-conf.sh``, which installs frr.conf, then ``02-configdb-json``, the configdb-json plugin loading
  config_db.json). SONiC ZTP design: https://github.com/sonic-net/SONiC/blob/master/doc/ztp/ztp.md
- EOS: ``ztp/<switch>/bootstrap``, a CLI script copying eos.cfg to the startup-config.
- Cumulus Linux: ``ztp/<switch>/cumulus-ztp.sh`` with the CUMULUS-AUTOPROVISIONING flag, which replaces
  the NVUE configuration with startup.yaml and applies it.

The files hold URLs only: no secret, and the configs they fetch are whatever folder is served (the
compiled folder's placeholders, or a deploy folder's values).
"""

from __future__ import annotations

import json
from typing import Any

from generators.model.plan import Plan
from generators.views import ztp
from generators.views.ztp import ZtpSwitch

INDEX = "ztp/switches.json"
SONIC_FRR_SCRIPT = "frr-conf.sh"


def render_ztp(plan: Plan) -> dict[str, str]:
    if not ztp.enabled(plan):
        return {}
    from generators.text.templating import environment  # jinja2 only when there is a tree to write

    env = environment(autoescape=False, trim=True)
    files: dict[str, str] = {}
    index: dict[str, Any] = {}
    for sw in ztp.switches(plan):
        own = _files(plan, sw, env)
        files.update(own)
        index[sw.name] = {
            "os": sw.os,
            "address": sw.address,
            "access_port": f"{sw.access_switch} {sw.access_port}",
            "circuit_id": sw.circuit_id,
            "dhcp_options": {str(o.code): o.data for o in sw.options},
            # everything it fetches, in the order it does: serve-ztp serves these paths and no others
            "fetches": [sw.entry, *sorted(p for p in own if p != sw.entry), *sw.configs],
        }
    doc = {
        "schema": "railyard.ztp/1",
        "design": plan.design.name,
        "url": ztp.base_url(plan),
        "switches": index,
        "skipped": ztp.skipped(plan),
    }
    files[INDEX] = json.dumps(doc, indent=2) + "\n"
    return files


def _files(plan: Plan, sw: ZtpSwitch, env: Any) -> dict[str, str]:
    design = plan.design.name

    def url(path: str) -> str:
        return ztp.url_of(plan, path)

    if sw.os == "sonic":
        config_db, frr = sw.configs
        script = f"{sw.folder}/{SONIC_FRR_SCRIPT}"
        doc = {
            "ztp": {
                # sections run in the lexical order of their names; a leading "NN-" is stripped to find the
                # plugin (configdb-json is SONiC ZTP's own; 01-frr-conf's plugin is downloaded and run)
                "01-frr-conf": {"plugin": {"url": url(script)}, "halt-on-failure": True},
                "02-configdb-json": {
                    "url": {"source": url(config_db), "destination": "/etc/sonic/config_db.json"},
                    "halt-on-failure": True,
                },
            }
        }
        return {
            sw.entry: json.dumps(doc, indent=2) + "\n",
            script: env.get_template("ztp-sonic-frr.sh.j2").render(name=sw.name, design=design, config_url=url(frr)),
        }
    (config,) = sw.configs
    template = {"eos": "ztp-eos-bootstrap.j2", "cumulus": "ztp-cumulus.sh.j2"}[sw.os]
    return {sw.entry: env.get_template(template).render(name=sw.name, design=design, config_url=url(config))}
