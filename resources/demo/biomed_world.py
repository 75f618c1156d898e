"""The demo's second domain: invented drugs, genes, microbes and diseases, for FewRel 2.0.

The paper's domain adaptation (FewRel 2.0) tests a model fine-tuned on Wikipedia relations on
biomedical sentences, with a table built from biomedical text. A general model such as RoBERTa has
read the domain's *general* words (drug, gene, bacterium, patients, treat) but few of its
entities; the table is what tells it that a rare name is a drug that targets some gene. This
module builds that situation as ``world.py`` builds the Wikipedia one:

- the pretraining text states the facts of the **frequent** entities in the domain's general
  words ("Lovarinib is a drug used to treat kelmosis.") and names the **rare** ones only in
  fact-free sentences, so the model knows the words and nothing about the rare names;
- the S2ORC-format abstracts, the corpus the biomedical table is built from, state every entity's
  facts (a rare entity's in each wording, in one abstract: fewer than ten mentions; a frequent
  entity's in three abstracts);
- the FewRel 2.0 test pairs are written in one relation-free wording that no abstract contains,
  heads mostly rare, and three of the five relations share a disease tail, so that within them
  only the head's kind (drug, gene, microbe) tells the relation.

Names are lower-case invented words, as drug and disease names are in abstracts, so that FewRel
2.0's lower-cased tokens are the words the model read. Everything is drawn from one seeded
``random.Random``: the same seed gives the same world.
"""

from __future__ import annotations

import random

from world import APPOSITIVE_SHARE, NEUTRAL, ONSETS, SPACED, VOWELS, Entity, Invented, filled

SEED = 20222
ORGANS = ["lung", "liver", "kidney", "heart", "skin", "brain", "stomach", "pancreas", "bone", "colon", "blood", "eye"]
# kind -> (frequent, rare) entities
COUNTS = {"disease": (20, 50), "gene": (15, 50), "microbe": (10, 50), "drug": (24, 50)}
ENDINGS = {
    "disease": ["osis", "itis", "emia", "oma"],
    "gene": ["in", "ase", "ogen"],
    "microbe": ["bacter", "coccus", "ella"],
    "drug": ["inib", "umab", "azole", "opril"],
    "alias": ["", "a", "o"],
}
N_ALIASES = 30
DOCS_PER_FREQUENT = 8  # pretraining documents per frequent entity

# Relation -> (head kind, tail kind, FewRel 2.0 name, wordings). {s} the head, {o} the tail.
RELATIONS = {
    "treats": (
        "drug",
        "disease",
        "may_treat",
        [
            "{s} is a drug used to treat {o}.",
            "Patients with {o} are given {s}.",
            "The drug {s} is approved for {o}.",
            "{s} improves the symptoms of {o}.",
        ],
    ),
    "targets": (
        "drug",
        "gene",
        "has_target",
        [
            "{s} blocks the protein made by the gene {o}.",
            "The drug {s} acts on {o}.",
            "{s} binds the product of {o}.",
        ],
    ),
    "associated": (
        "gene",
        "disease",
        "gene_associated_with_disease",
        [
            "Mutations in the gene {s} cause {o}.",
            "The gene {s} is linked to {o}.",
            "Carriers of a faulty {s} gene often develop {o}.",
        ],
    ),
    "causes": (
        "microbe",
        "disease",
        "causative_agent_of",
        [
            "The bacterium {s} causes {o}.",
            "{o} is an infection with the bacterium {s}.",
            "Infection with {s} leads to {o}.",
        ],
    ),
    "site": (
        "disease",
        "organ",
        "is_primary_anatomic_site_of_disease",
        [
            "{s} is a disease of the {o}.",
            "{s} mainly affects the {o}.",
            "In {s} the {o} is damaged.",
        ],
    ),
}
TEST_TEMPLATE = "reports pair H with T ."  # every FewRel 2.0 relation in one relation-free wording
RARE_HEADS = 50  # per relation, at most
FREQUENT_HEADS = 10  # per relation: heads the demo model knows
STUDY = [
    "We reviewed the records of {n} patients.",
    "This study followed {n} adults for five years.",
    "Samples from {n} patients were analysed.",
    "We summarise the evidence from {n} cases.",
]
SURNAMES = ["Brekk", "Ferran", "Lind", "Orr", "Selva", "Marrow", "Quill", "Dahl", "Venn", "Osk", "Tarr", "Holm"]
FIRST_NAMES = ["Ilse", "Tomas", "Sara", "Jonas", "Viktor", "Anna", "Lucas", "Mira", "Emil", "Greta", "Oskar", "Lena"]
NAMES = (FIRST_NAMES, SURNAMES)
JOURNALS = ["Marren Medical Journal", "Annals of the Brennholm Institute", "Ostmark Journal of Medicine"]


