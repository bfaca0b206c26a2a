"""`railyard netbox` refusals that need no NetBox: no token, a bad URL, a NetBox that does not answer."""

from __future__ import annotations

import socket
from pathlib import Path

from typer.testing import CliRunner

from generators.cli import app
from tests.conftest import DESIGNS

DESIGN = str(DESIGNS / "h100-256.yaml")


def _run(env: dict[str, str], *args: str) -> object:
    return CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)


def test_no_token_exits_2_and_says_how_to_set_one() -> None:
    res = _run({"NETBOX_TOKEN": ""}, "netbox", "push", DESIGN, "--url", "http://127.0.0.1:1")
    assert res.exit_code == 2, res.output
    assert "NETBOX_TOKEN" in res.output and "export NETBOX_TOKEN=" in res.output


def test_a_url_that_is_not_http_exits_2_naming_the_option() -> None:
    res = _run({"NETBOX_TOKEN": "nbt_x.y"}, "netbox", "pull", DESIGN, "--url", "netbox.example.com")
    assert res.exit_code == 2, res.output
    assert "--url" in res.output and "not an http(s) URL" in res.output


def test_nothing_listening_at_the_url_exits_2_with_the_address() -> None:
    # the user's --url (or a NetBox that is down): retried a few times, then exit 2 as bad input
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    res = _run({"NETBOX_TOKEN": "nbt_x.y"}, "netbox", "push", DESIGN, "--url", f"http://127.0.0.1:{port}")
    assert res.exit_code == 2, res.output
    assert f"cannot reach NetBox at http://127.0.0.1:{port}/api/" in res.output and "Traceback" not in res.output


def test_an_edits_file_that_is_not_railyards_exits_2_before_asking_netbox(tmp_path: Path) -> None:
    """--edits replaces only a file it wrote (or a new one): a folder or someone's file is refused,
    naming the option, before the design is compiled or NetBox asked."""
    mine = tmp_path / "notes.json"
    mine.write_text('{"mine": true}\n')
    for path, said in ((tmp_path, "is a directory"), (mine, "it exists and is not a railyard")):
        res = _run(
            {"NETBOX_TOKEN": "nbt_x.y"}, "netbox", "push", DESIGN, "--url", "http://127.0.0.1:1", "--edits", str(path)
        )
        assert res.exit_code == 2, res.output
        assert "--edits" in res.output and said in " ".join(res.output.split()), res.output
        assert "cannot reach NetBox" not in res.output and "Traceback" not in res.output
    assert mine.read_text() == '{"mine": true}\n'
