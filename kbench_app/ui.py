"""Small display helpers shared by pages. Uploaded text is always shown as text."""

from __future__ import annotations

import re

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def plain(text: object) -> str:
    """Escape Markdown so a file or model name shows literally inside a Markdown label."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))
