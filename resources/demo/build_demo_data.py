"""Write the bundled demo data from the readable sources in ``resources/demo/source/``.

The default workflow run must work offline, so the project ships its own small corpus and task
files in the *real* formats (a MediaWiki ``pages-articles`` XML dump, S2ORC metadata JSONL, LAMA,
FewRel and Wiki80 files). Everything here is derived from hand-written sources so that a reader
can check each fact against the article that states it, and regeneration is byte-identical
(bz2 has no timestamps; gzip is written with ``mtime=0``; all orderings are sorted).

Run ``python resources/demo/build_demo_data.py`` (stdlib only) after editing a source file.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import math
import re
import sys
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import unquote
from xml.sax.saxutils import escape

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "source"
sys.path.insert(0, str(HERE))
from biomed_world import BiomedWorld  # noqa: E402  (beside this script, not a package)
from world import World, relation_instances  # noqa: E402

WORLD = World()
BIOMED = BiomedWorld(taken=set(WORLD.entities))

# MediaWiki namespaces of English Wikipedia that the demo uses (subset of the real siteinfo).
NAMESPACES = {
    -2: "Media",
    -1: "Special",
    0: "",
    1: "Talk",
    2: "User",
    3: "User talk",
    4: "Wikipedia",
    5: "Wikipedia talk",
    6: "File",
    7: "File talk",
    8: "MediaWiki",
    9: "MediaWiki talk",
    10: "Template",
    11: "Template talk",
    12: "Help",
    13: "Help talk",
    14: "Category",
    15: "Category talk",
    100: "Portal",
    101: "Portal talk",
    828: "Module",
    829: "Module talk",
}
FIRST_PAGE_ID = 10
FIRST_REVISION_ID = 1_170_000_000
BASE_EPOCH_HOURS = 473_000  # 2023-12-17T08:00Z; page i is 7*i hours later (distinct, reproducible)
REDIRECT_RE = re.compile(r"^#REDIRECT\s*\[\[([^\]|#]+)", re.IGNORECASE)

# Copied verbatim from LAMA's relations.jsonl (the real templates; see ../shared/data/lama).
LAMA_RELATIONS = {
    "P19": (
        "[X] was born in [Y] .",
        "place of birth",
        "most specific known (e.g. city instead of country, or hospital instead of city) birth location of a person, "
        "animal or fictional character",
        "N-1",
    ),
    "P20": (
        "[X] died in [Y] .",
        "place of death",
        "most specific known (e.g. city instead of country, or hospital instead of city) death location of a person, "
        "animal or fictional character",
        "N-1",
    ),
    "P27": (
        "[X] is [Y] citizen .",
        "country of citizenship",
        "the object is a country that recognizes the subject as its citizen",
        "N-M",
    ),
    "P36": (
        "The capital of [X] is [Y] .",
        "capital",
        "primary city of a country, province, state or other type of administrative territorial entity",
        "1-1",
    ),
    "P37": (
        "The official language of [X] is [Y] .",
        "official language",
        "language designated as official by this item",
        "N-1",
    ),
    "P159": (
        "The headquarter of [X] is in [Y] .",
        "headquarters location",
        "specific location where an organization's headquarters is or has been situated. "
        'Inverse property of "occupant" (P466).',
        "N-1",
    ),
    "P106": (
        "[X] is a [Y] by profession .",
        "occupation",
        'occupation of a person; see also "field of work" (Property:P101), "position held" (Property:P39)',
        "N-M",
    ),
    "P740": (
        "[X] was founded in [Y] .",
        "location of formation",
        "location where a group or organization was formed",
        "N-1",
    ),
    "P1303": ("[X] plays [Y] .", "instrument", "musical instrument that a person plays", "N-M"),
}

# Google-RE's relations (named by their Freebase predicate) and the T-REx relation of the same facts.
GOOGLE_RE = {"place_of_birth": "P19", "place_of_death": "P20"}

# Wiki80's entity types of the knowledge world's kinds.
WIKI80_TYPES = {
    "country": "GPE",
    "city": "GPE",
    "language": "LANGUAGE",
    "person": "PERSON",
    "company": "ORGANIZATION",
    "band": "ORGANIZATION",
    "instrument": "MISC",
    "occupation": "MISC",
}

# Words of the corpus that are not LAMA objects: candidates a model can wrongly prefer.
DISTRACTORS = [
    "Berlin",
    "London",
    "Paris",
    "English",
    "German",
    "French",
    "Europe",
    "river",
    "harbour",
    "city",
    "music",
    "composer",
    "novelist",
    "painter",
    "engineer",
    "steel",
    "bank",
    "airline",
    "orchestra",
    "band",
    "university",
    "king",
    "queen",
    "sea",
    "island",
    "coast",
    "north",
    "south",
]


def mediawiki_sha1(text: str) -> str:
    """The base-36 SHA-1 that real dumps carry in ``<sha1>``, so parsers can verify revisions."""
    value = int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest(), "big")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while value:
        value, rem = divmod(value, 36)
        out = digits[rem] + out
    return out.rjust(31, "0")


@dataclass(frozen=True)
class Page:
    title: str
    ns: int
    text: str

    @property
    def redirect(self) -> str | None:
        m = REDIRECT_RE.match(self.text)
        return m.group(1).strip() if m else None


def title_of(path: Path) -> str:
    """File names are Wikipedia URL titles (``_`` for space, ``%3A`` for the namespace colon)."""
    return unquote(path.stem).replace("_", " ")


def namespace_of(title: str) -> int:
    """The namespace key of a title's prefix (``Category:X`` -> 14); unknown prefixes are main namespace."""
    prefix, sep, _ = title.partition(":")
    if sep:
        for key, name in NAMESPACES.items():
            if name and name == prefix:
                return key
    return 0


