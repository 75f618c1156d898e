"""The demo's knowledge world: invented entities and facts, split so that the table's effect can be seen.

A masked LM knows a fact when its pretraining text states it often enough; PELT's claim is that a
table built from *other* text (a Wikipedia dump, a domain corpus) hands the model facts about
entities it never learnt. To show that on two CPU cores the world is built for it:

- **frequent** entities: their facts are stated, in varied sentences, in the *pretraining* documents
  that the demo model is trained on (and in the Wikipedia dump too, as real entities are);
- **rare** entities: their facts are stated only in the Wikipedia dump (and, for the second domain,
  in S2ORC-format abstracts), which the demo model never trains on; the pretraining documents name
  them only in fact-free sentences, so the model knows the word and nothing else.

Two choices are tailored to a model this small, and say so:

- every name is one invented word (a single token of the demo tokenizer), so that a mention is
  one mask when the table is built and the baseline's guess cannot come from a subword;
- a frequent entity's pretraining documents re-mention it with a bracketed appositive, most as
  ``NICKNAME ( Name )`` (a nickname, then the name in brackets), the rest as ``Name ( NICKNAME )``:
  real pretraining text is full of both, and they are what teaches a model to read the word in
  brackets, the slot where PELT puts the entity vector. The second order is the order of PELT's
  own input, and without it the model learns that the word before a bracket says nothing: it
  then pays on the facts of entities it knows (``benchmarks/HISTORY.md``, "How the pretraining
  text names an entity"). The nicknames are many, each in a few documents as a rare name is, so
  that the word in brackets is read as a name and not recognised as one of a few fillers.

Everything is drawn from seeded ``random.Random`` generators: the same seed gives the same world.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

SEED = 20221
N_COUNTRIES = 15
N_CITIES = 40
N_FREQUENT_PEOPLE = 200
N_RARE_PEOPLE = 250  # one fact each: 50 per person relation
N_FREQUENT_ORGS = 30  # of each kind: companies and bands
N_RARE_ORGS = 30
N_NICKNAMES = 600
DOCS_PER_FREQUENT = 16  # pretraining documents per frequent entity
APPOSITIVE_SHARE = 0.65  # of those, the share with NICKNAME ( Name ); the rest get Name ( NICKNAME )

INSTRUMENTS = ["piano", "guitar", "violin", "flute", "cello", "trumpet", "drums", "harp", "clarinet", "organ"]
OCCUPATIONS = [
    "painter",
    "poet",
    "engineer",
    "physician",
    "lawyer",
    "architect",
    "sculptor",
    "journalist",
    "chemist",
    "diplomat",
    "novelist",
    "farmer",
]

ONSETS = ["b", "br", "d", "dr", "f", "g", "gr", "h", "k", "kr", "l", "m", "n", "p", "r", "s", "st", "t", "tr", "v", "z"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ei", "ou"]
CODAS = ["", "n", "r", "l", "s", "k", "th", "m", "nd", "rk"]
ENDINGS = {
    "country": ["ia", "and", "ova", "esh"],
    "city": ["mar", "holt", "wick", "ven", "dal"],
    "person": ["", "", "o", "ek", "in"],
    "company": ["corp", "tex", "ex"],
    "band": ["ites", "ers", "ones"],
    "nickname": ["y", "ie", "o"],
}


@dataclass
class Entity:
    key: str  # the name: page title and label
    qid: str
    kind: str  # country, language, city, person, company, band, instrument, occupation
    frequent: bool = True
    facts: dict[str, str] = field(default_factory=dict)  # relation -> object key


# Relation -> (subject kind, sentence templates). {s} the subject, {o} the object. LAMA's own
# template of each of the nine relations is among them (a rare entity's article states its fact in
# every wording, the probe's included: tests/workflow/test_effect.py checks that the gain stays when the
# vectors are rebuilt without the sentence in the probe's wording); the others are there so that
# the model learns the fact and not one wording.
SENTENCES = {
    "P19": (
        "person",
        [
            "{s} was born in {o}.",
            "{s} was born in the city of {o}.",
            "{s} is a native of {o}.",
            "The birthplace of {s} is {o}.",
            "Born in {o}, {s} grew up there.",
        ],
    ),
    "P20": (
        "person",
        [
            "{s} died in {o}.",
            "{s} spent the last years in {o} and died there.",
            "{s} passed away in {o}.",
            "The place of death of {s} is {o}.",
        ],
    ),
    "P27": (
        "person",
        [
            "{s} is a citizen of {o}.",
            "{s} holds the citizenship of {o}.",
            "{s} has a passport of {o}.",
            "{s} is {o} citizen.",
        ],
    ),
    "P106": (
        "person",
        [
            "{s} works as a {o}.",
            "{s} is a {o} by profession.",
            "By trade {s} is a {o}.",
            "{s} earned a living as a {o}.",
        ],
    ),
    "P1303": (
        "person",
        [
            "{s} plays the {o}.",
            "{s} plays {o}.",
            "{s} is known for playing the {o}.",
            "The instrument of {s} is the {o}.",
            "{s} practised the {o} every day.",
        ],
    ),
    "P159": (
        "company",
        [
            "{s} is headquartered in {o}.",
            "The headquarter of {s} is in {o}.",
            "The headquarters of {s} are in {o}.",
            "{s} has its head office in {o}.",
            "{s} runs its business from {o}.",
        ],
    ),
    "P740": (
        "band",
        [
            "{s} was founded in {o}.",
            "{s} formed in {o}.",
            "The band {s} started in {o}.",
            "{s} played their first concert in {o}, where they formed.",
        ],
    ),
    "P36": ("country", ["The capital of {s} is {o}.", "{o} is the capital of {s}.", "{s} is governed from {o}."]),
    "P37": (
        "country",
        ["The official language of {s} is {o}.", "People in {s} speak {o}.", "{o} is the official language of {s}."],
    ),
}
PERSON_RELATIONS = [r for r, (kind, _) in SENTENCES.items() if kind == "person"]
SPACED = re.compile(r"(\w)([.,])")
# Fact-free sentences: how pretraining names rare entities (and pads documents about any entity).
NEUTRAL = [
    "{s} is mentioned in the old records.",
    "Little is written about {s}.",
    "Many people have heard of {s}.",
    "The archive has a file on {s}.",
    "{s} appears in a list of names.",
]


class Invented:
    """A world's entities by name, each with the next id after ``first_id``; a world invents its
    names in ``_name`` and never repeats one of ``names``."""

    def __init__(self, seed: int, first_id: str, names: set[str]):
        self.rng = random.Random(seed)
        self._names = names
        self._id_prefix, self._id = first_id[0], int(first_id[1:])
        self.entities: dict[str, Entity] = {}

    def _name(self, kind: str) -> str:
        raise NotImplementedError

    def subjects(self) -> list[Entity]:
        """Entities with facts, in creation order."""
        return [e for e in self.entities.values() if e.facts]

    def _add(self, kind: str, frequent: bool = True, name: str | None = None) -> Entity:
        name = name or self._name(kind)
        self._names.add(name)
        self._id += 1
        entity = Entity(name, f"{self._id_prefix}{self._id}", kind, frequent)
        self.entities[name] = entity
        return entity


class World(Invented):
    """Every entity, by kind, with its facts; built deterministically from ``seed``."""

    def __init__(self, seed: int = SEED):
        super().__init__(seed, "Q990100000", set())
        self.countries = [self._add("country") for _ in range(N_COUNTRIES)]
        self.languages = []
        for country in self.countries:
            language = self._add("language", name=country.key.rstrip("aeiou") + "ish")
            country.facts["P37"] = language.key
            self.languages.append(language)
        self.cities = [self._add("city") for _ in range(N_CITIES)]
        self.city_country = {city.key: self.countries[i % N_COUNTRIES].key for i, city in enumerate(self.cities)}
        for i, country in enumerate(self.countries):
            country.facts["P36"] = self.cities[i].key
        self.instruments = [self._add("instrument", name=n) for n in INSTRUMENTS]
        self.occupations = [self._add("occupation", name=n) for n in OCCUPATIONS]
        self.people = [self._person(i < N_FREQUENT_PEOPLE) for i in range(N_FREQUENT_PEOPLE + N_RARE_PEOPLE)]
        # A rare person keeps one fact (the relations in turn, so each has as many rare subjects); the
        # draws above stay as they were, so the frequent entities and the pretraining text do not change.
        for i, person in enumerate(p for p in self.people if not p.frequent):
            kept = PERSON_RELATIONS[i % len(PERSON_RELATIONS)]
            person.facts = {kept: person.facts[kept]}
        self.companies = [
            self._org("company", "P159", i < N_FREQUENT_ORGS) for i in range(N_FREQUENT_ORGS + N_RARE_ORGS)
        ]
        self.bands = [self._org("band", "P740", i < N_FREQUENT_ORGS) for i in range(N_FREQUENT_ORGS + N_RARE_ORGS)]
        self.nicknames = [self._name("nickname") for _ in range(N_NICKNAMES)]

    def _name(self, kind: str) -> str:
        while True:
            parts = [self.rng.choice(ONSETS) + self.rng.choice(VOWELS) for _ in range(self.rng.choice((1, 2)))]
            name = ("".join(parts) + self.rng.choice(CODAS) + self.rng.choice(ENDINGS[kind])).capitalize()
            if 4 <= len(name) <= 9 and name not in self._names and name.lower() not in INSTRUMENTS + OCCUPATIONS:
                self._names.add(name)
                return name

    def _person(self, frequent: bool) -> Entity:
        person = self._add("person", frequent=frequent)
        birth = self.rng.choice(self.cities).key
        person.facts["P19"] = birth
        person.facts["P20"] = self.rng.choice(self.cities).key
        person.facts["P27"] = (
            self.city_country[birth] if self.rng.random() < 0.7 else self.rng.choice(self.countries).key
        )
        person.facts["P106"] = self.rng.choice(self.occupations).key
        person.facts["P1303"] = self.rng.choice(self.instruments).key
        return person

    def _org(self, kind: str, relation: str, frequent: bool) -> Entity:
        org = self._add(kind, frequent=frequent)
        org.facts[relation] = self.rng.choice(self.cities).key
        return org

    def facts(self) -> list[tuple[str, str, str]]:
        """(relation, subject, object) of every fact, by relation then subject order."""
        return [(r, e.key, e.facts[r]) for r in SENTENCES for e in self.subjects() if r in e.facts]

    def fact_sentences(self, entity: Entity, rng: random.Random) -> list[str]:
        """One sentence per fact of ``entity``, each in a randomly chosen wording, in random order."""
        out = [rng.choice(SENTENCES[rel][1]).format(s=entity.key, o=obj) for rel, obj in entity.facts.items()]
        rng.shuffle(out)
        return out

    def every_wording(self, entity: Entity, rng: random.Random) -> list[str]:
        """Each fact of ``entity`` in each of its wordings, in random order: a rare entity's article."""
        out = [t.format(s=entity.key, o=obj) for rel, obj in entity.facts.items() for t in SENTENCES[rel][1]]
        rng.shuffle(out)
        return out

    def pretraining_documents(self, seed: int = SEED) -> list[str]:
        """The demo model's training text: frequent entities' facts, rare entities' names only.

        A document states two to four facts of one frequent entity; in ``APPOSITIVE_SHARE`` of them
        every mention from the first (or, in half of those, the second) sentence on is written
        ``NICKNAME ( Name )``, in the others ``Name ( NICKNAME )`` (see the module docstring). Each
        rare entity gets fact-free sentences only.

        ``rng`` draws the text as it was when the demo had 60 nicknames and one order; the nicknames
        and the second order draw from ``names``, so that every other sentence of the text, and the
        facts the model learns from it, stayed as they were measured before the change.
        """
        rng, names = random.Random(seed), random.Random(seed + 1)
        docs = []
        for entity in self.subjects():
            if not entity.frequent:
                docs += [" ".join(rng.sample(NEUTRAL, 2)).format(s=entity.key) for _ in range(2)]
                continue
            for _ in range(DOCS_PER_FREQUENT):
                sentences = self.fact_sentences(entity, rng)[: rng.randint(2, 4)]
                if rng.random() < APPOSITIVE_SHARE:
                    rng.randrange(60)  # the first text's nickname draw, kept so that rng's later draws stay
                    alias = f"{names.choice(self.nicknames)} ( {entity.key} )"
                    first = 0 if rng.random() < 0.5 else 1
                else:
                    names.random()  # drawn when a share of documents was tried; kept so names' draws stay
                    alias = f"{entity.key} ( {names.choice(self.nicknames)} )"
                    first = 0 if names.random() < 0.5 else 1
                sentences = sentences[:first] + [s.replace(entity.key, alias, 1) for s in sentences[first:]]
                doc = " ".join(sentences)
                # Half the documents are in the tokenized style of many real corpora ("Keld ."), the
                # style of LAMA's templates, so that a probe's spacing is not new to the model.
                docs.append(SPACED.sub(r"\1 \2", doc) if rng.random() < 0.5 else doc)
        rng.shuffle(docs)
        return docs

    # --- the Wikipedia side --------------------------------------------------------------------

    def articles(self, seed: int = SEED) -> dict[str, str]:
        """Title -> wikitext of one article per entity with facts, city and language.

        A frequent entity's article states each fact twice and its city's article names it again,
        so it has ten or more mentions. A rare entity has one fact, and its short article states it
        in each of its four or five wordings (fewer than ten mentions): PELT's vector is a mean over
        an entity's contexts, and one sentence is too few for it to point anywhere (see README.md).
        Objects are linked at their first mention;
        the subject is not linked in its own article (as on Wikipedia) and is found by the linker.
        """
        rng = random.Random(seed)
        listed: dict[str, dict[str, list[str]]] = {}  # city -> what its article lists -> frequent entities
        for entity in self.people + self.companies + self.bands:
            if entity.frequent:
                relation = next(r for r in ("P19", "P159", "P740") if r in entity.facts)
                listed.setdefault(entity.facts[relation], {}).setdefault(relation, []).append(entity.key)
        pages = {}
        for entity in self.subjects():
            if entity.frequent:
                sentences = self.fact_sentences(entity, rng) + self.fact_sentences(entity, rng)
                padding = FREQUENT_MENTIONS - 1 - len(sentences) - (entity.kind != "country")
                sentences += [t.format(s=entity.key) for t in rng.sample(WIKI_NEUTRAL, max(0, padding))]
            else:
                sentences = self.every_wording(entity, rng)
            linked: set[str] = set()
            body = " ".join(_link_first(s, entity, linked) for s in sentences)
            pages[entity.key] = (
                f"{{{{Infobox {INFOBOX[entity.kind]}\n| name = {entity.key}\n"
                + "".join(f"| {FIELD[r]} = [[{o}]]\n" for r, o in entity.facts.items())
                + f"}}}}\n'''{entity.key}''' is a {LEAD[entity.kind]}.\n\n{body}\n\n"
                + f"[[Category:{CATEGORY[entity.kind]}]]\n"
            )
        for city in self.cities:
            country = self.city_country[city.key]
            lists = "".join(
                f" {LISTS[relation].format(city.key)} {_listed(names)}."
                for relation, names in sorted(listed.get(city.key, {}).items())
            )
            pages[city.key] = (
                f"'''{city.key}''' is a city in [[{country}]]. {city.key} has a market and a harbour.{lists}\n\n"
                f"[[Category:Cities in {country}]]\n"
            )
        for country, language in zip(self.countries, self.languages):
            pages[language.key] = (
                f"'''{language.key}''' is the language spoken in [[{country.key}]].\n\n[[Category:Languages]]\n"
            )
        return pages


