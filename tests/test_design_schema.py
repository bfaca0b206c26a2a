"""`railyard schema` against a real JSON Schema validator (jsonschema, draft-07): every shipped
design and the designs the tests write validate, partial (`extends:`) files included; bad designs are
rejected at the field; and on generated designs the schema and the loader agree: the schema never
refuses a design railyard accepts, and flags every field-level error railyard's model reports."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from generators.cli import schema_text
from generators.model.catalog import DEFAULT_CATALOG, load_catalog
from generators.model.design import Design, check_against_catalog
from generators.model.design.json_schema import design_schema
from generators.model.errors import DesignError
from generators.model.yamlload import apply_overrides, load_with_extends, parse_yaml_text
from tests.conftest import DESIGNS, EXAMPLES, ROOT
from tests.test_hostile_inputs import BASE as HOSTILE_BASE
from tests.test_property_designs import VALUES, child_yaml

SCHEMA_FILE = DESIGNS / "design.schema.json"
SMALL = DESIGNS / "h100-256.yaml"
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$", re.M)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return design_schema(load_catalog(DEFAULT_CATALOG))


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema)
    assert cls is jsonschema.Draft7Validator  # the dialect yaml-language-server implements
    cls.check_schema(schema)  # the schema itself is a valid JSON Schema
    return cls(schema)


def errors(validator: jsonschema.protocols.Validator, text: str) -> list[str]:
    """Schema errors of a design file's text, read as railyard reads YAML (so 2:1 is the string "2:1",
    as YAML 1.2 editors read it too), each as `path: message`."""
    data, _ = parse_yaml_text(text, "d.yaml")
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(data)]


def test_committed_schema_is_what_railyard_schema_prints(cli, schema) -> None:
    # editors read the committed file from a fresh clone; regenerate with
    # `railyard schema > designs/design.schema.json` after a change to the design model or the catalog
    r = cli("schema")
    assert r.exit_code == 0, r.output
    assert r.stdout == schema_text(schema)
    assert SCHEMA_FILE.read_text(encoding="utf-8") == r.stdout, "designs/design.schema.json is stale"


def test_every_field_has_its_description(schema) -> None:
    # hover text in an editor comes from the model's descriptions; a field without one shows nothing
    missing = [
        f"{name}.{field}"
        for name, d in schema["definitions"].items()
        for field, prop in d.get("properties", {}).items()
        if not prop.get("description")
    ]
    assert not missing
    assert schema["properties"]["extends"]["description"] and schema["description"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_shipped_design_validates(validator, name) -> None:
    path = DESIGNS / f"{name}.yaml"
    assert not errors(validator, path.read_text())


@pytest.mark.parametrize("name", EXAMPLES)
def test_modeline_resolves_to_the_schema_from_the_designs_folder(name) -> None:
    # yaml-language-server resolves a relative $schema against the YAML file's own folder
    path = DESIGNS / f"{name}.yaml"
    m = MODELINE.search(path.read_text())
    assert m, f"{path.name} has no yaml-language-server modeline"
    assert (path.parent / m.group(1)).resolve() == SCHEMA_FILE.resolve()


def test_vscode_setting_maps_designs_to_the_schema() -> None:
    schemas = json.loads((ROOT / ".vscode" / "settings.json").read_text())["yaml.schemas"]
    assert [(ROOT / k).resolve() for k in schemas] == [SCHEMA_FILE.resolve()]
    globs = next(iter(schemas.values()))
    assert "designs/*.yaml" in globs and "!designs/catalog.yaml" in globs  # the catalog is not a design


# designs the tests write that railyard accepts (or that fail only on rules needing the whole design,
# such as the scalable-unit multiple, which a schema cannot express)
TEST_DESIGNS = [
    pytest.param(HOSTILE_BASE, id="hostile-inputs-base"),
    pytest.param("name: base\ncompute: {count: 64}\n", id="cli-extends-base"),
    pytest.param("extends: base.yaml\nname: child\ncompute:\n  count: 70\n", id="cli-extends-child"),
    pytest.param(
        "name: x\ncompute: {count: 64}\nbackend: {oversubscription: 2:1}\nmanagement: {backend_attached: 0}\n",
        id="cli-unquoted-ratio",
    ),
    pytest.param("extends: f0.yaml\n", id="extends-only"),
    pytest.param(
        f"extends: {SMALL}\nfrontend: &fe\n  ports_per_server: 1\nstorage:\n  <<: *fe\n  ports_per_server: 2\n",
        id="merge-keys",
    ),
    pytest.param(
        f"extends: {SMALL}\nsite:\n  rows:\n"
        "    - {name: a, positions: 10, x_mm: 1500, y_mm: 1200}\n"
        "    - {name: b, positions: 10, x_mm: 1500, y_mm: 3600}\n",
        id="placement-rows",
    ),
    pytest.param(
        "extends: h100-1024-reference.yaml\nfrontend: {speed: 100G, oversubscription: 2}\n"
        "tenants:\n  - {name: acme, scalable_units: [1], pkey: 0x1001}\n"
        "  - {name: b, servers: ['gpu[033-040]'], pkey: 4098}\n"
        "software: {cluster_manager: {license: base-command-manager, term_years: 1}}\n",
        id="loose-types",
    ),
]


@pytest.mark.parametrize("text", TEST_DESIGNS)
def test_designs_the_tests_write_validate(validator, text) -> None:
    assert not errors(validator, text)


@pytest.mark.parametrize(
    ("text", "where", "says"),
    [
        ("name: x\ncompute: {count: 64}\nbackend: {topology: mesh}\n", "$.backend.topology", "is not one of"),
        ("name: x\ncompute:\n  count: 64\n  gpus_per_server: 8\n", "$.compute", "'gpus_per_server' was unexpected"),
        ("extends: a.yaml\ncompute: {cuont: 3}\n", "$.compute", "'cuont' was unexpected"),
        ("extends: a.yaml\nbackend: {switch: QM9999}\n", "$.backend.switch", "'QM9999' is not one of"),
        ("extends: a.yaml\nfrontend: {switch: QM9700}\n", "$.frontend.switch", "'QM9700' is not one of"),  # IB
        ("extends: a.yaml\nstorage: {license: ufm-enterprise}\n", "$.storage.license", "not valid under any"),
        ("extends: a.yaml\nfrontend: {speed: fast}\n", "$.frontend.speed", "is not valid under any"),
        ("extends: a.yaml\nstorage: {speed: 0G}\n", "$.storage.speed", "is not valid under any"),
        ("extends: a.yaml\nbackend: {oversubscription: fast}\n", "$.backend.oversubscription", "is not valid"),
        ("extends: a.yaml\ntenants: [{servers: ['gpu001']}]\n", "$.tenants[0]", "'name' is a required property"),
        ("name: x\n", "$", "'compute' is a required property"),
        ("name: x\ncompute: {server: hgx-h100}\n", "$.compute", "'count' is a required property"),
        ("extends: ''\n", "$.extends", "should be non-empty"),
    ],
)
def test_bad_designs_are_rejected_at_the_field(validator, text, where, says) -> None:
    found = errors(validator, text)
    assert any(e.startswith(f"{where}: ") and says in e for e in found), found


def test_catalog_option_sets_the_enums(cli, tmp_path) -> None:
    # a site's own catalog: its switch appears in the schema, a switch it lacks does not
    catalog = yaml.safe_load(DEFAULT_CATALOG.read_text())
    catalog["switches"]["MY-LEAF"] = catalog["switches"].pop("SN4600")
    mine = tmp_path / "catalog.yaml"
    mine.write_text(yaml.safe_dump(catalog))
    r = cli("schema", "--catalog", mine)
    assert r.exit_code == 0, r.output
    enum = json.loads(r.stdout)["definitions"]["Frontend"]["properties"]["switch"]["enum"]
    assert "MY-LEAF" in enum and "SN4600" not in enum and "SN2201" in enum
    # racks and licenses are optional tables: none in the catalog, no name valid there (null still is)
    del catalog["racks"], catalog["licenses"]
    mine.write_text(yaml.safe_dump(catalog))
    r = cli("schema", "--catalog", mine)
    assert r.exit_code == 0, r.output
    jsonschema.Draft7Validator.check_schema(json.loads(r.stdout))  # an empty enum is valid draft-07
    bare = jsonschema.Draft7Validator(json.loads(r.stdout))
    assert not list(bare.iter_errors({"extends": "a.yaml", "storage": {"license": None}}))
    assert list(bare.iter_errors({"extends": "a.yaml", "site": {"rack": {"model": "rack-42u-600x1200"}}}))
    bad = cli("schema", "--catalog", tmp_path / "missing.yaml")
    assert bad.exit_code == 2 and "missing.yaml" in bad.output


# ------------------------------------------------------------------ the schema agrees with the loader

CATALOG_KEYS = {
    "backend.switch": ["QM9700", "SN5600", "QM9999"],
    "frontend.switch": ["AS7816-64X", "SN4600", "QM9700", "nope"],  # QM9700: InfiniBand, not for a frontend
    "compute.config.cpu": ["xeon-8462yplus", "i486"],
    "storage.license": ["storage-software", "null", "ufm-enterprise"],  # ufm-enterprise: per endpoint, not TB
}
CATALOG_VALUES = {k: st.sampled_from(v) for k, v in CATALOG_KEYS.items()}
# pydantic's lax mode reads YAML `true` as 1 in a number field; the schema (rightly) does not, and that
# looseness of the loader is not the schema's to copy, so `true` is left out of the junk values
GENERATED = {k: v.filter(lambda x: x != "true") for k, v in {**VALUES, **CATALOG_VALUES}.items()}
sets_strategy = st.lists(st.sampled_from(sorted(GENERATED)), min_size=1, max_size=3, unique=True).flatmap(
    lambda keys: st.tuples(*(GENERATED[k].map(lambda v, k=k: f"{k}={v}") for k in keys))
)


def _with_each_catalog_value(test: Any) -> Any:
    """Every catalog value alone, as well as the random mixes: each of them decides the verdict."""
    for key, values in CATALOG_KEYS.items():
        for value in values:
            test = example(sets=(f"{key}={value}",))(test)
    return test


@settings(max_examples=100, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@_with_each_catalog_value
@given(sets=sets_strategy)
def test_schema_agrees_with_the_loader(validator, sets: tuple[str, ...]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        child = Path(tmp) / "child.yaml"
        text = f"extends: {SMALL}\n" + child_yaml(sets)
        child.write_text(text)
        try:
            data, src = load_with_extends(child)
        except DesignError:
            return  # refused while reading YAML (e.g. .inf): nothing for a schema to say
        data = apply_overrides(data, src, [])
        file_errors = errors(validator, text)
        whole_errors = [e.message for e in validator.iter_errors(data)]  # the merged design: no extends
        try:
            design = Design.model_validate(data)
        except ValidationError as exc:
            field_level = [e for e in exc.errors() if e["loc"]]  # a rule over several fields has no loc
            if field_level:
                assert whole_errors, f"railyard refuses {field_level[0]['loc']} but the schema accepts {sets}"
            return
        problems = check_against_catalog(design, load_catalog(DEFAULT_CATALOG))
        if not problems:
            assert not file_errors and not whole_errors, (sets, file_errors, whole_errors)
        unknown = [p for p in problems if p[1].startswith("unknown ") or p[1].endswith("is not an Ethernet switch")]
        if unknown:
            assert whole_errors, f"railyard refuses {'.'.join(unknown[0][0])} but the schema accepts {sets}"


def test_a_kept_parse_is_a_copy_its_label_and_limits_are_part_of_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """parse_yaml_text keeps recent parses (every compile reads the catalog): a caller that changes
    what it got does not change the next caller's, each label keeps its own source lines, a refusal
    is refused again, and a lowered limit is not answered from a parse made under the old one."""
    import generators.model.yamlload as yamlload

    text = "a:\n  b: [1, 2]\n"
    first, src = parse_yaml_text(text, "x.yaml")
    first["a"]["b"].append(3)
    src[("a",)] = "changed"
    again, src_again = parse_yaml_text(text, "x.yaml")
    assert again == {"a": {"b": [1, 2]}} and src_again[("a",)] == "x.yaml:2"
    assert parse_yaml_text(text, "y.yaml")[1][("a", "b")] == "y.yaml:2"
    for _ in range(2):
        with pytest.raises(DesignError):
            parse_yaml_text("a: [1, 2\n", "bad.yaml")
    monkeypatch.setattr(yamlload, "MAX_DEPTH", 1)
    with pytest.raises(DesignError):
        parse_yaml_text(text, "x.yaml")
