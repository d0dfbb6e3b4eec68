"""The manual holds together: over README.md and every docs/*.md, each relative link
(and its anchor) leads somewhere, each `-T name=...` names a parameter of a task, and
each path of the checkout a page names exists. The helpers read text, so the self-checks
at the end feed them broken pages and see them fail."""

from __future__ import annotations

import inspect
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from urllib.parse import unquote

import pytest

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.evals.perception import perception
from spatialstale.scorers import METRICS, metrics_markdown

ROOT = Path(__file__).resolve().parent.parent
PAGES = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
TASKS = (detection, navigation, perception)

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^()\s<>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
"""http:, https:, mailto:, s3: ...: not a file of the checkout."""
T_OPTION = re.compile(r"(?<![\w-])-T\s+['\"]?([A-Za-z_]\w*)=")
T_TABLE_HEADER = re.compile(r"^\s*\|\s*`-T`\s+parameter\s*\|")
CODE_NAME = re.compile(r"`([A-Za-z_]\w*)`")
CHECKOUT_PATH = re.compile(
    r"(?<![\w./:-])((?:env|protocol|solvers|scorers|evals|agents|study|report|llamacpp|benchmarks|tests|docs|\.ci)/[\w.*/-]*[\w*/])"
)
"""A path inside the checkout (``solvers/_settings.py``, ``env/data/v1/``), not a part
of a longer path or URL (``s3://bucket/report/x``)."""


def lines_outside_code(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of every line outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text without markup, lower case, spaces to
    '-', every other character but letters, digits, '-' and '_' dropped."""
    text = INLINE_CODE.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.strip().lower()
    return "".join("-" if c == " " else c for c in text if c.isalnum() or c in " -_")


def anchors(text: str) -> set[str]:
    """Every heading anchor of a page, repeated headings numbered as GitHub does."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in lines_outside_code(text):
        match = HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


@cache
def anchors_of(path: Path) -> frozenset[str]:
    return frozenset(anchors(path.read_text(encoding="utf-8")))


def link_problems(page: Path, text: str) -> list[str]:
    """Each relative link of ``text`` (the page ``page``) whose file or anchor is missing."""
    problems = []
    own = anchors(text)
    for number, line in lines_outside_code(text):
        prose = INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)
        for match in LINK.finditer(prose):
            target = match.group(1)
            if EXTERNAL.match(target):
                continue
            path_part, _, anchor = target.partition("#")
            where = f"{page.relative_to(ROOT)}:{number}: ({target})"
            if not path_part:
                if unquote(anchor) not in own:
                    problems.append(f"{where}: no heading of this page has the anchor #{anchor}")
                continue
            resolved = (page.parent / unquote(path_part)).resolve()
            if not resolved.exists():
                problems.append(f"{where}: {os.path.relpath(resolved, ROOT)} does not exist")
            elif anchor and resolved.suffix == ".md" and unquote(anchor) not in anchors_of(resolved):
                problems.append(f"{where}: no heading of {resolved.relative_to(ROOT)} has the anchor #{anchor}")
    return problems


def t_names(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, name)`` of every ``-T name=...`` (code blocks included) and of every
    name in the first column of a ``-T`` parameter table."""
    in_table = False
    for number, line in enumerate(text.splitlines(), 1):
        for match in T_OPTION.finditer(line):
            yield number, match.group(1)
        if T_TABLE_HEADER.match(line):
            in_table = True
            continue
        if in_table and not line.lstrip().startswith("|"):
            in_table = False
        if in_table and not re.match(r"^\s*\|[\s|:-]+\|\s*$", line):  # not the |---| rule
            for name in CODE_NAME.findall(line.split("|")[1]):
                yield number, name


@cache
def task_parameters() -> frozenset[str]:
    return frozenset(
        name
        for task in TASKS
        for name, param in inspect.signature(task).parameters.items()
        if param.kind is not inspect.Parameter.VAR_KEYWORD  # **unknown: names the task rejects
    )


def unknown_parameters(page: Path, text: str) -> list[str]:
    """Each ``-T`` name of ``text`` that no task takes, with where it stands."""
    # a page that writes an extension of its own (docs/extensions.md) names its axes too
    known = task_parameters() | set(re.findall(r"^    (\w+): \w+ = axis\(", text, re.MULTILINE))
    return [f"{page.relative_to(ROOT)}:{number}: -T {name}" for number, name in t_names(text) if name not in known]


def missing_paths(page: Path, text: str) -> list[str]:
    """Each path of the checkout that ``text`` names and that does not exist (a ``*``
    is a glob that must match something)."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        for match in CHECKOUT_PATH.finditer(line):
            path = match.group(1)
            exists = any(ROOT.glob(path.rstrip("/"))) if "*" in path else (ROOT / path).exists()
            if not exists:
                problems.append(f"{page.relative_to(ROOT)}:{number}: {path} does not exist")
    return problems


