"""The bundled demo data: reproducible from its sources, in the real formats, and self-consistent.

The default workflow run trains and probes a model on these files only, so every LAMA fact must be
learnable from the corpus (subject page exists, object stated in that page) and every task entity
must occur in the text the tables are built from.
"""

from __future__ import annotations

import bz2
import functools
import importlib.util
import json
import math
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import mwparserfromhell
import pytest
from conftest import REPO
from transformers import AutoTokenizer

DEMO = REPO / "resources" / "demo"
MW = "{http://www.mediawiki.org/xml/export-0.11/}"


@functools.cache
def _generator():
    """The generator script as a module (it is a script, not part of the package)."""
    spec = importlib.util.spec_from_file_location("build_demo_data", DEMO / "build_demo_data.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def pages() -> dict[str, dict]:
    """title -> {ns, text, redirect} from the bundled dump."""
    root = ET.fromstring(bz2.decompress((DEMO / "wikipedia" / "demo-pages-articles.xml.bz2").read_bytes()))
    assert root.tag == f"{MW}mediawiki"
    out = {}
    for page in root.iter(f"{MW}page"):
        redirect = page.find(f"{MW}redirect")
        out[page.findtext(f"{MW}title")] = {
            "ns": int(page.findtext(f"{MW}ns")),
            "id": int(page.findtext(f"{MW}id")),
            "text": page.find(f"{MW}revision/{MW}text").text,
            "sha1": page.findtext(f"{MW}revision/{MW}sha1"),
            "redirect": None if redirect is None else redirect.get("title"),
        }
    return out


@pytest.fixture(scope="module")
def lama_facts() -> list[dict]:
    return [json.loads(line) for p in sorted((DEMO / "lama" / "TREx").glob("*.jsonl")) for line in p.open()]


def _plain(wikitext: str) -> str:
    return mwparserfromhell.parse(wikitext).strip_code()


def _article(pages: dict[str, dict], title: str) -> dict:
    page = pages[title]
    return pages[page["redirect"]] if page["redirect"] else page


def test_regeneration_is_byte_identical(tmp_path: Path) -> None:
    written = _generator().build(tmp_path)
    assert len(written) >= 15
    for path in written:
        rel = path.relative_to(tmp_path)
        assert (DEMO / rel).read_bytes() == path.read_bytes(), f"{rel} differs from a fresh build: rerun the generator"


def test_demo_data_is_small() -> None:
    # a quarter is the pretraining text, a quarter the relation sentences (FewRel's three splits of
    # ten relations and Wiki80 hold the same sentences, as the real ones do), a sixth the S2ORC
    # abstracts (most of a record is the format's empty fields), the rest the LAMA files.
    # The shipped demo model (resources/demo/model, the one artefact here that is not data) apart.
    def size(files) -> int:
        return sum(p.stat().st_size for p in files if p.is_file() and "__pycache__" not in p.parts)

    model = DEMO / "model"
    assert size(p for p in DEMO.rglob("*") if model not in p.parents) < 2_200_000
    assert size(model.iterdir()) < 3_500_000  # 2 x 128 weights in fp32 and the tokenizer


def test_sha1_matches_real_mediawiki_dumps(shared_data: Path) -> None:
    dump = next((shared_data / "wikipedia_dump_sample").glob("*.bz2"))
    with bz2.open(dump, "rt", encoding="utf-8") as fh:
        root = ET.parse(fh).getroot()
    ns = root.tag[: root.tag.index("}") + 1]
    revisions = list(root.iter(f"{ns}revision"))[:5]
    for rev in revisions:
        assert _generator().mediawiki_sha1(rev.findtext(f"{ns}text")) == rev.findtext(f"{ns}sha1")


def test_dump_shape(pages: dict[str, dict]) -> None:
    articles = [t for t, p in pages.items() if p["ns"] == 0 and not p["redirect"]]
    redirects = [t for t, p in pages.items() if p["redirect"]]
    assert len(articles) >= 40
    assert len(redirects) >= 5
    assert {p["ns"] for p in pages.values()} >= {0, 1, 10, 14}
    assert len({p["id"] for p in pages.values()}) == len(pages)
    for title in redirects:
        assert pages[title]["text"].startswith(f"#REDIRECT [[{pages[title]['redirect']}]]")
        assert pages[pages[title]["redirect"]]["redirect"] is None, "no double redirects"
    disambiguation = [t for t in articles if "{{disambiguation}}" in pages[t]["text"]]
    assert disambiguation == ["Redhaven"]
    targets = {str(link.title) for link in mwparserfromhell.parse(pages["Redhaven"]["text"]).filter_wikilinks()}
    assert {"Redhaven, Norvale", "Redhaven, Quessa"} <= targets
    text = "".join(pages[t]["text"] for t in articles)
    for markup in ("{{Infobox", "<ref", "<ref name=", '{| class="wikitable"', "[[File:", "[[Category:", "|thumb|"):
        assert markup in text, markup
    assert re.search(r"\]\][a-z]+\b", text), "link trails ([[violin]]ist) are part of real markup"
    plain_chars = sum(len(_plain(pages[t]["text"])) for t in articles)
    assert 150_000 <= plain_chars <= 250_000


def test_links_reach_missing_pages_and_names_recur_unlinked(pages: dict[str, dict]) -> None:
    """The linking heuristic needs unlinked repeats of linked names, and dumps link beyond themselves."""
    missing = set()
    repeated = 0
    for title, page in pages.items():
        if page["ns"] != 0 or page["redirect"]:
            continue
        code = mwparserfromhell.parse(page["text"])
        targets = {str(link.title).strip() for link in code.filter_wikilinks()}
        missing |= {t for t in targets if ":" not in t and t[:1].upper() + t[1:] not in pages}
        plain = code.strip_code()
        repeated += sum(1 for t in targets if t in pages and plain.count(t) >= 2)
    assert len(missing) >= 5
    assert repeated >= 40


def test_lama_subjects_have_pages_and_facts_are_stated(pages: dict[str, dict], lama_facts: list[dict]) -> None:
    assert 1000 <= len(lama_facts) <= 2000
    relations = [json.loads(line) for line in (DEMO / "lama" / "relations.jsonl").open()]
    assert {r["relation"] for r in relations} == {f["predicate_id"] for f in lama_facts}
    assert all(r["template"].count("[X]") == 1 and r["template"].count("[Y]") == 1 for r in relations)
    vocab = set((DEMO / "lama" / "common_vocab_cased.txt").read_text().split("\n"))
    corpus = " ".join(_plain(p["text"]) for p in pages.values() if p["ns"] == 0)
    for fact in lama_facts:
        assert set(fact) == {"uuid", "obj_uri", "obj_label", "sub_uri", "sub_label", "predicate_id"}
        assert fact["sub_label"] in pages, fact
        assert fact["sub_label"] in corpus and fact["obj_label"] in corpus
        assert " " not in fact["obj_label"] and fact["obj_label"] in vocab
        assert fact["obj_label"] in _plain(_article(pages, fact["sub_label"])["text"]), fact
    assert len({f["uuid"] for f in lama_facts}) == len(lama_facts)


def test_google_re_files_restate_the_birth_and_death_facts(lama_facts: list[dict]) -> None:
    from pelt.tasks.lama.data import load_facts
    from pelt.tasks.lama.run import benchmark_of

    paths = sorted((DEMO / "lama" / "Google_RE").glob("*_test.jsonl"))
    facts, counts = load_facts(paths)
    assert counts.malformed == counts.duplicates == 0 and {f.relation for f in facts} == {
        "place_of_birth",
        "place_of_death",
    }
    assert all(f.subject_qid is None and benchmark_of(f.relation) == "G-RE" for f in facts)  # linked by name
    trex = {"P19": "place_of_birth", "P20": "place_of_death"}
    expected = {
        (trex[f["predicate_id"]], f["sub_label"], f["obj_label"]) for f in lama_facts if f["predicate_id"] in trex
    }
    assert {(f.relation, f.subject, f.object) for f in facts} == expected
    assert len({f.uuid for f in facts}) == len(facts) and not {f.uuid for f in facts} & {f["uuid"] for f in lama_facts}


def test_lama_objects_recur_in_corpus(pages: dict[str, dict], lama_facts: list[dict]) -> None:
    """The model can only name an object it has seen often; the table's sentences name it too."""
    corpus = " ".join(_plain(p["text"]) for p in pages.values() if p["ns"] == 0)
    pretraining = Counter(re.findall(r"\w+", (DEMO / "pretraining" / "documents.txt").read_text(encoding="utf-8")))
    for obj in {f["obj_label"] for f in lama_facts}:
        assert pretraining[obj] >= 10 and obj in corpus, obj


def _world():
    _generator()  # puts resources/demo on sys.path
    import world

    return world.World()


def _biomed():
    return _generator().BIOMED


@pytest.mark.parametrize("domain", ["wikipedia", "biomed"])
def test_rare_facts_are_never_in_pretraining_and_frequent_ones_are(domain: str) -> None:
    """The split the effect rests on: only the table can carry a rare entity's facts."""
    world = _world() if domain == "wikipedia" else _biomed()
    documents = (DEMO / "pretraining" / "documents.txt").read_text(encoding="utf-8").splitlines()
    assert documents == _world().pretraining_documents() + _biomed().pretraining_documents()
    words = [set(re.findall(r"\w+", d.lower() if domain == "biomed" else d)) for d in documents]
    by_name: dict[str, list[set[str]]] = {}
    for doc in words:
        for name in doc & world.entities.keys():
            by_name.setdefault(name, []).append(doc)
    rare = [e for e in world.subjects() if not e.frequent]
    frequent = [e for e in world.subjects() if e.frequent]
    assert len(rare) >= 100 and len(frequent) >= 50
    for entity in rare:
        assert by_name[entity.key], f"{entity.key} must be a known word"
        assert not any(doc & set(entity.facts.values()) for doc in by_name[entity.key]), entity.key
    for entity in frequent:
        for obj in entity.facts.values():
            assert any(obj in doc for doc in by_name[entity.key]), (entity.key, obj)


def test_rare_subjects_are_rare_in_the_dump(pages: dict[str, dict], lama_facts: list[dict]) -> None:
    """Frequent subjects have 10 or more mentions in the dump's text and rare ones fewer: the paper's
    buckets [0,10) and [10,50) separate them (the linker finds these mentions; see test_workflow)."""
    world = _world()
    text = " ".join(_plain(p["text"]) for p in pages.values() if p["ns"] == 0)
    counts = {name: n for name, n in Counter(re.findall(r"\w+", text)).items() if name in world.entities}
    for fact in lama_facts:
        entity = world.entities[fact["sub_label"]]
        assert (counts[entity.key] >= 10) == entity.frequent, (entity.key, counts[entity.key])


def _check_span(tokens: list[str], name: str, positions: list[int]) -> None:
    assert " ".join(tokens[i] for i in positions).lower() == name


def test_fewrel_and_wiki80_shapes(pages: dict[str, dict]) -> None:
    corpus = " ".join(_plain(p["text"]) for p in pages.values() if p["ns"] == 0).lower()
    for split in FEWREL_SPLITS.values():
        fewrel = json.loads((DEMO / "fewrel" / f"{split}.json").read_text())
        assert len(fewrel) >= 5 and all(len(v) >= 8 for v in fewrel.values())
        for instances in fewrel.values():
            for inst in instances:
                for side in ("h", "t"):
                    name, qid, [positions] = inst[side]
                    assert qid.startswith("Q") and name in corpus
                    _check_span(inst["tokens"], name, positions)
    label2id = json.loads((DEMO / "wiki80" / "label2id.json").read_text())
    assert sorted(label2id.values()) == list(range(len(label2id)))
    for split in ("train", "dev", "train_0.1", "train_0.01"):
        records = [json.loads(line) for line in (DEMO / "wiki80" / f"{split}.jsonl").open()]
        assert {r["relation"] for r in records} == set(label2id)
        for r in records:
            for side in ("h", "t"):
                _check_span(r["token"], r[side]["name"], list(range(*r[side]["pos"])))


FEWREL_SPLITS = {"train": "train_wiki", "validation": "validation_wiki", "test": "val_wiki"}


def _wording(inst: dict) -> tuple[str, ...]:
    """The sentence with its head and tail replaced by H and T."""
    tokens = list(inst["tokens"])
    for side, mark in (("h", "H"), ("t", "T")):
        for i in inst[side][2][0]:
            tokens[i] = mark
    return tuple(tokens)


def test_relation_classification_needs_entity_knowledge() -> None:
    """The demo's FewRel splits: disjoint relations, ten or more in each (10-1 needs them), one wording
    per split (so the words never tell the relation), test heads mostly rare entities, and test
    relations that only the head separates."""
    world = _world()
    by_qid = {e.qid: e for e in world.entities.values()}
    splits = {s: json.loads((DEMO / "fewrel" / f"{f}.json").read_text()) for s, f in FEWREL_SPLITS.items()}
    relations = [set(data) for data in splits.values()]
    assert all(len(r) >= 10 for r in relations), relations  # 10-way episodes in every split
    assert not (relations[0] & relations[1] or relations[0] & relations[2] or relations[1] & relations[2])
    wordings = {s: {_wording(i) for rel in data.values() for i in rel} for s, data in splits.items()}
    assert all(len(w) == 1 for w in wordings.values()), wordings
    assert len(set().union(*wordings.values())) == 3
    test = [(r, i) for r, instances in splits["test"].items() for i in instances]
    assert len(test) >= 250
    rare = [r for r, i in test if not by_qid[i["h"][1]].frequent]
    assert len(rare) >= 2 * (len(test) - len(rare)) and len(test) > len(rare)  # mostly rare, some frequent
    # at least four test relations share the tail's kind: neither words nor tails tell them apart
    tail_kinds = {r: {by_qid[i["t"][1]].kind for i in instances} for r, instances in splits["test"].items()}
    assert sum(kinds == {"city"} for kinds in tail_kinds.values()) >= 4
    assert sum(kinds == {"country"} for kinds in tail_kinds.values()) >= 4
    # a pair only the head's own fact separates: born vs died, both people, both cities
    assert {by_qid[i["h"][1]].kind for i in splits["test"]["P19"] + splits["test"]["P20"]} == {"person"}
    # every entity has a kind for the swapped control
    kinds = dict(line.split("\t") for line in (DEMO / "wikipedia" / "demo-kinds.tsv").read_text().splitlines()[1:])
    assert all(
        kinds[i[s][1]] == by_qid[i[s][1]].kind
        for data in splits.values()
        for rel in data.values()
        for i in rel
        for s in "ht"
    )


def test_wiki80_low_resource_subsets() -> None:
    """Wiki80's 1 % and 10 % training files are the first share of each relation's training
    instances, at least one each, so that every relation can be learnt."""
    read = {
        s: [json.loads(line) for line in (DEMO / "wiki80" / f"{s}.jsonl").open()]
        for s in ("train", "train_0.1", "train_0.01")
    }
    per_relation = {s: Counter(r["relation"] for r in records) for s, records in read.items()}
    for relation, n in per_relation["train"].items():
        assert per_relation["train_0.01"][relation] == max(1, math.ceil(0.01 * n))
        assert per_relation["train_0.1"][relation] == max(1, math.ceil(0.1 * n))
    assert all(r in read["train"] for s in ("train_0.1", "train_0.01") for r in read[s])


def test_s2orc_records_and_biomedical_fewrel() -> None:
    """FewRel 2.0 on the demo: several hundred test pairs in one wording that no abstract contains,
    heads mostly rare in the abstracts (fewer than 10 mentions) and frequent ones with 10 or more,
    and three relations with a disease tail that only the head's kind separates."""
    records = [json.loads(line) for line in (DEMO / "s2orc" / "demo.jsonl").open()]
    assert len(records) >= 300 and len({r["paper_id"] for r in records}) == len(records)
    assert all(r["abstract"] and r["title"] and r["authors"] and r["year"] for r in records)
    text = " ".join(f"{r['title']} {r['abstract']}" for r in records).lower()
    mentions = Counter(re.findall(r"\w+", text))
    spaced = re.sub(r"(\w)([.,;:])", r"\1 \2", text)
    fewrel = json.loads((DEMO / "fewrel" / "val_pubmed.json").read_text())
    biomed = _biomed()
    by_cui = {e.qid: e for e in biomed.entities.values()}
    test = [(relation, inst) for relation, instances in fewrel.items() for inst in instances]
    assert len(fewrel) >= 5 and len(test) >= 250
    assert len({_wording(inst) for _, inst in test}) == 1
    heads = [by_cui[inst["h"][1]] for _, inst in test]
    assert sum(not h.frequent for h in heads) >= 2 * sum(h.frequent for h in heads) > 0
    assert all((mentions[h.key] >= 10) == h.frequent for h in heads)
    tails = {relation: {by_cui[i["t"][1]].kind for i in instances} for relation, instances in fewrel.items()}
    assert sum(kinds == {"disease"} for kinds in tails.values()) >= 3
    kinds = dict(line.split("\t") for line in (DEMO / "s2orc" / "demo-kinds.tsv").read_text().splitlines()[1:])
    for _, inst in test:
        assert inst["tokens"] == [t.lower() for t in inst["tokens"]]
        # a test sentence the biomedical table was built from would hand its answer over
        assert " ".join(inst["tokens"][:-1]) not in spaced, inst["tokens"]
        for side in ("h", "t"):
            name, cui, [positions] = inst[side]
            assert cui.startswith("C") and name in text and kinds[cui] == by_cui[cui].kind
            _check_span(inst["tokens"], name, positions)


def test_every_entity_name_is_one_token_of_the_shipped_tokenizer() -> None:
    """world.py's promise: a mention inside a sentence is one token, so that it is one mask when the
    table is built and the baseline cannot guess from a subword. The vocabulary decides it: with the
    600 nicknames, 4,000 entries split 198 of the 662 names (demo_model.vocab_size is 5,000)."""
    tokenizer = AutoTokenizer.from_pretrained(DEMO / "model")
    names = list(_world().entities)
    assert len(names) >= 600
    assert [n for n in names if len(tokenizer.tokenize(" " + n)) != 1] == []


def test_every_frequent_document_names_its_entity_in_one_appositive() -> None:
    """Both orders teach the model to read the bracket (world.py): NICKNAME ( Name ) in about
    APPOSITIVE_SHARE of a frequent entity's documents, Name ( NICKNAME ) in the others, the
    nicknames many and each in a few documents. The appositive starts at the first or the second
    sentence, so that half the one-sentence documents (a company's or a band's one fact) have none."""
    world = _world()
    import world as world_module

    nicknames = set(world.nicknames)
    assert len(nicknames) == world_module.N_NICKNAMES == 600
    frequent = {e.key for e in world.subjects() if e.frequent}
    counts: Counter = Counter()  # (order, one sentence) -> documents
    seen: Counter = Counter()  # nickname -> documents
    for document in world.pretraining_documents():
        if not set(re.findall(r"\w+", document)) & frequent:
            continue  # a rare entity's fact-free sentences
        one_sentence = document.count(".") == 1
        names = set(re.findall(r"(\w+) \( (\w+) \)", document))
        if not names:
            assert one_sentence, document
            counts["none", True] += 1
            continue
        assert len(names) == 1, document  # one appositive, repeated in each sentence it reaches
        ((outer, inner),) = names
        order = "nickname first" if outer in nicknames and inner in frequent else "name first"
        assert order == "nickname first" or (outer in frequent and inner in nicknames), document
        counts[order, one_sentence] += 1
        seen[inner if order == "name first" else outer] += 1
    assert counts.total() == len(frequent) * world_module.DOCS_PER_FREQUENT
    first, second = counts["nickname first", False], counts["name first", False]
    assert abs(first / (first + second) - world_module.APPOSITIVE_SHARE) < 0.03
    one = counts["none", True] + counts["nickname first", True] + counts["name first", True]
    assert 0.4 < counts["none", True] / one < 0.6
    assert len(seen) >= 590 and max(seen.values()) <= 20