def read_pages() -> list[Page]:
    """All pages: the hand-written ones and the knowledge world's generated articles, sorted by
    title (page ids follow this order, so adding a page renumbers later ones)."""
    pages = [
        Page(title_of(p), namespace_of(title_of(p)), p.read_text(encoding="utf-8").strip() + "\n")
        for p in sorted((SOURCE / "pages").glob("*.wiki"))
    ]
    pages += [Page(title, 0, text) for title, text in WORLD.articles().items()]
    titles = [p.title for p in pages]
    if len(set(titles)) != len(titles):
        raise ValueError("two pages have the same title (a page file, or a generated article of world.py)")
    return sorted(pages, key=lambda p: p.title)


def _xml(text: str) -> str:
    """Escape as MediaWiki's exporter does (it writes ``"`` as ``&quot;`` in text and attributes)."""
    return escape(text, {'"': "&quot;"})


def page_xml(page: Page, page_id: int, index: int) -> str:
    """One ``<page>`` element laid out like a real dump (indentation included, for grep-based tools)."""
    hours = BASE_EPOCH_HOURS + 7 * index
    days, hour = divmod(hours, 24)
    stamp = (datetime(1970, 1, 1) + timedelta(days=days, hours=hour)).strftime("%Y-%m-%dT%H:%M:%SZ")
    text = page.text.rstrip("\n")
    redirect = f'    <redirect title="{_xml(page.redirect)}" />\n' if page.redirect else ""
    return (
        "  <page>\n"
        f"    <title>{_xml(page.title)}</title>\n"
        f"    <ns>{page.ns}</ns>\n"
        f"    <id>{page_id}</id>\n"
        f"{redirect}"
        "    <revision>\n"
        f"      <id>{FIRST_REVISION_ID + 37 * index}</id>\n"
        f"      <parentid>{FIRST_REVISION_ID + 37 * index - 11}</parentid>\n"
        f"      <timestamp>{stamp}</timestamp>\n"
        "      <contributor>\n"
        "        <username>Demo Editor</username>\n"
        "        <id>4242</id>\n"
        "      </contributor>\n"
        "      <comment>demo corpus page</comment>\n"
        "      <model>wikitext</model>\n"
        "      <format>text/x-wiki</format>\n"
        f'      <text bytes="{len(text.encode("utf-8"))}" xml:space="preserve">{_xml(text)}</text>\n'
        f"      <sha1>{mediawiki_sha1(text)}</sha1>\n"
        "    </revision>\n"
        "  </page>\n"
    )


