"""Scripted models for tests: real Inspect ``mockllm`` providers driven by a callable
that reads the suite's real prompts and answers them by a fixed script."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, Model, ModelOutput, ModelUsage, get_model

from spatialstale.protocol import call_kind

_ENTRY = re.compile(r"\[(mem_\d+)\] (SAFE|DANGER) at \((\d+),(\d+)\)")
_CELL = re.compile(r"\((\d+),(\d+)\)=([SFHG])")
_POSITION = re.compile(r"Position: \((\d+),(\d+)\)")


@dataclass
class Call:
    kind: str
    memory_ids: list[str]
    claims: dict[str, str]
    grid: dict[tuple[int, int], str]
    position: tuple[int, int] | None
    has_image: bool
    text: str


@dataclass
class Script:
    """Answers audits with ``flag(ids, grid)``, SelfVerify with ``inconsistent(ids, grid)``
    and navigation with ``act(call)`` (a string answer); records every call."""

    flag: Callable[[Call], set[str]] = lambda call: set()
    inconsistent: Callable[[Call], set[str]] = lambda call: set()
    act: Callable[[Call], str] = lambda call: '{"action": "RIGHT"}'
    audit_answer: Callable[[list[str], set[str]], str] | None = None
    calls: list[Call] = field(default_factory=list)

    def __call__(self, messages: list[ChatMessage], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        user = messages[-1]
        text = user.text
        has_image = any(
            getattr(c, "type", "") == "image" for c in (user.content if isinstance(user.content, list) else [])
        )
        kind = call_kind(messages) or "unknown"
        entries = [(m.group(1), m.group(2)) for m in _ENTRY.finditer(text)]
        ids = [mid for mid, _ in entries]
        grid = {(int(r), int(c)): t for r, c, t in _CELL.findall(text)}
        pos = _POSITION.search(text)
        call = Call(
            kind, ids, dict(entries), grid, (int(pos.group(1)), int(pos.group(2))) if pos else None, has_image, text
        )
        self.calls.append(call)
        if kind == "audit":
            flagged = self.flag(call)
            if self.audit_answer is not None:
                content = self.audit_answer(ids, flagged)
            else:
                content = json.dumps([{"memory_id": i, "is_stale": i in flagged, "reason": "scripted"} for i in ids])
        elif kind == "selfverify":
            content = json.dumps({"inconsistent": sorted(self.inconsistent(call))})
        else:
            content = self.act(call)
        output = ModelOutput.from_content(model="scripted", content=content)
        output.usage = ModelUsage(input_tokens=len(text) // 4 + 1, output_tokens=len(content) // 4 + 1, total_tokens=0)
        output.usage.total_tokens = output.usage.input_tokens + output.usage.output_tokens
        return output

    def model(self) -> Model:
        return get_model("mockllm/model", custom_outputs=self, memoize=False)

    def of_kind(self, kind: str) -> list[Call]:
        return [c for c in self.calls if c.kind == kind]


def truthful_flags(call: Call) -> set[str]:
    """Flags exactly the entries whose claim disagrees with the listed grid."""
    n = int(len(call.grid) ** 0.5)
    out = set()
    for mid, claim in call.claims.items():
        r, c = divmod(int(mid[4:]), n)
        if (claim == "SAFE") == (call.grid[(r, c)] == "H"):
            out.add(mid)
    return out


def without_tokens(score: Any) -> Any:
    """A score's value or metadata without its token counts (``*_tokens``), which
    depend on the prompts' wording and on what the provider reports, not on the episode."""
    if isinstance(score, dict):
        return {k: without_tokens(v) for k, v in score.items() if not str(k).endswith("_tokens")}
    if isinstance(score, list):
        return [without_tokens(v) for v in score]
    return score
