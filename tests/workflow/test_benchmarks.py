"""The linking-scale benchmark measures what it says only if its replication is faithful: a copy of
the real dump sample under ``--rename titles`` must read exactly as the sample, with every link the
corpus stage finds pointing at the copy's own entity, or documents of one copy reach another's
pages through a shared target and the candidates grow with the number of copies."""

from __future__ import annotations

import bz2
import html
import sys
from pathlib import Path

from conftest import REPO

from pelt.corpus.wikitext import wikitext_to_plain

sys.path.insert(0, str(REPO / "benchmarks"))
import linking_scale  # noqa: E402


def test_a_titles_copy_reads_as_the_sample_with_every_link_its_own(shared_data: Path) -> None:
    (dump,) = (shared_data / "wikipedia_dump_sample").glob("*.bz2")
    xml = bz2.decompress(dump.read_bytes()).decode("utf-8")
    pages = [m.group(0) for m in linking_scale._PAGE.finditer(xml)]
    texts = links = colon = 0
    for page in pages:
        copy = linking_scale.rename_page(page, 3, "titles")
        title = linking_scale._TITLE.search(page).group(2)
        assert linking_scale._TITLE.search(copy).group(2) == f"{title} (copy 3)"
        original, renamed = linking_scale._TEXT.search(page), linking_scale._TEXT.search(copy)
        if original is None:
            continue
        plain, anchors = wikitext_to_plain(html.unescape(original.group(2)))
        plain_copy, anchors_copy = wikitext_to_plain(html.unescape(renamed.group(2)))
        assert plain_copy == plain, title
        assert [(a.start, a.end, f"{a.target} (copy 3)") for a in anchors] == [
            (a.start, a.end, a.target) for a in anchors_copy
        ], title
        texts += 1
        links += len(anchors)
        colon += sum(":" in a.target for a in anchors)
    # the sample has the links the first replication missed: article targets with a colon, and
    # links made by templates ({{HMS|Ajax|22}})
    assert texts > 100 and links > 20_000 and colon > 20