def dump_xml(pages: list[Page]) -> str:
    """The whole ``pages-articles`` document: export-0.11 header, siteinfo with namespaces, pages."""
    namespaces = "".join(
        f'      <namespace key="{k}" case="first-letter" />\n'
        if not name
        else f'      <namespace key="{k}" case="first-letter">{name}</namespace>\n'
        for k, name in NAMESPACES.items()
    )
    header = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" '
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        'xsi:schemaLocation="http://www.mediawiki.org/xml/export-0.11/ '
        'http://www.mediawiki.org/xml/export-0.11.xsd" version="0.11" xml:lang="en">\n'
        "  <siteinfo>\n"
        "    <sitename>Demopedia</sitename>\n"
        "    <dbname>demowiki</dbname>\n"
        "    <base>https://demo.invalid/wiki/Main_Page</base>\n"
        "    <generator>MediaWiki 1.42.0-wmf.9</generator>\n"
        "    <case>first-letter</case>\n"
        "    <namespaces>\n"
        f"{namespaces}"
        "    </namespaces>\n"
        "  </siteinfo>\n"
    )
    body = "".join(page_xml(p, FIRST_PAGE_ID + i, i) for i, p in enumerate(pages))
    return header + body + "</mediawiki>\n"


@dataclass(frozen=True)
class Entity:
    key: str  # page title, or the label for entities without a page
    qid: str
    label: str
    type: str
    has_page: bool


def read_tsv(path: Path) -> list[list[str]]:
    """Rows of a tab-separated source file; ``#`` lines are comments (they document the columns)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            rows.append(line.split("\t"))
    return rows


def read_entities(path: Path) -> dict[str, Entity]:
    """Entities by key; one QID per entity is what lets task files, page_props and the dump agree."""
    entities: dict[str, Entity] = {}
    for row in read_tsv(path):
        key, qid, label, etype, page = row
        if key in entities:
            raise ValueError(f"{path.name}: duplicate key {key!r}")
        entities[key] = Entity(key, qid, label, etype, page == "yes")
    return entities


def page_props_sql(pages: list[Page], entities: dict[str, Entity]) -> str:
    """A ``page_props`` table dump (wikibase_item = QID, disambiguation) like the real enwiki one."""
    rows = []
    for i, page in enumerate(pages):
        if page.ns != 0 or page.redirect:
            continue
        page_id = FIRST_PAGE_ID + i
        if "{{disambiguation" in page.text.lower():
            rows.append(f"({page_id},'disambiguation','',NULL)")
        entity = entities.get(page.title)
        if entity is not None:
            rows.append(f"({page_id},'wikibase_item','{entity.qid}',NULL)")
    return (
        "-- MySQL dump 10.19  Distrib 10.5.23-MariaDB, for debian-linux-gnu (x86_64)\n"
        "--\n-- Host: demo    Database: demowiki\n"
        "-- ------------------------------------------------------\n\n"
        "DROP TABLE IF EXISTS `page_props`;\n"
        "CREATE TABLE `page_props` (\n"
        "  `pp_page` int(10) unsigned NOT NULL,\n"
        "  `pp_propname` varbinary(60) NOT NULL,\n"
        "  `pp_value` blob NOT NULL,\n"
        "  `pp_sortkey` float DEFAULT NULL,\n"
        "  PRIMARY KEY (`pp_page`,`pp_propname`),\n"
        "  UNIQUE KEY `pp_propname_page` (`pp_propname`,`pp_page`)\n"
        ") ENGINE=InnoDB DEFAULT CHARSET=binary;\n\n"
        "LOCK TABLES `page_props` WRITE;\n"
        f"INSERT INTO `page_props` VALUES {','.join(rows)};\n"
        "UNLOCK TABLES;\n"
    )


def world_entities() -> dict[str, Entity]:
    """The knowledge world's entities (world.py), by name, as the writers here take them."""
    return {
        e.key: Entity(e.key, e.qid, e.key, WIKI80_TYPES[e.kind], e.kind not in ("instrument", "occupation"))
        for e in WORLD.entities.values()
    }


