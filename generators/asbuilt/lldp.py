"""LLDP neighbour tables in the JSON forms sites collect, read into one shape for `verify --lldp`.

Formats (detected from the document, not from the file name):

* ``lldpctl -f json0`` (Linux hosts, SONiC, and Cumulus ``net show lldp json``, which prints lldpctl's
  json0): ``{"lldp": [{"interface": [{"name": ..., "chassis": [{"name": [{"value": ...}]}],
  "port": [{"id": [{"type", "value"}], "descr": [{"value": ...}]}]}]}]}``;
* ``lldpctl -f json``: the same data keyed by name; ``interface`` is one object with one interface and a
  list of one-key objects with several, ``chassis`` is keyed by the system name when there is one;
* NVUE ``nv show interface --output json``: interface -> ``lldp.neighbor`` -> name ->
  ``{"chassis": {"system-name"}, "port": {"name", "description"}}``;
* EOS ``show lldp neighbors detail | json``: ``lldpNeighbors`` -> interface -> ``lldpNeighborInfo`` ->
  ``[{"systemName", "neighborInterfaceInfo": {"interfaceId_v2", "interfaceDescription"}}]``, bare or in
  an eAPI response list (``[{"result": ...}]``).

None of them names the local device (lldpctl prints the local chassis only for ``show chassis``), so
the local device is the file's: one file per device, named after it (see `verify.lldp_device`).
LLDP does not carry the link speed (only the MAU type of autonegotiation, which high-speed ports and
DACs rarely fill in), so these checks find cabling faults, not slow links.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class LldpParseError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Neighbour:
    """What one local port hears: the neighbour's system name and port (id and description, either of
    which may carry the interface name: lldpd sends the MAC as port id unless told otherwise)."""

    local_port: str
    system: str | None
    port_id: str | None
    port_descr: str | None

    def port_names(self) -> list[str]:
        return [p for p in (self.port_id, self.port_descr) if p]


def parse_lldp(text: str) -> tuple[str, list[Neighbour]]:
    """(format name, neighbours) of one LLDP JSON document; LldpParseError says what was expected."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LldpParseError(f"not JSON ({exc.msg} at line {exc.lineno})") from None
    except RecursionError:
        raise LldpParseError("JSON nested deeper than any LLDP table (hundreds of levels)") from None
    except ValueError as exc:  # a number of thousands of digits (Python's int limit)
        raise LldpParseError(f"a JSON value no LLDP table holds ({exc})") from None
    fmt, read = _format_of(doc)
    try:
        return fmt, read()
    except (AttributeError, TypeError, KeyError, IndexError, ValueError) as exc:
        # a document of the right kind with a field of another type: say so, never a traceback
        raise LldpParseError(f"{fmt}: a field has an unexpected shape ({type(exc).__name__}: {exc})") from None


def _format_of(doc: Any) -> tuple[str, Callable[[], list[Neighbour]]]:
    if isinstance(doc, list) and doc and all(isinstance(r, dict) and "result" in r for r in doc):
        doc = next(
            (r["result"] for r in doc if isinstance(r["result"], dict) and "lldpNeighbors" in r["result"]),
            doc[0]["result"],
        )
    if isinstance(doc, dict) and "lldp" in doc:
        lldp = doc["lldp"]
        if isinstance(lldp, list):
            return "lldpctl json0", lambda: _json0(lldp)
        if isinstance(lldp, dict):
            return "lldpctl json", lambda: _json(lldp)
    if isinstance(doc, dict) and isinstance(doc.get("lldpNeighbors"), dict):
        return "EOS", lambda: _eos(doc["lldpNeighbors"])
    if isinstance(doc, dict) and doc and all(isinstance(v, dict) for v in doc.values()):
        return "NVUE", lambda: _nvue(doc)
    raise LldpParseError(
        "not an LLDP neighbour table: expected the JSON of `lldpctl -f json0` (or -f json), "
        "NVUE `nv show interface --output json` or EOS `show lldp neighbors detail | json`"
    )


def _value(items: Any) -> str | None:
    """json0 wraps every value as [{"value": ...}]."""
    if isinstance(items, list) and items and isinstance(items[0], dict):
        v = items[0].get("value")
        return str(v) if v is not None else None
    return None


def _json0(lldp: list[Any]) -> list[Neighbour]:
    out = []
    for block in lldp:
        for itf in (block or {}).get("interface", []) if isinstance(block, dict) else []:
            if not isinstance(itf, dict) or "name" not in itf:
                raise LldpParseError("lldpctl json0: an interface without a name")
            chassis = (itf.get("chassis") or [{}])[0]
            port = (itf.get("port") or [{}])[0]
            pid = port.get("id") or [{}]
            out.append(
                Neighbour(
                    str(itf["name"]),
                    _value(chassis.get("name")),
                    str(pid[0]["value"]) if pid[0].get("value") is not None else None,
                    _value(port.get("descr")),
                )
            )
    return out


def _json(lldp: dict[str, Any]) -> list[Neighbour]:
    itfs = lldp.get("interface", {})
    # one interface: {"eth0": {...}}; several: [{"eth0": {...}}, {"eth1": {...}}]
    pairs = [kv for d in itfs for kv in d.items()] if isinstance(itfs, list) else list(itfs.items())
    out = []
    for name, itf in pairs:
        chassis = itf.get("chassis", {}) if isinstance(itf, dict) else {}
        system = None
        if isinstance(chassis, dict) and len(chassis) == 1 and "id" not in chassis:
            system = next(iter(chassis))
        port = itf.get("port", {}) if isinstance(itf, dict) else {}
        pid = port.get("id", {})
        descr = port.get("descr")
        out.append(
            Neighbour(
                str(name),
                system,
                str(pid["value"]) if isinstance(pid, dict) and "value" in pid else None,
                str(descr) if descr else None,
            )
        )
    return out


def _nvue(doc: dict[str, Any]) -> list[Neighbour]:
    out = []
    for name, itf in doc.items():
        neigh = itf.get("lldp", {}).get("neighbor", {}) if isinstance(itf.get("lldp"), dict) else {}
        for key, n in (neigh or {}).items():
            chassis, port = n.get("chassis", {}) or {}, n.get("port", {}) or {}
            out.append(
                Neighbour(
                    str(name),
                    chassis.get("system-name") or key,
                    port.get("name") or None,
                    port.get("description") or None,
                )
            )
    return out


def _eos(table: dict[str, Any]) -> list[Neighbour]:
    out = []
    for name, entry in table.items():
        for n in (entry or {}).get("lldpNeighborInfo", []):
            info = n.get("neighborInterfaceInfo", {}) or {}
            # interfaceId is quoted ('"Ethernet1"'); interfaceId_v2 (EOS 4.2x) is the bare name
            pid = info.get("interfaceId_v2") or str(info.get("interfaceId") or "").strip('"') or None
            out.append(Neighbour(str(name), n.get("systemName"), pid, info.get("interfaceDescription") or None))
    return out
