"""Linking: redirects, aliases, anchors as mentions, the paper's heuristic, string matching."""

from __future__ import annotations

import bz2
import re
from collections import defaultdict
from xml.sax.saxutils import escape

import numpy as np
import pytest
import spacy
from conftest import REPO
from spacy.matcher import PhraseMatcher
from spacy.util import filter_spans

import pelt.linking.heuristic
from pelt.config import config_schema
from pelt.corpus.wikipedia.build import build_wikipedia_corpus
from pelt.linking.candidates import Pruning, link_probabilities, longest_names, score_name_entities
from pelt.linking.heuristic import LinkGraph, _reachable_candidates, heuristic_links, reachable_candidates
from pelt.linking.link import MENTION_COLUMNS, LinkSettings, link_by_string, link_wikipedia
from pelt.linking.names import BloomFilter, name_filter, name_key
from pelt.linking.segmentation import ner_pipeline, normalize_alias, segment_document, segment_documents, valid_anchors
from pelt.linking.sentences import nlp, paragraphs, sentence_spans, tokenize
from pelt.spark import SHUFFLE_PARTITIONS, fit_partitions, input_bytes

DOCUMENTS_DDL = "doc_id string, title string, text string, links array<struct<start:int,end:int,target:string>>"
PAGES_DDL = "page_id long, title string, is_redirect boolean, redirect_to string, is_disambiguation boolean, qid string"

_LINK = re.compile(r"\[\[([^|\]]+)(?:\|([^\]]+))?\]\]")


def marked(text: str) -> tuple[str, list[tuple[int, int, str]]]:
    """``[[Target|shown]]`` / ``[[Target]]`` markup -> plain text and (start, end, target) anchors."""
    plain, links, last = [], [], 0
    for match in _LINK.finditer(text):
        plain.append(text[last : match.start()])
        shown = match.group(2) or match.group(1)
        start = sum(map(len, plain))
        links.append((start, start + len(shown), match.group(1)))
        plain.append(shown)
        last = match.end()
    plain.append(text[last:])
    return "".join(plain), links


def article(title: str, page_id: int, disambiguation: bool = False) -> tuple:
    return (page_id, title, False, None, disambiguation, None)


def redirect(title: str, page_id: int, to: str) -> tuple:
    return (page_id, title, True, to, False, None)


EIFFEL = (
    "Gustave Eiffel was born in [[Dijon (city)|Dijon]]. He later lived in [[Paris]] and studied "
    "[[Solar System|astronomy]] and [[Chemistry|chemistry]].\n"
    "In Dijon he visited Burgundy cellars near Beaune. Mercury was on his mind. He never went to Texas. "
    "Eiffel loved Paris."
)
DOCUMENTS = {
    "Gustave Eiffel": EIFFEL,
    "Dijon": "Dijon is the capital of [[Bourgogne|Burgundy]].",
    "Burgundy": "Burgundy is a region around [[Dijon]]. Its wines come from [[Beaune]].",
    "Solar System": "The Solar System includes [[Mercury (planet)|Mercury]].",
    "Chemistry": "Chemistry studies [[Mercury (element)|Mercury]] and other elements.",
    "Planets": "Planets orbit in the [[Solar System]]. Mercury is small.",
    "Cowboys": "Cowboys live in [[Texas|Texas. Cowboys]] ride. See [[Loop A|loop]], [[Mercury]] and [[Atlantis]].",
    # The letter's article: "A" is a stop word, never a name of the heuristic, though linked here.
    "Letters": "[[A]] is the first letter. A vowel follows.",
}
PAGES = [
    article("Gustave Eiffel", 1),
    article("Dijon", 2),
    article("Burgundy", 3),
    article("Beaune", 4),
    article("Paris", 5),
    article("Solar System", 6),
    article("Chemistry", 7),
    article("Mercury (planet)", 8),
    article("Mercury (element)", 9),
    article("Mercury", 10, disambiguation=True),
    article("Texas", 11),
    article("A", 17),
    redirect("Dijon (city)", 12, "Dijon, France"),
    redirect("Dijon, France", 13, "Dijon"),
    redirect("Bourgogne", 14, "Burgundy"),
    redirect("Loop A", 15, "Loop B"),
    redirect("Loop B", 16, "Loop A"),
]


def documents_rows() -> list[tuple]:
    rows = []
    for title, markup in DOCUMENTS.items():
        text, links = marked(markup)
        rows.append((f"d-{title}", title, text, [{"start": s, "end": e, "target": t} for s, e, t in links]))
    # One anchor with a span outside the text and one over whitespace only: counted, not mentions.
    rows.append(
        (
            "d-bad",
            "Bad",
            "A  b.",
            [{"start": 0, "end": 99, "target": "Paris"}, {"start": 1, "end": 3, "target": "Paris"}],
        )
    )
    return rows