def lama_files(entities: dict[str, Entity]) -> dict[str, str]:
    """The knowledge world's facts: T-REx-format fact files per relation (uuid5 of the triple: stable
    ids), the P19 / P20 facts
    again in Google-RE's format (Freebase predicate, no Wikidata ids: subjects resolve by name),
    relations.jsonl, common vocab."""
    by_relation: dict[str, list[str]] = {r: [] for r in LAMA_RELATIONS}
    google_re: dict[str, list[str]] = {r: [] for r in GOOGLE_RE}
    objects: set[str] = set()
    for relation, subject, obj in WORLD.facts():
        if relation not in LAMA_RELATIONS:
            raise ValueError(f"world.py: relation {relation} has no template in LAMA_RELATIONS")
        sub, ob = entities[subject], entities[obj]
        fact = {
            "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"pelt-demo/{relation}/{sub.qid}/{ob.qid}")),
            "obj_uri": ob.qid,
            "obj_label": ob.label,
            "sub_uri": sub.qid,
            "sub_label": sub.label,
            "predicate_id": relation,
        }
        by_relation[relation].append(json.dumps(fact, ensure_ascii=False))
        objects.add(ob.label)
        for predicate in (p for p, r in GOOGLE_RE.items() if r == relation):
            record = {
                "pred": f"/people/person/{predicate}",
                "sub": f"/m/demo_{sub.qid}",
                "obj": f"/m/demo_{ob.qid}",
                "sub_label": sub.label,
                "obj_label": ob.label,
                "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"pelt-demo/{predicate}/{sub.qid}/{ob.qid}")),
            }
            google_re[predicate].append(json.dumps(record, ensure_ascii=False))
    files = {f"lama/TREx/{r}.jsonl": "\n".join(lines) + "\n" for r, lines in by_relation.items() if lines}
    files.update({f"lama/Google_RE/{p}_test.jsonl": "\n".join(lines) + "\n" for p, lines in google_re.items()})
    files["lama/relations.jsonl"] = "".join(
        json.dumps({"relation": r, "template": t, "label": lab, "description": d, "type": ty}) + "\n"
        for r, (t, lab, d, ty) in LAMA_RELATIONS.items()
    )
    files["lama/common_vocab_cased.txt"] = "\n".join(sorted(objects | set(DISTRACTORS))) + "\n"
    return files


def fewrel_json(instances: list[dict], key: str) -> str:
    """FewRel layout: relation -> [{tokens, h: [name, id, [[token positions]]], t: ...}]."""
    data: dict[str, list] = {}
    for inst in instances:
        data.setdefault(inst[key], []).append(
            {
                "tokens": inst["tokens"],
                **{s: [inst[s]["name"], inst[s]["id"], [list(range(*inst[s]["pos"]))]] for s in ("h", "t")},
            }
        )
    return json.dumps(data, ensure_ascii=False) + "\n"


def wiki80_files(instances: list[dict], train_share: float, subsets: dict[str, float]) -> dict[str, str]:
    """Wiki80 layout; per relation the first ``train_share`` of the instances train, the rest are dev.

    ``subsets`` (file suffix -> share, as the paper's ``train_0.01.jsonl``) are the first share of each
    relation's training instances, at least one: at the demo's size 1 % of a relation is less than one
    sentence, and a relation without any could not be learnt at all.
    """
    n_train = {r: train_share * n for r, n in Counter(inst["name"] for inst in instances).items()}
    seen: dict[str, int] = {}
    splits: dict[str, list[str]] = {"train": [], "dev": [], **{suffix: [] for suffix in subsets}}
    for inst in instances:
        rank = seen[inst["name"]] = seen.get(inst["name"], -1) + 1
        record = {
            "token": inst["tokens"],
            **{
                s: {"name": inst[s]["name"], "id": inst[s]["id"], "pos": inst[s]["pos"], "type": inst[s]["type"]}
                for s in ("h", "t")
            },
            "relation": inst["name"],
        }
        line = json.dumps(record, ensure_ascii=False)
        splits["train" if rank < n_train[inst["name"]] else "dev"].append(line)
        for suffix, share in subsets.items():
            if rank < max(1, math.ceil(share * n_train[inst["name"]])):
                splits[suffix].append(line)
    label2id = {name: i for i, name in enumerate(dict.fromkeys(inst["name"] for inst in instances))}
    return {
        **{f"wiki80/{name}.jsonl": "\n".join(lines) + "\n" for name, lines in splits.items()},
        "wiki80/label2id.json": json.dumps(label2id) + "\n",
    }


