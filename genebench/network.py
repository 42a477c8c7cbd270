"""Reaching remote services: a fast reachability check and one-line failures that name the host and the fix.

Libraries retry an unreachable host for tens of seconds and report it in long tracebacks. genebench asks
once, with a short TCP connect, before it talks to the Hugging Face Hub, and reports any failure as one
`NetworkError` line: the host, why, and what to do.
"""

from __future__ import annotations

import socket
import urllib.parse
import urllib.request

from genebench.errors import GenebenchError

CONNECT_TIMEOUT = 3.0
"""Seconds the reachability check waits for a TCP connection."""


class NetworkError(GenebenchError, ConnectionError):
    """A remote service that cannot be reached or refused the request."""


def hub_endpoint(endpoint: str | None = None) -> str:
    """The Hub endpoint: `endpoint`, else the one huggingface_hub uses (`$HF_ENDPOINT`, else huggingface.co)."""
    from huggingface_hub import constants

    return (endpoint or constants.ENDPOINT).rstrip("/")


def hub_offline() -> bool:
    """Whether `HF_HUB_OFFLINE` asks for no Hub requests (as huggingface_hub read it)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def host_of(url: str) -> str:
    """The host (and port, if given) of a URL.

    Examples:
        >>> host_of("https://rest.uniprot.org/uniprotkb/search?query=" + "x" * 2000)
        'rest.uniprot.org'
    """
    return urllib.parse.urlsplit(url).netloc or url


def short_url(url: str, limit: int = 80) -> str:
    """A URL cut to `limit` characters for messages, saying how long it was.

    Examples:
        >>> short_url("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esummary.fcgi?id=" + "1," * 500, limit=50)
        'https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esum… (1063 characters)'
    """
    return url if len(url) <= limit else f"{url[:limit]}… ({len(url)} characters)"


def unreachable_reason(url: str, *, timeout: float = CONNECT_TIMEOUT) -> str | None:
    """Why `url`'s host (or the proxy configured for it) cannot be reached; None when a TCP connection opens."""
    parts = urllib.parse.urlsplit(url)
    proxy = urllib.request.getproxies().get(parts.scheme)
    target = urllib.parse.urlsplit(proxy if "://" in (proxy or "") else f"http://{proxy}") if proxy else parts
    default_port = 443 if target.scheme == "https" else 80
    try:
        with socket.create_connection((target.hostname or "", target.port or default_port), timeout=timeout):
            return None
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        return f"{reason} (proxy {target.netloc})" if proxy else reason


def require_hub(what: str, *, endpoint: str | None = None) -> str:
    """Return the Hub endpoint if it can be reached, else raise one `NetworkError` line.

    Args:
        what: what needed the Hub, for the message ("submit to 'org/name'").
        endpoint: the Hub endpoint (default: `hub_endpoint()`).

    Raises:
        NetworkError: `HF_HUB_OFFLINE` is set, or the endpoint does not accept a connection within
            `CONNECT_TIMEOUT` seconds.
    """
    url = hub_endpoint(endpoint)
    if hub_offline():
        raise NetworkError(f"{what}: needs the Hugging Face Hub ({host_of(url)}), but HF_HUB_OFFLINE is set; "
                           "unset it on a machine with network access, then rerun.")
    if reason := unreachable_reason(url):
        raise NetworkError(f"{what}: cannot reach the Hugging Face Hub at {host_of(url)} ({reason}); check the "
                           "network, proxy or HF_ENDPOINT, then rerun.")
    return url
