"""Shared fixtures: one SparkSession for the whole run, and the real data samples (tests/real_data.py)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import real_data

# Tiny random RoBERTa / BERT / BART masked LMs, built once per session (tests/tiny_models.py), and
# the demo workflow run once per session (tests/demo_run.py).
pytest_plugins = ["tiny_models", "demo_run"]

REPO = Path(__file__).resolve().parents[1]
# Fixtures that cost minutes: a test that needs one, even through another fixture, is `slow`.
SLOW_FIXTURES = {"finished", "spark"}


# The files with tests that read the demo's run (fixture `finished`, which `make test`'s two workers
# share: tests/demo_run.py). The first group goes whole to one worker, first: it runs the demo
# while the other worker runs the files that need no demo run, largest first. The two files of
# workflow runs on copies of the demo's come last, one to each worker as it frees up. Checked at
# collection.
DEMO_RUN_FILES = (
    "tests/unit/test_logs.py",
    "tests/workflow/test_docs_examples.py",
    "tests/workflow/test_effect.py",
    "tests/workflow/test_workflow.py",
)
DEMO_RUN_LAST = (
    "tests/workflow/test_operations.py",
    "tests/workflow/test_reruns.py",
)


def _file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tests that need the demo's full run or the Spark session `slow` (`make check` leaves
    them out), and order the files as the workers should take them (above)."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if SLOW_FIXTURES & fixtures:
            item.add_marker(pytest.mark.slow)
        if "finished" in fixtures and _file_of(item.nodeid) not in DEMO_RUN_FILES + DEMO_RUN_LAST:
            raise pytest.UsageError(
                f"{item.nodeid} uses the demo's run: add its file to DEMO_RUN_FILES or DEMO_RUN_LAST"
            )
    size = Counter(_file_of(item.nodeid) for item in items)

    def place(item: pytest.Item) -> tuple[int, int]:
        name = _file_of(item.nodeid)
        if name in DEMO_RUN_FILES:
            return 0, 0
        if name in DEMO_RUN_LAST:
            return 2, DEMO_RUN_LAST.index(name)
        return 1, -size[name]

    items.sort(key=place)


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """Whole files to each worker in the order of ``pytest_collection_modifyitems``, the demo run's
    first files as one (pytest 9's node ids defeat xdist's own ``--dist loadgroup``, which appends the
    group to a private attribute pytest no longer reads)."""
    from xdist.scheduler import LoadScopeScheduling

    class DemoRunFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "demo run" if _file_of(nodeid) in DEMO_RUN_FILES else _file_of(nodeid)

    config.option.loadscopereorder = False  # xdist would order the files by their number of tests
    return DemoRunFirst(config, log)


@pytest.fixture(scope="session", autouse=True)
def private_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The user's cache (table sidecars, verification stamps: pelt.table.format) in a temp folder for the
    whole session, the workflow runs the tests start included: the tests leave nothing in ~/.cache."""
    cache = tmp_path_factory.mktemp("xdg_cache")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    return cache


@pytest.fixture(scope="session")
def shared_data() -> Iterator[Path]:
    """The folder of the real data samples (tests/real_data.py: ``$PELT_TEST_DATA``, ``../shared/data``, or
    the user's cache, filled from the files' pinned public sources). Where no source gives them, every
    test that needs them fails with one line saying what is missing and how to get it: a failure, not
    a skip, so that a run without the data cannot pass for a run of every test. While it is in use, a
    test that opens a file of the folder that tests/real_data.tsv does not list fails, since a machine
    without ../shared/data would not have it."""
    files = real_data.read_manifest()
    try:
        root = real_data.locate(files)
    except real_data.MissingTestData as err:  # pytest.fail's, with the line alone (not chained to err)
        raise pytest.fail.Exception(str(err), pytrace=False) from None
    with real_data.guard(root, files):
        yield root


@pytest.fixture(scope="session")
def wikipedia_sample_articles(shared_data: Path) -> list[tuple[str, str, list]]:
    """(title, plain text, anchors) of every article of the real dump sample."""
    from pelt.corpus.wikipedia.dump import iter_dump_pages
    from pelt.corpus.wikipedia.wikitext import wikitext_to_plain

    (dump,) = (shared_data / "wikipedia_dump_sample").glob("*.bz2")
    pages = [p for p in iter_dump_pages(dump) if p.ns == 0 and p.redirect_to is None]
    return [(page.title, *wikitext_to_plain(page.text)) for page in pages]


def demo_java_options() -> str:
    """The JVM options of the demo's config (``spark.java_options``): the tests' Spark runs small
    jobs like the demo's."""
    import yaml

    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())["spark"]["java_options"]


@pytest.fixture(scope="session")
def spark():
    """The single SparkSession of the test session (the JVM starts once)."""
    from pelt.spark import get_spark

    session = get_spark(
        master="local[2]",
        app_name="pelt-tests",
        driver_memory="2g",
        shuffle_partitions=4,
        java_options=demo_java_options(),
    )
    yield session
    session.stop()
