// Compiled by tests/openapi/lint.sh (tsc --strict) against the types that
// openapi-typescript, a stock generator, makes from
// contrib/openapi/openapi.yaml (written to $OUT/api.d.ts): the document
// must give a generator the operations, bodies and answers a client
// uses, with their types.  Nothing here runs.
import type { components, operations, webhooks } from "./gen/api";

type Json<T> = T extends { content: { "application/json": infer B } } ? B : never;
type Problem = components["schemas"]["Problem"];

// submitTask: the body, the Idempotency-Key header and the 202 answer.
const task: operations["submitTask"]["requestBody"]["content"]["application/json"] = {
  requestId: "order-42",
  taskCode: "report.generate",
  triggerType: "delay",
  delayMs: 60000,
  executeParams: { orderId: 42 },
};
const key: operations["submitTask"]["parameters"]["header"] = { "Idempotency-Key": "order-42" };
const accepted: Json<operations["submitTask"]["responses"][202]> = {
  requestId: "order-42",
  taskCode: "report.generate",
  status: "PENDING",
  estimatedDelay: 60,
  createdAt: "2024-06-01T12:00:00.000Z",
  links: { self: "/api/tasks/order-42" },
};

// getTask, listTasks: the task's fields and the page's cursor.
type Task = Json<operations["getTask"]["responses"][200]>;
const status: "PENDING" | "BLOCKED" | "WAITING" | "DISPATCHED" | "RUNNING" | "HELD" | "SUCCESS" | "FAILED" | "CANCELLED" =
  ({} as Task).status;
const page: Json<operations["listTasks"]["responses"][200]> = { items: [], nextCursor: null };
const q: operations["listTasks"]["parameters"]["query"] = { status: ["FAILED"], limit: 5 };

// holdTask answers the task; getBatch the batch with its members' counts.
const held: Json<operations["holdTask"]["responses"][200]>["status"] = "HELD";
type Batch = Json<operations["getBatch"]["responses"][200]>;
const closed: boolean = ({} as Batch).closed;
// holdBatch and releaseBatch answer counts.
const batchHeld: number = ({} as Json<operations["holdBatch"]["responses"][200]>).held;
const batchReleased: number = ({} as Json<operations["releaseBatch"]["responses"][200]>).released;

// Errors: a problem's code is the enum, and 429 is a problem.
const code: components["schemas"]["ProblemCode"] = ({} as Problem).code;
const limited: Problem = {} as operations["submitTask"]["responses"][429]["content"]["application/problem+json"];

// The callback a receiver gets.
const cb: webhooks["taskFinished"]["post"]["requestBody"]["content"]["application/json"]["data"]["status"] = "SUCCESS";

export { task, key, accepted, status, held, closed, batchHeld, batchReleased, page, q, code, limited, cb };
