"""EOS CLI of the structured configs railyard builds, without pyavd's template run.

pyavd's eos_cli_config_gen templates read a structured config through ~230 section templates that test
hundreds of optional keys per interface: 11-28 ms a switch, more than everything else railyard does for
it. The structured configs railyard builds (generators/vendors/eos.py: frontend leaves, spines and cores,
out-of-band aggregation, RoCE backend) use a few dozen of those keys, so templates/eos.cfg.j2 renders
exactly those, in pyavd's section order, sort orders and wording.

SHAPE below is that subset: every key, whether it must be there, and for a key that selects a line (a
flag, a mode) the values the template knows. A structured config outside it (a key railyard does not
build, a value the template does not handle) is rendered by pyavd's own templates instead, so the text
is pyavd's in either case; tests/test_eos_text.py holds this renderer to pyavd's, byte for byte, on every
EOS switch of the test designs and on reordered and varied copies of them, and checks that each of them
fits SHAPE (a change to the structured config that left the subset would otherwise only cost time).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the vendor registry imports this module for `validate`, which renders nothing
    import jinja2

# A text or a number rendered as it is (bool is refused: it is no number here, and True prints as "True")
S: tuple[type, ...] = (str,)
N: tuple[type, ...] = (int,)

TX_QUEUE = {
    "id": N,
    "?priority": S,
    "?bandwidth_percent": N,
    "?random_detect": {"ecn": {"threshold": {"units": S, "min": N, "max": N, "?max_probability": N}}},
}
AF_PEER_GROUP = {
    "name": S,
    "activate": frozenset({True, False}),
    "?route_map_out": S,
    "?next_hop": {"address_family_ipv6": {"enabled": frozenset({True}), "?originate": frozenset({True})}},
}
ROUTE_TARGETS = [{"address_family": frozenset({"evpn"}), "route_targets": [S]}]
ON = frozenset({True})
PYAVD = "any value pyavd's schema allows"  # a section printed by pyavd's own template (PYAVD_SECTIONS)

SHAPE: dict[str, Any] = {
    "?enable_password": {"disabled": ON},
    "?aaa_root": {"disabled": ON},
    "?config_end": ON,
    "service_routing_protocols_model": S,
    "?transceiver_qsfp_default_mode_4x10": ON,
    "?vlan_internal_order": {"allocation": S, "range": {"beginning": N, "ending": N}},
    "ip_routing_ipv6_interfaces": ON,
    **{f"?{k}": PYAVD for k in ("local_users", "logging", "ip_domain_lookup", "ip_name_server", "dns_domain")},
    **{f"?{k}": PYAVD for k in ("snmp_server", "radius_server", "aaa_server_groups", "tacacs_servers")},
    **{f"?{k}": PYAVD for k in ("aaa_authentication", "ntp", "management_ssh")},
    "?ip_routing": ON,
    "?ipv6_unicast_routing": ON,
    "hostname": S,
    # exactly this is EOS's default, which pyavd does not print
    "?ip_igmp_snooping": {"globally_enabled": ON},
    "?ip_virtual_router_mac_address": S,
    "?spanning_tree": {"mode": frozenset({"none"})},
    "?qos_profiles": [{"name": S, "tx_queues": [TX_QUEUE]}],
    "?vlans": [{"id": N, "?name": S}],
    "?vrfs": [{"name": S, "ip_routing": frozenset({True, False})}],
    "ethernet_interfaces": [
        {
            "name": S,
            "?description": S,
            "?shutdown": frozenset({False}),
            "?mtu": N,
            "?speed": S,
            "switchport": {
                "enabled": frozenset({True, False}),
                "?mode": frozenset({"access", "trunk"}),
                "?access_vlan": N,
                "?trunk": {"allowed_vlan": S},
            },
            "?vrf": S,
            "?ip_address": S,
            "?ipv6_enable": ON,
            "?service_profile": S,
            "?qos": {"trust": frozenset({"dscp"})},
            "?priority_flow_control": {
                "?enabled": ON,
                "?priorities": [{"priority": N, "no_drop": frozenset({True, False})}],
            },
            "?tx_queues": [TX_QUEUE],
        }
    ],
    "loopback_interfaces": [{"name": S, "?description": S, "?shutdown": frozenset({False}), "ip_address": S}],
    # the gateway is eos_designs' input, not a line of the interface
    "?management_interfaces": [
        {"name": S, "?description": S, "?shutdown": frozenset({False}), "?vrf": S, "ip_address": S, "?gateway": S}
    ],
    "?vlan_interfaces": [
        {"name": S, "?description": S, "?shutdown": frozenset({False}), "?mtu": N, "?vrf": S, "ip_address_virtual": S}
    ],
    "?vxlan_interface": {
        "vxlan1": {
            "?description": S,
            "vxlan": {
                "source_interface": S,
                "?udp_port": N,
                "?vlans": [{"id": N, "vni": N}],
                "?vrfs": [{"name": S, "vni": N}],
            },
        }
    },
    "?as_path": {"access_lists": [{"name": S, "entries": [{"type": S, "match": S, "?origin": S}]}]},
    "?prefix_lists": [{"name": S, "sequence_numbers": [{"sequence": N, "action": S}]}],
    "?static_routes": [{"?vrf": S, "prefix": S, "next_hop": S}],
    "?qos": {"map": {"dscp": [S]}},
    "?priority_flow_control": {"watchdog": {"?action": S, "?timeout": S, "?recovery_time": S}},
    "?route_maps": [{"name": S, "sequence_numbers": [{"sequence": N, "type": S, "?match": [S]}]}],
    "?router_bfd": {"multihop": {"interval": N, "min_rx": N, "multiplier": N}},
    "router_bgp": {
        "as": S,
        "?router_id": S,
        "?updates": {"wait_install": ON},
        "?bgp": {"default": {"ipv4_unicast": frozenset({False})}},
        "?maximum_paths": {"paths": N, "?ecmp": N},
        "?bgp_defaults": [S],
        "?peer_groups": [
            {
                "name": S,
                "?next_hop_unchanged": ON,
                "?update_source": S,
                "?bfd": ON,
                "?ebgp_multihop": N,
                "?password": S,
                "?password_type": frozenset({"7"}),
                "?send_community": frozenset({"all"}),
                "?maximum_routes": N,
            }
        ],
        "?neighbors": [{"ip_address": S, "?peer_group": S, "?remote_as": S, "?description": S}],
        "?redistribute": {"connected": {"enabled": ON, "?route_map": S}},
        # pyavd 6.4 prints no description on a neighbor interface
        "?neighbor_interfaces": [{"name": S, "peer_group": S, "remote_as": S, "?description": S}],
        "?vlans": [{"id": N, "?rd": S, "?route_targets": {"both": [S]}, "?redistribute_routes": [S]}],
        "?address_family_evpn": {"peer_groups": [AF_PEER_GROUP]},
        "?address_family_ipv4": {"?peer_groups": [AF_PEER_GROUP], "?networks": [{"prefix": S}]},
        "?vrfs": [
            {
                "name": S,
                "?rd": S,
                "?route_targets": {"?import": ROUTE_TARGETS, "?export": ROUTE_TARGETS},
                "?router_id": S,
                "?redistribute": {"connected": {"enabled": ON}},
            }
        ],
    },
}


class _Map:
    """A compiled mapping of SHAPE: its keys with their shapes, and those that must be there."""

    def __init__(self, shape: dict[str, Any]) -> None:
        self.keys = {k.lstrip("?"): _compiled(v) for k, v in shape.items()}
        self.required = frozenset(k for k in shape if not k.startswith("?"))


def _compiled(shape: Any) -> Any:
    if isinstance(shape, dict):
        return _Map(shape)
    if isinstance(shape, list):
        return [_compiled(shape[0])]
    return shape


_SHAPE = _compiled(SHAPE)


def fits(value: Any, shape: Any = _SHAPE) -> bool:
    """Whether `value` is of `shape` (default: a structured config this renderer prints as pyavd does)."""
    if shape is PYAVD:
        return True
    kind = type(shape)
    if kind is _Map:
        return (
            type(value) is dict
            and value.keys() <= shape.keys.keys()
            and shape.required <= value.keys()
            and all(fits(v, shape.keys[k]) for k, v in value.items())
        )
    if kind is list:
        item = shape[0]
        return type(value) is list and all(fits(v, item) for v in value)
    if kind is frozenset:
        # True == 1 and False == 0 in a set: compare types too
        return any(value == v and type(value) is type(v) for v in shape)
    return type(value) in shape


def misfit(value: Any, shape: Any = _SHAPE, path: str = "") -> str | None:
    """Where and why `value` is not of `shape` (the first place), or None when it fits."""
    if fits(value, shape):
        return None
    at = path.rstrip(".") or "."
    kind = type(shape)
    if kind is _Map:
        if type(value) is not dict:
            return f"{at}: not a mapping"
        if extra := sorted(value.keys() - shape.keys.keys()):
            return f"{path}{extra[0]}: a key this renderer does not print"
        if missing := sorted(shape.required - value.keys()):
            return f"{path}{missing[0]}: missing"
        return next(filter(None, (misfit(v, shape.keys[k], f"{path}{k}.") for k, v in value.items())))
    if kind is list:
        if type(value) is not list:
            return f"{at}: not a list"
        return next(filter(None, (misfit(v, shape[0], f"{at}[{i}].") for i, v in enumerate(value))))
    if kind is frozenset:
        return f"{at}: {value!r} is not one of {', '.join(sorted(map(repr, shape)))}"
    return f"{at}: {type(value).__name__}, not {'/'.join(t.__name__ for t in shape)}"


def render(validated: dict[str, Any]) -> str:
    """EOS CLI of a validated structured config that fits SHAPE (fits(validated))."""
    from pyavd.j2filters.natural_sort import natural_sort

    routes = validated.get("static_routes", [])
    # pyavd's order: routes of the default VRF first, by prefix then next hop; then the others by VRF too
    default = [r for r in routes if "vrf" not in r] + [r for r in routes if r.get("vrf") == "default"]
    vrf = [r for r in routes if r.get("vrf", "default") != "default"]
    ordered = natural_sort(natural_sort(default, "next_hop", default_value=""), "prefix") + natural_sort(
        natural_sort(natural_sort(vrf, "next_hop", default_value=""), "prefix"), "vrf", ignore_case=False
    )
    # what eos-intended-config sets before its sections: passwords printed, not "<removed>"
    section_vars = {**validated, "hide_passwords": False}
    return _template().render(sc=validated, static_routes=ordered, avd=lambda s: pyavd_section(section_vars, s))


@functools.cache
def _template() -> jinja2.Template:
    from pyavd.j2filters.natural_sort import natural_sort

    from generators.text.templating import environment

    env = environment(autoescape=False, trim=True).overlay()
    env.filters["natural_sort"] = natural_sort
    # an instance attribute in place of Environment.getattr, which the compiled templates call
    env.getattr = dict_getattr(env)  # type: ignore[method-assign, assignment]
    return env.get_template("eos.cfg.j2")


def dict_getattr(env: jinja2.Environment) -> Callable[[Any, str], Any]:
    """`env.getattr` made cheap for templates that read dicts: Jinja tries the attribute first and answers a
    key of a dict through a raised AttributeError, then the item lookup (twice that for a missing key).
    For a plain dict a name that is no dict attribute is exactly the key; anything else goes to Jinja."""
    slow, undefined = env.getattr, env.undefined
    dict_attrs = frozenset(dir(dict))
    absent = object()

    def getattr_(obj: Any, attribute: str) -> Any:
        if type(obj) is dict and attribute not in dict_attrs:
            value = obj.get(attribute, absent)
            return undefined(obj=obj, name=attribute) if value is absent else value
        return slow(obj, attribute)

    return getattr_


@functools.cache
def templar() -> Any:
    """pyavd's Templar as get_device_config makes it, with its three hottest calls made cheaper.

    The templates test hundreds of optional keys per interface, and Jinja's Environment.getattr answers a
    missing key of a dict with two raised exceptions (attribute, then item); pyavd's `defined` test is a
    Python call with five optional arguments. Replaced by equivalents for the data a validated structured
    config holds: a dict's key as eos_text.dict_getattr reads it; an Undefined (pyavd's, which answers
    every attribute with itself) returns itself; `defined` is "neither Undefined nor None" and, given one
    value to test, "and equal to it". Anything else goes to the originals. tests/test_eos.py holds the
    output to pyavd's get_device_config byte for byte on every EOS switch of the all-Arista test design."""
    from jinja2.runtime import Undefined
    from pyavd.constants import EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH
    from pyavd.j2tests.defined import defined
    from pyavd.templater import Templar

    templar = Templar(precompiled_templates_path=EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH)
    env = templar.environment
    read_dict, undefined = dict_getattr(env), env.undefined
    undefined_attrs = frozenset(dir(undefined))

    def getattr_(obj: Any, attribute: str) -> Any:
        if type(obj) is undefined and attribute not in undefined_attrs:
            return obj
        return read_dict(obj, attribute)

    def defined_(value: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) > 1:  # a type to check or a warning to emit
            return defined(value, *args, **kwargs)
        if isinstance(value, Undefined) or value is None:
            return False
        return not args or args[0] is None or value == args[0]  # `is arista.avd.defined(x)`

    env.getattr = getattr_
    env.tests["arista.avd.defined"] = defined_
    return templar