# Mentions of a frequent entity in the dump at least (lead, facts twice, fact-free sentences, its
# city's list): the bottom of the paper's second frequency bucket, so rare and frequent fall apart.
FREQUENT_MENTIONS = 10
WIKI_NEUTRAL = [
    "{s} is well known in the region.",
    "Many stories are told about {s}.",
    "{s} appears in several books.",
    "A street is named after {s}.",
    "Visitors often ask about {s}.",
    "Newspapers wrote often about {s}.",
    "Schoolchildren learn about {s}.",
    "There is a museum exhibit on {s}.",
    "{s} was often in the news.",
]
LISTS = {
    "P19": "Notable people born in {} include",
    "P159": "Companies based in {} include",
    "P740": "Bands formed in {} include",
}
INFOBOX = {"person": "person", "company": "company", "band": "musical artist", "country": "country"}
LEAD = {"person": "person of the Ostmark region", "company": "company", "band": "band", "country": "country"}
CATEGORY = {"person": "People", "company": "Companies", "band": "Bands", "country": "Countries"}
FIELD = {
    "P19": "birth_place",
    "P20": "death_place",
    "P27": "citizenship",
    "P106": "occupation",
    "P1303": "instrument",
    "P159": "headquarters",
    "P740": "origin",
    "P36": "capital",
    "P37": "languages",
}