@pytest.fixture(scope="module")
def linked(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("linking")
    spark.createDataFrame(documents_rows(), DOCUMENTS_DDL).repartition(3).write.parquet(str(root / "documents"))
    spark.createDataFrame(PAGES, PAGES_DDL).write.parquet(str(root / "pages"))
    counts = link_wikipedia(
        spark, str(root / "documents"), str(root / "pages"), str(root / "aliases"), str(root / "mentions")
    )
    mentions = spark.read.parquet(str(root / "mentions"))
    aliases = spark.read.parquet(str(root / "aliases"))
    return counts, mentions, aliases, root


def mention_set(mentions, doc_id: str) -> set[tuple[str, str, str]]:
    """(surface text, entity, method) of the mentions of one document."""
    return {
        (row["sentence"][row["start"] : row["end"]], row["entity_id"], row["method"])
        for row in mentions.filter(mentions.doc_id == doc_id).collect()
    }


def test_heuristic_links_later_mentions_and_refuses_ambiguous_or_distant_names(linked):
    _, mentions, _, _ = linked
    assert mention_set(mentions, "d-Gustave Eiffel") == {
        ("Dijon", "Dijon", "anchor"),  # through a two-hop redirect chain
        ("Paris", "Paris", "anchor"),
        ("astronomy", "Solar System", "anchor"),
        ("chemistry", "Chemistry", "anchor"),
        ("Gustave Eiffel", "Gustave Eiffel", "heuristic"),  # the article's own subject
        ("Dijon", "Dijon", "heuristic"),  # linked once, mentioned again
        ("Paris", "Paris", "heuristic"),
        ("Burgundy", "Burgundy", "heuristic"),  # neighbour of Dijon (iteration 1)
        ("Beaune", "Beaune", "heuristic"),  # neighbour of Burgundy only (iteration 2)
        # "Mercury": planet and element are both neighbours -> refused.
        # "Texas": its page is outside the neighbourhood -> not linked.
    }


def test_name_ambiguous_globally_is_linked_when_unique_in_the_neighbourhood(linked):
    _, mentions, _, _ = linked
    assert mention_set(mentions, "d-Planets") == {
        ("Solar System", "Solar System", "anchor"),
        ("Mercury", "Mercury (planet)", "heuristic"),
    }


def test_mentions_have_contract_schema_and_spans_inside_their_sentence(linked):
    _, mentions, _, _ = linked
    assert [(f.name, f.dataType.simpleString()) for f in mentions.schema.fields] == list(
        zip(MENTION_COLUMNS, ("string", "int", "string", "int", "int", "string", "string"), strict=True)
    )
    for row in mentions.collect():
        assert 0 <= row["start"] < row["end"] <= len(row["sentence"])
    sentences = {
        (r["sent_idx"], r["sentence"]) for r in mentions.filter(mentions.doc_id == "d-Gustave Eiffel").collect()
    }
    assert (5, "Eiffel loved Paris.") in sentences  # sentence index counts across paragraphs


def test_anchor_drops_and_counts(linked):
    counts, mentions, _, _ = linked
    assert counts["documents"] == len(DOCUMENTS) + 1
    assert counts["anchors_invalid"] == 1
    assert counts["anchors_blank"] == 1
    assert counts["anchors_crossing_sentence"] == 1  # "Texas. Cowboys"
    assert counts["anchors_disambiguation"] == 1  # [[Mercury]]
    assert counts["anchors_broken_redirect"] == 1  # Loop A <-> Loop B
    assert counts["anchors_to_absent_pages"] == 1  # Atlantis: kept under its title
    assert counts["heuristic_names_iteration_2"] == 1  # Beaune
    assert counts["mentions_anchor"] + counts["mentions_heuristic"] == mentions.count()
    assert mention_set(mentions, "d-Cowboys") == {("Atlantis", "Atlantis", "anchor")}


def test_aliases_from_anchors_redirects_and_titles(linked):
    _, _, aliases, _ = linked
    assert [(f.name, f.dataType.simpleString()) for f in aliases.schema.fields] == [
        ("alias", "string"),
        ("entity_id", "string"),
        ("count", "bigint"),
    ]
    table = {(r["alias"], r["entity_id"]): r["count"] for r in aliases.collect()}
    assert table[("Dijon", "Dijon")] == 2  # two anchors
    assert table[("Burgundy", "Burgundy")] == 1  # anchor text through a redirect
    assert table[("Bourgogne", "Burgundy")] == 1  # redirect title
    assert table[("Dijon (city)", "Dijon")] == 1  # redirect chain
    assert table[("Texas. Cowboys", "Texas")] == 1  # crossing anchors still name their target
    assert table[("Beaune", "Beaune")] == 1
    assert ("Mercury", "Mercury (planet)") in table and ("Mercury", "Mercury (element)") in table
    assert not any(entity in ("Mercury", "Loop A", "Loop B") for _, entity in table)


def relink(spark, root, run: str, **options) -> dict[str, int]:
    """Link the fixture's corpus again with other options, into outputs suffixed ``run``."""
    return link_wikipedia(
        spark,
        str(root / "documents"),
        str(root / "pages"),
        str(root / f"aliases{run}"),
        str(root / f"mentions{run}"),
        LinkSettings(**options),
    )


def test_the_spark_search_links_as_the_broadcast_graphs(spark, linked, monkeypatch):
    """A graph too big to broadcast is searched in Spark: same mentions, same counts."""
    counts, mentions, _, root = linked
    monkeypatch.setattr(pelt.linking.heuristic, "SMALL_GRAPH_ROWS", 0)
    assert relink(spark, root, "-spark") == counts
    rows = sorted(map(tuple, spark.read.parquet(str(root / "mentions-spark")).collect()))
    assert rows == sorted(map(tuple, mentions.collect()))
    assert sum(1 for row in rows if row[-1] == "heuristic") > 5


def test_link_settings_defaults_are_the_schemas_and_the_config_section_parses_whole():
    schema = config_schema(REPO / "workflow" / "schemas" / "config.schema.yaml", REPO)
    defaults = {k: v["default"] for k, v in schema["properties"]["linking"]["properties"].items() if "default" in v}
    assert LinkSettings.from_config(defaults) == LinkSettings()
    settings = LinkSettings.from_config({"heuristic": False, "min_prior": 0.5, "ner_model": "x"}, "de")
    assert settings == LinkSettings(heuristic=False, ner_model="x", pruning=Pruning(min_prior=0.5), language="de")
    with pytest.raises(ValueError, match=r"unknown settings \['max_iteration'\]"):
        LinkSettings.from_config({"max_iteration": 3})
    with pytest.raises(ValueError, match="max_iterations must be at least 1"):
        LinkSettings(max_iterations=0)


def test_without_heuristic_only_anchors(spark, linked):
    _, _, _, root = linked
    counts = relink(spark, root, "2", heuristic=False)
    methods = {r["method"] for r in spark.read.parquet(str(root / "mentions2")).collect()}
    assert methods == {"anchor"}
    assert "mentions_heuristic" not in counts


def test_pruning_counts_and_a_stop_word_name_is_no_candidate(linked):
    counts, mentions, _, _ = linked
    assert mention_set(mentions, "d-Letters") == {("A", "A", "anchor")}  # the sentence-initial "A" is not linked
    assert counts["names_stop_word"] == 1
    # Every name of this corpus is a link in a third of its documents or more: none falls below 0.2.
    assert counts["names_low_link_prob"] == counts["name_entities_low_prior"] == counts["name_entities_over_cap"] == 0
    # (document, name, entity) rows into the heuristic: Eiffel 7 (Mercury twice), Planets 1, Dijon,
    # Burgundy, Solar System and Chemistry 1 each (their own names in their own text). Never generated,
    # out of reach of the document's seeds: Texas in Eiffel (only Cowboys links it) and the element
    # Mercury in Planets (only Chemistry links it).
    assert (counts["candidate_pairs"], counts["candidate_pairs_unreachable"]) == (12, 2)


def test_link_probability_prunes_names_before_the_heuristic(spark, linked):
    """At 0.6, names that are a link in half of their documents or fewer (Burgundy 1 of 3, Beaune 1 of
    2, Mercury 2 of 4, Solar System 1 of 2) are no candidates; Algorithm 1 still links the rest."""
    _, _, _, root = linked
    counts = relink(spark, root, "3", pruning=Pruning(min_link_prob=0.6))
    mentions = spark.read.parquet(str(root / "mentions3"))
    assert counts["names_low_link_prob"] == 4
    heuristic = {m for m in mention_set(mentions, "d-Gustave Eiffel") if m[2] == "heuristic"}
    assert heuristic == {
        ("Gustave Eiffel", "Gustave Eiffel", "heuristic"),
        ("Dijon", "Dijon", "heuristic"),  # 2 anchors in 3 documents
        ("Paris", "Paris", "heuristic"),
    }
    assert mention_set(mentions, "d-Planets") == {("Solar System", "Solar System", "anchor")}


def test_entity_prior_cap_and_stop_words(spark):
    alias_names = [(alias, alias) for alias in ("A", "The", "US", "The Who", "Paris", "Springfield", "May", "MAY")]
    alias_names += [("New  York", "New York"), ("New York", "New York")]
    aliases = [
        ("A", "A", 5),
        ("The", "The (band)", 3),
        ("May", "May (month)", 2),
        ("MAY", "Maybank", 2),  # all capitals: not the word
        ("US", "United States", 7),
        ("The Who", "The Who", 4),  # a stop word only as a whole one-token name
        ("Paris", "Paris", 995),
        ("Paris", "Paris, Texas", 4),  # prior 0.004
        ("New  York", "New York City", 3),  # two aliases of one name key: counts add up
        ("New York", "New York City", 2),
        ("Springfield", "Springfield (IL)", 5),
        ("Springfield", "Springfield (MA)", 4),
        ("Springfield", "Springfield (MO)", 3),  # third most frequent: over a cap of 2
    ]
    scored, counts = score_name_entities(
        spark.createDataFrame(alias_names, "alias string, name string"),
        spark.createDataFrame(aliases, "alias string, entity_id string, count long"),
        Pruning(max_entities_per_name=2),
    )
    kept = {(r["name"], r["entity_id"], r["name_count"]) for r in scored.filter("kept").collect()}
    assert kept == {
        ("MAY", "Maybank", 2),
        ("US", "United States", 7),
        ("The Who", "The Who", 4),
        ("Paris", "Paris", 999),
        ("New York", "New York City", 5),
        ("Springfield", "Springfield (IL)", 12),
        ("Springfield", "Springfield (MA)", 12),
    }
    assert counts == {
        "names": 9,
        "names_stop_word": 3,
        "name_entity_pairs": 12,
        "name_entities_low_prior": 1,
        "name_entities_over_cap": 1,
        "filter_items": 1 + 1 + 2 + 1 + 2 + 1,  # tokens of the names kept
    }
    scored.unpersist()


def test_link_probability_counts_documents_not_occurrences(spark):
    exact = spark.createDataFrame(
        [("d1", "Paris")] * 3 + [("d2", "Paris"), ("d3", "Paris"), ("d1", "Dijon")], "doc_id string, name string"
    )
    anchor_names = spark.createDataFrame([("d1", "Paris"), ("d4", "Paris")], "doc_id string, name string")
    name_counts = spark.createDataFrame([("Paris", 2), ("Dijon", 5)], "name string, name_count long")
    probs = {r["name"]: r["link_prob"] for r in link_probabilities(exact, anchor_names, name_counts).collect()}
    assert probs == {"Paris": pytest.approx(2 / 4), "Dijon": 1.0}  # 2 anchors in 4 documents; at most 1


def test_partitions_follow_the_input_unless_set(spark, tmp_path, monkeypatch):
    split = int(spark._jsparkSession.sessionState().conf().filesMaxPartitionBytes())
    minimum = 2 * spark.sparkContext.defaultParallelism
    assert fit_partitions(spark, 0) == 0
    assert fit_partitions(spark, 10 * split + 1) == 11
    assert spark.conf.get(SHUFFLE_PARTITIONS) == "4"  # set when the session was made (conftest): kept
    from pyspark import SparkConf

    monkeypatch.setattr(spark.sparkContext, "getConf", lambda: SparkConf(loadDefaults=False))
    try:
        fit_partitions(spark, 10 * split + 1)
        assert spark.conf.get(SHUFFLE_PARTITIONS) == "11"  # not set anywhere: from the input
        fit_partitions(spark, 1)
        assert spark.conf.get(SHUFFLE_PARTITIONS) == str(minimum)  # at least two per core
    finally:
        spark.conf.set(SHUFFLE_PARTITIONS, "4")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "part-0").write_bytes(b"x" * 1000)
    (tmp_path / "b").write_bytes(b"x" * 24)
    assert input_bytes([str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "absent")]) == 1024
    # One input partition holding every document is spread over the partitions asked for.
    one_file = spark.createDataFrame(documents_rows(), DOCUMENTS_DDL).coalesce(1)
    segments, _ = segment_documents(one_file, 3)
    assert segments.rdd.getNumPartitions() == 3
    segments.unpersist()


