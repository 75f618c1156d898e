"""A German and a French Wikipedia written for the tests (issue 54): a few pages each whose entities
share Wikidata QIDs, each an export dump with its own ``<siteinfo>`` and a ``page_props`` SQL dump;
page ids and titles repeat across the two, as real wikis' do. One French page has no QID. Used by
tests/unit/linking/test_two_languages.py (the library's stages) and tests/workflow/test_merged_languages.py
(the workflow), with mLAMA facts in German about the same QIDs."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path
from xml.sax.saxutils import escape

NAMESPACES = {"de": ("Datei", "Kategorie"), "fr": ("Fichier", "Catégorie")}
# language -> title -> (QID, wikitext); page ids repeat across the languages, as real dumps' do.
WIKIS = {
    "de": {
        "Berlin": (
            "Q64",
            "'''Berlin''' ist die Hauptstadt von [[Deutschland]]. Die [[Spree]] fließt durch Berlin.\n"
            "In Berlin leben viele Menschen. Von Berlin fährt ein Zug nach [[Paris]].",
        ),
        "Deutschland": (
            "Q183",
            "'''Deutschland''' ist ein Staat in Europa. Seine Hauptstadt ist [[Berlin]].\n"
            "[[Frankreich]] ist ein Nachbar von Deutschland.",
        ),
        "Frankreich": (
            "Q142",
            "'''Frankreich''' ist ein Staat. Seine Hauptstadt ist [[Paris]].\n"
            "Frankreich grenzt an [[Deutschland]]. Berlin liegt nicht in Frankreich.",
        ),
        "Paris": (
            "Q90",
            "'''Paris''' liegt an der [[Seine]]. Paris ist die Hauptstadt von [[Frankreich]].\n"
            "Von Paris nach [[Berlin]] fährt ein Zug. Paris ist groß.",
        ),
        "Seine": ("Q1471", "Die '''Seine''' ist ein Fluss in [[Frankreich]]. Sie fließt durch [[Paris]]."),
        "Spree": ("Q1684", "Die '''Spree''' ist ein Fluss. Sie fließt durch [[Berlin]]."),
    },
    "fr": {
        "Paris": (
            "Q90",
            "'''Paris''' est la capitale de la [[France]]. La [[Seine]] traverse Paris.\n"
            "Paris est jumelée avec [[Berlin]]. Paris s'appelait [[Lutèce]].",
        ),
        "France": (
            "Q142",
            "La '''France''' est un pays d'Europe. Sa capitale est [[Paris]].\n"
            "L'[[Allemagne]] est voisine de la France.",
        ),
        "Allemagne": (
            "Q183",
            "'''Allemagne''' est un pays. Sa capitale est [[Berlin]].\n"
            "L'Allemagne borde la [[France]]. Berlin est en Allemagne.",
        ),
        "Berlin": (
            "Q64",
            "'''Berlin''' est la capitale de l'[[Allemagne]]. Berlin est une grande ville.\n"
            "De Berlin à [[Paris]] il y a un train. Berlin est belle.",
        ),
        "Seine": ("Q1471", "La '''Seine''' est un fleuve de [[France]]. Elle traverse [[Paris]]."),
        "Lutèce": (
            None,
            "'''Lutèce''' est l'ancien nom de [[Paris]]. Lutèce était une ville gallo-romaine.\n"
            "On parle encore de Lutèce.",
        ),
    },
}


def write_wiki(dump: Path, props: Path, language: str) -> None:
    """The language's pages as a ``pages-articles`` dump (export schema 0.11, the wiki's own header)
    and its ``page_props`` SQL dump (``wikibase_item`` rows, as MediaWiki's mysqldump writes them;
    gzip where its name ends in ``.gz``, as Wikimedia's)."""
    files, category = NAMESPACES[language]
    siteinfo = (
        f"<siteinfo><sitename>Wikipedia</sitename><dbname>{language}wiki</dbname><case>first-letter</case>"
        f'<namespaces><namespace key="0" case="first-letter" />'
        f'<namespace key="6" case="first-letter">{files}</namespace>'
        f'<namespace key="14" case="first-letter">{category}</namespace></namespaces></siteinfo>'
    )
    pages = "".join(
        f"<page><title>{escape(title)}</title><ns>0</ns><id>{i}</id><revision><id>{100 + i}</id>"
        f'<text xml:space="preserve">{escape(text)}</text></revision></page>\n'
        for i, (title, (_, text)) in enumerate(WIKIS[language].items(), start=1)
    )
    dump.parent.mkdir(parents=True, exist_ok=True)
    dump.write_bytes(
        bz2.compress(
            f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="{language}">\n'
            f"{siteinfo}\n{pages}</mediawiki>\n".encode()
        )
    )
    values = ",".join(
        f"({i},'wikibase_item','{qid}',NULL)" for i, (qid, _) in enumerate(WIKIS[language].values(), start=1) if qid
    )
    sql = f"-- MySQL dump\nINSERT INTO `page_props` VALUES {values};\n".encode()
    props.write_bytes(gzip.compress(sql) if props.suffix == ".gz" else sql)


# German mLAMA facts about the wikis' entities: relation -> template and (subject, QID, object).
MLAMA_DE = {
    "P36": ("Die Hauptstadt von [X] ist [Y].", [("Deutschland", "Q183", "Berlin"), ("Frankreich", "Q142", "Paris")]),
    "P17": (
        "[X] liegt in [Y].",
        [("Berlin", "Q64", "Deutschland"), ("Paris", "Q90", "Frankreich"), ("Seine", "Q1471", "Frankreich")],
    ),
}


def write_mlama_release(release: Path) -> None:
    """mLAMA's release layout with the German facts: mlama1.1/de/<relation>.jsonl, templates.jsonl."""
    folder = release / "mlama1.1" / "de"
    folder.mkdir(parents=True)
    templates = [{"relation": r, "template": t} for r, (t, _) in MLAMA_DE.items()]
    (folder / "templates.jsonl").write_text("".join(json.dumps(t) + "\n" for t in templates), encoding="utf-8")
    for relation, (_, facts) in MLAMA_DE.items():
        lines = [
            json.dumps({"sub_label": s, "sub_uri": q, "obj_label": o, "obj_uri": "Q0", "lineid": i}, ensure_ascii=False)
            for i, (s, q, o) in enumerate(facts)
        ]
        (folder / f"{relation}.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
