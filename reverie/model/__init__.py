"""The language-model seam: one small interface every judging stage calls.

Two implementations: the offline model (deterministic rules, the embedded default) and an
OpenAI-compatible chat-completions client. Stages build their questions in ``questions``.
"""

from reverie.model.offline import OfflineModel
from reverie.model.openai_compat import OpenAICompatible
from reverie.model.seam import Answer, Deferred, Field, Model, Prompt, Schema, Usage

__all__ = [
    "Answer",
    "Deferred",
    "Field",
    "Model",
    "OfflineModel",
    "OpenAICompatible",
    "Prompt",
    "Schema",
    "Usage",
]
