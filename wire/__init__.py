"""The host side of the rootle provider protocol (knows nothing of cases or fixture)."""

from wire.errors import ProviderClosed, ProviderError, ProviderTimeout, SpawnError
from wire.transcript import Transcript
from wire.transport import Call, Provider

__all__ = ["Provider", "Call", "Transcript", "ProviderError", "ProviderTimeout",
           "ProviderClosed", "SpawnError"]