def test_heuristic_loop_stops_and_respects_max_iterations():
    candidates = {"B": {"b"}, "C": {"c"}, "X": {"x1", "x2"}}
    adjacency = {"b": {"a"}, "c": {"b"}, "x1": {"a"}, "x2": {"a"}}
    assert heuristic_links({"a"}, candidates, adjacency, 10) == {"B": ("b", 1), "C": ("c", 2)}
    assert heuristic_links({"a"}, candidates, adjacency, 1) == {"B": ("b", 1)}
    assert heuristic_links(set(), candidates, adjacency, 10) == {}


def name_side_links(
    docs: dict[str, tuple[set[str], set[str]]],
    entities: dict[str, set[str]],
    edges: set[tuple[str, str]],
    max_iterations: int,
) -> dict[str, dict[str, tuple[str, int]]]:
    """Algorithm 1 on the candidates as generated before the seed-side generation: every entity of
    every name of the document, adjacent to any node of the document (the reference)."""
    neighbours: dict[str, set[str]] = defaultdict(set)
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    linked = {}
    for doc, (seeds, names) in docs.items():
        candidates = {name: set(entities[name]) for name in names if name in entities}
        nodes = seeds.union(*candidates.values())
        adjacency = {c: neighbours[c] & nodes for c in set().union(*candidates.values())}
        linked[doc] = heuristic_links(seeds, candidates, adjacency, max_iterations)
    return linked


