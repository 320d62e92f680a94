-- 0001_initial — the durable history of taskspool's cluster mode.
--
-- Applied by `taskspool db migrate` (which records it in
-- schema_migrations).  Every table is InnoDB (transactions: the record
-- writer commits a batch of outbox records at once) and utf8mb4 with a
-- binary collation (ids are compared byte for byte, as in the spool).
-- Times are epoch milliseconds (BIGINT), as in the record files; the
-- spool's RFC 3339 strings are converted by the writer.
-- IF NOT EXISTS everywhere: DDL commits implicitly in MariaDB, so a
-- migration interrupted half-way is completed by running it again.

CREATE TABLE IF NOT EXISTS schema_migrations (
    version     INT UNSIGNED NOT NULL,
    name        VARCHAR(128) NOT NULL,
    applied_at  BIGINT NOT NULL,
    PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per task (requestId), updated as its state changes.
-- fence: the row's fencing token, attempt * 4 + rank of the state
-- (RUNNING 1, PENDING-after-a-retry 2, terminal 3).  The writer's upsert
-- changes a row only with a record whose fence is >= the stored one, so
-- records applied twice, late or out of order (several daemons drain one
-- outbox) never move a task back to an older state.
CREATE TABLE IF NOT EXISTS task_execution (
    request_id      VARCHAR(128) NOT NULL,
    app_id          VARCHAR(64) NULL,
    task_code       VARCHAR(64) NOT NULL,
    job_code        VARCHAR(64) NULL,
    status          VARCHAR(16) NOT NULL,
    trigger_time    BIGINT NOT NULL,
    node            VARCHAR(64) NULL,
    attempt         INT NOT NULL,
    max_retries     INT NULL,
    fence           BIGINT NOT NULL,
    created_at      BIGINT NULL,
    started_at      BIGINT NULL,
    finished_at     BIGINT NULL,
    duration_ms     BIGINT NULL,
    exit_code       INT NULL,
    failure_code    VARCHAR(32) NULL,
    failure_reason  VARCHAR(1024) NULL,
    result_summary  MEDIUMTEXT NULL,
    recorded_at     BIGINT NOT NULL,
    PRIMARY KEY (request_id),
    -- Idempotent API submission: one requestId per calling app.  Rows
    -- without an app (CLI, jobs) have app_id NULL, which UNIQUE allows
    -- any number of times.
    UNIQUE KEY uk_app_request (app_id, request_id),
    -- Scans of stuck or failed work: WHERE status = ? AND trigger_time
    -- >= ? ORDER BY trigger_time (history --state, GET /api/tasks?status=).
    KEY ix_status_trigger (status, trigger_time),
    -- History of one task code: WHERE task_code = ? AND trigger_time >= ?
    -- (history --code, GET /api/tasks?taskCode=, stats of one code).
    KEY ix_code_trigger (task_code, trigger_time),
    -- Keyset pagination of the task list: WHERE (created_at, request_id)
    -- > (?, ?) ORDER BY created_at, request_id LIMIT n — every row once.
    KEY ix_created_request (created_at, request_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- One row per attempt of a task, keyed (request_id, attempt): the
-- RUNNING record creates it, the attempt's end completes it.  fence as
-- above (rank only: RUNNING 1, ended 3).  The primary key also serves
-- "all attempts of a task" in order.
CREATE TABLE IF NOT EXISTS task_attempt (
    request_id      VARCHAR(128) NOT NULL,
    attempt         INT NOT NULL,
    node            VARCHAR(64) NULL,
    state           VARCHAR(16) NOT NULL,
    fence           INT NOT NULL,
    started_at      BIGINT NULL,
    finished_at     BIGINT NULL,
    duration_ms     BIGINT NULL,
    exit_code       INT NULL,
    sig             INT NULL,
    reason          VARCHAR(1024) NULL,
    retry_at        BIGINT NULL,
    PRIMARY KEY (request_id, attempt)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Mirror of jobs/<jobCode>.json (recurring job definitions).
CREATE TABLE IF NOT EXISTS task_definition (
    job_code        VARCHAR(64) NOT NULL,
    task_code       VARCHAR(64) NOT NULL,
    schedule        VARCHAR(255) NULL,
    enabled         TINYINT NOT NULL DEFAULT 1,
    definition      MEDIUMTEXT NOT NULL,
    updated_at      BIGINT NOT NULL,
    PRIMARY KEY (job_code)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The daemons that have written records: one row per node id, refreshed
-- by its record writer (last_seen_at) while it runs.
CREATE TABLE IF NOT EXISTS node_registry (
    node_id         VARCHAR(64) NOT NULL,
    host            VARCHAR(255) NULL,
    pid             INT NULL,
    started_at      BIGINT NOT NULL,
    last_seen_at    BIGINT NOT NULL,
    PRIMARY KEY (node_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Callback deliveries (DESIGN §7): one row per delivery id.
CREATE TABLE IF NOT EXISTS callback_record (
    delivery_id     VARCHAR(160) NOT NULL,
    request_id      VARCHAR(128) NOT NULL,
    url             VARCHAR(2048) NOT NULL,
    attempts        INT NOT NULL DEFAULT 0,
    last_status     INT NULL,
    last_error      VARCHAR(1024) NULL,
    next_try_at     BIGINT NULL,
    state           VARCHAR(16) NOT NULL,
    updated_at      BIGINT NOT NULL,
    PRIMARY KEY (delivery_id),
    -- The callbacks of one task (stats: callback failures per task).
    KEY ix_request (request_id),
    -- Due retries: WHERE state = 'CALLBACK_PENDING' AND next_try_at <= ?.
    KEY ix_state_next (state, next_try_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- API clients when they are not listed in apps.conf.
CREATE TABLE IF NOT EXISTS api_app (
    app_id          VARCHAR(64) NOT NULL,
    secret          VARBINARY(256) NOT NULL,
    task_codes      TEXT NULL,
    enabled         TINYINT NOT NULL DEFAULT 1,
    created_at      BIGINT NOT NULL,
    PRIMARY KEY (app_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
