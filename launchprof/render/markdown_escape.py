"""Markdown escaping: user text (paths, messages, kinds) made inert in GitHub-flavoured Markdown.

Below every renderer that writes a Markdown section (buckets, compile, compare, ranks), so
each can escape its own cells without loading the whole Markdown renderer.
"""

from __future__ import annotations

import html
import re

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")


def md_text(text: str) -> str:
    """Plain text safe in a table cell: HTML escaped, Markdown inert, no line breaks.

    Backtick code spans are kept (hints and messages use them), through :func:`md_code`.
    """
    out = []
    for i, part in enumerate(_CODE_SPAN.split(text.replace("\r", ""))):
        if i % 2:
            out.append(md_code(part[1:-1]))
        else:
            out.append(_md_escape(part))
    return "".join(out).replace("\n", "<br>")


def _md_escape(text: str) -> str:
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def md_code(text: str) -> str:
    """``text`` (a path, a kind) in code style, shown literally, ``|`` escaped.

    A backtick span shows ``<`` literally but leaves it raw in the file, and some viewers
    of step summaries are not GitHub; text with markup characters gets ``<code>`` with
    escaped content instead, so no raw tag from user data reaches the document.
    """
    text = text.replace("\n", " ")
    if re.search(r"[<>&`]", text):
        return f"<code>{_md_escape(text)}</code>"
    return "`" + text.replace("|", "\\|") + "`"


def md_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)
