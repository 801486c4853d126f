"""Errors raised by the host side of the wire (wire/)."""


class SpawnError(Exception):
    """The adapter command could not be started at all.

    The message is one line naming the command, e.g.
    ``cannot start adapter 'foo': no such file or directory``; it is meant to
    be shown to the user as is, never with a traceback.
    """


# The host's error kinds (PROTOCOL §6.2); anything else maps to "other".
KNOWN_KINDS = ("auth", "rate_limited", "not_found", "network", "timeout", "provider")


class ProviderError(Exception):
    """A request failed: an error reply from the adapter, or a host-side failure.

    ``kind`` is the host's mapping (one of KNOWN_KINDS, else "other"); the raw
    error object is kept in ``raw`` and ``data.kind`` exactly as sent in
    ``raw_kind``. ``origin`` says who produced it: "adapter" for an error reply,
    "host" for a timeout, a closed output, a restart failure and the like.
    """

    def __init__(self, message: str, *, kind: str = "other", raw_kind: object = None,
                 code: object = None, data: object = None, raw: dict | None = None,
                 retry_after_s: int | None = None, origin: str = "host",
                 request_id: int | None = None, method: str | None = None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.raw_kind = raw_kind
        self.code = code
        self.data = data
        self.raw = raw
        self.retry_after_s = retry_after_s
        self.origin = origin
        self.request_id = request_id
        self.method = method

    @classmethod
    def from_reply(cls, error: object, *, request_id: int | None = None,
                   method: str | None = None) -> "ProviderError":
        """Map a reply's ``error`` member the way the host does (§6.1-§6.3)."""
        obj = error if isinstance(error, dict) else {}
        message = obj.get("message")
        if not isinstance(message, str):
            message = "provider error"
        data = obj.get("data")
        raw_kind = data.get("kind") if isinstance(data, dict) else None
        kind = raw_kind if isinstance(raw_kind, str) and raw_kind in KNOWN_KINDS else "other"
        retry = data.get("retry_after_s") if isinstance(data, dict) else None
        if type(retry) is not int or retry < 0:  # bool, float, string, negative: ignored
            retry = None
        return cls(message, kind=kind, raw_kind=raw_kind, code=obj.get("code"), data=data,
                   raw=error if isinstance(error, dict) else None, retry_after_s=retry,
                   origin="adapter", request_id=request_id, method=method)

    def __str__(self) -> str:
        where = f" ({self.method} #{self.request_id})" if self.request_id is not None else ""
        return f"{self.message} [kind {self.kind}]{where}"

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.message!r}, kind={self.kind!r}, "
                f"origin={self.origin!r}, request_id={self.request_id!r})")


class ProviderTimeout(ProviderError):
    """The request's deadline (or inactivity window) expired: kind "timeout"."""

    def __init__(self, window_s: float, *, request_id: int | None = None,
                 method: str | None = None):
        super().__init__(f"provider timeout after {window_s:g}s", kind="timeout",
                         origin="host", request_id=request_id, method=method)
        self.window_s = window_s


class ProviderClosed(ProviderError):
    """The adapter's output closed (death) while the request was in flight."""

    def __init__(self, detail: str | None = None, *, request_id: int | None = None,
                 method: str | None = None):
        message = "provider closed its output" + (f" ({detail})" if detail else "")
        super().__init__(message, kind="provider", origin="host",
                         request_id=request_id, method=method)
        self.detail = detail


class WriteFailed(ProviderError):
    """Writing a line to the adapter failed (or stayed blocked): a host-side
    failure of the request, with the write's reason."""

    def __init__(self, reason: str, *, request_id: int | None = None,
                 method: str | None = None):
        super().__init__(f"provider write: {reason}", kind="provider", origin="host",
                         request_id=request_id, method=method)
        self.reason = reason
