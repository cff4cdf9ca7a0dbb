"""torch.hub on a hub directory the test writes: local and cached-GitHub loading through
hubconf.py (entry points, docstrings, dependency checks, errors), the hub directory, downloads
from file:// URLs and load_state_dict_from_url from the checkpoints cache, against torch.hub."""

from __future__ import annotations

import hashlib
import inspect

import numpy as np
import pytest
import torch
import torch.hub as theirs

import chainrule as cr
import chainrule.hub as ours

HUBCONF = '''
dependencies = ["numpy"]


def tiny(lib, n=2, *, bias=True):
    """A linear layer of n inputs."""
    return lib.nn.Linear(n, 1, bias=bias)


def _private():
    return 0


def needs_more(lib):
    return lib


NOT_CALLABLE = 3
'''


@pytest.fixture
def hub_dirs(tmp_path, monkeypatch):
    """A hub directory per library (the hub caches per process state in get_dir)."""
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.delenv("TORCH_HUB", raising=False)
    dirs = {}
    for lib in (ours, theirs):
        d = tmp_path / lib.__name__.split(".")[0]
        d.mkdir()
        monkeypatch.setattr(lib, "_hub_dir", None)
        lib.set_dir(str(d / "hub"))
        dirs[lib] = d
    yield dirs


def _repo(path, hubconf=HUBCONF):
    path.mkdir(parents=True)
    (path / "hubconf.py").write_text(hubconf)
    return str(path)


def test_signatures_match():
    assert ours.__all__ == theirs.__all__
    for name in theirs.__all__:
        mine, ref = inspect.signature(getattr(ours, name)), inspect.signature(getattr(theirs, name))
        assert list(mine.parameters) == list(ref.parameters), name
        assert [p.default for p in mine.parameters.values()] == \
            [p.default for p in ref.parameters.values()], name


def test_load_local(hub_dirs):
    for lib, m in ((ours, cr), (theirs, torch)):
        repo = _repo(hub_dirs[lib] / "repo")
        layer = lib.load(repo, "tiny", m, 3, source="local", bias=False)
        assert isinstance(layer, m.nn.Linear) and layer.in_features == 3 and layer.bias is None
        assert lib.load(repo, "needs_more", m, source="LOCAL") is m


def _errors(lib, m, base):
    repo = _repo(base / "errors")
    missing = _repo(base / "missing", HUBCONF.replace('["numpy"]', '["numpy", "no_such_pkg_x"]'))
    calls = [lambda: lib.load(repo, "nope", source="local"),
             lambda: lib.load(repo, "NOT_CALLABLE", source="local"),
             lambda: lib.load(repo, "_private_missing", source="local"),
             lambda: lib.load(repo, 3, source="local"),
             lambda: lib.load(repo, "tiny", m, source="svn"),
             lambda: lib.load(missing, "tiny", m, source="local")]
    out = []
    for call in calls:
        with pytest.raises(Exception) as e:
            call()
        out.append((type(e.value), str(e.value)))
    return out


def test_load_errors_like_torch(hub_dirs):
    assert _errors(ours, cr, hub_dirs[ours]) == _errors(theirs, torch, hub_dirs[theirs])


def test_cached_github_repo_offline(hub_dirs, capsys):
    results = []
    for lib, m in ((ours, cr), (theirs, torch)):
        hub = lib.get_dir()
        _repo(hub_dirs[lib] / "hub" / "someone_models_v1.0")
        layer = lib.load("someone/models:v1.0", "tiny", m, 4, trust_repo=True)
        entries = lib.list("someone/models:v1.0", trust_repo=True)
        doc = lib.help("someone/models:v1.0", "tiny", trust_repo=True)
        with open(f"{hub}/trusted_list") as f:
            trusted = f.read()
        results.append((layer.in_features, entries, doc, trusted))
    assert results[0] == results[1]
    err = capsys.readouterr().err
    assert "Using cache found in" in err


