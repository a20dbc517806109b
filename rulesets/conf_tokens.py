"""Lexing of one legacy CK Builder ``.conf`` line: comments and ``Seq(...)``-aware argument splitting.

Pure string functions; what the arguments mean is ``rulesets.conf_lines``' business.
"""

from __future__ import annotations

COMMENT_PREFIXES = ("#", ";")


def is_comment_or_blank(text: str) -> bool:
    """True for blank lines and ``#`` / ``;`` comment lines (upstream skips both)."""
    stripped = text.strip()
    return not stripped or stripped.startswith(COMMENT_PREFIXES)


def split_top_level(text: str, separator: str = ",") -> list[str]:
    """Split at ``separator`` outside parentheses and angle brackets; each part stripped.

    ``Seq(4,64,1)`` and a nested ``Foo<a, b>`` therefore count as one argument each.
    Raises ValueError on unbalanced brackets.
    """
    parts: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char in "(<":
            depth += 1
        elif char in ")>":
            depth -= 1
            if depth < 0:
                raise ValueError(f"unbalanced {char!r} at column {index + 1}")
        elif char == separator and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    if depth != 0:
        raise ValueError("unbalanced brackets")
    parts.append(text[start:].strip())
    return parts


def split_device_op(text: str) -> tuple[str, str]:
    """``Name<args>`` -> (``Name``, ``args``); the argument text runs to the last ``>``.

    Raises ValueError when the line is not of that shape.
    """
    stripped = text.strip()
    open_at = stripped.find("<")
    close_at = stripped.rfind(">")
    if open_at <= 0 or close_at < open_at or stripped[close_at + 1 :].strip():
        raise ValueError("not of the form Name<arguments>")
    return stripped[:open_at].strip(), stripped[open_at + 1 : close_at]