def seed_side_links(
    spark,
    docs: dict[str, tuple[set[str], set[str]]],
    entities: dict[str, set[str]],
    edges: set[tuple[str, str]],
    max_iterations: int,
) -> tuple[dict[str, dict[str, tuple[str, int]]], set[tuple[str, str, str]], dict[str, int]]:
    """Algorithm 1 on what :func:`_reachable_candidates` generates; its links per document, the
    candidates, the name-side sizes and the (doc_id, c, n) edges."""
    cands, adjacency, size, persisted = _reachable_candidates(
        spark.createDataFrame([(d, n) for d, (_, names) in docs.items() for n in names], "doc_id string, name string"),
        spark.createDataFrame([(n, e) for n, es in entities.items() for e in es], "name string, entity_id string"),
        spark.createDataFrame([(d, s) for d, (seeds, _) in docs.items() for s in seeds], "doc_id string, node string"),
        spark.createDataFrame(sorted(edges | {(b, a) for a, b in edges}), "c string, n string"),
        max_iterations,
    )
    found = {tuple(row) for row in cands.collect()}
    edge_rows = {tuple(row) for row in adjacency.collect()}
    neighbours: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for doc, c, n in edge_rows:
        neighbours[doc][c].add(n)
    sizes = {row["doc_id"]: row["size"] for row in size.collect()}
    for df in persisted:
        df.unpersist()
    linked = {}
    for doc, (seeds, _) in docs.items():
        candidates: dict[str, set[str]] = defaultdict(set)
        for d, name, entity in found:
            if d == doc:
                candidates[name].add(entity)
        linked[doc] = heuristic_links(seeds, candidates, neighbours[doc], max_iterations)
    return linked, found, sizes, edge_rows


def driver_side(
    docs: dict[str, tuple[set[str], set[str]]],
    entities: dict[str, set[str]],
    edges: set[tuple[str, str]],
    max_iterations: int,
) -> tuple[set[tuple[str, str, str]], dict[str, int], set[tuple[str, str, str]]]:
    """What :func:`reachable_candidates` finds over a :class:`LinkGraph`, in the shapes of
    :func:`seed_side_links`: candidates, name-side sizes, edges."""
    pairs = [(n, str(e)) for n, es in entities.items() for e in es]  # str: the random worlds hold numpy strings
    graph = LinkGraph.from_pairs(edges | {(b, a) for a, b in edges}, pairs)
    found, sizes, edge_rows = set(), {}, set()
    for doc, (seeds, names) in docs.items():
        pairs, doc_edges, sizes[doc] = reachable_candidates(seeds, names, graph, max_iterations)
        found |= {(doc, name, entity) for name, entity in pairs}
        edge_rows |= {(doc, c, n) for c, n in doc_edges}
    return found, sizes, edge_rows


