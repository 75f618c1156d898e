"""The paper's heuristic (Algorithm 1): the candidates each document's seeds can reach, and the names they link.

The per-document loop runs in Python on what the document can ever need: its seeds, the
candidates Algorithm 1 can reach and the hyperlink edges it can test. An entity enters S' only
within ``max_iterations`` hops of a seed through the document's candidates, so the candidates
are generated from the seeds outwards, breadth first, instead of pairing each name of the
document with every entity of the name: the cost follows the documents' neighbourhoods, not the
names' ambiguity, which grows with the corpus, and the links are the same
(``candidate_pairs_unreachable`` counts the pairs never generated). Each (document, node) is
expanded the cheaper way, along its edges or by pairing it with the document's name-side
candidates, so a hub page with a million links never multiplies every document that links it.
The search runs in Spark, joins per level, only when the graph is too big to broadcast
(``SMALL_GRAPH_ROWS``); a smaller one (the demo, the real sample, the tests) is collected once
and each document searched in its Python worker, the same candidates without the dozens of
small Spark jobs of the levels.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial, reduce
from sys import intern
from typing import Any

from pyspark import Broadcast, StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from pelt.spark import map_rows

# The most hyperlink edges plus candidate (name, entity) pairs that the heuristic broadcasts to
# every Python worker (:class:`LinkGraph`, about 160 bytes a row there: some 16 MB, beside the
# 400-500 MB a linking worker peaks at); a larger graph is searched in Spark. The bound used
# (:func:`pelt.linking.link.link_wikipedia`) is about 4,000 rows on the demo, 64,000 on the real
# dump sample, 10^9 on enwiki.
SMALL_GRAPH_ROWS = 100_000

_LINKS_DDL = "doc_id string, name string, entity_id string, iteration int, candidates int, unreachable int"


def heuristic_links(
    seeds: set[str],
    candidates: Mapping[str, set[str]],
    adjacency: Mapping[str, set[str]],
    max_iterations: int,
) -> dict[str, tuple[str, int]]:
    """Algorithm 1 of the paper for one document.

    ``seeds``: the entities linked in the document (and its own); ``candidates``: name -> entities
    that carry it as an alias; ``adjacency``: candidate entity -> its hyperlink neighbours among the
    document's seeds and candidates (nothing else can ever be in S). Returns name -> (entity,
    iteration) for every name linked.
    """
    remaining = dict(candidates)
    frontier = set(seeds)
    linked: dict[str, tuple[str, int]] = {}
    for iteration in range(1, max_iterations + 1):
        if not frontier or not remaining:
            break
        reach = frontier | {entity for entity, neighbours in adjacency.items() if neighbours & frontier}
        new = {}
        for name, entities in remaining.items():
            hits = entities & reach
            if len(hits) == 1:
                new[name] = next(iter(hits))
        for name, entity in new.items():
            linked[name] = (entity, iteration)
            del remaining[name]
        frontier = set(new.values())
    return linked


def _document_links(
    doc_id: str,
    seeds: set[str],
    pairs: set[tuple[str, str]],
    edges: set[tuple[str, str]],
    size: int,
    max_iterations: int,
) -> list[dict[str, Any]]:
    """Algorithm 1 on one document's candidate (name, entity) ``pairs`` and (candidate, neighbour)
    ``edges``, as rows of ``_LINKS_DDL``; ``size``: the document's name-side candidate pairs."""
    candidates: dict[str, set[str]] = defaultdict(set)
    for name, entity in pairs:
        candidates[name].add(entity)
    adjacency: dict[str, set[str]] = defaultdict(set)
    for candidate, neighbour in edges:
        adjacency[candidate].add(neighbour)
    linked = heuristic_links(seeds, candidates, adjacency, max_iterations)
    # Iteration 0 (no name) carries the document's candidate pairs and the name-side pairs never
    # generated (unreachable): counted exactly, with no pass of its own.
    return [
        {
            "doc_id": doc_id,
            "name": None,
            "entity_id": None,
            "iteration": 0,
            "candidates": len(pairs),
            "unreachable": size - len(pairs),
        }
    ] + [
        {
            "doc_id": doc_id,
            "name": name,
            "entity_id": entity,
            "iteration": iteration,
            "candidates": 0,
            "unreachable": 0,
        }
        for name, (entity, iteration) in linked.items()
    ]


