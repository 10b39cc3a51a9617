"""Steering's SQL (a part of SqlRunStore): receipts a fork or a follow-up takes over from the run it came
from, and the counts /metrics reads (docs/steering.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from deepresearch.store.base import Row, utcnow
from deepresearch.store.core import SqlCore


class SteeringSql(SqlCore):
    async def copy_receipts(self, from_run: str, to_run: str, tools: Sequence[str]) -> int:
        """Copy `from_run`'s succeeded receipts of the `tools` to `to_run` (one statement): the same call
        with the same arguments is then answered from the recorded result. Returns how many. Which tools a
        new run may reuse is the tools' business (deepresearch/receipts/specs.py, REUSABLE_TOOLS)."""
        if not tools:
            return 0
        marks = ", ".join("?" for _ in tools)
        now = utcnow()

        async def body(tx: Any) -> int:
            count, _ = await tx.execute(
                "INSERT INTO tool_receipts (run_id, receipt_key, args_hash, tool_name, stage, status,"
                " args_json, result_json, error, tokens, cost_usd, created_at, updated_at)"
                " SELECT ?, receipt_key, args_hash, tool_name, stage, status, args_json, result_json, error,"
                " tokens, cost_usd, ?, ? FROM tool_receipts"
                f" WHERE run_id = ? AND status = 'succeeded' AND tool_name IN ({marks})"
                " ON CONFLICT DO NOTHING",
                (to_run, now, now, from_run, *tools),
            )
            # the copied receipts and the copied state refer to the original's texts by hash: the new
            # run uses them too, so deleting the original must keep them (store/texts.py)
            await tx.execute(
                "INSERT INTO run_texts (run_id, sha256) SELECT ?, sha256 FROM run_texts WHERE run_id = ?"
                " ON CONFLICT DO NOTHING",
                (to_run, from_run),
            )
            return int(count)

        return int(await self._atomic(body))

    async def count_runs_by_status(self) -> dict[str, int]:
        rows = await self._read("SELECT status, COUNT(*) AS n FROM runs GROUP BY status")
        return {str(row["status"]): int(row["n"]) for row in rows}

    async def receipt_totals(self) -> list[Row]:
        """Per tool: succeeded receipts, and the tokens and cost they recorded (all runs)."""
        return await self._read(
            "SELECT tool_name, COUNT(*) AS n, COALESCE(SUM(tokens), 0) AS tokens,"
            " COALESCE(SUM(cost_usd), 0) AS cost FROM tool_receipts WHERE status = 'succeeded'"
            " GROUP BY tool_name"
        )
