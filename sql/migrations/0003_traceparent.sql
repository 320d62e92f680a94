-- 0003_traceparent — the W3C trace context of each task and attempt.
--
-- task_execution.traceparent: the task's own traceparent (the task
-- member, the API's traceparent header, `submit --traceparent`, or the
-- one a released dependent continues from its parent), as the result
-- envelope carries it.  task_attempt.traceparent: the span of one
-- attempt (a child of the task's, the TRACEPARENT a hook was given).
-- Version-00 values only (W3C Trace Context Level 1, §3.2: exactly 55
-- characters, lowercase hex); NULL = the task had none.
-- IF NOT EXISTS (MariaDB's ALTER TABLE ... ADD COLUMN has it): a migrate
-- interrupted after the ALTER but before it was recorded runs again
-- cleanly.

ALTER TABLE task_execution
    ADD COLUMN IF NOT EXISTS traceparent VARCHAR(55) NULL;
ALTER TABLE task_attempt
    ADD COLUMN IF NOT EXISTS traceparent VARCHAR(55) NULL;