def _link_document(row: Mapping[str, Any], max_iterations: int) -> list[dict[str, Any]]:
    """Algorithm 1 on a document's candidates and edges generated in Spark (:func:`_reachable_candidates`)."""
    pairs = {(pair["name"], pair["entity_id"]) for pair in row["cands"] or []}
    edges = {(pair["c"], pair["n"]) for pair in row["adj"] or []}
    return _document_links(row["doc_id"], set(row["seeds"]), pairs, edges, row["size"], max_iterations)


@dataclass(frozen=True)
class LinkGraph:
    """The hyperlink graph and the candidates' names of a corpus small enough to be broadcast to
    every Python worker (:data:`SMALL_GRAPH_ROWS`), so each document's search runs there in one
    pass instead of as Spark jobs per level (:func:`reachable_candidates`).

    ``neighbours``: entity -> its hyperlink neighbours (both directions); ``entities``: name ->
    the entities it may link to; ``names``: entity -> the names it is a candidate of."""

    neighbours: Mapping[str, frozenset[str]]
    entities: Mapping[str, tuple[str, ...]]
    names: Mapping[str, tuple[str, ...]]

    @classmethod
    def from_pairs(cls, edges: Iterable[tuple[str, str]], name_entities: Iterable[tuple[str, str]]) -> LinkGraph:
        """From (c, n) edges, both directions listed, and (name, entity_id) candidate pairs. Each
        title is held once (interned): collected rows hold copies, which would also be pickled
        apart and take a third more of every worker's memory."""
        neighbours: dict[str, set[str]] = defaultdict(set)
        for c, n in edges:
            neighbours[intern(c)].add(intern(n))
        entities: dict[str, set[str]] = defaultdict(set)
        names: dict[str, set[str]] = defaultdict(set)
        for name, entity in name_entities:
            name, entity = intern(name), intern(entity)
            entities[name].add(entity)
            names[entity].add(name)
        return cls(
            {c: frozenset(ns) for c, ns in neighbours.items()},
            {name: tuple(sorted(es)) for name, es in entities.items()},
            {entity: tuple(sorted(ns)) for entity, ns in names.items()},
        )


def reachable_candidates(
    seeds: set[str], names: set[str], graph: LinkGraph, max_iterations: int
) -> tuple[set[tuple[str, str]], set[tuple[str, str]], int]:
    """One document's search of :func:`_reachable_candidates` in Python: its (name, entity)
    candidates, its (candidate, neighbour) edges and its name-side candidate count, the same sets.

    Breadth first from the seeds, each node expanded once, at its distance, the cheaper way (its
    neighbours, or the document's name-side pairs that are its edges: a hub is never listed in
    full per document); level 0 also keeps the seeds that are candidates themselves.
    """
    name_side = [(name, entity) for name in names for entity in graph.entities.get(name, ())]
    pairs: set[tuple[str, str]] = set()
    edges: set[tuple[str, str]] = set()
    known = set(seeds)
    frontier = known
    for level in range(max_iterations):
        reached: set[str] = set()
        for u in frontier:
            neighbours = graph.neighbours.get(u, frozenset())
            if len(neighbours) <= len(name_side):
                targets = neighbours | {u} if level == 0 else neighbours
                hits = [(name, c) for c in targets for name in graph.names.get(c, ()) if name in names]
            else:
                hits = [(name, c) for name, c in name_side if c in neighbours or (level == 0 and c == u)]
            for name, c in hits:
                pairs.add((name, c))
                reached.add(c)
                if c != u:
                    edges.add((c, u))
        if level + 1 == max_iterations:
            break
        frontier = reached - known
        if not frontier:
            break
        known |= frontier
    return pairs, edges, len(name_side)


def _link_small_document(
    row: Mapping[str, Any], graph: Broadcast[LinkGraph], max_iterations: int
) -> list[dict[str, Any]]:
    """Algorithm 1 on one document, its candidates searched over the broadcast ``graph``."""
    seeds = set(row["seeds"])
    pairs, edges, size = reachable_candidates(seeds, set(row["names"]), graph.value, max_iterations)
    return _document_links(row["doc_id"], seeds, pairs, edges, size, max_iterations)


def _undirected_edges(anchors: DataFrame, own: DataFrame) -> DataFrame:
    """Hyperlink graph as (c, n) pairs in both directions, without self-links."""
    links = (
        anchors.join(own.select("doc_id", F.col("entity_id").alias("src")), "doc_id")
        .select("src", F.col("entity_id").alias("dst"))
        .filter(F.col("src") != F.col("dst"))
    )
    return (
        links.select(F.col("src").alias("c"), F.col("dst").alias("n"))
        .unionByName(links.select(F.col("dst").alias("c"), F.col("src").alias("n")))
        .distinct()
    )


