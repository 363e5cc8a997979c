"""A FAKE embedder for benchmarks: hashed bag of words, fixed vectors, no model.

Texts sharing words get similar vectors (cosine of their word counts), so searches return the
items a real embedder would roughly rank first, at almost no CPU cost: benchmarks then measure
the memory, not the embedder. Real runs use MiniLM (``models.make_embedder``).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np
from langchain_core.embeddings import Embeddings

WORD = re.compile(r"[a-z0-9]+")


class BagOfWordsEmbeddings(Embeddings):
    """Each word adds 1 to a hashed dimension; the vector is L2-normalized."""

    def __init__(self, size: int = 384):
        self.size = size

    def _index(self, word: str) -> int:
        return int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest()) % self.size

    def embed_query(self, text: str) -> list[float]:
        vec = np.zeros(self.size)
        for word in WORD.findall(text.lower()):
            vec[self._index(word)] += 1.0
        norm = np.linalg.norm(vec)
        if norm == 0:
            vec[0], norm = 1.0, 1.0
        return (vec / norm).tolist()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(t) for t in texts]
