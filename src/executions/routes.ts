import { Elysia, t } from "elysia";
import { isoFromMs } from "../clock";
import type { Deps } from "../deps";
import { requireApiKey } from "../http/auth";
import { idempotency } from "../http/idempotency";
import { operation } from "../http/operation";
import { Integer, Text, UuidParams } from "../http/schema";
import {
  createExecution,
  getExecution,
  EXECUTION_CODE_CHARS_MAX,
  EXECUTION_TIMEOUT_SECONDS_DEFAULT,
  EXECUTION_TIMEOUT_SECONDS_MAX,
  EXECUTION_TIMEOUT_SECONDS_MIN,
  type Execution,
} from "./service";

const CreateExecutionBody = t.Object(
  {
    code: Text({
      maxLength: EXECUTION_CODE_CHARS_MAX,
      description: `Python source, at most ${EXECUTION_CODE_CHARS_MAX} characters (Unicode code points).`,
      examples: ["print(sum(range(10)))"],
    }),
    timeoutSeconds: t.Optional(
      Integer({
        minimum: EXECUTION_TIMEOUT_SECONDS_MIN,
        maximum: EXECUTION_TIMEOUT_SECONDS_MAX,
        default: EXECUTION_TIMEOUT_SECONDS_DEFAULT,
        description: `${EXECUTION_TIMEOUT_SECONDS_MIN} to ${EXECUTION_TIMEOUT_SECONDS_MAX}, default ${EXECUTION_TIMEOUT_SECONDS_DEFAULT}: the run is killed (exitCode 124) when it passes.`,
      }),
    ),
  },
  { title: "ExecutionRequest" },
);

const CreatedSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    status: t.Literal("pending"),
    estimatedCostPence: Integer({ description: "5p + 1p × timeoutSeconds, held until the run finishes." }),
  },
  { title: "ExecutionCreated" },
);

const nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()]);

const ExecutionSchema = t.Object(
  {
    id: t.String({ format: "uuid" }),
    status: t.Union([t.Literal("pending"), t.Literal("running"), t.Literal("completed"), t.Literal("failed")]),
    exitCode: nullable(
      Integer({
        description: "0, SystemExit's code, 1 for an uncaught exception (MemoryError included), 124 when the timeout killed it, 137 when its memory limit did.",
      }),
    ),
    stdout: nullable(t.String({ description: "At most 64 KiB of UTF-8, with a marker when truncated." })),
    stderr: nullable(t.String({ description: "At most 64 KiB of UTF-8 (tracebacks land here), with a marker when truncated." })),
    durationMs: nullable(Integer({ description: "Wall-clock time of the code itself." })),
    error: nullable(t.String({ description: "Set when status is failed (a platform error, never charged)." })),
    createdAt: t.String({ format: "date-time" }),
    completedAt: nullable(t.String({ format: "date-time" })),
  },
  { title: "ExecutionRun" },
);

function executionBody(e: Execution) {
  return {
    id: e.id,
    status: e.status,
    exitCode: e.exitCode,
    stdout: e.stdout,
    stderr: e.stderr,
    durationMs: e.durationMs,
    error: e.error,
    createdAt: isoFromMs(e.createdAtMs),
    completedAt: e.completedAtMs === null ? null : isoFromMs(e.completedAtMs),
  };
}

export function executionsRoutes(deps: Deps) {
  return new Elysia({ prefix: "/v1" })
    .use(requireApiKey())
    .use(idempotency(deps))
    .post(
      "/executions",
      ({ auth, body, operationId, set }) => {
        const created = createExecution(deps, auth.orgId, operationId, body);
        set.status = 202;
        return created;
      },
      {
        body: CreateExecutionBody,
        response: { 202: CreatedSchema },
        detail: operation({
          operationId: "createExecution",
          summary: "Run Python in the sandbox",
          description: `Runs Python (Pyodide, standard library only, no network, no filesystem beyond its own memory) in a
fresh isolated process that serves this run only. Holds 5p + 1p × timeoutSeconds (${EXECUTION_TIMEOUT_SECONDS_MIN}–${EXECUTION_TIMEOUT_SECONDS_MAX}, default
${EXECUTION_TIMEOUT_SECONDS_DEFAULT}) and returns 202 with status pending; poll GET /v1/executions/{id}. A run may use REGKB_EXECUTION_MEMORY_MB (default 512 MiB): Python past it gets MemoryError;
a process that grows past it anyway is stopped with exit code 137 and a MemoryError line on stderr. When the code ends
(any exit code, 124 at the timeout, 137 at the memory limit) 5p + 1p per started second is settled, never above the hold; a platform failure releases the hold and charges
nothing. At-least-once: a run cut off by a server restart runs again. Nothing is created when the request is
refused; 503 sandbox_unavailable means this host cannot isolate code (details say why).`,
          tag: "Executions",
          errors: ["insufficient_credit", "sandbox_unavailable"],
        }),
      },
    )
    .get("/executions/:id", ({ auth, params }) => executionBody(getExecution(deps, auth.orgId, params.id)), {
      params: UuidParams,
      response: { 200: ExecutionSchema },
      detail: operation({
        operationId: "getExecution",
        summary: "Get an execution",
        description: `Status pending → running → completed (exitCode, stdout, stderr, durationMs set; a non-zero exitCode is still
completed) or failed (error set, nothing charged). An unknown or malformed id, or another organisation's
execution, is 404 not_found. Free.`,
        tag: "Executions",
      }),
    });
}
