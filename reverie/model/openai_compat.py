"""An OpenAI-compatible chat-completions client (Ollama, vLLM, llama.cpp's server, hosted
APIs) behind the model seam: timeouts, retries with backoff, validated JSON answers.

Every failure ends as :class:`~reverie.model.seam.Deferred` — a timeout, a refused or
failing server, an answer that is not JSON or does not fit the schema — so a stage never
sees an exception from here and never acts on an invented answer.
"""

from __future__ import annotations

import json
import re
from types import TracebackType
from typing import Any, Self

import anyio
import httpx

from reverie.model.seam import Answer, Deferred, Prompt, Usage
from reverie.telemetry.logs import get_logger

log = get_logger("reverie.model")

_FENCE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$", re.S)
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class OpenAICompatible:
    """``POST {base_url}/chat/completions`` with a JSON answer checked against the schema."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        timeout_s: float = 30.0,
        retries: int = 2,
        backoff_s: float = 0.5,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {base_url!r}")
        self.name = model
        self.retries = retries
        self.backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0)),
            transport=transport,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

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
            "temperature": 0,
            "max_tokens": prompt.max_tokens,
            "response_format": {"type": "json_object"},
        }

    async def judge(self, prompt: Prompt) -> Answer | Deferred:
        usage = Usage()
        reason = "no attempt made"
        for attempt in range(self.retries + 1):
            if attempt:
                await anyio.sleep(self.backoff_s * 2 ** (attempt - 1))
            usage = Usage(usage.input_tokens, usage.output_tokens, usage.calls + 1)
            try:
                response = await self._client.post("/chat/completions", json=self._body(prompt))
            except httpx.TimeoutException:
                reason = "the model did not answer in time"
                continue
            except httpx.HTTPError as exc:
                reason = f"the model could not be reached: {type(exc).__name__}"
                continue
            if response.status_code != 200:
                reason = f"the model answered HTTP {response.status_code}"
                if response.status_code in _RETRY_STATUS:
                    continue
                break
            try:
                payload = response.json()
                usage = _add(usage, payload.get("usage"))
                content = payload["choices"][0]["message"]["content"]
                data = prompt.schema.validate(_parse_json(content))
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                reason = f"the answer was not usable: {exc}"
                continue
            return Answer(data=data, usage=usage, model=str(payload.get("model") or self.name))
        log.warning("model_deferred", stage=prompt.stage, reason=reason)
        return Deferred(reason=reason, usage=usage)


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
