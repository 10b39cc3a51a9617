"""Webhooks: a POST to the server's URL (DEEPRESEARCH_WEBHOOK_URL) and the run's own (options.webhook_url)
when a run starts waiting for input, completes or fails.

Every call is SSRF-guarded like a page fetch (netguard: public addresses only unless allowlisted in
DEEPRESEARCH_WEBHOOK_ALLOW_HOSTS, the connection pinned to the checked address, no redirects followed),
signed with HMAC-SHA256 over `<timestamp>.<body>` (header X-Deepresearch-Signature: sha256=<hex>), and
retried with exponential backoff on a connection failure, a 5xx or a 429, at most
DEEPRESEARCH_WEBHOOK_MAX_ATTEMPTS times. Deliveries are bounded (DEEPRESEARCH_WEBHOOK_MAX_PENDING) and live
in this process: one still retrying when the server stops is not retried after the restart."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
import uuid
from dataclasses import dataclass

import httpx

from config import Settings
from deepresearch.store import RunRecord, utcnow
from deepresearch.web.netguard import (
    FetchError,
    PinnedTransport,
    check_url_allowed,
    pinned,
    resolve_and_check,
)

logger = logging.getLogger(__name__)

NOTIFIED = {
    "waiting_for_input": "run.waiting_for_input",
    "completed": "run.completed",
    "failed": "run.failed",
}
MAX_BACKOFF_SECONDS = 300.0


class WebhookRefused(ValueError):
    """A webhook URL this server will not call; the message says why."""


@dataclass(frozen=True, slots=True)
class Delivery:
    delivery_id: str
    url: str
    event: str
    body: bytes


def check_webhook_url(url: str, settings: Settings) -> str:
    """The URL, if this server may call it (the syntactic SSRF checks; DNS is checked at each call)."""
    if not settings.webhook_secret:
        raise WebhookRefused("this server has no DEEPRESEARCH_WEBHOOK_SECRET, so it calls no webhook")
    try:
        check_url_allowed(url, settings.webhook_allow_hosts)
    except FetchError as exc:
        raise WebhookRefused(str(exc)) from None
    return url


def sign(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode("utf-8"), timestamp.encode("ascii") + b"." + body, hashlib.sha256)
    return f"sha256={digest.hexdigest()}"


class WebhookNotifier:
    """Delivers the webhooks of one process (RunService.on_stopped calls `run_stopped`)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._tasks: set[asyncio.Task[bool]] = set()
        self._client = httpx.AsyncClient(
            transport=PinnedTransport(),
            timeout=settings.webhook_timeout_seconds,
            follow_redirects=False,
            trust_env=False,
        )

    def targets(self, run: RunRecord) -> list[str]:
        urls = [self.settings.webhook_url, str(run.options.get("webhook_url") or "")]
        return list(dict.fromkeys(u for u in urls if u)) if self.settings.webhook_secret else []

    async def run_stopped(self, run: RunRecord) -> None:
        event = NOTIFIED.get(run.status)
        if event is None:
            return
        payload = {
            "event": event,
            "run_id": run.run_id,
            "status": run.status,
            "question": run.question,
            "error": run.error,
            "pending_input": {"kind": run.pending_input.get("kind"), "since": run.pending_input.get("since")}
            if run.pending_input
            else None,
            "forked_from": run.forked_from,
            "follow_up_of": run.follow_up_of,
            "usage": {k: run.usage.get(k) for k in ("tokens", "cost_usd", "calls", "reused_calls")},
            "sent_at": utcnow(),
        }
        body = json.dumps(payload, ensure_ascii=False, sort_keys=True).encode("utf-8")
        for url in self.targets(run):
            if len(self._tasks) >= self.settings.webhook_max_pending:
                logger.warning(
                    "webhook %s for run %s dropped: %s calls pending", event, run.run_id, len(self._tasks)
                )
                continue
            delivery = Delivery(uuid.uuid4().hex, url, event, body)
            task = asyncio.create_task(self.deliver(delivery), name=f"webhook-{delivery.delivery_id}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def deliver(self, delivery: Delivery) -> bool:
        """Call the URL until it answers 2xx, refuses for good (4xx but 429) or the attempts run out."""
        wait = self.settings.webhook_backoff_seconds
        for attempt in range(1, self.settings.webhook_max_attempts + 1):
            outcome = await self._attempt(delivery, attempt)
            if outcome is not None:
                return outcome
            if attempt < self.settings.webhook_max_attempts:
                await asyncio.sleep(wait)
                wait = min(wait * 2, MAX_BACKOFF_SECONDS)
        logger.warning("webhook %s to %s gave up after %s attempts", delivery.event, delivery.url, attempt)
        return False

    async def _attempt(self, delivery: Delivery, attempt: int) -> bool | None:
        """True: delivered; False: refused for good; None: worth another attempt."""
        timestamp = str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": self.settings.fetch_user_agent,
            "X-Deepresearch-Event": delivery.event,
            "X-Deepresearch-Delivery": delivery.delivery_id,
            "X-Deepresearch-Attempt": str(attempt),
            "X-Deepresearch-Timestamp": timestamp,
            "X-Deepresearch-Signature": sign(self.settings.webhook_secret, timestamp, delivery.body),
        }
        try:
            target = check_url_allowed(delivery.url, self.settings.webhook_allow_hosts)
            addresses = await resolve_and_check(target)
            with pinned(target.host, target.port, addresses):
                response = await self._client.post(str(target.url), content=delivery.body, headers=headers)
        except FetchError as exc:  # blocked by the guard, or DNS failed
            logger.warning("webhook %s to %s not sent: %s", delivery.event, delivery.url, exc)
            return False if exc.reason == "blocked" else None
        except httpx.HTTPError as exc:
            logger.info("webhook %s to %s attempt %s failed: %r", delivery.event, delivery.url, attempt, exc)
            return None
        if response.is_success:
            return True
        if response.status_code == 429 or response.status_code >= 500:
            logger.info(
                "webhook %s to %s attempt %s: HTTP %s",
                delivery.event,
                delivery.url,
                attempt,
                response.status_code,
            )
            return None
        logger.warning(
            "webhook %s to %s refused: HTTP %s", delivery.event, delivery.url, response.status_code
        )
        return False

    async def aclose(self) -> None:
        """Stop: deliveries still retrying are abandoned (they live in this process only)."""
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(list(self._tasks), timeout=5)
        await self._client.aclose()
