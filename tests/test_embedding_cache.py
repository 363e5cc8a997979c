"""The shared embedding cache: each text embedded once, concurrent askers wait for one batch,
a failed batch is forgotten."""

from __future__ import annotations

import threading

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from robomemory.memory.embedding_cache import CachedEmbeddings


class Counting(Embeddings):
    """The hash embedder, counting texts; ``gate`` holds a batch until released."""

    def __init__(self, gate: threading.Event | None = None, fail: int = 0):
        self.inner = DeterministicFakeEmbedding(size=8)
        self.texts: list[str] = []
        self.gate = gate
        self.fail = fail

    def embed_documents(self, texts):
        self.texts += texts
        if self.gate is not None:
            assert self.gate.wait(10)
        if self.fail:
            self.fail -= 1
            raise ConnectionError("embedder down")
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def test_each_text_is_embedded_once_and_results_match():
    inner = Counting()
    cache = CachedEmbeddings(inner)
    first = cache.embed_documents(["a", "b", "a"])
    again = cache.embed_documents(["b", "c"])
    assert inner.texts == ["a", "b", "c"]
    assert first[1] == again[0] == inner.inner.embed_query("b")
    assert cache.embed_query("a") == first[0] == first[2]


def test_concurrent_branches_share_one_batch():
    gate = threading.Event()
    inner = Counting(gate)
    cache = CachedEmbeddings(inner)
    results = [None, None]

    def branch(i):
        results[i] = cache.embed_documents(["q1", "q2", "task"])

    threads = [threading.Thread(target=branch, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    while len(inner.texts) < 3:  # the first batch is in flight
        threading.Event().wait(0.01)
    gate.set()
    for t in threads:
        t.join()
    assert inner.texts == ["q1", "q2", "task"] and results[0] == results[1]


def test_a_failed_batch_is_retried_by_the_next_caller():
    inner = Counting(fail=1)
    cache = CachedEmbeddings(inner)
    with pytest.raises(ConnectionError):
        cache.embed_documents(["x"])
    assert cache.embed_documents(["x"]) == [inner.inner.embed_query("x")]


def test_the_cache_is_bounded():
    inner = Counting()
    cache = CachedEmbeddings(inner, size=2)
    cache.embed_documents(["a", "b", "c"])
    cache.embed_documents(["a"])  # evicted: embedded again
    assert inner.texts == ["a", "b", "c", "a"]
