"""The dynamic providers, called directly (under set_mocks their create() never runs): FileGroup, what
the program registers, and FileArtifact, the one-file provider that stacks made before groups name."""

from __future__ import annotations

import hashlib
import os
import pickle

import dill
import pytest

from components.artifact import (
    BLOBS,
    OWNERS,
    SECRET_MODE,
    STORE,
    FileArtifactProvider,
    FileGroupProvider,
    entry_text,
    prune_blobs,
    sha256_text,
    store_blob,
    summary,
    write_atomic,
    write_owners,
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
    assert res.outs == {
        "dir": str(tmp_path),
        "path": "frontend/fe-leaf01/frr.conf",
        "mode": "0644",
        "sha256": hashlib.sha256(b"hostname fe-leaf01\n").hexdigest(),
        "size": 19,
        "lines": 1,
    }
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


@pytest.mark.parametrize(
    "bad",
    [
        {"path": "/etc/passwd"},
        {"path": "../x"},
        {"path": "a/../../x"},
        {"path": "a//b"},
        {"path": ""},
        {"dir": "relative/dir"},
        {"mode": "0777"},
        {"sha256": "abc"},
        {"sha256": "A" * 64},
        {"size": -1},
        {"lines": 1.5},
        {"size": "12"},
        {"path": ".railyard/blobs/x"},
    ],
)
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


def test_a_stored_blob_is_not_rewritten_each_run_unless_it_is_not_whole(tmp_path):
    sha = store_blob(tmp_path, "hostname x\n")
    blob = tmp_path / BLOBS / sha
    before = (blob.stat().st_ino, blob.stat().st_mtime_ns)
    assert store_blob(tmp_path, "hostname x\n") == sha
    assert (blob.stat().st_ino, blob.stat().st_mtime_ns) == before, "a blob already stored is left alone"
    blob.write_text("hostname")  # cut short (a full disk, a crash): stored again on the next run
    os.chmod(blob, 0o600)
    store_blob(tmp_path, "hostname x\n")
    assert blob.read_text() == "hostname x\n"


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


# --- FileGroup: one resource per folder component, a map path -> {sha256, size, lines} ---------------

G = FileGroupProvider()
RACK = {
    "frontend/fe-leaf01/frr.conf": "hostname fe-leaf01\n",
    "frontend/fe-leaf01/interfaces": "auto lo\n",
    "frontend/fe-leaf02/frr.conf": "hostname fe-leaf02\n",
}


def entry(text: str, **changes) -> str:
    """The group's entry for a file holding `text` (with some facts changed, to make a bad one)."""
    return entry_text({**summary(text), **changes})


def group(root, contents=RACK, name="frontend/r01", mode="0644", owners=None):
    """A FileGroup's inputs after the program stored each text and wrote the owners record."""
    for text in contents.values():
        store_blob(root, text)
    write_owners(root, owners if owners is not None else dict.fromkeys(contents, name))
    return {"dir": str(root), "group": name, "mode": mode, "files": {p: entry(t) for p, t in contents.items()}}


def stats(root, paths):
    return {p: ((root / p).stat().st_ino, (root / p).stat().st_mtime_ns) for p in paths}


def test_group_create_writes_every_file_and_adopts_one_already_there(tmp_path):
    (tmp_path / "frontend/fe-leaf01").mkdir(parents=True)
    (tmp_path / "frontend/fe-leaf01/frr.conf").write_text("hostname fe-leaf01\n")  # as a per-file stack left it
    before = stats(tmp_path, ["frontend/fe-leaf01/frr.conf"])
    inputs = group(tmp_path)
    res = G.create(inputs)
    assert {p: (tmp_path / p).read_text() for p in RACK} == RACK
    assert res.outs == inputs and res.id == f"{tmp_path}#frontend/r01"
    assert stats(tmp_path, ["frontend/fe-leaf01/frr.conf"]) == before, "a file with the right hash is not rewritten"


def test_group_diff_is_by_path_hash_and_mode(tmp_path):
    outs = G.create(group(tmp_path)).outs
    assert G.diff("id", outs, group(tmp_path)).changes is False
    changed = G.diff("id", outs, group(tmp_path, {**RACK, "frontend/fe-leaf02/frr.conf": "hostname x\n"}))
    assert changed.changes is True and changed.replaces == []
    assert G.diff("id", outs, group(tmp_path, {**RACK, "frontend/fe-leaf03/frr.conf": "x\n"})).changes is True
    fewer = dict(list(RACK.items())[:2])
    assert G.diff("id", outs, group(tmp_path, fewer)).changes is True
    assert G.diff("id", outs, group(tmp_path, mode=SECRET_MODE)).changes is True
    assert G.diff("id", outs, group(tmp_path / "elsewhere")).replaces == ["dir"]
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    assert G.diff("id", outs, {**group(tmp_path), "files": unknown}).changes is True
    # size and line count are shown, not compared: the hash stands for the content
    shown = {p: entry(t, lines=0) for p, t in RACK.items()}
    assert G.diff("id", {**outs, "files": shown}, group(tmp_path)).changes is False


def test_group_update_writes_only_what_changed_and_removes_what_it_dropped(tmp_path):
    old = G.create(group(tmp_path)).outs
    (tmp_path / "frontend/mine.txt").write_text("not railyard's\n")
    kept = ["frontend/fe-leaf01/frr.conf", "frontend/fe-leaf01/interfaces"]
    before = stats(tmp_path, kept)
    head = {kept[0]: RACK[kept[0]], kept[1]: "auto lo\nauto eth0\n", "frontend/fe-leaf01/new.conf": "new\n"}
    new = G.update("id", old, group(tmp_path, head)).outs
    assert {p: (tmp_path / p).read_text() for p in head} == head
    after = stats(tmp_path, kept)
    assert after[kept[0]] == before[kept[0]], "an unchanged file is not rewritten"
    assert after[kept[1]] != before[kept[1]], "the changed file is replaced"
    assert not (tmp_path / "frontend/fe-leaf02").exists(), "a dropped file goes, and its empty folder"
    assert (tmp_path / "frontend/mine.txt").read_text() == "not railyard's\n", "railyard deletes only its own"
    assert new["files"] == {p: entry(t) for p, t in head.items()}


def test_a_file_that_moved_to_another_group_is_not_removed_by_the_one_that_let_go(tmp_path):
    """A switch re-racked: its files leave group r01 for r02 in one `up`; the engine runs both updates
    at once, in either order. The owners record (this run's site) keeps r01 from removing them."""
    moved = {"frontend/fe-leaf02/frr.conf": RACK["frontend/fe-leaf02/frr.conf"]}
    stay = {p: t for p, t in RACK.items() if p not in moved}
    old = G.create(group(tmp_path)).outs
    owners = {**dict.fromkeys(stay, "frontend/r01"), **dict.fromkeys(moved, "frontend/r02")}
    r02 = G.create(group(tmp_path, moved, name="frontend/r02", owners=owners))  # r02 adopts it first
    G.update("id", old, group(tmp_path, stay, owners=owners))
    assert (tmp_path / "frontend/fe-leaf02/frr.conf").read_text() == moved["frontend/fe-leaf02/frr.conf"]
    # a group deleted (rack r01 gone) keeps it too, while a file in no group of this site goes
    write_owners(tmp_path, dict.fromkeys(moved, "frontend/r02"))
    G.delete("id", old)
    assert not any((tmp_path / p).exists() for p in stay)
    assert (tmp_path / "frontend/fe-leaf02/frr.conf").exists()
    # destroy: the last record names the deleting group itself, so its files go, then the store
    write_owners(tmp_path, {p: "frontend/r02" for p in moved})
    G.delete("id", r02.outs)
    assert list(tmp_path.iterdir()) == []


def test_a_per_file_artifact_of_an_earlier_railyard_leaves_a_grouped_file_alone(tmp_path):
    """The `up` that moves a stack to groups deletes its FileArtifact resources after the groups adopted
    the files: each such delete sees the path in the owners record and removes nothing."""
    a = props(tmp_path)
    P.create(a)
    write_owners(tmp_path, {a["path"]: "frontend/r01"})
    P.delete("id", a)
    assert (tmp_path / a["path"]).read_text() == "hostname fe-leaf01\n"
    write_owners(tmp_path, {})  # a later `up` whose site has no such file: now the delete removes it
    P.delete("id", a)
    assert not (tmp_path / a["path"]).exists()


def test_an_unreadable_owners_record_stops_removal(tmp_path):
    outs = G.create(group(tmp_path)).outs
    (tmp_path / OWNERS).write_text("{not json")
    with pytest.raises(OSError, match=r"owners\.json .*removes nothing"):
        G.delete("id", outs)
    assert all((tmp_path / p).exists() for p in RACK)


def test_group_read_rehashes_each_path(tmp_path):
    res = G.create(group(tmp_path))
    assert G.read(res.id, res.outs).outs == res.outs  # untouched: refresh changes nothing
    edited, gone = tmp_path / "frontend/fe-leaf01/frr.conf", tmp_path / "frontend/fe-leaf02/frr.conf"
    edited.write_text("hostname fe-leaf01\nrouter bgp 65000\n")
    gone.unlink()
    os.chmod(tmp_path / "frontend/fe-leaf01/interfaces", 0o666)
    drift = G.read(res.id, res.outs)
    assert drift.id == res.id
    assert drift.outs["files"] == {
        "frontend/fe-leaf01/frr.conf": entry("hostname fe-leaf01\nrouter bgp 65000\n"),
        "frontend/fe-leaf01/interfaces": entry("auto lo\n", mode="0666"),
    }
    assert drift.outs["files"]["frontend/fe-leaf01/interfaces"].endswith(" 8 bytes 1 lines mode 0666")
    # the next up diffs the refreshed outputs against the design and puts each file back
    assert G.diff(res.id, drift.outs, group(tmp_path)).changes is True
    G.update(res.id, drift.outs, group(tmp_path))
    assert {p: (tmp_path / p).read_text() for p in RACK} == RACK
    assert (tmp_path / "frontend/fe-leaf01/interfaces").stat().st_mode & 0o777 == 0o644
    assert G.read(res.id, res.outs).outs == res.outs


@pytest.mark.parametrize(
    "bad",
    [
        {"files": {"/etc/passwd": entry("x")}},
        {"files": {"../x": entry("x")}},
        {"files": {f"{STORE}/blobs/x": entry("x")}},
        {"files": {"a": entry("x", sha256="abc")}},
        {"files": {"a": entry("x", size=-1)}},
        {"files": {"a": "text"}},
        {"files": {"a": summary("x")}},
        {"files": {"a": entry("x", mode="0644")}},
        {"files": ["a"]},
        {"group": ""},
        {"mode": "0777"},
        {"dir": "relative"},
    ],
)
def test_group_check_rejects_bad_inputs(tmp_path, bad):
    res = G.check({}, {**group(tmp_path), **bad})
    assert [f.property for f in res.failures] == list(bad)


def test_group_check_accepts_good_inputs(tmp_path):
    assert G.check({}, group(tmp_path)).failures == []


def test_group_provider_is_stateless_and_pickles_by_reference():
    assert vars(G) == {}
    blob = dill.dumps(G, protocol=pickle.DEFAULT_PROTOCOL, recurse=True)
    assert len(blob) < 200, len(blob)
    assert b"components.artifact" in blob
