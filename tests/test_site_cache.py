"""The Pulumi program's compiled-site cache (components.sitecache) under pulumi.runtime.set_mocks: a second
run of an unchanged design registers the same resources without compiling; anything the site depends on
changing, a missing blob or a damaged record compiles again. The real engine's runs are in
test_pulumi_engine.py (every Stack there has its own cache, so each second `up` runs from it)."""

from __future__ import annotations

import json
from pathlib import Path

import pulumi
import pytest

from components import program, sitecache
from components.artifact import BLOBS, parse_entry
from components.moves import PLACEMENT_T
from components.site import GROUP_T
from generators.compiler import compile_file
from generators.model.design import load_design
from generators.model.secrets import placeholder
from generators.reports.diff import placement, placement_entries
from tests.pulumi_engine import SECRET_KEY, SITE_SECRETS
from tests.test_pulumi_components import Mocks, Recorder, _by_name, run

ROOT = Path(__file__).resolve().parent.parent
DESIGN = ROOT / "designs" / "h100-256.yaml"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("RAILYARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("RAILYARD_SITE_CACHE", raising=False)
    return tmp_path / "cache" / "sites"


def registered(preview: bool, fn) -> dict[str, dict]:
    """Group name -> the inputs it was registered with, running fn under fresh mocks; and under
    PLACEMENT_T the Placement record's (components/moves.py), which a recorded site registers too."""
    mon = Recorder(Mocks())
    pulumi.runtime.set_mocks(Mocks(), project="railyard", stack="unit", preview=preview, monitor=mon)
    try:
        run(fn)
    finally:
        pulumi.runtime.set_all_config({})
    (placed,) = (r["object"] for _, r in _by_name(mon, PLACEMENT_T).values())
    return {name: r["object"] for name, (_, r) in _by_name(mon, GROUP_T).items()} | {PLACEMENT_T: placed}


def build(out: Path, overrides: list[str] | None = None, secrets: dict | None = None):
    """The program's build, with the switch credentials a shipped design's configs need (SITE_SECRETS)."""
    return lambda: program.build(
        DESIGN, out, overrides, {**{n: pulumi.Output.secret(v) for n, v in SITE_SECRETS.items()}, **(secrets or {})}
    )


def no_compile(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("compiled although the site cache holds this design")

    monkeypatch.setattr(program, "compile_loaded", refuse)


def test_an_unchanged_design_registers_the_recorded_site_without_compiling(cache, tmp_path, monkeypatch):
    out = tmp_path / "out"
    first = registered(False, build(out))
    assert len(list(cache.glob("*.json"))) == 1
    no_compile(monkeypatch)
    second = registered(False, build(out))
    assert second == first, "the same groups with the same entries"
    assert registered(True, build(out)) == first, "a preview runs from the record too"
    # the record keeps where each device stands, which a stack's guard against moves compares
    assert first[PLACEMENT_T]["devices"] == placement_entries(placement(compile_file(DESIGN)[0]))


def test_what_the_site_depends_on_is_in_the_key(cache, tmp_path):
    design, catalog, _ = load_design(DESIGN)
    d, c = design.model_dump(mode="json"), catalog.model_dump(mode="json")
    key = sitecache.site_key(d, c)
    assert sitecache.site_key(d, c) == key, "the same inputs, the same key"
    changed, _, _ = load_design(DESIGN, ["description=a what-if copy"])
    assert sitecache.site_key(changed.model_dump(mode="json"), c) != key
    cheaper = json.loads(json.dumps(c))
    first = next(iter(cheaper["switches"]))
    cheaper["switches"][first]["price"]["usd"] -= 1
    assert sitecache.site_key(d, cheaper) != key
    sources = list(sitecache._source_files())
    assert ROOT / "generators" / "stages" / "cabling.py" in sources
    assert any(p.suffix == ".j2" for p in sources), "templates render files too"
    assert ROOT / "components" / "site.py" in sources


def test_a_design_change_compiles_and_records_a_second_site(cache, tmp_path, monkeypatch):
    out = tmp_path / "out"
    base = registered(False, build(out))
    changed = registered(False, build(out, ["description=a what-if copy"]))
    assert changed != base
    assert len(list(cache.glob("*.json"))) == 2
    no_compile(monkeypatch)
    assert registered(True, build(out)) == base, "both are recorded: a preview of the first runs from its record"
    with pytest.raises(AssertionError, match="compiled although"):
        # the second up pruned the blobs only the first site had: an up of it needs them staged again
        registered(False, build(out))


def test_a_missing_blob_is_a_miss_during_up(cache, tmp_path, monkeypatch):
    """`up` may copy any group's files (a refresh found one changed): every blob must be there."""
    out = tmp_path / "out"
    first = registered(False, build(out))
    entry = parse_entry(next(iter(first["."]["files"].values())))
    (out / BLOBS / entry["sha256"]).unlink()
    calls = []
    real = program.compile_loaded
    monkeypatch.setattr(program, "compile_loaded", lambda *a: calls.append(1) or real(*a))
    assert registered(False, build(out)) == first
    assert calls == [1], "compiled again"
    assert (out / BLOBS / entry["sha256"]).is_file(), "and staged the missing copy"
    assert registered(False, build(out)) == first and calls == [1], "then runs from the record again"


def test_a_record_from_a_preview_needs_an_up_to_stage(cache, tmp_path, monkeypatch):
    out = tmp_path / "out"
    registered(True, build(out))  # a preview records the site but stores no blob
    assert not out.exists()
    calls = []
    real = program.compile_loaded
    monkeypatch.setattr(program, "compile_loaded", lambda *a: calls.append(1) or real(*a))
    registered(False, build(out))
    assert calls == [1] and (out / BLOBS).is_dir()


def test_a_damaged_or_foreign_record_is_a_miss(cache, tmp_path, monkeypatch):
    out = tmp_path / "out"
    first = registered(False, build(out))
    (record,) = cache.glob("*.json")
    for damage in (
        b"{not json",
        json.dumps({"format": "railyard.site-cache/0"}).encode(),
        record.read_bytes().replace(b" bytes ", b" octets "),
    ):
        record.write_bytes(damage)
        calls = []
        real = program.compile_loaded
        monkeypatch.setattr(program, "compile_loaded", lambda *a, c=calls, r=real: c.append(1) or r(*a))
        assert registered(False, build(out)) == first
        assert calls == [1]


def test_secret_groups_are_filled_from_the_stack_on_every_run(cache, tmp_path, monkeypatch):
    """The record holds a secret file's text with its placeholder, never the value: a changed secret
    changes the group's entry although the design did not change. (A file with the BMC password is
    added to the real render as tests/engine_program does.)"""
    import generators.renderers

    real_render = generators.renderers.render_all

    def render_with_secret(plan):
        return {**real_render(plan), "oob/bmc-credentials.env": f"BMC_PASSWORD={placeholder('bmc_password')}\n"}

    monkeypatch.setattr(generators.renderers, "render_all", render_with_secret)
    out = tmp_path / "out"
    first = registered(False, build(out, None, {"bmc_password": pulumi.Output.secret("s3cret-one")}))
    assert "oob#secret" in first
    (record,) = cache.glob("*.json")
    assert b"s3cret-one" not in record.read_bytes() and record.stat().st_mode & 0o777 == 0o600
    no_compile(monkeypatch)
    same = registered(False, build(out, None, {"bmc_password": pulumi.Output.secret("s3cret-one")}))
    assert same == first
    other = registered(False, build(out, None, {"bmc_password": pulumi.Output.secret("s3cret-two")}))
    assert {n for n in first if other[n] != first[n]} == {"oob#secret"}
    assert other["oob#secret"]["files"][SECRET_KEY]
    with pytest.raises(Exception, match="bmcPassword"):
        registered(False, build(out, None, {}))


def test_the_cache_keeps_the_newest_records_only(cache, tmp_path, monkeypatch):
    monkeypatch.setattr(sitecache, "KEEP", 2)
    cache.mkdir(parents=True)
    mine = cache / "notes.txt"
    mine.write_text("not a record\n")
    out = tmp_path / "out"
    for what in ("one", "two", "three"):
        registered(True, build(out, [f"description=what-if {what}"]))
    assert len(list(cache.glob("*.json"))) == 2
    assert mine.read_text() == "not a record\n", "only records are pruned"


def test_off_compiles_every_time(cache, tmp_path, monkeypatch):
    monkeypatch.setenv("RAILYARD_SITE_CACHE", "off")
    registered(False, build(tmp_path / "out"))
    assert not cache.exists() or not list(cache.glob("*.json"))
