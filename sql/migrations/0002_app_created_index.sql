-- 0002_app_created_index — the task list of one API app.
--
-- GET /api/tasks with `mariadb` set (API.md §4.4) asks for one app's
-- tasks newest first, a page at a time: WHERE app_id = ? AND created_at
-- >= ? AND (created_at, request_id) < (cursor) ORDER BY created_at DESC,
-- request_id DESC LIMIT n.  With only (created_at, request_id) the
-- server reads every app's rows of the time range backwards and filters
-- them; this index reads exactly the caller's rows, in order, from the
-- cursor on.
-- IF NOT EXISTS (MariaDB's CREATE INDEX has it): a migrate interrupted
-- after the index was built but before it was recorded runs again cleanly.

CREATE INDEX IF NOT EXISTS ix_app_created_request
    ON task_execution (app_id, created_at, request_id);