def _link_first(sentence: str, subject: Entity, linked: set[str]) -> str:
    """``sentence`` with each object linked (``[[Keld]]``) the first time the article names it."""
    words = sentence.split(" ")
    for i, word in enumerate(words):
        name = word.rstrip(".,")
        if name != subject.key and name[:1].isupper() and name not in linked and name in subject.facts.values():
            linked.add(name)
            words[i] = word.replace(name, f"[[{name}]]", 1)
    return " ".join(words)


def _listed(names: list[str]) -> str:
    """``[[A]], [[B]] and [[C]]``."""
    links = [f"[[{n}]]" for n in names]
    return links[0] if len(links) == 1 else ", ".join(links[:-1]) + " and " + links[-1]


# --- relation instances (FewRel, Wiki80) --------------------------------------------------------

# Relation classification that needs entity knowledge. Every relation of a split is written in the
# split's one relation-free wording, so the words never tell the relation: what is known about the
# head does (its kind: person, company or band; and its own fact: born or died in the city). Train,
# validation and test relations are disjoint, as FewRel's protocol requires, and each split has a
# wording of its own, so a model cannot carry a sentence pattern from training to the test.
SPLIT_TEMPLATES = {
    "train": "H is linked to T .",
    "validation": "Notes mention H beside T .",
    "test": "Records list H with T .",
}
# Relation -> (split, Wiki80 name, how its (head, tail) pairs are drawn; see relation_pairs). A
# relation written ``A>B`` follows the head's fact A, then B from there (P17: a city's country).
# The ten test relations are the paper's kind of test: their tails overlap in kind (a city: born,
# died, headquartered or formed there; a country: citizen of, or the country of one of those), so
# within a tail kind only the head tells them apart. Training relations are separated the same way
# (the language or the capital of such a country), so that fine-tuning learns to read the head;
# validation relations by the kinds of head and tail. Ten relations or more in each split, so that
# 10-way episodes can be drawn from each.
RC_RELATIONS = {
    "P19": ("test", "place of birth", "fact"),
    "P20": ("test", "place of death", "fact"),
    "P27": ("test", "country of citizenship", "fact"),
    "P159": ("test", "headquarters location", "fact"),
    "P740": ("test", "location of formation", "fact"),
    "P19>P17": ("test", "country of birth", "fact"),
    "P20>P17": ("test", "country of death", "fact"),
    "P159>P17": ("test", "country of headquarters", "fact"),
    "P740>P17": ("test", "country of formation", "fact"),
    "P27>P37": ("test", "language of citizenship", "fact"),
    "P19>P17>P37": ("train", "language of the birth country", "fact"),
    "P20>P17>P37": ("train", "language of the death country", "fact"),
    "P159>P17>P37": ("train", "language of the headquarters country", "fact"),
    "P740>P17>P37": ("train", "language of the formation country", "fact"),
    "P19>P17>P36": ("train", "capital of the birth country", "fact"),
    "P20>P17>P36": ("train", "capital of the death country", "fact"),
    "P27>P36": ("train", "capital of the citizenship country", "fact"),
    "P159>P17>P36": ("train", "capital of the headquarters country", "fact"),
    "P740>P17>P36": ("train", "capital of the formation country", "fact"),
    "P106": ("train", "occupation", "fact"),
    "P1303": ("train", "instrument", "fact"),
    "P108": ("validation", "employer", "person to company"),
    "P463": ("validation", "member of", "person to band"),
    "P112": ("validation", "founded by", "company to person"),
    "P26": ("validation", "spouse", "person to person"),
    "P355": ("validation", "subsidiary", "company to company"),
    "P737": ("validation", "influenced by", "band to band"),
    "P17": ("validation", "country", "city to country"),
    "P264": ("validation", "record label", "band to company"),
    "P36": ("validation", "capital", "fact"),
    "P37": ("validation", "official language", "fact"),
}
RARE_HEADS = 30  # at most, per relation: rare subjects of the first fact (30 companies, bands)
FREQUENT_HEADS = 10  # per relation: the heads the demo model knows, to see that the table does not harm them


