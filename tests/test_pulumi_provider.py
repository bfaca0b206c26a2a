"""The file-artifact dynamic provider, called directly (under set_mocks its create() never runs)."""

from __future__ import annotations

import hashlib
import os
import pickle

import dill
import pytest

from components.artifact import (
    BLOBS,
    SECRET_MODE,
    FileArtifactProvider,
    prune_blobs,
    sha256_text,
    store_blob,
    summary,
    write_atomic,
)

P = FileArtifactProvider()


def props(root, path="frontend/fe-leaf01/frr.conf", content="hostname fe-leaf01\n", mode="0644", store=True):
    """The inputs the program gives a FileArtifact, after storing the content as the program does."""
    if store and os.path.isabs(str(root)) and str(root) != "/":
        store_blob(root, content)
    return {"dir": str(root), "path": path, "mode": mode, **summary(content)}


def test_create_writes_file_and_returns_hash(tmp_path):
    res = P.create(props(tmp_path))
    f = tmp_path / "frontend/fe-leaf01/frr.conf"
    assert f.read_text() == "hostname fe-leaf01\n"
    assert res.id == str(f)
    assert res.outs == {"dir": str(tmp_path), "path": "frontend/fe-leaf01/frr.conf", "mode": "0644",
                        "sha256": hashlib.sha256(b"hostname fe-leaf01\n").hexdigest(), "size": 19, "lines": 1}
    assert f"{f.stat().st_mode & 0o777:04o}" == "0644"
    assert not [p for p in f.parent.iterdir() if p.name != "frr.conf"], "temp file left behind"


def test_secret_artifact_written_owner_only(tmp_path):
    P.create(props(tmp_path, path="oob/creds.env", content="PW=s3cretpass\n", mode=SECRET_MODE))
    assert (tmp_path / "oob/creds.env").stat().st_mode & 0o777 == 0o600


def test_diff_only_when_content_or_mode_changes(tmp_path):
    outs = P.create(props(tmp_path)).outs
    same = P.diff("id", outs, props(tmp_path))
    assert same.changes is False and same.replaces == []
    changed = P.diff("id", outs, props(tmp_path, content="hostname fe-leaf02\n"))
    assert changed.changes is True and changed.replaces == []
    assert P.diff("id", outs, props(tmp_path, mode=SECRET_MODE)).changes is True
    moved = P.diff("id", outs, props(tmp_path / "elsewhere"))
    assert moved.changes is True and moved.replaces == ["dir"]
    # during a preview an input computed from another resource is unknown: report a change
    unknown = P.diff("id", outs, {**props(tmp_path), "sha256": "04da6b54-80e4-46f7-96ec-b56ff0331ba9"})
    assert unknown.changes is True
    # size and line count are shown, not compared: the hash stands for the content
    assert P.diff("id", {**outs, "lines": None}, props(tmp_path)).changes is False


def test_update_rewrites_and_is_idempotent(tmp_path):
    old = P.create(props(tmp_path)).outs
    f = tmp_path / "frontend/fe-leaf01/frr.conf"
    new = P.update(str(f), old, props(tmp_path, content="hostname x\n")).outs
    assert f.read_text() == "hostname x\n"
    assert new["sha256"] == sha256_text("hostname x\n") and new["size"] == 11
    ino, mtime = f.stat().st_ino, f.stat().st_mtime_ns
    again = P.update(str(f), new, props(tmp_path, content="hostname x\n")).outs
    assert again == new
    assert (f.stat().st_ino, f.stat().st_mtime_ns) == (ino, mtime), "unchanged content must not be rewritten"


def test_write_is_atomic_rename(tmp_path):
    f = tmp_path / "a.txt"
    write_atomic(f, "one\n", "0644")
    ino = f.stat().st_ino
    write_atomic(f, "two\n", "0644")
    assert f.read_text() == "two\n"
    assert f.stat().st_ino != ino, "a new inode means the file was replaced by rename, not truncated in place"


def test_delete_removes_file_and_empty_parents_only(tmp_path):
    P.create(props(tmp_path))
    P.create(props(tmp_path, path="frontend/fe-leaf02/frr.conf"))
    P.delete("x", props(tmp_path))
    assert not (tmp_path / "frontend/fe-leaf01").exists()
    assert (tmp_path / "frontend/fe-leaf02/frr.conf").exists()
    P.delete("x", props(tmp_path, path="frontend/fe-leaf02/frr.conf"))
    assert not (tmp_path / "frontend").exists()
    assert tmp_path.exists(), "the output directory itself is left in place"
    P.delete("x", props(tmp_path))  # already gone: still succeeds