class BiomedWorld(Invented):
    """Every biomedical entity, by kind, with its facts; built deterministically from ``seed``.

    ``taken`` are names used elsewhere (the Wikipedia world's), which this world must not reuse.
    """

    def __init__(self, taken: set[str], seed: int = SEED):
        super().__init__(seed, "C9910000", {n.lower() for n in taken})
        self.organs = [self._add("organ", True, name) for name in ORGANS]
        by_kind: dict[str, list[Entity]] = {}
        for kind, (frequent, rare) in COUNTS.items():
            by_kind[kind] = [self._add(kind, i < frequent) for i in range(frequent + rare)]
        self.diseases, self.genes, self.microbes, self.drugs = (by_kind[k] for k in COUNTS)
        known = {k: [e for e in by_kind.get(k, self.organs) if e.frequent] for k in ("disease", "gene", "organ")}
        # The known diseases fall into three groups that no two relations share (treatable, genetic,
        # infectious): an entity's facts then never tie it to another relation's entities.
        treatable, genetic, infectious = (known["disease"][i::3] for i in range(3))
        for disease in self.diseases:
            disease.facts["site"] = self.rng.choice(known["organ"]).key
        for gene in self.genes:
            gene.facts["associated"] = self.rng.choice(genetic).key
        for microbe in self.microbes:
            microbe.facts["causes"] = self.rng.choice(infectious).key
        for drug in self.drugs:
            drug.facts["treats"] = self.rng.choice(treatable).key
            drug.facts["targets"] = self.rng.choice(known["gene"]).key
        self.aliases = [self._name("alias") for _ in range(N_ALIASES)]  # drawn last: no fact changes

    def _name(self, kind: str) -> str:
        while True:
            parts = [self.rng.choice(ONSETS) + self.rng.choice(VOWELS) for _ in range(self.rng.choice((1, 2)))]
            name = "".join(parts) + self.rng.choice(ENDINGS[kind])
            if 5 <= len(name) <= 11 and name not in self._names:
                return name

    def _sentences(self, entity: Entity, rng: random.Random) -> list[str]:
        """Each fact of ``entity`` in each of its wordings, shuffled (not yet capitalised)."""
        out = [t.format(s=entity.key, o=obj) for rel, obj in entity.facts.items() for t in RELATIONS[rel][3]]
        rng.shuffle(out)
        return out

    def pretraining_documents(self, seed: int = SEED) -> list[str]:
        """The domain's share of the demo model's text: frequent entities' facts, rare names only."""
        rng = random.Random(seed)
        docs = []
        for entity in self.subjects():
            if not entity.frequent:
                docs += [
                    " ".join(_capitalised(t.format(s=entity.key)) for t in rng.sample(NEUTRAL, 2)) for _ in range(2)
                ]
                continue
            for _ in range(DOCS_PER_FREQUENT):
                sentences = rng.sample(self._sentences(entity, rng), rng.randint(2, 3))
                if rng.random() < APPOSITIVE_SHARE:  # as world.py's, here in an abbreviation's place
                    alias = f"{rng.choice(self.aliases)} ( {entity.key} )"
                    first = 0 if rng.random() < 0.5 else 1
                    sentences = sentences[:first] + [s.replace(entity.key, alias, 1) for s in sentences[first:]]
                doc = " ".join(map(_capitalised, sentences))
                docs.append(SPACED.sub(r"\1 \2", doc) if rng.random() < 0.5 else doc)
        rng.shuffle(docs)
        return docs

    def abstracts(self, seed: int = SEED) -> list[dict]:
        """S2ORC records (before the format's empty fields): one abstract per rare entity, stating its
        facts in each wording; three per frequent entity, so that it has ten mentions or more."""
        rng = random.Random(seed)
        papers = []
        for entity in self.subjects():
            for _ in range(3 if entity.frequent else 1):
                body = [_capitalised(s) for s in self._sentences(entity, rng)]
                body.insert(rng.randrange(len(body) + 1), rng.choice(STUDY).format(n=rng.randint(20, 900)))
                papers.append(
                    {
                        "paper_id": str(991000000 + len(papers)),
                        "title": f"A study of {entity.key}",
                        "authors": [f"{first} {last}" for first, last in zip(*(rng.sample(n, 2) for n in NAMES))],
                        "abstract": " ".join(body),
                        "year": rng.randint(2005, 2020),
                        "journal": rng.choice(JOURNALS),
                    }
                )
        return papers

    def test_instances(self, seed: int = SEED) -> list[dict]:
        """FewRel 2.0 test sentences: per relation up to ``RARE_HEADS`` rare and ``FREQUENT_HEADS``
        frequent heads, in :data:`TEST_TEMPLATE`, lower-cased as FewRel 2.0's are."""
        rng = random.Random(seed)
        out = []
        for relation, (head_kind, _, name, _) in RELATIONS.items():
            heads = [e for e in self.subjects() if e.kind == head_kind and relation in e.facts]
            rare = [e for e in heads if not e.frequent][:RARE_HEADS]
            frequent = rng.sample([e for e in heads if e.frequent], FREQUENT_HEADS)
            pairs = [(e, self.entities[e.facts[relation]]) for e in rare + frequent]
            rng.shuffle(pairs)
            for head, tail in pairs:
                tokens, h, t = filled(TEST_TEMPLATE, head.key, tail.key)
                out.append(
                    {
                        "relation": relation,
                        "name": name,
                        "tokens": tokens,
                        **{
                            side: {"name": e.key, "id": e.qid, "kind": e.kind, "pos": [i, i + 1]}
                            for side, e, i in (("h", head, h), ("t", tail, t))
                        },
                    }
                )
        return out


def _capitalised(sentence: str) -> str:
    return sentence[:1].upper() + sentence[1:]
