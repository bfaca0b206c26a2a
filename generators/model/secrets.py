"""Secrets never enter the compiler: renderers write placeholders, the deployment fills them in.

A design and its compiled output (`railyard compile`, plan.json, every artifact) are safe to commit
and to attach to a pull request. Where a config needs a credential (a switch's admin password, a BMC
password, an SNMP community, a BGP session password) its renderer writes `placeholder(name)`; the
Pulumi program substitutes the value from Pulumi secret config (`pulumi config set --secret
railyard:bgpPassword ...`) and marks that artifact secret, so the value is encrypted in the state and
the file is written with mode 0600.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from generators.model.errors import DesignError, Problem

# secret name (used by renderers) -> Pulumi config key in the `railyard` namespace
SECRETS: dict[str, str] = {
    "switch_password": "switchPassword",  # switch admin/local user password (all vendors)
    "bmc_password": "bmcPassword",  # server BMC (Redfish/IPMI) password
    "snmp_community": "snmpCommunity",  # SNMP v2c read community on switches and PDUs
    "bgp_password": "bgpPassword",  # TCP-MD5 password of the frontend BGP sessions
}

_PLACEHOLDER = re.compile(r"%%RAILYARD_SECRET:([a-z_]+)%%")
# What can go into JSON strings, FRR/EOS command lines and HTML unescaped: no whitespace, quotes,
# backslashes or markup characters. 8+ characters: these guard management planes.
_VALUE = re.compile(r"[A-Za-z0-9!#$%()*+,./:;=?@\[\]^_{|}~-]{8,128}")


def placeholder(name: str) -> str:
    """The text a renderer writes where the secret `name` belongs."""
    if name not in SECRETS:
        raise KeyError(f"unknown secret {name!r}; known: {', '.join(sorted(SECRETS))}")
    return f"%%RAILYARD_SECRET:{name}%%"


def referenced(text: str) -> set[str]:
    """Names of the secrets a rendered file refers to."""
    return set(_PLACEHOLDER.findall(text))


def config_key(name: str) -> str:
    return f"railyard:{SECRETS[name]}"


def check_value(name: str, value: str) -> None:
    if not _VALUE.fullmatch(value):
        raise DesignError.one(
            config_key(name),
            "must be 8-128 characters without whitespace, quotes, backslashes or <>&",
            f"choose another value with `pulumi config set --secret {config_key(name)} VALUE`",
        )


def require(names: set[str], available: set[str] | Mapping[str, object], path: str = "") -> None:
    """Raise one error naming the config key of every secret in `names` that is unknown or not set."""
    missing = sorted(n for n in names if n not in SECRETS or n not in available)
    if missing:
        raise DesignError([_missing(n, path) for n in missing])


def fill(text: str, values: Mapping[str, str], path: str = "") -> str:
    """Replace every placeholder in `text`; a missing or unknown secret is an error naming its config key."""
    require(referenced(text), values, path)
    for n in referenced(text):
        check_value(n, values[n])
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], text)


def _missing(name: str, path: str) -> Problem:
    where = f" (needed by {path})" if path else ""
    if name not in SECRETS:
        return Problem(
            path or "artifact",
            f"refers to unknown secret {name!r}{where}",
            f"renderers may use only {', '.join(sorted(SECRETS))}",
        )
    return Problem(
        config_key(name), f"secret is not set{where}", f"pulumi config set --secret {config_key(name)} VALUE"
    )
