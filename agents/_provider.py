"""The reference agents as an Inspect model provider: ``--model spatialstale/<agent>``.

The provider answers the suite's real prompts offline, with no API key and no GPU:

    inspect eval spatialstale/detection --model spatialstale/observer -T n_seeds=3

Model names: ``observer``, ``credulous``, ``random``, ``colourblind`` (see ``_policies``). Every
output carries an estimated token usage, so Inspect never needs a tokenizer. A request that
offers tools (a navigator that converses, ``-T agent``) is answered with tool calls (see
``_tools``).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import sys
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ContentAudio,
    ContentDocument,
    ContentImage,
    ContentVideo,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from spatialstale.protocol import QuietExit

from ._perception import perceive
from ._policies import AGENTS
from ._tools import tool_output

CHARS_PER_TOKEN = 4
IMAGE_TOKENS = 255
"""A fixed estimate per image, whatever its size (hosted vision models charge a few hundred)."""


class ReferenceAgentError(ValueError, QuietExit):
    """An unknown agent name or a model argument: a ValueError, silent to Inspect's CLI."""

    reported = True
    """Its message is printed when it is raised (see ``_refused``)."""


def _refused(message: str) -> ReferenceAgentError:
    # Printed here, once, because Inspect's CLI shows a ValueError from a model
    # constructor as a 200-line traceback, and a PrerequisiteError not at all under
    # --display none (its console is quiet); this way every display mode shows one line.
    print(message, file=sys.stderr, flush=True)
    return ReferenceAgentError(message)


def estimate_text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _prompt_digest(messages: list[ChatMessage]) -> bytes:
    digest = hashlib.sha256()
    for message in messages:
        digest.update(f"\x00{message.role}\x00{message.text}".encode())
        if not isinstance(message.content, str):
            for part in message.content:
                if isinstance(part, ContentImage):
                    digest.update(part.image.encode())
    return digest.digest()


def answer_rng(seed: int | None, messages: list[ChatMessage]) -> random.Random:
    """The random agent's generator: a function of (seed, prompt), or fresh when unseeded."""
    if seed is None:
        return random.Random()
    material = hashlib.sha256(seed.to_bytes(16, "big", signed=True) + _prompt_digest(messages)).digest()
    return random.Random(int.from_bytes(material[:8], "big"))


def _usage(messages: list[ChatMessage], answer: str) -> ModelUsage:
    input_tokens = 0
    for message in messages:
        input_tokens += estimate_text_tokens(message.text)
        if not isinstance(message.content, str):
            input_tokens += IMAGE_TOKENS * sum(isinstance(part, ContentImage) for part in message.content)
    output_tokens = estimate_text_tokens(answer)
    return ModelUsage(input_tokens=input_tokens, output_tokens=output_tokens, total_tokens=input_tokens + output_tokens)


def structured(answer: str, config: GenerateConfig) -> str:
    """``answer`` in the form a response schema asks for: a JSON array the prompt shows
    wrapped in the schema's one root key (``{"verdicts": [...]}``) when structured
    output is on (``-T structured=true``); anything else as it is."""
    schema = config.response_schema
    keys = list((schema.json_schema.properties or {}) if schema is not None else {})
    if len(keys) != 1 or not answer.startswith("["):
        return answer
    return json.dumps({keys[0]: json.loads(answer)})


class ReferenceAgentAPI(ModelAPI):
    """The reference agents ``observer``, ``credulous``, ``random`` and ``colourblind``.

    They read only the prompt: memory lines, the grid listing or the PNG's pixels,
    and the position line. With ``GenerateConfig.seed`` set, ``random`` answers the
    same prompt the same way; otherwise it draws fresh randomness on every call.

    Raises:
        ReferenceAgentError: (a ValueError) for an unknown agent name or any model
            argument (there are none); its message is also printed on stderr.
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (Inspect's ModelAPI signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in AGENTS:
            raise _refused(f"spatialstale model must be one of {', '.join(AGENTS)}; got {model_name!r}")
        self.policy = AGENTS[model_name]
        self.take_args(model_args)

    def take_args(self, model_args: dict[str, Any]) -> None:
        """Read the model arguments (``-M``); the reference agents take none."""
        if model_args:
            raise _refused(f"spatialstale/{self.model_name} takes no model arguments; got {', '.join(model_args)}")

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        await self.on_call()
        if tools:
            # a turn of a conversing navigator's conversation (-T agent)
            output = tool_output(self.model_name, self.policy, input, tools, answer_rng(config.seed, input))
            output.usage = _usage(input, output.message.text)
            return output
        answer = structured(self.policy.answer(perceive(input), answer_rng(config.seed, input)), config)
        output = ModelOutput.from_content(model=self.model_name, content=answer)
        output.usage = _usage(input, answer)
        return output

    async def on_call(self) -> None:
        """What a call meets before it is answered: nothing here (a flaky endpoint's fault, ``_faults``)."""

    async def count_text_tokens(self, text: str) -> int:
        return estimate_text_tokens(text)

    async def count_media_tokens(self, media: ContentImage | ContentAudio | ContentVideo | ContentDocument) -> int:
        return IMAGE_TOKENS


@modelapi(name="spatialstale")
def spatialstale() -> type[ModelAPI]:
    return ReferenceAgentAPI