# A hand-built world: a chain s - b - c - e (multi-hop), an ambiguous name with an unreachable
# entity ("A": a1 next to s, a2 nowhere near), a name whose two entities are both neighbours ("M"),
# and a hub (more neighbours and names than any document has candidates, so it pairs with the
# document's candidates instead of expanding) that is a seed in d-hub and an intermediate in d-via-hub.
HUB_LEAVES = [f"x{i}" for i in range(30)]
ENTITIES = {
    "A": {"a1", "a2"},
    "B": {"b"},
    "C": {"c", "c2"},
    "E": {"e"},
    "M": {"m1", "m2"},
    "Hub": {"hub"},
    "X3": {"x3"},
    "X5": {"x5", "far"},
    "Y": {"y1", "y2"},
    **{f"Leaf {leaf}": {leaf} for leaf in HUB_LEAVES},
}
EDGES = {("s", "a1"), ("s", "b"), ("b", "c"), ("c", "e"), ("s", "m1"), ("s", "m2"), ("s", "hub"), ("x3", "y2")}
EDGES |= {("hub", leaf) for leaf in HUB_LEAVES} | {("hub", "y1"), ("a2", "far"), ("c2", "far")}
DOCS = {
    "d-chain": ({"s"}, {"A", "B", "C", "E", "M"}),
    "d-seed-is-candidate": ({"a1"}, {"A", "B"}),
    "d-hub": ({"hub"}, {"Hub", "X3", "Y", "A"}),
    "d-via-hub": ({"s"}, {"Hub", "X5", "Y", "E"}),
    "d-no-seed-near": ({"zzz"}, {"A", "C", "M"}),
}


@pytest.mark.parametrize("max_iterations", [1, 2, 3, 10])
def test_seed_side_candidates_link_exactly_as_all_name_side_candidates(spark, max_iterations):
    expected = name_side_links(DOCS, ENTITIES, EDGES, max_iterations)
    linked, found, sizes, edge_rows = seed_side_links(spark, DOCS, ENTITIES, EDGES, max_iterations)
    assert linked == expected
    # The search over a broadcast graph (small corpora) generates exactly what the Spark one does.
    assert driver_side(DOCS, ENTITIES, EDGES, max_iterations) == (found, sizes, edge_rows)
    assert sizes == {doc: sum(len(ENTITIES[name]) for name in names) for doc, (_, names) in DOCS.items()}
    # Unreachable candidates are never generated: a2 (only near "far", not a candidate anywhere),
    # c2, "far", anything in d-no-seed-near; e only within three hops of s.
    entities = {entity for _, _, entity in found}
    assert not entities & {"a2", "c2", "far"}
    assert not any(doc == "d-no-seed-near" for doc, _, _ in found)
    assert (("d-chain", "E", "e") in found) == (max_iterations >= 3)
    if max_iterations >= 3:
        assert expected["d-chain"] == {"A": ("a1", 1), "B": ("b", 1), "C": ("c", 2), "E": ("e", 3)}
        assert expected["d-hub"] == {"Hub": ("hub", 1), "X3": ("x3", 1), "Y": ("y1", 1)}
        assert expected["d-via-hub"] == {"Hub": ("hub", 1), "X5": ("x5", 2), "Y": ("y1", 2)}


def test_seed_side_candidates_on_random_graphs(spark):
    """Property check: random worlds with hubs, ambiguous names and long chains link the same."""
    rng = np.random.default_rng(7)
    ids = [f"e{i}" for i in range(60)]
    edges = {(ids[i], ids[j]) for i in range(60) for j in range(i + 1, 60) if rng.random() < 0.04}
    edges |= {(ids[0], ids[j]) for j in range(1, 60) if rng.random() < 0.7}  # a hub
    entities = {f"N{k}": set(rng.choice(ids, size=rng.integers(1, 4), replace=False)) for k in range(40)}
    docs = {
        f"d{k}": (set(rng.choice(ids, size=rng.integers(1, 4), replace=False)), set(rng.choice(list(entities), 12)))
        for k in range(25)
    }
    for max_iterations in (2, 10):
        expected = name_side_links(docs, entities, edges, max_iterations)
        linked, found, sizes, edge_rows = seed_side_links(spark, docs, entities, edges, max_iterations)
        assert linked == expected
        assert driver_side(docs, entities, edges, max_iterations) == (found, sizes, edge_rows)
        assert sum(map(len, expected.values())) > 25  # the worlds do link names, through several rounds
        assert max(i for links in expected.values() for _, i in links.values()) >= 2
        assert len(found) < sum(len(entities[n]) for _, names in docs.values() for n in names)


def test_segment_document_rebases_anchor_spans():
    text = "First one.\n  Second [[x]] here. Third."
    plain, links = marked(text)
    (row,) = segment_document(
        {
            "doc_id": "d",
            "title": "T",
            "text": plain,
            "links": [{"start": s, "end": e, "target": t} for s, e, t in links],
        }
    )
    assert row["sentences"] == ["First one.", "Second x here.", "Third."]
    (anchor,) = row["anchors"]
    assert anchor["sent_idx"] == 1
    assert row["sentences"][1][anchor["start"] : anchor["end"]] == "x"
    assert row["candidates"] == []  # no name filter: no names looked for


def find_names(
    sentences: list[str], aliases: list[str], anchors=(), fold_case=False, ner=None
) -> list[tuple[int, str, str]]:
    """The Spark path of name finding run in plain Python on one document made of ``sentences`` (one
    a line) with ``anchors`` (sentence index, start, end): the candidates of ``segment_document``,
    the exact check, the longest per sentence. Returns (sentence index, text found, name key)."""
    keys = {name_key(alias) for alias in aliases}
    offsets = [sum(len(s) + 1 for s in sentences[:i]) for i in range(len(sentences))]
    links = [{"start": offsets[i] + s, "end": offsets[i] + e, "target": "X"} for i, s, e in anchors]
    document = {"doc_id": "d", "title": "T", "text": "\n".join(sentences), "links": links}
    (row,) = segment_document(document, name_filter(sorted(keys)), fold_case, ner)
    assert row["sentences"] == sentences
    found = defaultdict(list)
    for candidate in row["candidates"]:
        if candidate["name"] in keys:
            found[candidate["sent_idx"]].append(candidate)
    names = []
    for sent_idx, occurrences in sorted(found.items()):
        for name in longest_names({"doc_id": "d", "sent_idx": sent_idx, "found": occurrences}):
            names.append((sent_idx, sentences[sent_idx][name["start"] : name["end"]], name["name"]))
    return names


