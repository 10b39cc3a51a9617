"""Run leases' SQL (a part of SqlRunStore): which process executes a run, until when.

A lease is two columns of the run (owner, expiry) changed by single conditional UPDATEs, so claiming is
atomic on both databases (SQLite: BEGIN IMMEDIATE; PostgreSQL: the row lock of the UPDATE) without a lock
held while the run executes. Times are ISO-8601 UTC strings of one format: they compare as text.
"""

from __future__ import annotations

from collections.abc import Sequence

from deepresearch.store.base import RunRecord, record_from_row
from deepresearch.store.core import SqlCore


class LeaseSql(SqlCore):
    async def claim_run(
        self,
        run_id: str,
        owner: str,
        expires_at: str,
        now: str,
        dead_owner: str | None = None,
        statuses: Sequence[str] = ("queued", "running"),
    ) -> RunRecord | None:
        """Take the run's lease for `owner` until `expires_at`, if it is in one of `statuses` and nobody
        else holds a live lease (or it is `dead_owner`'s, a process known to be gone): one conditional
        UPDATE, so of several replicas claiming at once exactly one gets it. None if the lease is held or
        the run has stopped meanwhile (a run that waited for a free slot here may have run elsewhere)."""
        marks = ", ".join("?" for _ in statuses)
        _, rows = await self._write(
            "UPDATE runs SET lease_owner = ?, lease_expires_at = ?, attempts = attempts + 1, updated_at = ?,"
            f" version = version + 1 WHERE run_id = ? AND status IN ({marks}) AND (lease_owner IS NULL"
            " OR lease_owner = ? OR lease_owner = ? OR lease_expires_at < ?) RETURNING *",
            (owner, expires_at, now, run_id, *statuses, owner, dead_owner, now),
        )
        return record_from_row(RunRecord, rows[0]) if rows else None

    async def renew_lease(self, run_id: str, owner: str, expires_at: str) -> bool:
        """Extend `owner`'s lease; False if it is no longer theirs (it expired and another replica took
        the run over). Does not bump the version: a heartbeat is not a change of the run."""
        count, _ = await self._write(
            "UPDATE runs SET lease_expires_at = ? WHERE run_id = ? AND lease_owner = ?",
            (expires_at, run_id, owner),
        )
        return count > 0

    async def release_lease(self, run_id: str, owner: str) -> None:
        await self._write(
            "UPDATE runs SET lease_owner = NULL, lease_expires_at = NULL"
            " WHERE run_id = ? AND lease_owner = ?",
            (run_id, owner),
        )

    async def unclaimed_runs(
        self, statuses: Sequence[str], idle_before: str, limit: int = 1000
    ) -> list[RunRecord]:
        """Candidates for a takeover, oldest first: runs in `statuses` with a lease (the caller tells
        whether it is live), or without one — a queued run only if unchanged since `idle_before` (a run
        just created or resumed is about to be claimed by its own process)."""
        marks = ", ".join("?" for _ in statuses)
        rows = await self._read(
            f"SELECT * FROM runs WHERE status IN ({marks}) AND (lease_owner IS NOT NULL"
            " OR status <> 'queued' OR updated_at < ?)"
            " ORDER BY queued_at, run_id LIMIT ?",
            (*statuses, idle_before, limit),
        )
        return [record_from_row(RunRecord, row) for row in rows]

    async def cancel_requested_among(self, owner: str) -> list[str]:
        """The runs leased to `owner` that somebody asked to cancel (on any replica): one statement the
        executing process polls, so a cancel reaches it within a poll interval."""
        rows = await self._read(
            "SELECT run_id FROM runs WHERE lease_owner = ? AND cancel_requested = ?", (owner, True)
        )
        return [str(row["run_id"]) for row in rows]

    async def queue_positions(self, limit: int = 10_000) -> dict[str, int]:
        """Runs waiting for a runner (queued, no lease) and their place in the queue: 1 goes next."""
        rows = await self._read(
            "SELECT run_id FROM runs WHERE status = 'queued' AND lease_owner IS NULL"
            " ORDER BY queued_at, run_id LIMIT ?",
            (limit,),
        )
        return {str(row["run_id"]): place for place, row in enumerate(rows, start=1)}