def test_untrusted_repo_prompt(hub_dirs, monkeypatch):
    answers = []
    for lib, m in ((ours, cr), (theirs, torch)):
        _repo(hub_dirs[lib] / "hub" / "stranger_repo_main")
        monkeypatch.setattr("builtins.input", lambda prompt: "n")
        with pytest.raises(Exception) as e:
            lib.load("stranger/repo:main", "tiny", m, trust_repo=False)
        answers.append((type(e.value), str(e.value)))
        monkeypatch.setattr("builtins.input", lambda prompt: "maybe")
        with pytest.raises(ValueError) as e:
            lib.load("stranger/repo:main", "tiny", m, trust_repo=False)
        answers.append(str(e.value))
    assert answers[:2] == answers[2:]


def test_get_dir_and_set_dir(tmp_path, monkeypatch):
    for lib in (ours, theirs):
        monkeypatch.setattr(lib, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert ours.get_dir() == theirs.get_dir() == str(tmp_path / "home" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ours.get_dir() == theirs.get_dir()
    monkeypatch.setenv("TORCH_HUB", "x")
    with pytest.warns(UserWarning, match="TORCH_HUB is deprecated"):
        ours.get_dir()
    monkeypatch.delenv("TORCH_HUB")
    for lib in (ours, theirs):
        lib.set_dir("~/somewhere")
    assert ours.get_dir() == theirs.get_dir()


def test_download_url_to_file(tmp_path):
    src = tmp_path / "payload.bin"
    src.write_bytes(b"chainrule" * 1000)
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    for lib in (ours, theirs):
        dst = tmp_path / f"{lib.__name__}.bin"
        lib.download_url_to_file(src.as_uri(), str(dst), hash_prefix=digest[:8], progress=False)
        assert dst.read_bytes() == src.read_bytes()
    messages = []
    for lib in (ours, theirs):
        with pytest.raises(RuntimeError) as e:
            lib.download_url_to_file(src.as_uri(), str(tmp_path / "bad.bin"), hash_prefix="0000",
                                     progress=False)
        messages.append(str(e.value))
        assert not (tmp_path / "bad.bin").exists()
        assert not list(tmp_path.glob("bad.bin.*.partial"))
    assert messages[0] == messages[1]


def test_load_state_dict_from_url_uses_the_checkpoints_cache(hub_dirs, capsys):
    state = {"weight": np.arange(6, dtype=np.float32).reshape(2, 3), "bias": np.ones(2)}
    url = "https://example.invalid/models/tiny-0123abcd.pth"
    loaded = []
    for lib, m in ((ours, cr), (theirs, torch)):
        checkpoints = hub_dirs[lib] / "hub" / "checkpoints"
        checkpoints.mkdir(parents=True)
        m.save({k: m.tensor(v) for k, v in state.items()}, str(checkpoints / "tiny-0123abcd.pth"))
        loaded.append(lib.load_state_dict_from_url(url, check_hash=True, map_location="cpu"))
        renamed = lib.load_state_dict_from_url("https://example.invalid/x", progress=False,
                                               file_name="tiny-0123abcd.pth")
        assert sorted(renamed) == ["bias", "weight"]
    for key in state:
        np.testing.assert_array_equal(loaded[0][key].numpy(), loaded[1][key].numpy())
        assert str(loaded[0][key].dtype) == str(loaded[1][key].dtype)
    assert "Downloading" not in capsys.readouterr().out


def test_load_state_dict_from_url_downloads_a_missing_file(tmp_path, hub_dirs):
    saved = tmp_path / "w.pt"
    cr.save({"w": cr.ones(2)}, str(saved))
    got = ours.load_state_dict_from_url(saved.as_uri(), model_dir=str(tmp_path / "models"),
                                        progress=False)
    assert got["w"].tolist() == [1.0, 1.0]
    assert (tmp_path / "models" / "w.pt").exists()
