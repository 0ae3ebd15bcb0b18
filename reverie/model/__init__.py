"""The language-model seam: one small interface every judging stage calls.

This version carries the seam's types and the OpenAI-compatible client; the offline model
and the stages that call the seam come with the self-learning loop.
"""

from reverie.model.openai_compat import OpenAICompatible
from reverie.model.seam import Answer, Deferred, Field, Model, Prompt, Schema, Usage

__all__ = ["Answer", "Deferred", "Field", "Model", "OpenAICompatible", "Prompt", "Schema", "Usage"]