def test_read_detects_hand_edit_and_deletion(tmp_path):
    outs = P.create(props(tmp_path))
    f = tmp_path / "frontend/fe-leaf01/frr.conf"
    state = {**outs.outs}
    assert P.read(outs.id, state).outs == state  # untouched: refresh changes nothing
    f.write_text("hostname fe-leaf01\nrouter bgp 65000\n")
    drift = P.read(outs.id, state)
    assert drift.id == outs.id
    assert drift.outs["sha256"] == sha256_text("hostname fe-leaf01\nrouter bgp 65000\n") != state["sha256"]
    # the next up diffs the refreshed outputs against the design's content, and restores the file
    assert P.diff(outs.id, drift.outs, props(tmp_path)).changes is True
    P.update(outs.id, drift.outs, props(tmp_path))
    assert f.read_text() == "hostname fe-leaf01\n"
    os.chmod(f, 0o666)
    assert P.read(outs.id, state).outs["mode"] == "0666"
    f.unlink()
    assert P.read(outs.id, state).id == ""  # gone: refresh drops it from the state


@pytest.mark.parametrize("bad", [
    {"path": "/etc/passwd"}, {"path": "../x"}, {"path": "a/../../x"}, {"path": "a//b"}, {"path": ""},
    {"dir": "relative/dir"}, {"mode": "0777"}, {"sha256": "abc"}, {"sha256": "A" * 64}, {"size": -1},
    {"lines": 1.5}, {"size": "12"}, {"path": ".railyard/blobs/x"},
])
def test_check_rejects_bad_inputs(tmp_path, bad):
    res = P.check({}, {**props(tmp_path, store=False), **bad})
    assert [f.property for f in res.failures] == list(bad)


def test_check_accepts_good_inputs(tmp_path):
    assert P.check({}, props(tmp_path)).failures == []


def test_provider_is_stateless_and_pickles_by_reference():
    # the pitfall: a provider pickled with attributes or from __main__ grows per resource
    assert vars(P) == {}
    blob = dill.dumps(P, protocol=pickle.DEFAULT_PROTOCOL, recurse=True)
    assert len(blob) < 200, len(blob)
    assert b"components.artifact" in blob


def test_a_symlinked_folder_inside_the_deploy_folder_is_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "deploy"
    root.mkdir()
    (root / "frontend").symlink_to(outside)
    with pytest.raises(OSError, match="is a symlink inside the deploy folder"):
        P.create(props(root))
    assert not list(outside.iterdir())
    (outside / "fe-leaf01").mkdir()
    (outside / "fe-leaf01" / "frr.conf").write_text("not railyard's\n")
    with pytest.raises(OSError, match="symlink"):
        P.delete("id", props(root))
    assert (outside / "fe-leaf01" / "frr.conf").exists()


def test_a_symlink_in_place_of_the_file_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    root = tmp_path / "deploy"
    (root / "frontend" / "fe-leaf01").mkdir(parents=True)
    (root / "frontend" / "fe-leaf01" / "frr.conf").symlink_to(victim)
    P.create(props(root))
    assert victim.read_text() == "precious\n"
    assert (root / "frontend/fe-leaf01/frr.conf").read_text() == "hostname fe-leaf01\n"


def test_deploy_folder_rules(tmp_path):
    assert P.check({}, props("/")).failures[0].reason.startswith("refusing to deploy into / is the filesystem root")
    (tmp_path / ".git").mkdir()
    assert "git work tree" in P.check({}, props(tmp_path)).failures[0].reason
    assert not P.check({}, props(tmp_path / "deploy" / "x")).failures


def test_folders_are_0755_whatever_the_umask(tmp_path):
    old = os.umask(0o077)
    try:
        P.create(props(tmp_path / "d"))
    finally:
        os.umask(old)
    assert (tmp_path / "d").stat().st_mode & 0o777 == (tmp_path / "d" / "frontend").stat().st_mode & 0o777 == 0o755
    assert (tmp_path / "d" / "frontend/fe-leaf01/frr.conf").stat().st_mode & 0o777 == 0o644


