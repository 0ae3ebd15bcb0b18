"""The embedding seam, beside the model seam: the packaged offline model (WordLlama, the
``embed`` extra) or an OpenAI-compatible ``/v1/embeddings`` client. Vectors live in SQLite
and feed hybrid search; ``similar`` holds the helpers for paraphrase, same-subject and
topic decisions.
"""

from reverie.embedding.openai_compat import OpenAIEmbedder
from reverie.embedding.seam import Embedder, Vector
from reverie.embedding.similar import Neighbour, cosine, nearest
from reverie.embedding.wordllama_embedder import WordLlamaEmbedder, wordllama_installed

__all__ = [
    "Embedder",
    "Neighbour",
    "OpenAIEmbedder",
    "Vector",
    "WordLlamaEmbedder",
    "cosine",
    "nearest",
    "wordllama_installed",
]
