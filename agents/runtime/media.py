"""A caller's image or file part, made into a part the estimator can count and the providers can send.

Every part ends as its bytes (base64): an inline data URL is decoded; an http(s) URL is fetched by us
only where the configuration allows remote media (``Configuration.allow_remote_media``), so what is
counted, governed and sent is what the provider reads, and the provider fetches nothing. Rules, each
refusal a :class:`~agents.errors.MediaRefused` naming the part, raised before anything is sent:

* at most ``MEDIA_MAX_BYTES``; the type read from the bytes themselves (a declared type must agree)
  and one of ``MEDIA_TYPES``; an image whose header gives no size, or a PDF that cannot be read, is
  refused;
* a fetch: http or https, no credentials in the URL; the host is resolved first and refused when any
  address is not global (loopback, private, link-local, unique-local, reserved), outside
  ``MEDIA_FETCH_ALLOWED_NETWORKS``; a redirect is never followed; ``MEDIA_FETCH_TIMEOUT_SECONDS``;
  the environment is not consulted (no proxies). The connection resolves the name again, so this
  narrows, but does not close, a DNS-rebinding window (as for skill sources, skills/ingest/github_http.py).
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import socket
from collections.abc import Mapping
from typing import Any

import httpx
from django.conf import settings

from agents.errors import MediaRefused
from context_assembly.media import IMAGE_MEDIA_TYPES, image_size, pdf_facts, sniffed_media_type
from context_assembly.parts import IMAGE_DETAILS, PDF_MEDIA_TYPE, FilePart, ImagePart

_CHUNK_BYTES = 64 * 1024
USER_AGENT = "governed-context-media-fetch"


def refused(where: str, problem: str) -> MediaRefused:
    return MediaRefused(f"{where}: {problem}", extra={"field": where})


def image_part(raw: Mapping[str, Any], where: str, *, allow_remote: bool) -> ImagePart:
    """An OpenAI ``image_url`` part (``{"url", "detail"}``) as an :class:`ImagePart` of its bytes."""
    url = raw.get("url")
    if not isinstance(url, str) or not url:
        raise refused(f"{where}.url", "expected a data: or http(s) URL")
    detail = raw.get("detail") or "auto"
    if detail not in IMAGE_DETAILS:
        raise refused(f"{where}.detail", f"must be one of {', '.join(IMAGE_DETAILS)}")
    data, media_type = _bytes_of(url, f"{where}.url", allow_remote=allow_remote)
    if media_type not in IMAGE_MEDIA_TYPES:
        raise refused(f"{where}.url", "the bytes are not an image of an accepted type")
    size = image_size(data)
    if size is None:
        raise refused(f"{where}.url", "the image's size cannot be read from its header")
    encoded = base64.b64encode(data).decode("ascii")
    return ImagePart(f"data:{media_type};base64,{encoded}", detail, size[0], size[1])


def file_part(raw: Mapping[str, Any], where: str, *, allow_remote: bool) -> FilePart:
    """An OpenAI ``file`` part (``{"file_data", "filename"}``, or ``file_url`` as the Responses API
    has it) as a :class:`FilePart` of its bytes, with its pages and text read."""
    if raw.get("file_id") is not None:
        raise refused(f"{where}.file_id", "uploaded files are not served here; send file_data")
    source = raw.get("file_data") if raw.get("file_data") is not None else raw.get("file_url")
    if not isinstance(source, str) or not source:
        raise refused(f"{where}.file_data", "expected a data: URL (or a file_url)")
    if not source.startswith(("data:", "http://", "https://")):
        source = f"data:{PDF_MEDIA_TYPE};base64,{source}"  # bare base64, as some clients send it
    data, media_type = _bytes_of(source, f"{where}.file_data", allow_remote=allow_remote)
    if media_type != PDF_MEDIA_TYPE:
        raise refused(f"{where}.file_data", "only PDF documents are accepted")
    facts = pdf_facts(data, f"{where}.file_data")
    filename = raw.get("filename")
    name = filename if isinstance(filename, str) and filename.strip() else "document.pdf"
    return FilePart(base64.b64encode(data).decode("ascii"), name, facts.pages, facts.text)


def _bytes_of(url: str, where: str, *, allow_remote: bool) -> tuple[bytes, str]:
    if url.startswith("data:"):
        data, declared = _decoded(url, where)
    elif url.startswith(("http://", "https://")):
        if not allow_remote:
            raise refused(where, "this configuration does not fetch remote media; send the bytes inline")
        data, declared = fetch(url, where), None
    else:
        raise refused(where, "expected a data: or http(s) URL")
    sniffed = sniffed_media_type(data)
    if sniffed is None or sniffed not in settings.MEDIA_TYPES:
        raise refused(where, f"the type must be one of {', '.join(settings.MEDIA_TYPES)}")
    if declared is not None and declared != sniffed:
        raise refused(where, f"declared {declared[:60]!r} but the bytes are {sniffed}")
    return data, sniffed


def _decoded(url: str, where: str) -> tuple[bytes, str]:
    header, separator, payload = url.partition(",")
    if not separator or not header.endswith(";base64"):
        raise refused(where, "a data URL must be base64-encoded")
    limit = int(settings.MEDIA_MAX_BYTES)
    if len(payload) > (limit + 2) // 3 * 4 + 4:
        raise refused(where, f"larger than {limit} bytes")
    try:
        data = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise refused(where, "the base64 data is malformed") from None
    if len(data) > limit:
        raise refused(where, f"larger than {limit} bytes")
    return data, header[len("data:") : -len(";base64")].strip().lower()


def fetch(url: str, where: str) -> bytes:
    """The body of ``url`` under the module's rules; raises :class:`MediaRefused` naming ``where``."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError):
        raise refused(where, "the URL cannot be parsed") from None
    if parsed.userinfo:
        raise refused(where, "a URL carrying credentials is refused")
    address_check(parsed.host, parsed.port or (443 if parsed.scheme == "https" else 80), where)
    limit = int(settings.MEDIA_MAX_BYTES)
    timeout = httpx.Timeout(float(settings.MEDIA_FETCH_TIMEOUT_SECONDS))
    try:
        with (
            httpx.Client(follow_redirects=False, trust_env=False, timeout=timeout) as client,
            client.stream("GET", parsed, headers={"User-Agent": USER_AGENT}) as response,
        ):
            return _body(response, where, limit)
    except httpx.TimeoutException:
        raise refused(where, "the URL did not answer in time") from None
    except httpx.HTTPError as exc:
        raise refused(where, f"the URL could not be fetched ({type(exc).__name__})") from None


def _body(response: httpx.Response, where: str, limit: int) -> bytes:
    if response.is_redirect:
        raise refused(where, "the URL redirects; redirects are not followed")
    if response.status_code != 200:
        raise refused(where, f"the URL answered {response.status_code}")
    body = bytearray()
    for chunk in response.iter_bytes(_CHUNK_BYTES):
        body += chunk
        if len(body) > limit:
            raise refused(where, f"larger than {limit} bytes")
    return bytes(body)


def address_check(host: str, port: int, where: str) -> None:
    """Resolve ``host`` and refuse it unless every address is global or inside
    ``MEDIA_FETCH_ALLOWED_NETWORKS``. Nothing is connected to before this returns."""
    allowed = [ipaddress.ip_network(network) for network in settings.MEDIA_FETCH_ALLOWED_NETWORKS]
    try:
        resolved = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise refused(where, "the host cannot be resolved") from None
    for *_, address in resolved:
        ip = ipaddress.ip_address(str(address[0]).split("%", 1)[0])
        if not ip.is_global and not any(ip in network for network in allowed):
            raise refused(where, "the host resolves to a loopback, private or reserved address")