def phrase_matcher_names(sentences: list[str], aliases: list[str]) -> list[tuple[int, str]]:
    """The reference: spaCy's PhraseMatcher on ORTH, longest non-overlapping matches."""
    matcher = PhraseMatcher(nlp().vocab, attr="ORTH")
    for alias in aliases:
        matcher.add(alias, [nlp().make_doc(alias)])
    names = []
    for sent_idx, doc in enumerate(nlp().tokenizer.pipe(sentences)):
        spans = filter_spans([doc[start:end] for _, start, end in matcher(doc)])
        names += [(sent_idx, span.text) for span in sorted(spans, key=lambda span: span.start)]
    return names


def test_longest_names_keep_the_longest_then_leftmost_of_overlapping_occurrences():
    """Against the rule checked on every kept span (what ``longest_names`` did before it checked only
    the neighbours): random nested and overlapping occurrences, as a Chinese sentence has."""
    import random

    def reference(found):
        chosen = []
        for f in sorted(found, key=lambda f: (-f["n_tokens"], f["start"], f["name"])):
            if all(f["end"] <= c["start"] or c["end"] <= f["start"] for c in chosen):
                chosen.append(f)
        return [(c["start"], c["end"], c["name"]) for c in sorted(chosen, key=lambda c: c["start"])]

    rng = random.Random(0)
    for _ in range(2000):
        found = []
        for _ in range(rng.randint(0, 25)):
            start, length, n_tokens = rng.randint(0, 30), rng.randint(1, 8), rng.randint(1, 5)
            found.append({"start": start, "end": start + length, "n_tokens": n_tokens, "name": rng.choice("aAb")})
        kept = longest_names({"doc_id": "d", "sent_idx": 0, "found": found})
        assert [(n["start"], n["end"], n["name"]) for n in kept] == reference(found)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_candidate_names_are_every_ngram_that_is_a_name(language):
    """Against the definition, on random texts, names, anchors and casing: the candidates of
    ``candidate_names`` that are names (the exact check) are every token n-gram inside one
    sentence, touching no anchor, whose key (its tokens joined by one space) is a name, or with
    ``fold_case`` whose lower case is one (then that key), each once; in English (tokens one space
    apart or not) and Chinese (one token per character, nested names)."""
    import random

    from pelt.linking.names import candidate_names

    rng = random.Random(7)
    if language == "zh":
        vocabulary, joiners = list("北京市大学上海人。，"), ["", "", "", "", " ", "\n"]
    else:
        vocabulary = ["New", "York", "new", "york", "City", "the", "A", "a", "IL-6", "U.S.", "Paris", ".", ","]
        joiners = [" ", " ", " ", "  ", "\n", ""]
    for _ in range(60):
        text = "".join(rng.choice(vocabulary) + rng.choice(joiners) for _ in range(rng.randint(0, 60)))
        phrases = [
            "".join(rng.choice(vocabulary) + rng.choice(joiners[:4]) for _ in range(rng.randint(1, 4)))
            for _ in range(8)
        ]
        names = {name_key(phrase, language) for phrase in phrases} - {""}
        anchor_starts = rng.sample(range(len(text)), min(2, len(text)))
        blocked = sorted((b, min(b + rng.randint(1, 6), len(text))) for b in anchor_starts)
        tokens = tokenize(text, language)
        spans = sentence_spans(text, tokens)
        words = np.flatnonzero(~tokens.is_space).tolist()
        starts, ends = tokens.start.tolist(), tokens.end.tolist()
        for fold_case in (False, True):
            expected = set()
            for sent_idx, (s_start, s_end) in enumerate(spans):
                inside = [i for i in words if s_start <= starts[i] and ends[i] <= s_end]
                for a in range(len(inside)):
                    for b in range(a, len(inside)):
                        if any(starts[inside[b]] < b_end and b_start < ends[inside[b]] for b_start, b_end in blocked):
                            break
                        key = " ".join(text[starts[i] : ends[i]] for i in inside[a : b + 1])
                        span = (sent_idx, starts[inside[a]] - s_start, ends[inside[b]] - s_start, b - a + 1)
                        if key in names:
                            expected.add((*span, key))
                        if fold_case and key.lower() in names:
                            expected.add((*span, key.lower()))
            found = [
                (c["sent_idx"], c["start"], c["end"], c["n_tokens"], c["name"])
                for c in candidate_names(text, tokens, spans, name_filter(sorted(names)), blocked, fold_case)
            ]
            assert len(found) == len(set(found))
            assert {c for c in found if c[4] in names} == expected, (text, names, blocked, fold_case)


def test_names_match_spacys_phrase_matcher():
    # "root" and "dep" are spaCy symbols: their token ids are small numbers, not string hashes.
    aliases = ["New York", "New York City", "York", "City Hall", "U.S.", "IL-6", "Paris", "the Who", "A", "root", "dep"]
    sentences = [
        "New York City Hall is not new york.",
        "Parisian York and Paris, U.S. hosts the Who.",
        "IL-6 and IL-6R; A a A.",
        "Nothing here.",
        "The root dep.",
    ]
    found = [(sent_idx, text) for sent_idx, text, _ in find_names(sentences, aliases)]
    assert found[-2:] == [(4, "root"), (4, "dep")]
    assert found == phrase_matcher_names(sentences, aliases)
    assert found[:2] == [(0, "New York City"), (1, "York")]


