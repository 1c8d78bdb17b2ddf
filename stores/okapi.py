"""rank-bm25's Okapi scoring, fed document frequencies instead of a whole corpus.

:class:`~lamina.stores.bm25.BM25Index` keeps the postings; this keeps rank-bm25's IDF
(``_calc_idf``, with its epsilon floor) and its Okapi parameters, so every score equals
``BM25Okapi.get_scores`` for the same documents.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from rank_bm25 import BM25Okapi


@dataclass(frozen=True, kw_only=True)
class BM25Params:
    """Okapi parameters (rank-bm25's defaults)."""

    k1: float = 1.5
    """Term-frequency saturation."""
    b: float = 0.75
    """Document-length normalisation."""
    epsilon: float = 0.25
    """IDF floor for very common terms, as a fraction of the mean IDF."""


class OkapiScorer(BM25Okapi):  # type: ignore[misc]
    """rank-bm25's Okapi model, fed document frequencies instead of a corpus."""

    def __init__(self, params: BM25Params) -> None:
        # Deliberately skip BM25.__init__: it wants the whole corpus up front.
        self.k1, self.b, self.epsilon = params.k1, params.b, params.epsilon
        self.corpus_size = 0
        self.avgdl = 0.0
        self.idf: dict[str, float] = {}
        self.average_idf = 0.0

    def _calc_idf(self, nd: Mapping[str, int]) -> None:
        """rank-bm25's IDF with its epsilon floor, summed exactly (``math.fsum``).

        The exact sum makes the floor, and so every score, independent of the order in
        which documents were added: a mirror kept in step with writes and one rebuilt
        from Chroma score alike to the last bit.
        """
        idf = {
            word: math.log(self.corpus_size - freq + 0.5) - math.log(freq + 0.5)
            for word, freq in nd.items()
        }
        self.average_idf = math.fsum(idf.values()) / len(idf)
        eps = self.epsilon * self.average_idf
        self.idf = {word: (value if value >= 0 else eps) for word, value in idf.items()}

    def refit(self, doc_freq: Mapping[str, int], corpus_size: int, avgdl: float) -> None:
        """Take a corpus's document frequencies, size and mean length (IDF recomputed)."""
        self.corpus_size, self.avgdl, self.idf = corpus_size, avgdl, {}
        if doc_freq:
            self._calc_idf(doc_freq)


__all__ = ["BM25Params", "OkapiScorer"]