# Sections of the management plane (users, AAA, SNMP, NTP, syslog, DNS, SSH) are printed by pyavd's own
# section templates (`eos/<section>.j2`), each a few lines: their sort orders and branches (flattened name
# servers, per-VRF servers, hidden passwords) are pyavd's by construction, at a small cost per switch.
# SHAPE takes their keys as they are (PYAVD), eos.cfg.j2 places each section where eos-intended-config does.
PYAVD_SECTIONS = {
    "local_users": ("local-users",),
    "logging": ("logging",),
    "ip_domain_lookup": ("ip-domain-lookup",),
    "ip_name_server": ("ip-name-server",),
    "dns_domain": ("dns-domain",),
    "snmp_server": ("snmp-server",),
    "radius_server": ("radius-server",),
    "aaa_server_groups": ("aaa-server-groups-radius", "aaa-server-groups-tacacs-plus"),
    "tacacs_servers": ("tacacs-servers",),
    "aaa_authentication": ("aaa",),
    "ntp": ("ntp",),
    "management_ssh": ("management-ssh",),
}


def pyavd_section(validated: dict[str, Any], section: str) -> str:
    """pyavd's text of one section template of eos-intended-config."""
    text: str = templar().render_template_from_file(template_file=f"eos/{section}.j2", template_vars=validated)
    return text
