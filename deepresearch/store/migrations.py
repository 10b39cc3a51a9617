"""The run store's schema as an ordered list of migrations, for SQLite and PostgreSQL alike (type words
such as ``{bigint}`` are spelled by the Dialect in sql.py)."""

from __future__ import annotations

# Ordered, append-only: a released migration is never edited; add a new one instead. One statement per
# entry (PostgreSQL's extended protocol runs one per execute). Payloads are TEXT holding the exact JSON,
# not JSONB: JSONB reorders keys and rejects NaN and \u0000 (scraped pages contain both), and both backends
# must return identical records. Timestamps are ISO-8601 strings for the same reason.
MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "runs, events, checkpoint index, receipts",
        (
            """CREATE TABLE IF NOT EXISTS runs (
                run_id TEXT{c} PRIMARY KEY,
                thread_id TEXT NOT NULL UNIQUE,
                question TEXT NOT NULL,
                options_json TEXT NOT NULL,
                status TEXT NOT NULL,
                engine TEXT NOT NULL,
                current_stage TEXT,
                error TEXT,
                artifact_dir TEXT,
                cancel_requested {bool} NOT NULL DEFAULT {false},
                usage_json TEXT NOT NULL DEFAULT '{{}}',
                created_at TEXT{c} NOT NULL,
                updated_at TEXT NOT NULL,
                started_at TEXT,
                finished_at TEXT
            )""",
            "CREATE INDEX IF NOT EXISTS runs_status_created ON runs (status, created_at)",
            """CREATE TABLE IF NOT EXISTS run_events (
                run_id TEXT{c} NOT NULL,
                seq {bigint} NOT NULL,
                type TEXT NOT NULL,
                stage TEXT,
                ts TEXT NOT NULL,
                data_json TEXT NOT NULL,
                PRIMARY KEY (run_id, seq)
            )""",
            """CREATE TABLE IF NOT EXISTS run_checkpoints (
                run_id TEXT{c} NOT NULL,
                checkpoint_id TEXT{c} NOT NULL,
                stage TEXT NOT NULL,
                title TEXT NOT NULL,
                created_at TEXT{c} NOT NULL,
                next_json TEXT NOT NULL,
                summary TEXT NOT NULL,
                thread_id TEXT NOT NULL,
                checkpoint_ns TEXT NOT NULL,
                parent_checkpoint_id TEXT,
                fork_of TEXT,
                PRIMARY KEY (run_id, checkpoint_id)
            )""",
            """CREATE TABLE IF NOT EXISTS tool_receipts (
                run_id TEXT{c} NOT NULL,
                receipt_key TEXT{c} NOT NULL,
                args_hash TEXT{c} NOT NULL,
                tool_name TEXT NOT NULL,
                stage TEXT,
                status TEXT NOT NULL,
                args_json TEXT NOT NULL,
                result_json TEXT,
                error TEXT,
                tokens {bigint} NOT NULL DEFAULT 0,
                cost_usd {double} NOT NULL DEFAULT 0,
                created_at TEXT{c} NOT NULL,
                updated_at TEXT NOT NULL,
                PRIMARY KEY (run_id, receipt_key, args_hash)
            )""",
            "CREATE INDEX IF NOT EXISTS receipts_status ON tool_receipts (run_id, receipt_key, status)",
        ),
    ),
    # The run list is ordered by created_at; PostgreSQL databases set up before 2026-12 already have it.
    (2, "runs by creation time", ("CREATE INDEX IF NOT EXISTS runs_created ON runs (created_at)",)),
    # A version per run, bumped by every update: claims (resume, takeover) are compare-and-set on it.
    (3, "run version", ("ALTER TABLE runs ADD COLUMN version {bigint} NOT NULL DEFAULT 0",)),
    # Runs belong to a user (a token's name); runs from before belong to the local owner.
    (
        4,
        "run owners, API tokens",
        (
            "ALTER TABLE runs ADD COLUMN owner TEXT{c} NOT NULL DEFAULT 'local'",
            "CREATE INDEX IF NOT EXISTS runs_owner_created ON runs (owner, created_at)",
            """CREATE TABLE IF NOT EXISTS api_tokens (
                token_id TEXT{c} PRIMARY KEY,
                name TEXT{c} NOT NULL,
                token_hash TEXT{c} NOT NULL UNIQUE,
                admin {bool} NOT NULL DEFAULT {false},
                created_at TEXT{c} NOT NULL,
                last_used_at TEXT,
                revoked_at TEXT
            )""",
        ),
    ),
    # A run executes under a lease (owner, expiry) that its process renews; a run whose lease expired
    # is an orphan any replica may claim. Attempts count the executions started since the last resume.
    (
        5,
        "run leases",
        (
            "ALTER TABLE runs ADD COLUMN lease_owner TEXT",
            "ALTER TABLE runs ADD COLUMN lease_expires_at TEXT{c}",
            "ALTER TABLE runs ADD COLUMN attempts {bigint} NOT NULL DEFAULT 0",
        ),
    ),
    # How each (endpoint, model) takes structured output, negotiated once (deepresearch/llm/modes.py).
    (
        6,
        "llm capabilities",
        (
            """CREATE TABLE IF NOT EXISTS llm_capabilities (
                endpoint TEXT{c} NOT NULL,
                model TEXT{c} NOT NULL,
                mode TEXT NOT NULL,
                detail TEXT NOT NULL,
                checked_at TEXT NOT NULL,
                PRIMARY KEY (endpoint, model)
            )""",
        ),
    ),
    # Bulky texts (fetched pages, LLM prompts) once, content-addressed and zlib-compressed; the graph state
    # and the receipts refer to them by hash (store/texts.py). run_texts: which run uses which text.
    (
        7,
        "content-addressed texts",
        (
            """CREATE TABLE IF NOT EXISTS texts (
                sha256 TEXT{c} PRIMARY KEY,
                data {blob} NOT NULL,
                chars {bigint} NOT NULL,
                created_at TEXT NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS run_texts (
                run_id TEXT{c} NOT NULL,
                sha256 TEXT{c} NOT NULL,
                PRIMARY KEY (run_id, sha256)
            )""",
            "CREATE INDEX IF NOT EXISTS run_texts_sha256 ON run_texts (sha256)",
        ),
    ),
    # A title the user gives a run in the workbench's history (PATCH /api/runs/{id}; null: its question),
    # and how often a person resumed it and how many of those resumes forked (the history's badges).
    (
        8,
        "run titles, resume and fork counts",
        (
            "ALTER TABLE runs ADD COLUMN title TEXT",
            "ALTER TABLE runs ADD COLUMN resumes {bigint} NOT NULL DEFAULT 0",
            "ALTER TABLE runs ADD COLUMN forks {bigint} NOT NULL DEFAULT 0",
        ),
    ),
    # Steering (docs/steering.md): the input a run waits for (plan review), and where a run came from - a
    # fork of another run's checkpoint, or a follow-up question on a finished run.
    (
        9,
        "pending input, forks and follow-ups",
        (
            "ALTER TABLE runs ADD COLUMN pending_input_json TEXT",
            "ALTER TABLE runs ADD COLUMN forked_from_json TEXT",
            "ALTER TABLE runs ADD COLUMN follow_up_of TEXT{c}",
        ),
    ),
    # Runs waiting for a runner leave the queue first in, first out by the time they entered it.
    (
        10,
        "run queue order",
        (
            "ALTER TABLE runs ADD COLUMN queued_at TEXT{c}",
            "UPDATE runs SET queued_at = created_at WHERE queued_at IS NULL",
            "CREATE INDEX IF NOT EXISTS runs_status_queued ON runs (status, queued_at)",
        ),
    ),
    # The workbench's sign-ins (POST /api/session): a random id in an HttpOnly cookie, stored as its SHA-256,
    # made from one API token (whose revocation ends it), expiring, and revoked by signing out.
    (
        11,
        "browser sessions",
        (
            """CREATE TABLE IF NOT EXISTS browser_sessions (
                session_hash TEXT{c} PRIMARY KEY,
                token_id TEXT{c} NOT NULL,
                created_at TEXT NOT NULL,
                expires_at TEXT{c} NOT NULL,
                revoked_at TEXT
            )""",
            "CREATE INDEX IF NOT EXISTS browser_sessions_expiry ON browser_sessions (expires_at)",
        ),
    ),
    # The Agent Protocol's threads and runs (deepresearch/api/agent_protocol/): a thread is one research (a
    # run of ours, `research_id`, once its first protocol run started it); a protocol run is one execution
    # of it, whose events are the research's events after `after_seq`.
    (
        12,
        "agent protocol threads and runs",
        (
            """CREATE TABLE IF NOT EXISTS protocol_threads (
                thread_id TEXT{c} PRIMARY KEY,
                owner TEXT{c} NOT NULL,
                metadata_json TEXT NOT NULL,
                research_id TEXT{c},
                created_at TEXT{c} NOT NULL,
                updated_at TEXT NOT NULL
            )""",
            """CREATE TABLE IF NOT EXISTS protocol_runs (
                run_id TEXT{c} PRIMARY KEY,
                thread_id TEXT{c} NOT NULL,
                research_id TEXT{c} NOT NULL,
                assistant_id TEXT NOT NULL,
                status TEXT NOT NULL,
                metadata_json TEXT NOT NULL,
                kwargs_json TEXT NOT NULL,
                multitask_strategy TEXT NOT NULL,
                after_seq {bigint} NOT NULL,
                created_at TEXT{c} NOT NULL,
                updated_at TEXT NOT NULL
            )""",
            "CREATE INDEX IF NOT EXISTS protocol_runs_thread ON protocol_runs (thread_id, created_at)",
        ),
    ),
)