def _reachable_candidates(
    doc_names: DataFrame, name_entities: DataFrame, seeds: DataFrame, edges: DataFrame, max_iterations: int
) -> tuple[DataFrame, DataFrame, DataFrame, list[DataFrame]]:
    """The candidates Algorithm 1 can ever reach, generated from the seeds outwards.

    Returns (doc_id, name, entity_id) candidates, (doc_id, c, n) the edges between a candidate c
    and a node n it can be reached from, (doc_id, size) the name-side candidate count of each
    document (every entity of every name it contains: what was generated before), and the
    persisted frames, for the caller to unpersist once the links are computed.

    An entity enters S' in round i only when it is a seed or a hyperlink neighbour of an entity of
    S, and S holds the seeds, then the candidates linked in the round before; so it must be within
    ``max_iterations`` hops of a seed along a chain of the document's candidates. A candidate
    farther than that is never in S', never decides a uniqueness test and is dropped without
    changing any link (``tests/unit/linking/test_linking.py`` compares with all name-side candidates). Pairing
    each name of a document with every entity of the name instead costs the names' ambiguity,
    which grows with the corpus (a name gains entities as pages are added, on the replicated
    benchmark one per copy), while the seeds' neighbourhoods do not.

    The nodes are expanded breadth first, each once at its distance, up to ``max_iterations - 1``:
    the edges found are all that the rounds can test (a node in S in round i is within i - 1 hops).
    Expanding a node lists its neighbours and their names (``fanout``); a hub (a million links on
    enwiki) expanded in every document that links it would cost more than the name side, so each
    (document, node) takes the cheaper of expanding the node or pairing it with the document's
    name-side candidates (``size``) and keeping the pairs that are edges. Level 0 also keeps the
    seeds that are candidates themselves.
    """
    keep = StorageLevel.MEMORY_AND_DISK
    by_entity = name_entities.select("name", F.col("entity_id").alias("c"))
    per_entity = by_entity.groupBy("c").agg(F.count("*").alias("names"))
    per_name = by_entity.groupBy("name").agg(F.count("*").alias("entities"))
    size = doc_names.join(per_name, "name").groupBy("doc_id").agg(F.sum("entities").alias("size")).persist(keep)
    out_edges = edges.select(F.col("c").alias("u"), F.col("n").alias("c"))
    fanout = (
        out_edges.join(per_entity, "c", "left")
        .select("u", (1 + F.coalesce("names", F.lit(0))).alias("rows"))
        .unionByName(per_entity.select(F.col("c").alias("u"), F.col("names").alias("rows")))
        .groupBy("u")
        .agg(F.sum("rows").alias("fanout"))
        .persist(keep)
    )
    known = frontier = seeds.select("doc_id", F.col("node").alias("u")).distinct().persist(keep)
    persisted = [size, fanout, known]
    levels = []
    for level in range(max_iterations):
        routed = (
            frontier.join(size, "doc_id")
            .join(fanout, "u", "left")
            .select("doc_id", "u", (F.coalesce("fanout", F.lit(0)) <= F.col("size")).alias("expand"))
        )
        near = routed.filter("expand").select("doc_id", "u")
        reached = near.join(out_edges, "u")
        if level == 0:
            reached = reached.unionByName(near.select("doc_id", "u", F.col("u").alias("c")))
        by_node = reached.join(by_entity, "c").join(doc_names, ["doc_id", "name"], "left_semi")
        hubs = routed.filter(~F.col("expand")).select("doc_id", "u")
        name_side = doc_names.join(hubs.select("doc_id").distinct(), "doc_id", "left_semi").join(by_entity, "name")
        paired = hubs.join(name_side, "doc_id")
        if level == 0:
            edge = out_edges.withColumn("edge", F.lit(True))
            by_name = paired.join(edge, ["u", "c"], "left").filter(F.col("edge") | (F.col("u") == F.col("c")))
        else:
            by_name = paired.join(out_edges, ["u", "c"], "left_semi")
        # Checkpointed: a level's new nodes depend on the known ones twice (through the frontier
        # and directly), so without cutting the lineage the plans double per level, and the final
        # union of persisted (not checkpointed) levels ran the driver out of memory at 10 levels.
        hits = by_node.select("doc_id", "u", "name", "c").unionByName(by_name.select("doc_id", "u", "name", "c"))
        levels.append(hits.localCheckpoint())
        if level + 1 == max_iterations:
            break
        new = levels[-1].select("doc_id", F.col("c").alias("u")).distinct().join(known, ["doc_id", "u"], "left_anti")
        new = new.localCheckpoint()
        if new.isEmpty():
            break
        known, frontier = known.unionByName(new), new
    hits = reduce(DataFrame.unionByName, levels)
    candidates = hits.select("doc_id", "name", F.col("c").alias("entity_id")).distinct()
    adjacency = hits.filter(F.col("u") != F.col("c")).select("doc_id", "c", F.col("u").alias("n")).distinct()
    return candidates, adjacency, size, persisted


