"""Text cut to a length at a word: how the capture paths fit what they store into the limits.

Its own module, with nothing else imported: the "remember this" detector
(graph/capture/remember_intent.py) clips what it found before Django is set up.
"""

from __future__ import annotations


def clip(text: str, limit: int) -> str:
    """`text` stripped and at most `limit` characters, cut at a word when one is near."""
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit * 3 // 4 else cut).rstrip() + "…"