def test_names_on_real_articles_equal_the_phrase_matchers(wikipedia_sample_articles):
    """On real articles, with every anchor text and title of the sample as an alias: the names of
    ``segment_document`` (+ exact check + longest) are the PhraseMatcher's matches on the same
    tokens, outside anchors, inside one sentence, longest first."""
    aliases = {title for title, _, _ in wikipedia_sample_articles}
    aliases |= {normalize_alias(text[a.start : a.end]) for _, text, links in wikipedia_sample_articles for a in links}
    keys = {name_key(alias) for alias in aliases} - {""}
    bloom = name_filter(sorted(keys))
    matcher = PhraseMatcher(nlp().vocab, attr="ORTH")
    matcher.add("name", [nlp().make_doc(alias) for alias in sorted(aliases) if name_key(alias)])
    total = 0
    for title, text, links in wikipedia_sample_articles[:15]:
        row = {"doc_id": title, "title": title, "text": text, "links": [vars(link) for link in links]}
        (segment,) = segment_document(row, bloom)
        found = defaultdict(list)
        for candidate in segment["candidates"]:
            if candidate["name"] in keys:
                found[candidate["sent_idx"]].append(candidate)
        ours = {
            (n["sent_idx"], n["start"], n["end"])
            for sent_idx, cands in found.items()
            for n in longest_names({"doc_id": title, "sent_idx": sent_idx, "found": cands})
        }
        sentences = sentence_spans(text, tokenize(text))
        anchors = [(start, end) for start, end, _ in valid_anchors(text, row["links"])[0]]
        matches = defaultdict(list)  # sentence -> the spans matched in it (all in its paragraph's doc)
        offset = {}
        for p_start, p_end in paragraphs(text):
            doc = nlp().tokenizer(text[p_start:p_end])
            for _, first, last in matcher(doc):
                span = doc[first:last]
                start, end = p_start + span.start_char, p_start + span.end_char
                inside = [i for i, (s_start, s_end) in enumerate(sentences) if s_start <= start and end <= s_end]
                if inside and not any(start < a_end and a_start < end for a_start, a_end in anchors):
                    matches[inside[0]].append(span)
                    offset[inside[0]] = p_start - sentences[inside[0]][0]
        reference = {
            (sent_idx, offset[sent_idx] + span.start_char, offset[sent_idx] + span.end_char)
            for sent_idx, spans in matches.items()
            for span in filter_spans(spans)
        }
        assert ours == reference, title
        total += len(ours)
    assert total > 2000


def test_lowercase_names_match_any_casing_when_folding():
    aliases = ["hbv", "child syndrome", "hepatitis B", "Paris", "apple", "Apple"]
    sentences = ["HBV and Hbv cause Hepatitis B; hepatitis b.", "CHILD syndrome in paris and Paris.", "Apple, APPLE."]
    assert find_names(sentences, aliases, fold_case=True) == [
        (0, "HBV", "hbv"),
        (0, "Hbv", "hbv"),
        (1, "CHILD syndrome", "child syndrome"),
        (1, "Paris", "Paris"),  # a name with capitals matches only as written
        (2, "Apple", "Apple"),  # as written wins over folded
        (2, "APPLE", "apple"),
    ]
    assert find_names(sentences, aliases) == [(1, "Paris", "Paris"), (2, "Apple", "Apple")]


def test_an_ner_model_keeps_only_recognised_names(tmp_path):
    """A real spaCy pipeline from disk (an entity ruler: no statistical model can be downloaded here)."""
    pipeline = spacy.blank("en")
    pipeline.add_pipe("entity_ruler").add_patterns(
        [{"label": "GPE", "pattern": "New York"}, {"label": "GPE", "pattern": "Paris"}]
    )
    pipeline.to_disk(tmp_path / "ner")
    ner = ner_pipeline(str(tmp_path / "ner"))
    sentences = ["New York and Paris and York.", "York, New York City."]
    aliases = ["New York", "New York City", "York", "Paris"]
    assert find_names(sentences, aliases, ner=ner) == [
        (0, "New York", "New York"),
        (0, "Paris", "Paris"),
        (1, "New York", "New York"),  # "New York City" is not an entity the pipeline recognises
    ]
    assert len(find_names(sentences, aliases)) == 5  # without NER: York twice and New York City too
    spacy.blank("en").to_disk(tmp_path / "blank")
    with pytest.raises(ValueError, match="no ner or entity_ruler"):
        ner_pipeline(str(tmp_path / "blank"))


def test_names_never_overlap_anchors():
    anchor = (0, 4, 8)  # "York" of "New York"
    assert find_names(["New York and York."], ["New York", "York"], [anchor]) == [(0, "York", "York")]


def test_bloom_filter_has_no_false_negatives_and_few_false_positives():
    bloom = BloomFilter.for_items(2000, error_rate=0.01)
    members = np.arange(2000, dtype=np.uint64) * np.uint64(7919)
    bloom.add(members)
    assert bloom.contains(members).all()
    assert bloom.contains(members + np.uint64(1)).sum() < 100
    halves = BloomFilter(bloom.n_bits, bloom.n_hashes), BloomFilter(bloom.n_bits, bloom.n_hashes)
    halves[0].add(members[::2])
    halves[1].add(members[1::2])
    assert np.array_equal(halves[0].union(halves[1]).bits, bloom.bits)
    with pytest.raises(ValueError, match="different sizes"):
        bloom.union(BloomFilter(bloom.n_bits + 8, bloom.n_hashes))


