"""The client's address: the one value the API throttles, the admin login lockout and ``/metrics`` read.

Every address is parsed with :mod:`ipaddress` and given back in its canonical form, or ``None``:
nothing that is not an address (``"unknown"``, ``"not-an-ip"``, an empty ``REMOTE_ADDR`` behind a
Unix socket) is ever returned, so nothing but an address or NULL reaches django-axes' ``inet`` column.

Whom to believe:

- ``API_TRUSTED_PROXIES = 0`` (the default): the peer (``REMOTE_ADDR``). ``X-Forwarded-For`` is
  ignored: any client can write it.
- ``API_TRUSTED_PROXIES = N``: the header is read only when the peer is one of our proxies: an
  address in ``API_TRUSTED_PROXY_NETWORKS``, or no address at all (a Unix socket, which only a local
  process can reach). Walking from the right, each trusted hop names the one before it, for at most
  ``N`` hops; the first hop that is not a trusted proxy, or the ``N``-th, is the client: the
  right-most address no proxy of ours vouches for past. Entries to its left were written by the
  client and are never read. A request that reaches the service directly from elsewhere is keyed on
  its peer, whatever header it sends.
- A malformed hop where the walk needs one (a proxy that wrote garbage, a chain that ends at a proxy)
  gives ``None``. A lockout then counts every such attempt together, per username, so changing the
  header on every attempt lands in the same bucket instead of a fresh one.
"""

from __future__ import annotations

import ipaddress
from typing import TypeAlias

from django.conf import settings
from django.http import HttpRequest
from rest_framework.request import Request

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network

# What a throttle counts a request without a known address against (a cache key, never stored).
UNKNOWN = "unknown"


def parse_address(value: object) -> Address | None:
    """``value`` as an IP address (an IPv4-mapped IPv6 address as its IPv4 one), or ``None``."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        address = ipaddress.ip_address(value.strip())
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def parse_networks(values: list[str]) -> tuple[Network, ...]:
    """Each of ``values`` as a network (an address is a network of one); raises ``ValueError``."""
    return tuple(ipaddress.ip_network(value, strict=False) for value in values)


def _trusted(hop: Address | None, networks: tuple[Network, ...]) -> bool:
    return hop is None or any(hop in network for network in networks)


def client_ip(request: HttpRequest | Request) -> Address | None:
    """The client's address (see the module docstring), or ``None`` when it cannot be known."""
    meta = request.META
    hop = parse_address(meta.get("REMOTE_ADDR"))
    proxies = settings.API_TRUSTED_PROXIES
    if proxies == 0:
        return hop
    networks = parse_networks(settings.API_TRUSTED_PROXY_NETWORKS)
    forwarded = [entry.strip() for entry in str(meta.get("HTTP_X_FORWARDED_FOR", "")).split(",")]
    for _ in range(proxies):
        if not _trusted(hop, networks):
            return hop
        if not forwarded or not forwarded[-1]:
            return None
        hop = parse_address(forwarded.pop())
        if hop is None:
            return None
    return hop


def client_address(request: HttpRequest | Request) -> str | None:
    """:func:`client_ip` as text: django-axes' ``AXES_CLIENT_IP_CALLABLE`` (``None`` is stored as NULL)."""
    address = client_ip(request)
    return None if address is None else str(address)