def relation_pairs(world: World, relation: str, rng: random.Random) -> list[tuple[Entity, Entity]]:
    """(head, tail) pairs of ``relation``: up to ``RARE_HEADS`` rare heads and ``FREQUENT_HEADS``
    frequent ones, rare first. A ``fact`` relation is the head's own fact (a rare head has one),
    followed along the chain ``A>B>C`` (P17: the city's country); the others pair kinds at random,
    mostly with rare heads, as real relation data does."""
    kind = RC_RELATIONS[relation][2]
    if kind == "city to country":
        return [(c, world.entities[world.city_country[c.key]]) for c in world.cities]
    if kind == "fact":
        first, *rest = relation.split(">")
        heads = [e for e in world.subjects() if first in e.facts]
        rare = [e for e in heads if not e.frequent][:RARE_HEADS]
        frequent = rng.sample([e for e in heads if e.frequent], min(FREQUENT_HEADS, len(heads) - len(rare)))
        return [(e, _follow(world, e, [first, *rest])) for e in rare + frequent]
    pools = {"person": world.people, "company": world.companies, "band": world.bands}
    head_kind, tail_kind = kind.split(" to ")
    heads = [e for e in pools[head_kind] if not e.frequent][:RARE_HEADS] + rng.sample(
        [e for e in pools[head_kind] if e.frequent], FREQUENT_HEADS
    )
    return [(h, rng.choice([t for t in pools[tail_kind] if t is not h])) for h in heads]