def test_bloom_filter_answers_by_every_bit_of_a_key_in_few_keys_and_many():
    """A key is in the filter when all its k bits are set, whether the keys past the first bit are
    read one bit at a time (many) or all their bits at once (up to 4,096): the same answers as
    reading each bit of each key, on keys of which a third are members."""
    bloom = BloomFilter.for_items(20_000, error_rate=0.05)
    rng = np.random.default_rng(5)
    members = rng.integers(0, 2**63, 20_000, dtype=np.uint64)
    bloom.add(members)
    for size in (10, 3_000, 30_000):
        keys = np.concatenate((members[: size // 3], rng.integers(0, 2**63, size - size // 3, dtype=np.uint64)))
        steps = BloomFilter._steps(keys)
        every_bit = np.ones(len(keys), dtype=bool)
        for i in range(bloom.n_hashes):
            pos = (keys + np.uint64(i) * steps) % np.uint64(bloom.n_bits)
            every_bit &= (bloom.bits[pos // np.uint64(8)] >> (pos % np.uint64(8)).astype(np.uint8)) & 1 == 1
        assert np.array_equal(bloom.contains(keys), every_bit), size
        false_positives = every_bit[size // 3 :].sum()
        assert every_bit[: size // 3].all() and false_positives < 0.2 * size and (false_positives or size < 100)


def test_link_by_string(spark, tmp_path):
    rows = [
        (
            "p1",
            "Paper 1",
            "Interleukin 6 (IL-6) rises in sepsis. ILLNESS is not IL-6.\nAspirin and aspirin. Sepsis.",
            [],
        ),
        ("p2", "Paper 2", "Cold is a name of two entities. IL-6 again.", []),
    ]
    spark.createDataFrame(rows, DOCUMENTS_DDL).write.parquet(str(tmp_path / "documents"))
    names = {"Q1": ["IL-6", "Interleukin 6"], "Q2": ["Aspirin"], "Q3": ["Cold"], "Q4": ["Cold"], "Q5": ["sepsis"]}
    counts = link_by_string(spark, str(tmp_path / "documents"), names, str(tmp_path / "mentions"))
    found = {
        (r["doc_id"], r["sent_idx"], r["sentence"][r["start"] : r["end"]], r["entity_id"], r["method"])
        for r in spark.read.parquet(str(tmp_path / "mentions")).collect()
    }
    assert found == {
        ("p1", 0, "Interleukin 6", "Q1", "string"),
        ("p1", 0, "IL-6", "Q1", "string"),
        ("p1", 0, "sepsis", "Q5", "string"),
        ("p1", 1, "IL-6", "Q1", "string"),
        ("p1", 2, "Aspirin", "Q2", "string"),  # "Aspirin" has a capital: "aspirin" is not it
        ("p1", 3, "Sepsis", "Q5", "string"),  # "sepsis" is all lower case: any casing
        ("p2", 1, "IL-6", "Q1", "string"),
    }
    assert counts["names_ambiguous"] == 1
    assert counts["mentions_string"] == 7
    ruler = spacy.blank("en")
    ruler.add_pipe("entity_ruler").add_patterns([{"label": "GENE", "pattern": "IL-6"}])
    ruler.to_disk(tmp_path / "ner")
    link_by_string(
        spark, str(tmp_path / "documents"), names, str(tmp_path / "ner_mentions"), ner_model=str(tmp_path / "ner")
    )
    recognised = {r["entity_id"] for r in spark.read.parquet(str(tmp_path / "ner_mentions")).collect()}
    assert recognised == {"Q1"}  # only "IL-6" is an entity the pipeline recognises


def test_a_huge_page_goes_through_parse_segment_and_linking_whole(spark, tmp_path):
    """A 2.3 M-character article (25,000 paragraphs: two links and a plain name in each) is parsed,
    segmented and linked like any other: every anchor placed, every plain name linked, no skip."""
    paragraph = "[[Corvel]] is near [[Westmarch|the march]]; {{convert|3|km}} of '''roads'''. Corvel grew.\n\n"
    pages = {"Huge": paragraph * 25_000, "Corvel": "A town in [[Westmarch]].", "Westmarch": "A march."}
    xml = "".join(
        f"<page><title>{title}</title><ns>0</ns><id>{i}</id><revision><text>{escape(text)}</text></revision></page>"
        for i, (title, text) in enumerate(pages.items(), start=1)
    )
    dump = tmp_path / "huge-pages-articles.xml.bz2"
    dump.write_bytes(bz2.compress(f"<mediawiki>{xml}</mediawiki>".encode()))
    assert len(pages["Huge"]) > 2_000_000
    corpus = build_wikipedia_corpus(spark, [str(dump)], str(tmp_path / "documents"), str(tmp_path / "pages"))
    assert corpus["articles"] == 3 and not any(k.startswith("skipped") and v for k, v in corpus.items())
    counts = link_wikipedia(
        spark,
        str(tmp_path / "documents"),
        str(tmp_path / "pages"),
        str(tmp_path / "aliases"),
        str(tmp_path / "mentions"),
    )
    assert counts["sentences"] == 2 * 25_000 + 2
    assert counts["mentions_anchor"] == 2 * 25_000 + 1
    assert counts["anchors_crossing_sentence"] == 0
    mentions = spark.read.parquet(str(tmp_path / "mentions"))
    heuristic = mentions.filter("method = 'heuristic'").groupBy("doc_id", "entity_id").count().collect()
    assert [(row["entity_id"], row["count"]) for row in heuristic] == [("Corvel", 25_000)]
