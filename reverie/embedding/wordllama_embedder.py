"""The offline embedder: WordLlama's 256-d ``l2_supercat`` model, whose weights and tokenizer
ship inside its wheel (MIT). Install it with ``pip install 'reverie[embed]'``.

WordLlama 0.4's ``load()`` looks for a packaged tokenizer under ``tokenizer/`` while the
wheel ships ``tokenizers/``, so by default it goes to Hugging Face. Pointing its cache at
the package directory finds both files in the wheel, and ``disable_download`` makes a
missing file an error instead of a download: no network, no environment variable. The
model (~0.7 s to load, ~16 MB) loads on first use, in a worker thread, as does each batch.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from reverie.embedding.seam import Vector, checked
from reverie.model.seam import Deferred
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.embedding")

WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256


def wordllama_installed() -> bool:
    """Whether the ``embed`` extra (the ``wordllama`` package) is importable."""
    return importlib.util.find_spec("wordllama") is not None


def _load(dim: int) -> Any:
    import wordllama
    from wordllama import WordLlama  # the optional extra: imported only when used

    package = Path(wordllama.__file__).parent
    return WordLlama.load(
        config=WORDLLAMA_CONFIG, dim=dim, cache_dir=package, disable_download=True
    )


class WordLlamaEmbedder:
    """Static token embeddings, average-pooled: ~0.1 ms a sentence on one core, no server."""

    def __init__(self, dim: int = WORDLLAMA_DIM, batch: int = 64) -> None:
        self.name = f"wordllama-{WORDLLAMA_CONFIG}-{dim}"
        self.dim = dim
        self.batch = max(1, batch)
        self._model: Any = None
        self._failed: str | None = None
        self._lock = anyio.Lock()

    async def _ready(self) -> Any:
        async with self._lock:
            if self._model is None and self._failed is None:
                try:
                    self._model = await anyio.to_thread.run_sync(_load, self.dim)
                except Exception as exc:  # missing extra, missing file: degrade, never raise
                    self._failed = f"wordllama could not be loaded: {type(exc).__name__}: {exc}"
                    log.warning("embedder_unavailable", embedder=self.name, reason=self._failed)
            return self._model

    async def embed(self, texts: Sequence[str]) -> list[Vector] | Deferred:
        """One unit vector per text, in order; Deferred if the model cannot be loaded."""
        if not texts:
            return []
        model = await self._ready()
        if model is None:
            return Deferred(reason=self._failed or "wordllama is not loaded")
        batch = [str(t) for t in texts]

        def run() -> list[Any]:
            rows: list[Any] = model.embed(batch, norm=True, return_np=False, batch_size=self.batch)
            return rows

        try:
            rows = await anyio.to_thread.run_sync(run)
            return checked([[float(x) for x in row] for row in rows], len(batch), self.dim)
        except Exception as exc:
            reason = f"wordllama failed: {type(exc).__name__}: {exc}"
            log.warning("embedding_deferred", embedder=self.name, reason=reason)
            return Deferred(reason=reason)
