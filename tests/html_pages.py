"""Reading the report's HTML pages back in tests: what a reader of the page sees in its tables."""

from __future__ import annotations

import re
from html import unescape


def html_rows(html: str) -> list[list[str]]:
    """The cells of every table row of an HTML page, as text."""
    return [
        [unescape(re.sub(r"<[^>]+>", "", cell)) for cell in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", row)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", html, re.S)
    ]
