"""The pre-registered replication's analysis (benchmarks/preregistered/analyse.py) on runs laid out as
its driver lays them out, from the demo's recorded summaries (benchmarks/demo-results/, the real
files' format): a pass is what the plan says, a broken table fails, a seed not run is listed."""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path

import pytest
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks" / "preregistered"))
import analyse  # noqa: E402
import readme as splicer  # noqa: E402

RECORDED = REPO / "benchmarks" / "demo-results"


def _lay_out(runs: Path, seed: int, edit=None) -> None:
    for readout in analyse.READOUTS:
        summary = runs / f"prereg{seed}-{readout}" / "results" / "eval" / "summary"
        summary.mkdir(parents=True)
        for name in ("lama.csv", "fewrel.csv", "wiki80.csv"):
            shutil.copy(RECORDED / name, summary / name)
            if edit:
                edit(summary / name)


def _swap_variants(path: Path, a: str = "pelt", b: str = "permuted") -> None:
    """A broken table: pelt's numbers are the permuted control's and the other way round."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for row in rows:
        row["variant"] = {a: b, b: a}.get(row["variant"], row["variant"])
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_the_recorded_demo_run_passes_where_its_numbers_say(tmp_path):
    _lay_out(tmp_path, 48)
    table, pending = analyse.rows(tmp_path, seeds=(48, 49))
    assert pending == [49]
    got = {(r["claim"], r["readout"]): r for r in table}
    # One row per claim and readout: LAMA once (the mask), fine-tuning at both readouts.
    assert len(table) == 2 + 6 * 2
    rare = got[("lama_rare", "probe")]
    assert (rare["baseline"], rare["pelt"], rare["random"]) == (7.1, 45.48, 4.52)
    assert rare["passed"]
    # FewRel 1.0 5-1: 49.23 -> 57.2, permuted 43.62, random 43.84: +8.0 >= 3 and above both.
    assert got[("fewrel1_5_1", "markers")]["passed"]
    # LAMA [50,100) is not a claim; [10,50): 80.47 -> 87.01 with random 84.39: passes.
    assert got[("lama_frequent", "probe")]["passed"]


def test_a_table_swapped_with_its_permuted_control_fails_every_claim(tmp_path):
    _lay_out(tmp_path, 48, edit=_swap_variants)
    table, _ = analyse.rows(tmp_path, seeds=(48,))
    assert table and not any(r["passed"] for r in table)


@pytest.mark.parametrize(
    ("values", "target", "expected"),
    [
        ({"baseline": 50, "pelt": 53, "permuted": 49, "random": 50, "swapped": 60}, 3.0, True),
        ({"baseline": 50, "pelt": 52.9, "permuted": 49, "random": 50, "swapped": 60}, 3.0, False),  # short of target
        ({"baseline": 50, "pelt": 54, "permuted": 54.5, "random": 50, "swapped": 60}, 3.0, False),  # a control above
        ({"baseline": 50, "pelt": 50, "permuted": 40, "random": 40, "swapped": 40}, 0.0, False),  # no gain
        ({"baseline": 50, "pelt": 50.1, "permuted": 40, "random": 40, "swapped": 40}, 0.0, True),
    ],
)
def test_a_seed_passes_on_target_and_controls(values, target, expected):
    claim = analyse.Claim("c", "fewrel", "fewrel1", "5-1", target, 2.3, "c")
    assert analyse.passed(claim, values) is expected


def test_the_interval_is_students_t_over_seeds():
    mean, low, high = analyse.interval([1.0, 2.0, 3.0])
    assert mean == 2.0 and high - mean == pytest.approx(4.303 / 3**0.5)  # t(2) = 4.303, sd 1, n 3
    assert analyse.interval([5.0]) == (5.0, 5.0, 5.0)


def test_the_summary_reads_the_verdict_only_when_every_seed_ran(tmp_path):
    _lay_out(tmp_path, 48)
    table, pending = analyse.rows(tmp_path, seeds=(48,))
    interim = analyse.summary_markdown(table, [49])
    assert "(pending)" in interim and "| yes |" not in interim and "Not yet run: seeds 49." in interim
    final = analyse.summary_markdown(table, [])
    assert "final" in final and "(pending)" not in final
    # The paper's readout comes before this project's on every fine-tuning claim.
    for claim in ("FewRel 1.0 5-way 1-shot", "Wiki80, 1 % of the training data"):
        lines = [line for line in final.splitlines() if line.startswith(f"| {claim} |")]
        assert "markers (the paper's)" in lines[0] and "both (this project's)" in lines[1]


def test_check_claims_passes_the_recorded_run_and_fails_a_broken_table(tmp_path, capsys):
    import check_claims

    assert check_claims.main([str(RECORDED)]) == 0
    out = capsys.readouterr().out
    assert "8 of 8 measured claims pass" in out and "fewrel1_5_1" in out and "read at both" in out
    _lay_out(tmp_path, 48, edit=_swap_variants)
    assert check_claims.main([str(tmp_path / "prereg48-markers" / "results" / "eval" / "summary")]) == 1
    assert "FAIL          lama_rare" in capsys.readouterr().out


def test_check_claims_says_what_a_run_did_not_measure(tmp_path, capsys):
    import check_claims

    (tmp_path / "wiki80.csv").write_text(
        "".join(line for line in (RECORDED / "wiki80.csv").open() if ",1%," not in line and ",10%," not in line)
    )
    assert check_claims.main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "not measured  wiki80_1" in out and "not measured  lama_rare" in out and "1 of 1 measured" in out
    assert check_claims.main([str(tmp_path / "nothing")]) == 2


def test_the_readme_shows_the_replications_summary_as_written():
    """The README's first results table is analyse.py's summary.md, word for word: a rerun of the
    analysis that changes it changes both, or this fails."""
    readme = (REPO / "README.md").read_text()
    block = readme[readme.index(splicer.START) + len(splicer.START) : readme.index(splicer.END)]
    assert block == (REPO / "benchmarks" / "preregistered" / "summary.md").read_text()
    assert readme.index("<!-- summary.md -->") < readme.index("| measured (%) |")  # before the example run's


def _summary_rows() -> dict[tuple[str, str], list[str]]:
    """The summary's table rows, by claim and readout, as lists of cells."""
    return {
        (cells[1], cells[2]): cells
        for line in (REPO / "benchmarks" / "preregistered" / "summary.md").read_text().splitlines()
        if line.startswith("| ") and len(cells := [c.strip() for c in line.split("|")]) > 10
    }


