"""Secrets never enter the compiler: renderers write placeholders, the deployment fills them in.

A design and its compiled output (`railyard compile`, plan.json, every artifact) are safe to commit
and to attach to a pull request. Where a config needs a credential (a switch user's password, an SNMPv3
user's passphrases, a TACACS+ or RADIUS key, a BGP session password) its renderer writes
`placeholder(name)`, or `placeholder(name, form, arg)` where the switch wants the value transformed
(a SHA-512 crypt hash, EOS's type-7 BGP password). The deployment substitutes the values: the Pulumi
program from Pulumi secret config (`pulumi config set --secret railyard:bgpPassword ...`), marking
that artifact secret so the value is encrypted in the state and the file is written with mode 0600;
`railyard compile --secrets FILE --deploy DIR` from a secrets file, for a site without Pulumi.

The placeholder syntax (docs/howto/day0.md):

    %%RAILYARD_SECRET.<name>%%                      the value itself
    %%RAILYARD_SECRET.<name>.sha512-crypt.<salt>%%  its SHA-512 crypt hash ($6$<salt>$...), 5000 rounds
    %%RAILYARD_SECRET.<name>.eos-bgp7.<peer group>%% its EOS type-7 BGP password for that peer group
    %%RAILYARD_SECRET.<name>.eos-type7.<salt 0-15>%% its EOS type-7 form (TACACS+ and RADIUS keys)

It holds no space, `:`, `@`, `#` or `,`, so a compiled SONiC config_db.json with placeholders still
passes SONiC's YANG patterns (SNMP_USER passwords refuse `:` and `@`, TACPLUS passkeys `#` and `,`).
Transforms run at deploy time with kept libraries (libpass's sha512_crypt, pyavd's bgp_encrypt), with
the salt or key the renderer chose, so a re-deploy of the same value writes the same bytes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from generators.model.errors import DesignError, Problem

# well-known secret names (used by renderers) -> Pulumi config key in the `railyard` namespace
SECRETS: dict[str, str] = {
    "switch_password": "switchPassword",  # switch local users' password (hashed per OS at deploy)
    "bmc_password": "bmcPassword",  # server BMC (Redfish/IPMI) password
    "snmp_community": "snmpCommunity",  # SNMP v2c read community (PDUs; switches run SNMPv3 only)
    "bgp_password": "bgpPassword",  # TCP-MD5 / TCP-AO key of every BGP session railyard renders
    "snmp_auth_password": "snmpAuthPassword",  # SNMPv3 users' authentication passphrase
    "snmp_priv_password": "snmpPrivPassword",  # SNMPv3 users' privacy (encryption) passphrase
    "tacacs_key": "tacacsKey",  # TACACS+ shared secret
    "radius_key": "radiusKey",  # RADIUS shared secret
}
# A design may name more secrets (management.users[].password_secret): a lower-case name; its Pulumi
# config key is its camelCase form (ops_password -> railyard:opsPassword).
NAME = re.compile(r"[a-z][a-z0-9_]{2,40}")
FORMS = ("sha512-crypt", "eos-bgp7", "eos-type7")
SALT = re.compile(r"[A-Za-z0-9]{16}")
_ARG = re.compile(r"[A-Za-z0-9_-]{1,64}")

_PLACEHOLDER = re.compile(
    r"%%RAILYARD_SECRET\.([a-z][a-z0-9_]*)(?:\.(sha512-crypt|eos-bgp7|eos-type7)\.([A-Za-z0-9_-]+))?%%"
)
# What can go into JSON strings, YAML quoted scalars, FRR/EOS/NVUE/MLNX-OS command lines, SONiC's
# YANG-patterned fields (SNMP: no `:` `@`, TACACS+: no `#` `,`) and a shell here-document unescaped: no
# whitespace, quotes, backslashes, markup, comment or separator characters. 8-64 characters: these
# guard management planes, and SONiC's SNMP passwords stop at 64.
_VALUE = re.compile(r"[A-Za-z0-9$%()*+./;=\[\]^_{}~-]{8,64}")
VALUE_RULE = "8-64 letters, digits or $%()*+./;=[]^_{}~- (no whitespace, quotes, :@#,!?|<>&)"


def known(name: str) -> bool:
    return name in SECRETS or NAME.fullmatch(name) is not None


def placeholder(name: str, form: str = "", arg: str = "") -> str:
    """The text a renderer writes where the secret `name` belongs (transformed by `form` with `arg`)."""
    if not known(name):
        raise KeyError(f"not a secret name {name!r}: lower-case letters, digits and _ (known: {', '.join(SECRETS)})")
    if not form:
        return f"%%RAILYARD_SECRET.{name}%%"
    if form not in FORMS or not _ARG.fullmatch(arg) or (form == "sha512-crypt" and not SALT.fullmatch(arg)):
        raise ValueError(f"bad secret form {form!r} {arg!r}: {', '.join(FORMS)} with a salt or key")
    return f"%%RAILYARD_SECRET.{name}.{form}.{arg}%%"


def referenced(text: str) -> set[str]:
    """Names of the secrets a rendered file refers to."""
    return {m[0] for m in _PLACEHOLDER.findall(text)}


def config_key(name: str) -> str:
    key = SECRETS.get(name) or re.sub(r"_([a-z0-9])", lambda m: m.group(1).upper(), name)
    return f"railyard:{key}"


def check_value(name: str, value: str) -> None:
    if not _VALUE.fullmatch(value):
        raise DesignError.one(
            config_key(name),
            f"must be {VALUE_RULE}",
            f"choose another value with `pulumi config set --secret {config_key(name)} VALUE` (or in the secrets file)",
        )


def require(names: set[str], available: set[str] | Mapping[str, object], path: str = "") -> None:
    """Raise one error naming the config key of every secret in `names` that is unknown or not set."""
    missing = sorted(n for n in names if not known(n) or n not in available)
    if missing:
        raise DesignError([_missing(n, path) for n in missing])


def fill(text: str, values: Mapping[str, str], path: str = "") -> str:
    """Replace every placeholder in `text`; a missing or unknown secret is an error naming its config key.
    An error never holds a value (check_value names the rule, not what was given)."""
    names = referenced(text)
    require(names, values, path)
    for n in sorted(names):
        check_value(n, values[n])
    return _PLACEHOLDER.sub(lambda m: transform(values[m.group(1)], m.group(2) or "", m.group(3) or ""), text)


def transform(value: str, form: str, arg: str) -> str:
    """The value as the switch wants it. Imports its library only when a file asks for that form."""
    if not form:
        return value
    if form == "sha512-crypt":
        # libpass (passlib's maintained fork); 5000 rounds is crypt(3)'s default, written without a
        # rounds= field, the form every switch OS's useradd/chpasswd and EOS's `secret sha512` accept
        from passlib.hash import sha512_crypt

        hashed: str = sha512_crypt.using(salt=arg, rounds=5000).hash(value)
        return hashed
    # EOS only: pyavd is the eos extra
    from pyavd._utils.password_utils import bgp_encrypt, tacacs_encrypt

    encrypted: str = bgp_encrypt(value, key=arg) if form == "eos-bgp7" else tacacs_encrypt(value, salt=int(arg))
    return encrypted


SECRETS_FILE_LIMIT = 64 * 1024


def load_file(path: Path, option: str = "--secrets") -> dict[str, str]:
    """A secrets file: a YAML mapping of secret name -> value, readable by its owner only. Every error
    names the file, the line or the secret's name and the rule, never a value (YAML's own messages quote
    the text they stumbled on, so only their line is kept)."""
    import os
    import stat

    import yaml

    from generators.model.inputfile import decode_utf8, read_bytes

    path = Path(path)
    data = read_bytes(path, option, SECRETS_FILE_LIMIT, "secrets file")
    mode = stat.S_IMODE(os.stat(path).st_mode)
    if mode & 0o077:
        raise DesignError.one(
            option,
            f"{path} is readable by others (mode {mode:04o}): a secrets file is its owner's alone",
            f"chmod 600 {path}",
        )
    text = decode_utf8(data, option, str(path), "secrets file")
    try:
        doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" line {mark.line + 1}" if mark is not None else ""
        raise DesignError.one(
            option, f"{path}{line} is not YAML", "write one `name: value` per line (quote a value with ': ')"
        ) from None
    if not isinstance(doc, dict):
        raise DesignError.one(option, f"{path} is not a mapping", "write one `name: value` per line")
    problems = []
    out: dict[str, str] = {}
    for name, value in doc.items():
        if not isinstance(name, str) or not known(name):
            problems.append(
                Problem(option, f"{path}: a key is not a secret name", "keys are lower-case names such as bgp_password")
            )
        elif not isinstance(value, str):
            problems.append(Problem(f"{path}: {name}", "is not text", f"quote the value of {name}"))
        elif not _VALUE.fullmatch(value):
            problems.append(Problem(f"{path}: {name}", f"must be {VALUE_RULE}", f"choose another value for {name}"))
        else:
            out[name] = value
    if problems:
        raise DesignError(problems)
    return out


def missing(needs: Mapping[str, set[str] | frozenset[str]], values: Mapping[str, object]) -> list[Problem]:
    """One problem per secret that `needs` (path -> secret names) refers to and `values` lacks, naming the
    first path that needs it and how many do (a site's hundreds of configs share a few secrets)."""
    first: dict[str, str] = {}
    count: dict[str, int] = {}
    for path in sorted(needs):
        for n in needs[path]:
            if not known(n) or n not in values:
                first.setdefault(n, path)
                count[n] = count.get(n, 0) + 1
    return [_missing(n, first[n] + (f" and {count[n] - 1} more files" if count[n] > 1 else "")) for n in sorted(first)]


def fill_files(files: Mapping[str, str], values: Mapping[str, str]) -> tuple[dict[str, str], set[str]]:
    """Every file with its placeholders filled, and the paths that held one (their files hold secrets).
    Every missing secret is named at once, before anything is filled."""
    needs = {path: referenced(text) for path, text in files.items()}
    if problems := missing(needs, values):
        raise DesignError(problems)
    return {p: fill(t, values, p) if needs[p] else t for p, t in files.items()}, {p for p, n in needs.items() if n}


def salt(*context: str) -> str:
    """A stable 16-character crypt salt for one user on one switch: the same on every compile, so a
    re-deploy writes the same hash; different per switch and user. It is derived from names only, never
    from the value (a salt is public)."""
    import hashlib

    digest = hashlib.sha256("/".join(context).encode()).digest()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(alphabet[b % len(alphabet)] for b in digest[:16])


def _missing(name: str, path: str) -> Problem:
    where = f" (needed by {path})" if path else ""
    if not known(name):
        return Problem(
            path or "artifact",
            f"refers to a secret named {name!r}, which is not a secret name{where}",
            "secret names are lower-case letters, digits and _",
        )
    return Problem(
        config_key(name),
        f"secret is not set{where}",
        f"pulumi config set --secret {config_key(name)} VALUE (or `{name}: VALUE` in the secrets file)",
    )
