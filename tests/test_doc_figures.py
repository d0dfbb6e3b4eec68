"""The figures the manual quotes are the ones the code gives: each is recomputed here
from the code it describes, so a change to one fails until the page says the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spatialstale.study import Study, study_seeds, study_tasks
from spatialstale.study._estimate import per_model, plan
from spatialstale.study._prices import CACHING

DOCS = Path(__file__).resolve().parents[1] / "docs"


def _number(text: str) -> int:
    return int(text.replace(",", ""))


@pytest.mark.slow  # the dry run of the whole 50-seed matrix
def test_the_paper_matrix_calls_per_model_are_as_stated() -> None:
    page = (DOCS / "performance.md").read_text()
    stated = re.search(r"The paper's full matrix is about ([\d,]+) calls per model", page)
    assert stated is not None
    study = Study(("openai/gpt-4o",), study_tasks(seeds=study_seeds(None, 50)), log_dir="unused")
    [(calls, _)] = per_model(plan(study)).values()
    # "about": stated to the nearest thousand
    assert round(calls.calls, -3) == _number(stated.group(1))


def test_the_cache_minimums_are_the_dry_runs() -> None:
    page = (DOCS / "performance.md").read_text()
    table = page.split("| provider | minimum cacheable prefix | notes |", 1)[1].split("\n\n", 1)[0]
    stated: dict[str, set[int]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip(" |").split(" | ")]
        provider = cells[0].strip("`/")
        stated[provider] = {_number(n) for n in re.findall(r"\b\d,\d{3}\b", cells[1])}
    known = {c.provider for c in CACHING}
    for provider in known:
        # each provider's minimums, and its 128-token step where it has one
        minimums = {c.rule.minimum for c in CACHING if c.provider == provider}
        assert stated[provider] == minimums, provider
    # the sentence that names the minimums says nothing the table does not
    sentence = page.split("OpenAI's and Anthropic's caches start at", 1)[1].split(".", 1)[0]
    assert {_number(n) for n in re.findall(r"\b\d,\d{3}\b", sentence)} <= {c.rule.minimum for c in CACHING}
