"""Small display helpers shared by pages. Uploaded text is always shown as text."""

from __future__ import annotations

import re

import pandas as pd

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:])")


def plain(text: object) -> str:
    """Escape Markdown so a file or model name shows literally inside a Markdown label."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", str(text))


def interval_text(low: pd.Series, high: pd.Series) -> pd.Series:
    """``[low, high]`` with three decimals; empty where either bound is undefined."""
    text = "[" + low.map("{:.3f}".format) + ", " + high.map("{:.3f}".format) + "]"
    return text.where(low.notna() & high.notna(), "")
