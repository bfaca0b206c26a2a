"""PDFs of railyard's HTML sheets, printed by Debian's headless Chromium (`railyard cabling pack`).

Chromium (Skia) stamps /CreationDate and /ModDate with the wall clock: the two dates are rewritten to
the epoch digit for digit (same length, so the xref offsets stay right). The tagged-PDF structure tree
is switched off (its element ids vary), and sheets carry no links (Chromium writes them as absolute
file:// URIs of the folder it printed from). Then a pack is byte-identical per design.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

_EXTRA_PATH = ("/usr/sbin", "/sbin", "/usr/local/sbin")
_PDF_DATE = re.compile(rb"(/(?:CreationDate|ModDate) \(D:)\d{14}")


class PrintError(RuntimeError):
    """Chromium is missing or printed nothing; ``log`` holds its own output."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(f"{message}\n--- chromium output ---\n{log}" if log else message)
        self.log = log


def find_chromium() -> str:
    found = shutil.which(
        "chromium", path=os.pathsep.join([*os.environ.get("PATH", "").split(os.pathsep), *_EXTRA_PATH])
    )
    if found is None:
        raise PrintError("chromium not found: install the Debian package 'chromium' (scripts/install-system-deps.sh)")
    return found


def fixed_dates(pdf: bytes) -> bytes:
    """The PDF with its creation and modification dates set to 1970-01-01 00:00:00."""
    return _PDF_DATE.sub(lambda m: m.group(1) + b"19700101000000", pdf)


def print_pdf(
    html_path: str | os.PathLike[str],
    pdf_path: str | os.PathLike[str],
    *,
    chromium: str | None = None,
    extra_args: tuple[str, ...] = (),
    timeout: float = 120.0,
) -> Path:
    """Print a local HTML file to PDF; returns the PDF path.

    Runs with a throw-away profile and every background fetch switched off: a sheet must not
    depend on anything remote. The dates are fixed (see the module docstring)."""
    binary = chromium or find_chromium()
    html = Path(html_path).resolve()
    pdf = Path(pdf_path).resolve()
    pdf.parent.mkdir(parents=True, exist_ok=True)
    pdf.unlink(missing_ok=True)
    _, log, code = run_headless(
        html.as_uri(),
        (
            "--no-pdf-header-footer",  # else the date and file URL are printed on every page
            # the accessibility structure tree numbers its elements by DOM node ids, which differ from
            # run to run on long sheets; without it a leaf rack's PDF is also 6 x smaller (870 -> 135 kB)
            "--disable-pdf-tagging",
            f"--print-to-pdf={pdf}",
            *extra_args,
        ),
        chromium=binary,
        timeout=timeout,
    )
    if code != 0 or not pdf.exists() or pdf.stat().st_size == 0:
        raise PrintError(f"chromium exited with {code} and wrote no PDF", log)
    pdf.write_bytes(fixed_dates(pdf.read_bytes()))
    return pdf


def run_headless(
    url: str, flags: tuple[str, ...], *, chromium: str | None = None, timeout: float = 120.0
) -> tuple[str, str, int]:
    """One headless Chromium on `url` with `flags` (--print-to-pdf, --dump-dom, --screenshot, ...);
    returns (its stdout, its log, its exit code).

    Runs with a throw-away profile and every background fetch switched off: a page must not
    depend on anything remote."""
    binary = chromium or find_chromium()
    with tempfile.TemporaryDirectory(prefix="railyard-chromium-") as profile:
        args = [
            binary,
            "--headless",
            "--no-sandbox",  # root cannot use the setuid/namespace sandbox
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            f"--user-data-dir={profile}",
            *flags,
            url,
        ]
        # Output goes to files, not pipes: helper processes that outlive the browser would
        # hold a pipe open and make reading it block until the timeout.
        out_path, log_path = Path(profile) / "chromium.out", Path(profile) / "chromium.log"
        with out_path.open("wb") as out, log_path.open("wb") as err:
            proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise PrintError(f"chromium did not finish within {timeout}s", read_log(log_path)) from None
        finally:
            stop_group(proc)  # also reaps helper processes left in its group
        return read_log(out_path), read_log(log_path), proc.returncode


def read_log(path: Path) -> str:
    """A daemon's log, or nothing when it wrote none."""
    return path.read_text(errors="replace") if path.exists() else ""


def stop_group(proc: subprocess.Popen[bytes], grace: float = 5.0) -> None:
    """SIGTERM the process group we created (start_new_session: its id is the pid), then SIGKILL it if
    it lingers; a leader that already exited may have left helpers in its group (chromium's zygotes,
    crashpad), so the group is killed then too."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=grace)
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def print_all(files: dict[str, str], which: list[str], jobs: int = 2, chromium: str | None = None) -> dict[str, bytes]:
    """{<path>.pdf: PDF} for each HTML path in `which`, printed from `files` laid out in a temporary
    folder (so relative links between sheets resolve), `jobs` Chromiums at a time."""
    from concurrent.futures import ThreadPoolExecutor

    binary = chromium or find_chromium()
    with tempfile.TemporaryDirectory(prefix="railyard-pack-") as tmp:
        root = Path(tmp)
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")

        def one(rel: str) -> tuple[str, bytes]:
            pdf = rel.removesuffix(".html") + ".pdf"
            return pdf, print_pdf(root / rel, root / pdf, chromium=binary).read_bytes()

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            return dict(pool.map(one, which))
