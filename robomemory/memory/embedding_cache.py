"""An embedding cache shared by a robot's memory modules: each text is embedded once.

The memory branches run in parallel and ask for the same step queries; the first asker embeds
the texts missing from the cache in one batch, and any branch asking for one of them meanwhile
waits for that batch instead of embedding it again. The lock guards only the table, never an
embedding, so branches needing different texts never wait on each other's model calls.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from concurrent.futures import Future

from langchain_core.embeddings import Embeddings

DEFAULT_SIZE = 4096


class CachedEmbeddings(Embeddings):
    """``inner`` with a bounded LRU cache keyed by the exact text, single-flight per text."""

    def __init__(self, inner: Embeddings, size: int = DEFAULT_SIZE):
        if isinstance(inner, CachedEmbeddings):
            inner = inner.inner
        self.inner = inner
        self.size = size
        self._table: OrderedDict[str, Future[list[float]]] = OrderedDict()
        self._lock = threading.Lock()
        self.computed = 0  # texts embedded by ``inner`` (for benchmarks)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        mine: dict[str, Future[list[float]]] = {}
        futures: list[Future[list[float]]] = []
        with self._lock:
            for text in texts:
                fut = self._table.get(text)
                if fut is None:
                    fut = mine.get(text) or Future()
                    mine[text] = fut
                    self._table[text] = fut
                else:
                    self._table.move_to_end(text)
                futures.append(fut)
            while len(self._table) > self.size:
                self._table.popitem(last=False)
        if mine:
            self._fill(mine)
        return [list(f.result()) for f in futures]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def _fill(self, mine: dict[str, Future[list[float]]]) -> None:
        texts = list(mine)
        try:
            vectors = self.inner.embed_documents(texts)
        except BaseException as exc:
            with self._lock:  # forget the failed texts so a later call tries again
                for text in texts:
                    if self._table.get(text) is mine[text]:
                        del self._table[text]
            for fut in mine.values():
                fut.set_exception(exc)
            raise
        self.computed += len(texts)
        for text, vec in zip(texts, vectors, strict=True):
            mine[text].set_result(list(vec))