def link_names(
    names: DataFrame,
    anchors: DataFrame,
    own: DataFrame,
    name_entities: DataFrame,
    max_iterations: int,
    graph_rows: int,
) -> tuple[DataFrame, list[DataFrame | Broadcast[LinkGraph]]]:
    """(doc_id, name, entity_id, iteration, candidates, unreachable) for the names Algorithm 1
    links in each document, and what was persisted or broadcast meanwhile, for the caller to
    release; ``name_entities``: (name, entity_id), the entities each name key is an alias of;
    ``graph_rows``: a bound on the rows of the hyperlink edges and ``name_entities``.

    A graph of at most :data:`SMALL_GRAPH_ROWS` rows is collected once and broadcast, and each
    document's search runs in its Python worker (:func:`reachable_candidates`): the same candidates
    as the Spark search, without its jobs per level, which on a small corpus (the demo, the tests)
    cost far more than the search itself. A larger graph is searched in Spark
    (:func:`_reachable_candidates`).
    """
    seeds = anchors.select("doc_id", F.col("entity_id").alias("node")).unionByName(
        own.filter(F.col("entity_id").isNotNull()).select("doc_id", F.col("entity_id").alias("node"))
    )
    edges = _undirected_edges(anchors, own)
    if graph_rows <= SMALL_GRAPH_ROWS:
        graph = names.sparkSession.sparkContext.broadcast(_collect_graph(edges, name_entities))
        per_doc = (
            seeds.groupBy("doc_id")
            .agg(F.collect_set("node").alias("seeds"))
            .join(names.groupBy("doc_id").agg(F.collect_set("name").alias("names")), "doc_id")
        )
        link = partial(_link_small_document, graph=graph, max_iterations=max_iterations)
        return map_rows(per_doc, link, _LINKS_DDL), [graph]
    doc_names = names.select("doc_id", "name").distinct().persist(StorageLevel.MEMORY_AND_DISK)
    seeds = seeds.distinct().persist(StorageLevel.MEMORY_AND_DISK)
    edges = edges.persist(StorageLevel.MEMORY_AND_DISK)
    cands, adjacency, size, persisted = _reachable_candidates(doc_names, name_entities, seeds, edges, max_iterations)
    listed = cands.groupBy("doc_id").agg(F.collect_list(F.struct("name", "entity_id")).alias("cands"))
    per_doc = (
        seeds.groupBy("doc_id")
        .agg(F.collect_list("node").alias("seeds"))
        .join(size, "doc_id")
        .join(listed, "doc_id", "left")
        .join(adjacency.groupBy("doc_id").agg(F.collect_list(F.struct("c", "n")).alias("adj")), "doc_id", "left")
    )
    links = map_rows(per_doc, partial(_link_document, max_iterations=max_iterations), _LINKS_DDL)
    return links, [doc_names, seeds, edges, *persisted]


def _collect_graph(edges: DataFrame, name_entities: DataFrame) -> LinkGraph:
    """The (c, n) ``edges`` and (name, entity_id) ``name_entities`` on the driver, in one job."""
    rows = (
        edges.select(F.lit(True).alias("edge"), F.col("c").alias("a"), F.col("n").alias("b"))
        .unionByName(
            name_entities.select(F.lit(False).alias("edge"), F.col("name").alias("a"), F.col("entity_id").alias("b"))
        )
        .collect()
    )
    return LinkGraph.from_pairs(
        ((row["a"], row["b"]) for row in rows if row["edge"]), ((row["a"], row["b"]) for row in rows if not row["edge"])
    )
