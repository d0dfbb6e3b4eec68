"""A test-only Inspect model provider that answers every call with randomized nasty text.

``--model fuzz/<seed>``: each answer is drawn, from a generator keyed by the seed and
the prompt, out of the forms real models write and the ones hostile ones do: every
audit and action form the readers accept (right or wrong, whole or truncated),
conflicting duplicates, think blocks, Python literals, wrong types, deep nesting,
huge answers, unknown and malformed ids, code-like text, control characters and
random Unicode. Nothing about the answer is chosen to please the readers.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import string
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.tool import ToolChoice, ToolInfo

from spatialstale.protocol import call_kind

_ID = re.compile(r"\[(mem_\d+)\]")
DIRECTIONS = ("UP", "DOWN", "LEFT", "RIGHT")


def _ids(text: str) -> list[str]:
    return _ID.findall(text)


def _edit(rng: random.Random) -> Any:
    """A proposed edit (``-T edits=true``), right, wrong, unreadable or hostile."""
    r, c = rng.randrange(10), rng.randrange(10)
    return rng.choice(
        [
            f"DANGER at ({r},{c}): Hole - dangerous, do not step",
            f"SAFE at ({r},{c}): Frozen ice - safe to walk",
            f"replace 'SAFE at ({r},{c})' with 'DANGER at ({r},{c})'",
            "SAFE and DANGER",
            "H",
            "was a hole, not safe, no longer frozen",
            _noise(rng, 60),
            "(" * rng.randint(1, 300) + "DANGER",
            "x" * rng.randint(1, 5000),
            None,
            "",
            7,
            True,
            [],
            {"claim": "DANGER", "cell": [r, c]},
            [[["SAFE"]]],
        ]
    )


def _verdicts(rng: random.Random, ids: list[str], edits: bool = False) -> list[dict[str, Any]]:
    chosen = [i for i in ids if rng.random() < 0.9]
    out: list[dict[str, Any]] = []
    for mid in chosen:
        value: Any = rng.choice([True, False, "true", "False", "stale", "valid", 1, 0, None, "maybe", [], {}])
        key = rng.choice(["is_stale", "stale", "is_valid", "verdict", "STALE", "Is_Stale"])
        idk = rng.choice(["memory_id", "id", "entry", "memoryId", "Memory_ID"])
        item: dict[str, Any] = {
            idk: rng.choice([mid, mid.upper(), f"[{mid}]", mid.replace("_0", "_"), "mem_9999"]),
            key: value,
        }
        if rng.random() < 0.5:
            item["reason"] = _noise(rng, 40)
        if rng.random() < 0.2:
            item["confidence"] = rng.random()
        if edits and rng.random() < 0.7:
            item[rng.choice(["edit", "correction", "replacement", "Fix", "new_entry"])] = _edit(rng)
        out.append(item)
        if rng.random() < 0.1:
            out.append({**item, key: not value if isinstance(value, bool) else "stale"})
    return out


def _noise(rng: random.Random, n: int) -> str:
    alphabet = string.printable + "{}[]\"':,\\<>/ßé漢🙂\u200b\u202e"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, n)))


def _encode(rng: random.Random, value: Any) -> str:
    form = rng.randrange(8)
    if form == 0:
        return json.dumps(value)
    if form == 1:
        return json.dumps(value, indent=2)
    if form == 2 and isinstance(value, list):
        return "\n".join(json.dumps(v) for v in value)
    if form == 3:
        return repr(value)  # a Python literal
    if form == 4:
        return re.sub(r"([}\]])", r",\1", json.dumps(value))  # trailing commas
    if form == 5:
        return f"Here you go:\n```json\n{json.dumps(value)}\n```\nHope this helps!"
    if form == 6:
        text = json.dumps(value)
        return text[: rng.randint(0, len(text))]  # truncated
    return "<think>" + _noise(rng, 200) + json.dumps(value)[:50] + "</think>\n" + json.dumps(value)


def _hostile(rng: random.Random) -> str:
    kind = rng.randrange(12)
    if kind == 0:
        return "[" * rng.randint(100, 5000)
    if kind == 1:
        return "{" * rng.randint(10, 2000) + "}" * rng.randint(0, 2000)
    if kind == 2:
        return _noise(rng, rng.choice([10, 1000, 20000]))
    if kind == 3:
        return "__import__('os').system('echo pwned')"
    if kind == 4:
        return json.dumps({"verdicts": "all of them", "action": 3, "inconsistent": {"a": None}})
    if kind == 5:
        return "<think>" + _noise(rng, 300)
    if kind == 6:
        return ""
    if kind == 7:
        return '{"memory_id": "' + "mem_" + "9" * rng.randint(1, 400) + '", "is_stale": NaN}'
    if kind == 8:
        return "\x00\x01\x1b[31m" + _noise(rng, 100)
    if kind == 9:
        return json.dumps([[[[[[[[[[[[[[[[[[[[{"memory_id": "mem_001", "is_stale": True}]]]]]]]]]]]]]]]]]]]])
    if kind == 10:
        return "'" * rng.randint(1, 500) + '"' * rng.randint(1, 500)
    return " ".join(
        rng.choice([*DIRECTIONS, "not", "avoid", "hole", ",", ".", "I'll go", "Action:"]) for _ in range(30)
    )


def _action(rng: random.Random) -> str:
    a, b = rng.sample(DIRECTIONS, 2)
    templates = [
        f'{{"action": "{a}"}}',
        f"{{'action': '{a.lower()}'}}",
        f"Action: {a}",
        f"I'll move {a.lower()}.",
        f"Moving {b} would be a mistake, so my move is {a}.",
        f"I must not go {b} because it is a hole.",
        f'{{"action": "{a}"}} {{"action": "{b}"}}',
        f"<think>{b}? {a}?</think>{a}",
        f'```json\n{{"action": "{a}"}}\n```',
        f"{a} or {b}, hard to say",
        f"**{a.title()}**",
        f'{{"move": "{a}", "direction": "{b}"}}',
    ]
    return rng.choice(templates)


def _edit_lines(rng: random.Random, ids: list[str]) -> str:
    """Verdicts and edits in prose: ``mem_012: stale -> DANGER at (3,4)`` and the like."""
    lines = []
    for mid in ids:
        edit = _edit(rng)
        arrow = rng.choice(["->", "→", "=>", "| stale |", "edit:", "replace with"])
        lines.append(f"{rng.choice(['', '- ', '| '])}{mid}: {rng.choice(['stale', 'valid'])} {arrow} {edit}")
    return "\n".join(lines)


def fuzz_answer(rng: random.Random, kind: str, ids: list[str], edits: bool = False) -> str:
    """One randomized answer to a call of ``kind`` (audit, selfverify, navigate);
    ``edits`` when the audit prompt asks for the corrected entries."""
    if rng.random() < 0.35:
        return _hostile(rng)
    if kind == "audit" and edits and rng.random() < 0.3:
        return _edit_lines(rng, ids)
    if kind == "audit":
        verdicts = _verdicts(rng, ids, edits)
        if rng.random() < 0.2:
            return _encode(rng, {rng.choice(["verdicts", "results", "data"]): verdicts})
        if rng.random() < 0.1:
            return _encode(rng, {v.get("memory_id", "mem_000"): v.get("is_stale") for v in verdicts})
        return _encode(rng, verdicts)
    if kind == "selfverify":
        flagged = [i for i in ids if rng.random() < 0.1]
        value: Any = rng.choice(
            [
                {"inconsistent": flagged},
                {"inconsistent": ", ".join(flagged)},
                {"data": {"stale_ids": flagged}},
                flagged,
                {"inconsistent": flagged, "consistent": flagged[:1]},
            ]
        )
        return _encode(rng, value)
    return _action(rng) if rng.random() < 0.8 else _encode(rng, {"action": rng.choice([*DIRECTIONS, "JUMP", 2, None])})


def _kind(messages: list[ChatMessage]) -> str:
    kind = call_kind(messages)
    return kind if kind in ("audit", "selfverify") else "navigate"


class FuzzAPI(ModelAPI):
    """Answers every call with ``fuzz_answer``, keyed by (model name, prompt, call count)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's ModelAPI signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.calls = 0

    async def generate(
        self, input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
    ) -> ModelOutput:
        self.calls += 1
        text = input[-1].text if input else ""
        digest = hashlib.sha256(f"{self.model_name}\x00{self.calls}\x00{text}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        edits = bool(input) and '"edit":' in input[0].text
        answer = fuzz_answer(rng, _kind(input), _ids(text), edits)
        output = ModelOutput.from_content(model=self.model_name, content=answer)
        output.usage = ModelUsage(input_tokens=len(text) // 4 + 1, output_tokens=len(answer) // 4 + 1)
        output.usage.total_tokens = output.usage.input_tokens + output.usage.output_tokens
        return output


@modelapi(name="fuzz")
def fuzz() -> type[ModelAPI]:
    return FuzzAPI
