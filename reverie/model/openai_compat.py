"""An OpenAI-compatible chat-completions client (Ollama, vLLM, llama.cpp's server, hosted
APIs) behind the model seam: timeouts, retries with backoff, validated JSON answers.
An answer that does not fit the schema is not asked for again at temperature 0: the model
would give the same one.

Every failure ends as :class:`~reverie.model.seam.Deferred` — a timeout, a refused or
failing server, an answer that is not JSON or does not fit the schema — so a stage never
sees an exception from here and never acts on an invented answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from reverie._http import JsonClient, Refused, Timeout
from reverie.config import DEFAULT_MODEL_TIMEOUT_S, DEFAULT_RETRY_AFTER_MAX_S
from reverie.model.seam import Answer, Deferred, Prompt, Usage
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.model")

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.S)


class OpenAICompatible(JsonClient):
    """``POST {base_url}/chat/completions`` with a JSON answer checked against the schema."""

    who = "the model"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        timeout_s: float | Timeout = DEFAULT_MODEL_TIMEOUT_S,
        retries: int = 2,
        backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
        retry_after_max_s: float = DEFAULT_RETRY_AFTER_MAX_S,
        temperature: float = 0.0,
    ) -> None:
        super().__init__(
            base_url,
            api_key,
            timeout_s=timeout_s,
            retries=retries,
            backoff_s=backoff_s,
            transport=transport,
            retry_after_max_s=retry_after_max_s,
        )
        self.name = model
        self.temperature = temperature

    def _body(self, prompt: Prompt) -> dict[str, Any]:
        schema = json.dumps(prompt.schema.json_schema(), sort_keys=False)
        system = (
            f"{prompt.system}\n\nAnswer with one JSON object only, matching this JSON schema; "
            f"write the 'reasoning' field first, then decide.\n{schema}"
        )
        return {
            "model": self.name,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": prompt.user},
            ],
            "temperature": self.temperature,
            "max_tokens": prompt.max_tokens,
            "response_format": {"type": "json_object"},
        }

    async def judge(self, prompt: Prompt) -> Answer | Deferred:
        tokens = Usage()  # the tokens every usable or refused answer reported

        def read(payload: Any) -> Answer:
            nonlocal tokens
            tokens = _add(tokens, payload.get("usage") if isinstance(payload, dict) else None)
            content = payload["choices"][0]["message"]["content"]
            try:
                data = prompt.schema.validate(_parse_json(content))
            except ValueError as exc:
                if self.temperature == 0:  # deterministic: asking again gets the same answer
                    raise Refused(str(exc)) from exc
                raise
            return Answer(data=data, usage=tokens, model=str(payload.get("model") or self.name))

        reply = await self.post("/chat/completions", self._body(prompt), read)
        usage = Usage(tokens.input_tokens, tokens.output_tokens, reply.attempts)
        if reply.value is not None:
            return Answer(data=reply.value.data, usage=usage, model=reply.value.model)
        log.warning("model_deferred", stage=prompt.stage, reason=reply.reason)
        return Deferred(reply.reason, usage, reply.unavailable, reply.retry_after_s)


def _parse_json(content: object) -> object:
    if not isinstance(content, str):
        raise ValueError("the answer has no text content")
    text = _FENCE.sub("", content.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise ValueError("the answer holds no JSON object")
    return json.loads(text[start : end + 1])


def _add(usage: Usage, reported: object) -> Usage:
    counts = reported if isinstance(reported, dict) else {}
    prompt_tokens = counts.get("prompt_tokens", 0)
    completion_tokens = counts.get("completion_tokens", 0)
    return Usage(
        input_tokens=usage.input_tokens + (prompt_tokens if isinstance(prompt_tokens, int) else 0),
        output_tokens=usage.output_tokens
        + (completion_tokens if isinstance(completion_tokens, int) else 0),
        calls=usage.calls,
    )
