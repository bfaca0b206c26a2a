"""generators.text.yamltext writes what PyYAML writes, or refuses: checked on generated documents
(hypothesis, against PyYAML's Python and libyaml emitters, keys in order and sorted), on every host file
the RoCE designs render and on every Cumulus NVUE startup.yaml of the designs that have them."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.renderers.hosts import host_ports, netplan_yaml
from generators.text.yamltext import Unsupported, block_yaml, dump_block
from tests.conftest import rendered_files, rendered_yaml

DUMPERS = [yaml.SafeDumper, *([yaml.CSafeDumper] if hasattr(yaml, "CSafeDumper") else [])]

# names and addresses as railyard writes them, and the strings that read back as something else
# (PyYAML quotes those, so the fast path must refuse them)
words = st.one_of(
    st.sampled_from(
        [
            "eth0",
            "backend7",
            "accept-ra",
            "routing-policy",
            "10.0.0.1/31",
            "10.128.0.0",
            "yes",
            "on",
            "null",
            "true",
            "0x1f",
            "1_000",
            "1.5",
            "2024-01-01",
            "12:30",
            "a b",
            "-x",
            "x:",
            "#c",
            "",
            "~",
            ".inf",
            "é",
            "a" * 90,
            "0777",
            "1e3",
            "NaN",
        ]
    ),
    st.from_regex(r"[A-Za-z0-9_.:/ -]{1,12}", fullmatch=True),
)
scalars = st.one_of(st.booleans(), st.integers(-(10**6), 10**6), words, st.none(), st.floats(allow_nan=False))
docs = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(words, inner, max_size=4)),
    max_leaves=30,
)

# documents of what the fast path writes, nested as the host files and NVUE's and deeper: most take it
plain = st.one_of(
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.from_regex(r"[a-z][a-z0-9_./-]{0,10}", fullmatch=True),
    st.from_regex(r"(?:[0-9]{1,3}\.){3}[0-9]{1,3}(?:/[0-9]{1,2})?", fullmatch=True),
    # secrets' placeholders (generators/model/secrets.py) and near misses PyYAML writes otherwise
    st.from_regex(r"%%RAILYARD_SECRET\.[a-z_]{1,8}(?:\.sha512-crypt\.[A-Za-z0-9./]{1,4})?%%", fullmatch=True),
    st.sampled_from(["%%a b%%", "%%a'b%%", "%%", "%%x%% ", "%x"]),
    st.sampled_from(
        [
            "on",
            "off",
            "yes",
            "no",
            "true",
            "null",
            "1_000",
            "0777",
            "2024-01-01",
            "1.5",
            "pdu-r01-01-a1:net",
            "a:b",
            "x:",
            "12:30",
            "a::b",
            "1:2:3",
        ]
    ),
    st.just({}),
    st.just([]),
)
keys = st.one_of(
    st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True),
    st.sampled_from(["on", "1", "10.0.0.1"]),
    st.integers(0, 4094),
    st.booleans(),
)
plain_docs = st.recursive(
    plain,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=4), st.dictionaries(keys, inner, min_size=1, max_size=4)
    ),
    max_leaves=40,
)


@settings(max_examples=600, deadline=None)
@given(st.one_of(docs, plain_docs).filter(lambda d: isinstance(d, dict | list)), st.booleans())
def test_block_yaml_is_pyyaml_or_refuses(doc, sort_keys):
    try:
        text = block_yaml(doc, sort_keys)
    except Unsupported:
        return
    for dumper in DUMPERS:
        assert text == yaml.dump(doc, Dumper=dumper, sort_keys=sort_keys, default_flow_style=False)


def test_dump_block_falls_back_to_pyyaml():
    doc = {"a": [], "b": 1.5, "c": "yes"}
    assert dump_block(doc) == yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def test_every_host_file_is_written_fast_and_as_pyyaml_would(compiled):
    """On every server of the RoCE designs: the netplan file takes the fast path, and its YAML body is
    PyYAML's text of the same document."""
    for name in ("h100-512-roce", "b300-spectrumx"):
        plan = compiled(name)
        devs = plan.index()
        hosts = host_ports(plan)
        assert hosts
        for h, ports in hosts.items():
            text = netplan_yaml(plan, h, devs[h].model, ports)
            body = text[text.index("network:") :]
            doc = yaml.safe_load(body)
            assert block_yaml(doc) == body == yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def test_every_nvue_startup_yaml_is_written_fast_and_as_pyyaml_would(compiled):
    """Every Cumulus switch's startup.yaml (OOB on the reference design; RoCE backend and OOB on the
    Spectrum-X design) is PyYAML's text of its document, and each takes the fast path (NVUE's 'on', its
    empty `{}` leaves, sorted keys) unless it holds one mapping twice, which PyYAML writes as an anchor
    and an alias (a backend VRF's route target, imported and exported), and the fast path refuses."""
    fast = aliased = 0
    for name in ("h100-1024-reference", "b300-spectrumx"):
        docs = rendered_yaml(compiled, name)  # the comment lines above the body parse to nothing
        for path, text in rendered_files(compiled, name).items():
            if not path.endswith("/startup.yaml"):
                continue
            body = text[text.index("- set:") :]
            doc = docs[path]
            for dumper in DUMPERS:
                assert body == yaml.dump(doc, Dumper=dumper, sort_keys=True, default_flow_style=False), path
            if "&id001" in body:
                with pytest.raises(Unsupported):
                    block_yaml(doc, sort_keys=True)
                aliased += 1
            else:
                assert block_yaml(doc, sort_keys=True) == body, path
                fast += 1
    assert fast >= 20 and aliased >= 8
