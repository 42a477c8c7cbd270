"""A small HTTP client for public REST APIs: configurable base URL, bounded retries, on-disk cache.

- HTTP 429 is retried, waiting as long as the `Retry-After` header says (capped at `max_wait`), at
  most `max_tries` times.
- 404 (and each API's own "not found") is an answer, `None`; 5xx, refused connections and exhausted
  retries raise `FetchError`; a body shorter than its `Content-Length` raises `SourceFormatError`.
- Successful bodies are cached under `<cache_dir>/<client name>/<sha256 of the request>`, written
  atomically, so a second run makes no request.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import json
import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from genebench.atomic import write_atomic
from genebench.constants import cache_dir as default_cache_dir
from genebench.constants import check_cache_path
from genebench.errors import GenebenchError, SourceFormatError
from genebench.network import host_of, short_url

logger = logging.getLogger(__name__)


class FetchError(GenebenchError, ConnectionError):
    """A request that failed: server error, refused connection or rate limit outlasting the retries."""


def retry_after_seconds(value: str | None, default: float) -> float:
    """Seconds to wait from a `Retry-After` header: delta-seconds or an HTTP date; `default` if absent.

    Examples:
        >>> retry_after_seconds("3", 1.0), retry_after_seconds(None, 1.0)
        (3.0, 1.0)
    """
    if not value:
        return default
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return default
    return max(0.0, when.timestamp() - time.time())


class HttpClient:
    """GET/POST against one base URL with retries and an on-disk response cache.

    Args:
        base_url: the API root; tests point it at a 127.0.0.1 server.
        cache_dir: where responses are cached; None uses `genebench.constants.cache_dir() / "http"`.
        max_tries: attempts per request when rate-limited (429).
        max_wait: longest wait honoured from one `Retry-After`, seconds.
        timeout: seconds per request.
        sleep: the waiting function (tests pass a recorder).
    """

    name = "http"
    default_base_url = ""

    def __init__(
        self,
        base_url: str | None = None,
        *,
        cache_dir: str | Path | None = None,
        max_tries: int = 5,
        max_wait: float = 60.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache_dir() / "http"
        self.max_tries = max_tries
        self.max_wait = max_wait
        self.timeout = timeout
        self.sleep = sleep

    @property
    def version(self) -> str:
        """The source stamp recorded with embeddings: client name and base URL."""
        return f"{self.name}:{self.base_url}"

    def is_not_found(self, status: int, body: bytes) -> bool:
        """Whether an error status means "no such record" for this API (default: 404)."""
        return status == 404

    def fetch(
        self,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> bytes | None:
        """The body of `base_url/path?params` (POSTing `json_body` when given), or None when not found.

        Raises:
            FetchError: 5xx, a refused connection, or still 429 after `max_tries`.
            SourceFormatError: the body ended before its Content-Length.
        """
        url = f"{self.base_url}/{path.lstrip('/')}"
        if params:
            url = f"{url}?{urllib.parse.urlencode(params)}"
        data = json.dumps(json_body).encode() if json_body is not None else None
        cached = self._cache_path(url, data)
        check_cache_path(cached, "HTTP cache", "a cached response file")
        if cached.exists():
            return cached.read_bytes()
        body = self._request(url, data, dict(headers or {}))
        if body is not None:
            write_atomic(cached, body)
        return body

    def _cache_path(self, url: str, data: bytes | None) -> Path:
        digest = hashlib.sha256(url.encode() + b"\0" + (data or b"")).hexdigest()
        return self.cache_dir / self.name / digest[:2] / digest

    def _request(self, url: str, data: bytes | None, headers: dict[str, str]) -> bytes | None:
        if data is not None:
            headers.setdefault("Content-Type", "application/json")
        attempt = 0
        while True:
            attempt += 1
            request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:
                    return response.read()
            except urllib.error.HTTPError as exc:
                body = _read_error_body(exc)
                if exc.code == 429 and attempt < self.max_tries:
                    wait = min(retry_after_seconds(exc.headers.get("Retry-After"), 2.0**attempt), self.max_wait)
                    logger.warning("%s: rate-limited (429), retry %d/%d in %.1f s", host_of(url), attempt,
                                   self.max_tries, wait)
                    self.sleep(wait)
                    continue
                if self.is_not_found(exc.code, body):
                    return None
                hint = ("the server is rate-limiting; wait, then rerun (cached responses are kept)"
                        if exc.code == 429 else "the service may be down; rerun later (cached responses are kept)")
                raise FetchError(
                    f"{self.name} ({host_of(url)}): expected HTTP 200, found HTTP {exc.code} after {attempt} tries "
                    f"({' '.join(body[:120].decode(errors='replace').split())!r}, request {short_url(url)}); {hint}."
                ) from None
            except http.client.IncompleteRead as exc:
                raise SourceFormatError(
                    f"{self.name} ({host_of(url)}): the body of {short_url(url)} was truncated ({len(exc.partial)} "
                    f"bytes received, {exc.expected} more expected); rerun, or check the connection or proxy."
                ) from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                reason = getattr(exc, "reason", exc)
                raise FetchError(
                    f"{self.name} ({host_of(url)}): no response ({reason}); check the network, proxy or the base URL "
                    f"'{self.base_url}', then rerun (responses already received are cached)."
                ) from None


def _read_error_body(exc: urllib.error.HTTPError) -> bytes:
    try:
        return exc.read() or b""
    except (OSError, http.client.IncompleteRead):
        return b""
