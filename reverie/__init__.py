"""reverie: a daemon-less, self-learning memory loop for AI agents."""

from reverie.clock import Clock, ManualClock, SystemClock
from reverie.config import Config
from reverie.embedding.openai_compat import OpenAIEmbedder
from reverie.embedding.seam import Embedder
from reverie.embedding.wordllama_embedder import WordLlamaEmbedder
from reverie.errors import (
    ClosedError,
    ConfigError,
    HomeError,
    InputError,
    InternalError,
    NamespaceArchived,
    ReverieError,
    StoreBusy,
    StoreError,
    TimeoutError,
    ToolInputError,
)
from reverie.model.offline import OfflineModel
from reverie.model.openai_compat import OpenAICompatible
from reverie.model.seam import Model
from reverie.prefetch import Prefetch
from reverie.results import Decision, ToolResult
from reverie.runtime import Namespace, Reverie, Session, open
from reverie.snapshot import Snapshot
from reverie.stores.records import (
    Entry,
    Episode,
    Fact,
    LedgerRecord,
    SearchHit,
    SearchResults,
    Skill,
)
from reverie.transfer import ImportReport, LineDecision
from reverie.version import __version__

__all__ = [
    "Clock",
    "ClosedError",
    "Config",
    "ConfigError",
    "Decision",
    "Embedder",
    "Entry",
    "Episode",
    "Fact",
    "HomeError",
    "ImportReport",
    "InputError",
    "InternalError",
    "LedgerRecord",
    "LineDecision",
    "ManualClock",
    "Model",
    "Namespace",
    "NamespaceArchived",
    "OfflineModel",
    "OpenAICompatible",
    "OpenAIEmbedder",
    "Prefetch",
    "Reverie",
    "ReverieError",
    "SearchHit",
    "SearchResults",
    "Session",
    "Skill",
    "Snapshot",
    "StoreBusy",
    "StoreError",
    "SystemClock",
    "TimeoutError",
    "ToolInputError",
    "ToolResult",
    "WordLlamaEmbedder",
    "__version__",
    "open",
]
