"""The summaries' Markdown as HTML pages for ``snakemake --report``, which shows an HTML file in place
(a CSV or Markdown file is only a download link there).

The summaries write Markdown (for people reading ``results/``); the report's page is converted from
that same text, so the two never disagree. Only the subset the summaries write is understood:
paragraphs, pipe tables, ``> `` flag lines, ``code`` and **bold**.
"""

from __future__ import annotations

import os
import re
from html import escape

from pelt.report.flags import FLAG

# Scoped to div.pelt: the landing page embeds the headline page in Snakemake's own page.
STYLE = (
    ".pelt{font-family:sans-serif;font-size:14px;line-height:1.4;color:#222}"
    ".pelt table{border-collapse:collapse;margin:8px 0 16px}"
    ".pelt td,.pelt th{border:1px solid #bbb;padding:3px 6px;text-align:left}"
    ".pelt td{white-space:nowrap}.pelt td.n{text-align:right}.pelt th{background:#eee;vertical-align:bottom}"
    ".pelt tr.paper td{color:#555;font-style:italic;background:#f4f4f4}"
    ".pelt p.flag{background:#fde2d2;border-left:4px solid #d55e00;padding:4px 8px}"
    ".pelt p.ok{background:#e3f2e8;border-left:4px solid #009e73;padding:4px 8px}"
    ".pelt code{font-size:90%}.pelt code::before,.pelt code::after{content:none}"
)
PAPER_ROW = re.compile(r"^paper\b|^\(paper\)")
# A number as the summaries write it (12.5, +1.8, 70.4 ± 1.2, 9.9 (530), – (0), – for none): right-aligned.
NUMBER = re.compile(r"(?:[-+]?[\d.,]+%?|–)(?: ± [\d.]+)?(?: \([\d.–]+\))?")


def _inline(text: str) -> str:
    text = escape(text, quote=False)
    text = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)
    return re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", text)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _cell(text: str) -> str:
    return f'<td class="n">{_inline(text)}</td>' if NUMBER.fullmatch(text) else f"<td>{_inline(text)}</td>"


def markdown_html(markdown: str) -> str:
    """HTML of the summaries' Markdown subset; a table row whose first cell names the paper is
    greyed (``tr.paper``), a ``> `` line starting with the flag mark is a flag box."""
    out: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|-"):
            out.append("<table>\n<tr>" + "".join(f"<th>{_inline(c)}</th>" for c in _cells(line)) + "</tr>")
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                cells = _cells(lines[i])
                row = '<tr class="paper">' if PAPER_ROW.match(cells[0]) else "<tr>"
                out.append(row + "".join(_cell(c) for c in cells) + "</tr>")
                i += 1
            out.append("</table>")
            continue
        if line.startswith("> "):
            text = line[2:]
            css = "flag" if text.startswith(FLAG) else "ok"
            out.append(f'<p class="{css}">{_inline(text)}</p>')
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return "\n".join(out) + "\n"


def write_page(path: str | os.PathLike[str], title: str, body: str) -> None:
    """A standalone HTML page (the report shows each file on its own, in a frame)."""
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(
            f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<style>{STYLE}</style></head><body>\n<div class="pelt">\n<h2>{escape(title)}</h2>\n{body}</div>\n'
            "</body></html>\n"
        )


def flag_lines(flags: list[str], checks: str) -> list[str]:
    """Markdown lines for flags (each a ``> `` line that :func:`markdown_html` boxes), or one line
    naming the ``checks`` that found nothing, so that a reader knows they ran."""
    if not flags:
        return [f"> No flag raised (checked: {checks})."]
    return [f"> {FLAG} {flag}" for flag in flags]
