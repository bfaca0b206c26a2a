"""`railyard netbox pull` and `push`, run as a user runs them (a process of their own), against a server
on loopback that misbehaves as a proxy, a wrong URL or an overloaded NetBox does (tests/hostile_http.py):
each ends in exit 1 or 2 (0 when a retry cures it) within the bound the client enforces, with the
request and what came back in the message, escaped, never exit 70, never a traceback, never a raw
escape sequence; and no run prints the API token or a URL's password.

The time bounds asserted are the client's own (`--timeout`, `--read-timeout`) plus a generous margin
for starting Python and compiling h100-256 (~1.5 s here): bounds, not speed measurements."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import DESIGNS
from tests.hostile_http import Hostile, closed_port

ROOT = Path(__file__).resolve().parent.parent
DESIGN = str(DESIGNS / "h100-256.yaml")
TOKEN = "nbt_Hostile7Secret.Token0123456789abcdef"
MARGIN = 25.0  # s: Python, the compile, and a slow shared machine

# run as the installed `railyard` script does, then write the process's peak RSS (KiB) to a file
_CHILD = (
    "import atexit, os, resource, sys\nfrom generators.cli import main\nsys.argv = ['railyard', *sys.argv[1:]]\n"
    "def _rss():\n    with open(os.environ['HOSTILE_RSS_FILE'], 'w') as f:\n"
    "        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))\n"
    "atexit.register(_rss)\nmain()\n"
)


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float
    rss_mib: float

    @property
    def text(self) -> str:
        return self.out + self.err


def railyard(*args: str, token: str = TOKEN) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NETBOX_")}
    env["NETBOX_TOKEN"] = token
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss:
        env["HOSTILE_RSS_FILE"] = rss.name
        t0 = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, *args], cwd=ROOT, env=env, capture_output=True, timeout=300, check=False
        )
        seconds = time.monotonic() - t0
        kib = Path(rss.name).read_text() or "0"
    out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    return Run(done.returncode, out, err, seconds, int(kib) / 1024)


def clean(run: Run) -> None:
    """Nothing raw: no terminal escape, no traceback, no 'railyard bug', no secret."""
    for stream in (run.out, run.err):
        assert "\x1b" not in stream and "\x07" not in stream and "\x9b" not in stream, stream
        assert "Traceback" not in stream and "internal error" not in stream, stream
        assert TOKEN not in stream and TOKEN.split(".")[1] not in stream, stream


# (case, command, options, exit, time bound beyond MARGIN, what the message says)
FAILING = [
    ("loop", "pull", (), 1, 0, r"links back to a page it sent before \(a loop\)"),
    ("endless", "pull", (), 1, 0, r"links to page 5, past the 4 pages"),
    ("elsewhere", "pull", (), 1, 0, r"links its next page to http://netbox.invalid/.*not followed"),
    # a GET is tried again after a read timeout, until the total bound
    (
        "silent",
        "pull",
        ("--read-timeout", "1", "--timeout", "4"),
        1,
        4,
        r"no answer within 1 s; retrying in .*\n"
        r"error: .*(did not answer GET within 1 s|was not over within 4 s)",
    ),
    ("trickle", "pull", ("--timeout", "3"), 1, 3, r"was not over within 3 s \(--timeout\)"),
    ("trickle_headers", "pull", ("--timeout", "3"), 1, 3, r"was not over within 3 s \(--timeout\)"),
    ("html", "pull", (), 1, 0, r"is not JSON \(text/html\): <html><body>Please log in"),
    ("json_list", "pull", (), 1, 0, r"the answer is a list, where railyard reads an object"),
    ("no_results", "pull", (), 1, 0, r"results is missing"),
    ("wrong_id", "pull", (), 1, 0, r"results\[0\]\.id is a string \('one'\), where railyard reads an integer"),
    ("wrong_tags", "push", (), 1, 0, r"results\[0\]\.tags is a string \('railyard'\), where railyard reads a list"),
    ("wrong_custom_fields", "push", (), 1, 0, r"results\[0\]\.custom_fields is a list, where railyard reads an obj"),
    ("post_answers_no_id", "push", (), 1, 0, r"POST extras/tags/ is not what railyard reads: id is missing"),
    ("post_answers_object", "push", (), 1, 0, r"the answer is an object, where railyard reads a list"),
    ("post_answers_fewer", "push", (), 1, 0, r"lists 0 objects for the \d+ railyard sent"),
    ("redirect", "pull", (), 1, 0, r"HTTP 302, a redirect to https://127.0.0.1:1/login/\?next=/api/ \(not followed"),
    ("deep", "pull", (), 1, 0, r"is nested deeper than 64 levels$"),
    ("deep_field", "pull", (), 1, 0, r"is nested deeper than 64 levels"),
    ("huge", "pull", (), 1, 0, r"is 104,8\d\d,\d\d\d bytes, past railyard's bound of 67,108,864: not read"),
    ("endless_body", "pull", (), 1, 10, r"went past railyard's bound of 67,108,864 bytes: stopped reading it there"),
    ("markup_text", "pull", (), 1, 0, r"HTTP 400 \[/x\] \[bold red\]markup\[/\] \\x1b\[2J\\x1b\]0;pwned\\x07"),
    ("markup_json", "pull", (), 1, 0, r"HTTP 400 \{\"detail\": \"\[/x\] \[bold red\]markup\[/\] \\u001b\[2J"),
    ("500", "pull", (), 1, 0, r"HTTP 500 \{\"error\": \"division by zero\""),
    ("502_post", "push", (), 1, 0, r"refused POST http://127.0.0.1:\d+/api/extras/tags/: HTTP 502"),
    # a write is not asked again: it has the whole --timeout, --read-timeout is for reads
    ("silent_post", "push", ("--read-timeout", "1", "--timeout", "4"), 1, 4, r"POST .* not over within 4 s .*again"),
    ("refused_later", "push", (), 1, 0, r"HTTP 400 \{\"dcim.cable\": \[\"duplicate\"\]\}"),
    ("echo_auth", "pull", (), 1, 0, r"HTTP 403 \(check the API token and its permissions\).*\"Bearer \*\*\*\""),
]


@pytest.mark.parametrize(("case", "command", "options", "code", "bound", "said"), FAILING, ids=[c[0] for c in FAILING])
def test_a_hostile_answer_ends_in_exit_1_or_2_within_its_bound(
    case: str, command: str, options: tuple[str, ...], code: int, bound: float, said: str
) -> None:
    with Hostile(case) as srv:
        run = railyard("netbox", command, DESIGN, "--url", srv.url, *options)
        counts = dict(srv.counts)
    assert run.code == code, run.text
    assert run.seconds < bound + MARGIN, run.seconds
    clean(run)
    assert len([line for line in run.err.splitlines() if line.startswith("error: ")]) == 1, run.err
    assert re.search(said, run.err, re.S), run.err
    if case in ("500", "html", "json_list", "redirect", "deep", "huge", "markup_text", "loop", "elsewhere"):
        assert counts == {"GET": 1}, counts  # none of these is retried
    if case in ("502_post", "silent_post", "post_answers_no_id"):
        assert counts["POST"] == 1, counts  # a POST whose fate is unknown is never sent twice


def test_a_400_mb_body_is_cut_at_the_bound_and_never_held_whole() -> None:
    with Hostile("html") as srv:
        small = railyard("netbox", "pull", DESIGN, "--url", srv.url)
    with Hostile("endless_body") as srv:
        big = railyard("netbox", "pull", DESIGN, "--url", srv.url)
    assert big.code == 1 and "stopped reading it there" in big.err, big.text
    # the bound (64 MiB) and its parse, not the 400 MB body (read whole, it took 851 MiB)
    assert big.rss_mib < small.rss_mib + 64 + 96, (small.rss_mib, big.rss_mib)


def test_a_partly_done_push_says_what_it_wrote_and_that_running_it_again_completes_it() -> None:
    with Hostile("refused_later") as srv:
        run = railyard("netbox", "push", DESIGN, "--url", srv.url, "--workers", "1")
    assert run.code == 1, run.text
    clean(run)
    assert "before this, the push had written" in run.err and "run the same push again" in run.err, run.err
    assert "new, 0 changed and 0 deleted NetBox objects" in run.err, run.err


def test_nothing_listening_exits_2_after_a_few_attempts() -> None:
    port = closed_port()
    run = railyard("netbox", "pull", DESIGN, "--url", f"http://127.0.0.1:{port}")
    assert run.code == 2, run.text
    clean(run)
    assert f"cannot reach NetBox at http://127.0.0.1:{port}/api/dcim/sites/" in run.err
    assert "gave up after 5 attempts" in run.err and run.err.count("retrying in") == 4, run.err
    assert run.seconds < 8 + MARGIN  # backoff 0.5 + 1 + 2 + 4 s at most


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("429_then_ok", "HTTP 429; retrying in 1.0 s (attempt 2 of 5)"),  # Retry-After: 1
        ("503_then_ok", "HTTP 503; retrying in 1.0 s (attempt 2 of 5)"),
        ("502_get_then_ok", "HTTP 502; retrying in"),  # a GET: idempotent
        ("deadlock_then_ok", "HTTP 500, a database deadlock (rolled back); retrying in"),  # a POST too
    ],
)
def test_a_refusal_a_retry_cures_is_retried_and_the_push_completes(case: str, said: str) -> None:
    with Hostile(case) as srv:
        run = railyard("netbox", "push", DESIGN, "--url", srv.url)
        seen = list(srv.seen)
    assert run.code == 0, run.text
    clean(run)
    assert said in run.err, run.err
    # the whole site was created in one run, the retried request not twice
    made = re.search(r"railyard did create ([\d,]+), update 0 and delete 0 NetBox objects \(0 unchanged\)", run.out)
    assert made and int(made[1].replace(",", "")) > 3000, run.out
    if case == "deadlock_then_ok":
        posts = [(path, body) for method, path, _, body in seen if method == "POST"]
        assert posts.count(posts[4]) == 2, posts[:8]  # the rolled-back list request went again, once


# ------------------------------------------------------------------------------------ secrets


def test_the_token_is_never_printed_even_when_the_server_quotes_it_back() -> None:
    with Hostile("echo_auth") as srv:
        run = railyard("netbox", "pull", DESIGN, "--url", srv.url, token=TOKEN + "\n")
        sent = srv.seen[0][2]["Authorization"]
    assert sent == f"Bearer {TOKEN}"  # trimmed before use
    assert run.code == 1, run.text
    clean(run)
    assert "NETBOX_TOKEN: trimmed the whitespace around the token" in run.err


def test_a_token_with_whitespace_inside_is_refused_without_printing_it() -> None:
    run = railyard("netbox", "push", DESIGN, "--url", "http://127.0.0.1:1", token="nbt_Hostile7Secret Token0123")
    assert run.code == 2, run.text
    clean(run)
    assert "NETBOX_TOKEN" in run.err and "not shown" in run.err and "Hostile7Secret" not in run.text


def test_a_password_in_the_url_is_refused_and_never_printed() -> None:
    with Hostile("fine") as srv:
        url = srv.url.replace("http://", "http://admin:SECRETPASS@")
        run = railyard("netbox", "pull", DESIGN, "--url", url, token=TOKEN + "\n")
        asked = sum(srv.counts.values())
    assert run.code == 2, run.text
    clean(run)
    assert "SECRETPASS" not in run.text and "http://***@127.0.0.1" in run.err, run.err
    assert asked == 0


def test_an_internal_error_traceback_shows_neither_the_token_nor_a_url_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a railyard bug whose message carries both secrets: the traceback (exit 70) is printed redacted
    from typer.testing import CliRunner

    import generators.asbuilt.netbox_pull as netbox_pull
    from generators.cli import app

    def bug(*args: object) -> None:
        raise RuntimeError(f"bug with {TOKEN} and http://admin:SECRETPASS@netbox.example.com/api/")

    monkeypatch.setattr(netbox_pull, "pull", bug)
    with Hostile("fine") as srv:
        res = CliRunner().invoke(
            app,
            ["netbox", "pull", DESIGN, "--url", srv.url],
            env={"NETBOX_TOKEN": TOKEN + "\n"},
            catch_exceptions=False,
        )
    assert res.exit_code == 70, res.output
    text = res.stdout + res.stderr
    assert "Traceback" in text and "RuntimeError: bug with *** and http://***@netbox.example.com/api/" in text, text
    assert TOKEN not in text and "SECRETPASS" not in text
