"""``-T`` validators: custom prompts, the structured flag, and the one-line report."""

from __future__ import annotations

import pytest

from spatialstale.evals.detection import detection
from spatialstale.evals.navigation import navigation
from spatialstale.protocol import (
    DEFAULT_AUDIT_PROMPT,
    DEFAULT_NAVIGATE_PROMPT,
    DEFAULT_SELFVERIFY_PROMPT,
    TaskParameterError,
)
from spatialstale.protocol._errors import reported
from spatialstale.protocol._settings import boolean, prompt_text

BRACED = 'Grid {size}x{size}. Answer {"action": "UP"} or [{"memory_id": "mem_000", "is_stale": true}], {{size}} {0} {'


@pytest.mark.parametrize(
    "prompt", [BRACED, DEFAULT_AUDIT_PROMPT, DEFAULT_NAVIGATE_PROMPT, DEFAULT_SELFVERIFY_PROMPT, "x"]
)
def test_any_nonempty_text_is_a_prompt_and_passes_unchanged(prompt: str) -> None:
    assert prompt_text(prompt, "audit_prompt") == prompt


def test_a_prompt_split_at_its_commas_by_the_cli_is_joined_back() -> None:
    # `inspect eval -T audit_prompt=a, b,c` hands the task ["a", " b", "c"]
    assert prompt_text(["Say {size}", ' then {"a": 1}', "done"], "audit_prompt") == 'Say {size}, then {"a": 1},done'


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "audit_prompt must not be empty; got ''"),
        (" \n\t ", "audit_prompt must not be empty"),
        (None, "audit_prompt must not be empty"),  # -T audit_prompt=
        (42, "audit_prompt must be text; got 42"),
        (True, "audit_prompt must be text; got True"),
        ([], "audit_prompt must be text; got []"),
        (["a", 1], "audit_prompt must be text; got ['a', 1]"),
        ({"Answer": {"action": "UP"}}, "audit_prompt must be text; -T read it as a YAML mapping"),
    ],
)
def test_a_bad_prompt_is_one_line_naming_the_parameter(value: object, message: str) -> None:
    with pytest.raises(TaskParameterError) as error:
        prompt_text(value, "audit_prompt")
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_long_bad_value_is_shortened() -> None:
    with pytest.raises(TaskParameterError, match=r"got \(1, 1, .*\.\.\.$") as error:
        prompt_text((1,) * 500, "navigate_prompt")
    assert len(str(error.value)) < 120


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        ("true", True),
        ("False", False),
        ("YES", True),
        ("no", False),
        ("1", True),
        ("0", False),
        (" On ", True),
        ("off", False),
        (1, True),
        (0, False),
    ],
)
def test_structured_accepts_the_usual_spellings_of_a_flag(value: object, expected: bool) -> None:
    assert boolean(value, "structured") is expected


@pytest.mark.parametrize("value", ["maybe", "", "tru", "2", 2, -1, 1.0, None, ["true"], {"a": 1}])
def test_structured_rejects_anything_else_naming_the_choices(value: object) -> None:
    with pytest.raises(TaskParameterError, match=r"^structured must be one of true, false \(or yes/no, 1/0, on/off\)"):
        boolean(value, "structured")


def test_reported_prints_the_error_once_on_stderr_and_reraises(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(TaskParameterError), reported():
        boolean("maybe", "structured")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == ["structured must be one of true, false (or yes/no, 1/0, on/off); got 'maybe'"]


def test_reported_leaves_other_errors_alone(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(KeyError), reported():
        raise KeyError("not ours")
    assert capsys.readouterr().err == ""


def test_a_task_parameter_error_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="structured must be one of"):
        detection(structured="maybe", seeds="4810")


def test_tasks_record_structured_and_pass_prompts_through_unchanged() -> None:
    task = detection(seeds="4810", structured="yes", audit_prompt=BRACED)
    assert task.metadata is not None and task.metadata["structured"] is True
    task = navigation(
        seeds="4810",
        structured="off",
        navigate_prompt=BRACED,
        audit_prompt=BRACED + "a",
        selfverify_prompt=BRACED + "s",
    )
    assert task.metadata is not None and task.metadata["structured"] is False


@pytest.mark.parametrize("name", ["navigate_prompt", "audit_prompt", "selfverify_prompt"])
def test_navigation_checks_every_prompt(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(TaskParameterError, match=f"^{name} must not be empty"):
        navigation(seeds="4810", **{name: "  "})
    assert capsys.readouterr().err.strip() == f"{name} must not be empty; got '  '"