def kinds_tsv(entities: dict[str, str]) -> str:
    """QID -> kind, the table a Wikidata ``instance of`` extraction gives: what the ``swapped``
    control swaps vectors within (pelt.eval.controls)."""
    return "# qid\tkind\n" + "".join(f"{qid}\t{kind}\n" for qid, kind in sorted(entities.items()))


def s2orc_jsonl(papers: list[dict]) -> str:
    """S2ORC metadata records of ``papers`` (:meth:`BiomedWorld.abstracts`): the format's other fields empty."""
    records = []
    for paper in papers:
        authors = []
        for full in paper["authors"]:
            *first, last = full.split()
            authors.append({"first": first[0], "middle": first[1:], "last": last, "suffix": ""})
        records.append(
            {
                "paper_id": paper["paper_id"],
                "title": paper["title"],
                "authors": authors,
                "abstract": paper["abstract"],
                "year": paper["year"],
                "arxiv_id": None,
                "acl_id": None,
                "pmc_id": None,
                "pubmed_id": None,
                "doi": None,
                "venue": None,
                "journal": paper["journal"],
                "mag_id": None,
                "mag_field_of_study": ["Medicine", "Biology"],
                "outbound_citations": [],
                "inbound_citations": [],
                "has_outbound_citations": False,
                "has_inbound_citations": False,
                "has_pdf_parse": False,
                "s2_url": f"https://api.semanticscholar.org/CorpusID:{paper['paper_id']}",
            }
        )
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def build(out: Path) -> list[Path]:
    """Write every demo file under ``out``; returns the paths written."""
    pages = read_pages()
    wiki_entities = read_entities(SOURCE / "wiki_entities.tsv")
    world = world_entities()
    shared = {k for k in set(world) & set(wiki_entities) if world[k].has_page}  # instruments may be shared
    if shared:
        raise ValueError(f"world.py names hand-written entities: {sorted(shared)}")
    documents = WORLD.pretraining_documents() + BIOMED.pretraining_documents()
    texts: dict[str, str] = {"pretraining/documents.txt": "".join(d + "\n" for d in documents)}
    texts.update(lama_files(world))
    wiki_inst = [
        dict(inst, **{side: dict(inst[side], type=WIKI80_TYPES[inst[side]["kind"]]) for side in ("h", "t")})
        for inst in relation_instances(WORLD)
    ]
    # FewRel's files: the paper tests on val_wiki.json; the demo trains on train_wiki.json and
    # validates on relations of its own (FewRel has no third public split).
    for split, name in (("train", "train_wiki"), ("validation", "validation_wiki"), ("test", "val_wiki")):
        texts[f"fewrel/{name}.json"] = fewrel_json([i for i in wiki_inst if i["split"] == split], "relation")
    texts.update(wiki80_files(wiki_inst, train_share=2 / 3, subsets={"train_0.1": 0.1, "train_0.01": 0.01}))
    texts["fewrel/val_pubmed.json"] = fewrel_json(BIOMED.test_instances(), "name")
    texts["wikipedia/demo-kinds.tsv"] = kinds_tsv({e.qid: e.kind for e in WORLD.entities.values()})
    texts["s2orc/demo-kinds.tsv"] = kinds_tsv({e.qid: e.kind for e in BIOMED.entities.values()})
    texts["s2orc/demo.jsonl"] = s2orc_jsonl(BIOMED.abstracts())
    blobs = {name: text.encode("utf-8") for name, text in texts.items()}
    blobs["wikipedia/demo-pages-articles.xml.bz2"] = bz2.compress(dump_xml(pages).encode("utf-8"), 9)
    sql = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=sql, mtime=0) as gz:
        gz.write(page_props_sql(pages, wiki_entities | world).encode("utf-8"))
    blobs["wikipedia/demo-page_props.sql.gz"] = sql.getvalue()
    written = []
    for name, blob in sorted(blobs.items()):
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(blob)
        written.append(path)
    return written


if __name__ == "__main__":
    for p in build(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE):
        print(p)