# --- the manual -------------------------------------------------------------------------


def test_the_pages_are_found() -> None:
    names = {page.name for page in PAGES}
    assert {"README.md", "index.md", "tasks.md", "development.md"} <= names


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    problems = link_problems(page, page.read_text(encoding="utf-8"))
    assert not problems, "broken links:\n" + "\n".join(problems)


def test_every_t_parameter_is_a_task_parameter() -> None:
    problems = [p for page in PAGES for p in unknown_parameters(page, page.read_text(encoding="utf-8"))]
    assert not problems, f"-T names no task takes (tasks take {', '.join(sorted(task_parameters()))}):\n" + "\n".join(
        problems
    )


def test_every_path_of_the_checkout_named_exists() -> None:
    problems = [p for page in PAGES for p in missing_paths(page, page.read_text(encoding="utf-8"))]
    assert not problems, "paths that do not exist:\n" + "\n".join(problems)


def test_every_docs_page_is_in_the_index_and_the_readme() -> None:
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for page in PAGES:
        if page.parent.name == "docs" and page.name != "index.md":
            assert f"({page.name}" in index, f"docs/index.md does not link {page.name}"
            assert f"(docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"


METRICS_BLOCK = re.compile(r"<!-- metrics of (\w+): [^\n]*-->\n(.*?)\n<!-- end of the metrics of \1 -->", re.DOTALL)


def metrics_tables(text: str) -> dict[str, str]:
    """Each task's generated metrics tables on a page, by task."""
    return {m.group(1): m.group(2) for m in METRICS_BLOCK.finditer(text)}


def test_the_metrics_tables_are_the_declarations() -> None:
    # the tables of docs/tasks.md#metrics are written from scorers/_rates.py; regenerate
    # a table with ``python -c "from spatialstale.scorers import metrics_markdown as m; print(m('detection'))"``
    tables = metrics_tables((ROOT / "docs" / "tasks.md").read_text(encoding="utf-8"))
    assert set(tables) == set(METRICS)
    for task, table in tables.items():
        assert table == metrics_markdown(task), f"docs/tasks.md's metrics of {task} differ from scorers/_rates.py"


# --- the checks can fail ------------------------------------------------------------------

FAKE = ROOT / "docs" / "fake.md"


def test_a_broken_link_is_reported() -> None:
    text = "\n".join(
        [
            "# A page",
            "[fine](tasks.md#parameters) [fine too](#a-page) [web](https://example.org/x) `[code](nowhere.md)`",
            "[no file](nowhere.md)",
            "[no anchor](tasks.md#no-such-heading)",
            "[no heading here](#nothing)",
            "```",
            "[in a code block](nowhere.md)",
            "```",
        ]
    )
    problems = link_problems(FAKE, text)
    assert [p.split(":")[1] for p in problems] == ["3", "4", "5"], problems


def test_anchors_follow_github() -> None:
    text = "# Fog (partial observability)\n## Detection (SPEC §6)\n## `-T` parameters\n## Notes\n## Notes"
    assert anchors(text) == {"fog-partial-observability", "detection-spec-6", "-t-parameters", "notes", "notes-1"}


def test_an_unknown_t_parameter_is_reported() -> None:
    text = "\n".join(
        [
            "inspect eval spatialstale/detection -T regime=L2 -T regim=L2",
            "| `-T` parameter | task |",
            "|---|---|",
            "| `modality` | both |",
            "| `audit_prompt`, `no_such_prompt` | |",
            "",
            "| `not_in_a_t_table` | x |",
        ]
    )
    assert unknown_parameters(FAKE, text) == ["docs/fake.md:1: -T regim", "docs/fake.md:5: -T no_such_prompt"]


def test_a_missing_path_is_reported() -> None:
    text = "`protocol/_settings.py`, `report/templates/*.md.j2`, s3://bucket/report/x and `analysis/_probe.py`\n"
    text += "`solvers/_no_such_module.py`"
    assert missing_paths(FAKE, text) == ["docs/fake.md:2: solvers/_no_such_module.py does not exist"]


def test_a_metrics_table_that_differs_from_the_declarations_is_found() -> None:
    page = (ROOT / "docs" / "tasks.md").read_text(encoding="utf-8")
    edited = page.replace("| `unanswered` | `judgments` |", "| `unanswered` | `tp` + `fp` + `fn` + `tn` |", 1)
    assert edited != page
    assert metrics_tables(edited)["detection"] != metrics_markdown("detection")
    assert metrics_tables(page)["navigation"] == metrics_markdown("navigation")