def test_parallel_creates_into_one_new_folder(tmp_path):
    """The engine runs creates in parallel: many files of one new switch folder (and a new deploy
    folder) created at once must all land, none failing on a folder another create just made."""
    import threading

    for trial in range(30):
        root = tmp_path / f"deploy{trial}"
        barrier = threading.Barrier(8)
        errors: list[BaseException] = []

        def create(k: int, root=root, barrier=barrier, errors=errors) -> None:
            barrier.wait()
            try:
                FileArtifactProvider().create(props(root, f"oob/agg1/sub/f{k}.conf", f"{k}\n"))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=create, args=(k,)) for k in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert errors == []
        assert sorted(p.name for p in (root / "oob/agg1/sub").iterdir()) == [f"f{k}.conf" for k in range(8)]


def test_content_comes_from_the_blob_store_checked_by_hash(tmp_path):
    """The inputs carry no content: create copies the stored blob, owner-only in an owner-only folder."""
    inputs = props(tmp_path, content="hostname fe-leaf01\nrouter bgp 65000\n")
    assert "content" not in inputs and inputs["lines"] == 2 and inputs["size"] == 36
    blob = tmp_path / BLOBS / inputs["sha256"]
    assert blob.read_text() == "hostname fe-leaf01\nrouter bgp 65000\n"
    assert blob.stat().st_mode & 0o777 == 0o600 and blob.parent.stat().st_mode & 0o777 == 0o700
    P.create(inputs)
    assert (tmp_path / inputs["path"]).read_text() == blob.read_text()


def test_a_missing_or_changed_blob_is_a_clear_error_and_writes_nothing(tmp_path):
    inputs = props(tmp_path, content="new text\n")
    blob = tmp_path / BLOBS / inputs["sha256"]
    blob.unlink()
    with pytest.raises(OSError, match=r"stored copy .* is missing .*run `pulumi up` again"):
        P.create(inputs)
    assert not (tmp_path / inputs["path"]).exists()
    blob.write_text("tampered\n")
    tampered = sha256_text("tampered\n")
    with pytest.raises(OSError, match=rf"holds other content \(sha256 {tampered}, expected"):
        P.create(inputs)
    assert not (tmp_path / inputs["path"]).exists()
    # a secret file's error names no hash: it would let a short secret be guessed offline
    secret = props(tmp_path, path="oob/creds.env", content="PW=x\n", mode=SECRET_MODE)
    (tmp_path / BLOBS / secret["sha256"]).write_text("PW=y\n")
    with pytest.raises(OSError) as exc:
        P.create(secret)
    assert secret["sha256"] not in str(exc.value) and sha256_text("PW=y\n") not in str(exc.value)


def test_a_file_that_already_holds_the_hash_needs_no_blob(tmp_path):
    """How a stack made when the content was an input, and a no-op update, cost nothing: the file on
    disk already has the hash, so nothing is read from the store and the file is not rewritten."""
    inputs = props(tmp_path)
    P.create(inputs)
    f = tmp_path / inputs["path"]
    st = f.stat()
    (tmp_path / BLOBS / inputs["sha256"]).unlink()
    P.update("id", inputs, inputs)
    assert (f.stat().st_ino, f.stat().st_mtime_ns) == (st.st_ino, st.st_mtime_ns)


def test_prune_keeps_what_is_referenced_and_everything_not_railyards(tmp_path):
    keep, drop = store_blob(tmp_path, "a\n"), store_blob(tmp_path, "b\n")
    (tmp_path / BLOBS / "notes.txt").write_text("mine\n")
    assert prune_blobs(tmp_path, {keep}) == [drop]
    assert sorted(p.name for p in (tmp_path / BLOBS).iterdir()) == sorted([keep, "notes.txt"])


def test_the_last_delete_removes_the_blob_store(tmp_path):
    a, b = props(tmp_path, path="x/a.conf", content="a\n"), props(tmp_path, path="b.conf", content="b\n")
    P.create(a)
    P.create(b)
    P.delete("id", a)
    assert (tmp_path / BLOBS).is_dir(), "another artifact is still deployed"
    P.delete("id", b)
    assert list(tmp_path.iterdir()) == []
    # a file of yours in the deploy folder keeps the store (railyard cannot tell it is the last delete)
    P.create(props(tmp_path, path="x/a.conf", content="a\n"))
    (tmp_path / "mine.txt").write_text("keep\n")
    P.delete("id", a)
    assert (tmp_path / BLOBS).is_dir() and (tmp_path / "mine.txt").exists()


def test_read_reports_size_and_lines_from_disk(tmp_path):
    res = P.create(props(tmp_path))
    (tmp_path / res.outs["path"]).write_text("one\ntwo\nthree")
    outs = P.read(res.id, res.outs).outs
    assert (outs["size"], outs["lines"]) == (13, 3)
