"""The characters a reader skips or folds into a token, and what one character read from an escape or
a reference stands for in the normalised view (``normalise.py``): derived once at import from the
Unicode database."""

from __future__ import annotations

import re
import string
import unicodedata

# What renders as nothing, or as a blank a reader skips: every format character (category Cf, in the
# planes that have any: 0, 1 and 14), the whole tag and variation-selector supplement block
# (U+E0000-E0FFF, assigned or not), and what Unicode gives no category of its own to: the variation
# selectors (Mn), the combining grapheme joiner, the Hangul fillers, the Khmer inherent vowels, the
# Mongolian free variation selectors, the braille blank, the musical null notehead and the code points
# reserved as default-ignorable (U+2065, U+FFF0-FFF8). Derived once at import (about 70 ms).
_DEFAULT_IGNORABLE = [
    0x034F,
    0x115F,
    0x1160,
    0x17B4,
    0x17B5,
    *range(0x180B, 0x1810),
    0x2065,
    0x2800,
    0x3164,
    *range(0xFE00, 0xFE10),
    *range(0xFFF0, 0xFFF9),
    0xFFA0,
    0x1D159,
    *range(0xE0000, 0xE1000),
]
INVISIBLE = frozenset(
    [
        *filter(lambda char: unicodedata.category(char) == "Cf", map(chr, range(0x20000))),
        *map(chr, _DEFAULT_IGNORABLE),
    ]
)
# Combining marks (nonspacing or enclosing) that are not invisible already: drawn over the character
# before them, they leave it readable. Unlike an invisible character, a mark does not end a word.
COMBINING = (
    frozenset(char for char in map(chr, range(0x20000)) if unicodedata.category(char) in ("Mn", "Me"))
    - INVISIBLE
)
# A token character with a combining mark on it: what calls for the view (a mark over a letter of
# another script, or over an accented vowel in decomposed prose followed by no token, does too only
# when it sits on an ASCII token character, which the search below checks at C speed).
MARKED_TOKEN = re.compile(
    "[A-Za-z0-9_+/=\\-][" + "".join(re.escape(char) for char in sorted(COMBINING)) + "]"
)
# Compatibility forms that can stand in a token: those folding to ASCII letters, digits or token
# punctuation. Forms folding to spaces or other punctuation (the ellipsis, no-break space, fullwidth
# CJK punctuation) are common in prose and hide no token: alone, they do not call for a view.
TOKEN_ASCII = frozenset(string.ascii_letters + string.digits + "_-+/=")
# A fullwidth form or an escape stands for exactly one ASCII character, so its dot and tilde (which
# tokens hold too) call for a view; the ellipsis and other prose forms folding to dots do not.
TOKEN_EXACT = TOKEN_ASCII | frozenset(".~")
# The backslash too: a fullwidth one in a JSON "\n" splits a key block as an escaped one does.
TOKEN_EXACT_OR_BACKSLASH = TOKEN_EXACT | frozenset("\\")
# What a ``\uXXXX`` or ``\xXX`` escape of these stands for is read in the view too: line breaks, the
# indentation and the backslash of a JSON "\n" join a key block's lines (one escaped splits the block,
# as with percent-escapes), and the colon joins a token's halves. So are the other blanks and line
# breaks that split a token in two (a no-break space, U+2028, U+2029, NEL): written as escapes in JSON
# text (a tool call's arguments), the spelled reader joins the two runs in the view.
SPLITTING_BLANKS = frozenset("\u00a0\u2007\u202f\u2028\u2029\u0085")
ESCAPED_LAYOUT = frozenset(" \t\n\r\\:") | SPLITTING_BLANKS


def hiding(char: str) -> str | None:
    """``char`` (what an escape or a reference stands for) when it can hide or form a token."""
    if char in INVISIBLE or char in COMBINING or char in TOKEN_EXACT or char in ESCAPED_LAYOUT:
        return char
    if folds_to_token(char):
        return char
    return None


def in_view(char: str) -> str | None:
    """``char`` when it is printable ASCII, a tab or a line break, or can hide or form a token."""
    return char if " " <= char <= "~" or char in "\t\n\r" else hiding(char)


def folds_to_token(character: str) -> bool:
    folded = unicodedata.normalize("NFKC", character)
    if "\uff01" <= character <= "\uff5e":  # the fullwidth form of one ASCII character
        return folded in TOKEN_EXACT_OR_BACKSLASH
    return folded != character and not TOKEN_ASCII.isdisjoint(folded)