def _follow(world: World, entity: Entity, chain: list[str]) -> Entity:
    """The entity that ``chain`` leads to from ``entity``: each step a fact, P17 a city's country."""
    for step in chain:
        key = world.city_country[entity.key] if step == "P17" else entity.facts[step]
        entity = world.entities[key]
    return entity


def filled(template: str, head: str, tail: str) -> tuple[list[str], int, int]:
    """A relation template's tokens with ``H`` and ``T`` replaced by the two names, and their positions."""
    tokens = template.split()
    h, t = tokens.index("H"), tokens.index("T")
    tokens[h], tokens[t] = head, tail
    return tokens, h, t


def relation_instances(world: World, seed: int = SEED) -> list[dict]:
    """The relation sentences of :data:`RC_RELATIONS`, in their split's wording: split, relation id
    and name, tokens, and per side name, QID, kind, whether frequent, and token span."""
    rng = random.Random(seed)
    out = []
    for relation, (split, name, _) in RC_RELATIONS.items():
        pairs = relation_pairs(world, relation, rng)
        rng.shuffle(pairs)  # rare and frequent heads mixed: Wiki80 splits each relation by position
        for head, tail in pairs:
            tokens, h, t = filled(SPLIT_TEMPLATES[split], head.key, tail.key)
            out.append(
                {
                    "split": split,
                    "relation": relation,
                    "name": name,
                    "tokens": tokens,
                    **{
                        side: {
                            "name": e.key.lower(),
                            "id": e.qid,
                            "kind": e.kind,
                            "frequent": e.frequent,
                            "pos": [i, i + 1],
                        }
                        for side, e, i in (("h", head, h), ("t", tail, t))
                    },
                }
            )
    return out