def test_the_readmes_sentence_on_the_markers_quotes_the_summary():
    """Under the example run's table, read at ``both``, a sentence says what the paper's markers
    give: the pre-registered gains (pelt - baseline) at the markers, from the summary (it once
    quoted a development seed's run that no record kept)."""
    readme = " ".join((REPO / "README.md").read_text().split())
    rows = _summary_rows()

    def gain(claim: str) -> str:
        return rows[(claim, "markers (the paper's)")][6].split()[0]

    fewrel1 = [gain(f"FewRel 1.0 {n}-way 1-shot") for n in (5, 10)]
    said = (
        f"FewRel 1.0 {fewrel1[0]} and {fewrel1[1]}, FewRel 2.0 {gain('FewRel 2.0 5-way 1-shot')}, "
        f"Wiki80 1 % {gain('Wiki80, 1 % of the training data')}): fine-tuning carries the kind"
    )
    assert f"the pre-registered models above gain less ({said}" in readme, said


def test_the_readmes_verdict_sentence_says_what_the_summary_says():
    """The sentence above the table, written by hand, quotes the summary: each gain and count it
    names is in the summary's row for that claim and readout, and the claims it calls failing fail."""
    readme = (REPO / "README.md").read_text()
    verdict = " ".join(readme[readme.index("**The verdict**") : readme.index(splicer.START)].split())
    rows = _summary_rows()
    markers, probe = "markers (the paper's)", "the mask (LAMA)"
    fewrel1 = [rows[(f"FewRel 1.0 {n}-way 1-shot", markers)] for n in (5, 10)]
    wiki80_1, rare, known = (
        rows[("Wiki80, 1 % of the training data", markers)],
        rows[("LAMA T-REx rare subjects `[0,10)`, P@1 per fact", probe)],
        rows[("LAMA T-REx known subjects `[10,50)`, P@1 per fact", probe)],
    )
    for row in (*fewrel1, wiki80_1, known):
        assert row[10] == "**no**", row
    assert rare[10] == "yes" and all(
        rows[(claim, readout)][10] == "yes" for claim, readout in rows if "both" in readout
    )
    said = [
        (f"({fewrel1[0][6].split()[0]} and {fewrel1[1][6].split()[0]} points, {fewrel1[0][5].split()[0]} seeds of 10)"),
        f"Wiki80 1 % ({wiki80_1[6].split()[0]})",
        f"(+{rare[6].split()[0].lstrip('+')})",
        f"({known[6].split()[0]}, {known[5].split()[0]} seed of 10) about as the random control does "
        f"({known[8].split()[0]})",
    ]
    for words in said:
        assert words in verdict, (words, verdict)
    summary = (REPO / "benchmarks" / "preregistered" / "summary.md").read_text()
    assert "trend is reversed at both readouts" in verdict and summary.count("**does not hold**") == 2


def test_check_claims_does_not_guess_a_readout_a_summary_did_not_record(tmp_path, capsys):
    """A summary written before summaries named the readout: none is guessed (the demo read at both)."""
    import check_claims

    with (RECORDED / "fewrel.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    with (tmp_path / "fewrel.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, [k for k in rows[0] if k != "read_at"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    check_claims.main([str(tmp_path)])
    out = capsys.readouterr().out
    assert "fewrel1_5_1" in out and "readout not recorded" in out and "read at" not in out
