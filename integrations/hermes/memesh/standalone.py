"""The provider's base class when Hermes Agent is not importable.

Inside Hermes, `agent.memory_provider.MemoryProvider` is the base (Hermes finds the provider
as a subclass of it). Outside Hermes — memesh's own tests, `python -c` checks — this stand-in
has the same abstract surface, so the provider still imports and runs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class MemoryProvider(ABC):
    @property
    @abstractmethod
    def name(self) -> str: ...

    @abstractmethod
    def is_available(self) -> bool: ...

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None: ...

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]: ...
