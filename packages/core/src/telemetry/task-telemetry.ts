import {
  context as otelContext,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Counter,
  type Histogram,
  type MeterProvider,
  type Span,
  type TracerProvider,
  type UpDownCounter,
} from '@opentelemetry/api';
import type { JsonRpcErrorObject } from '../errors/json-rpc-error.js';
import type { JsonObject } from '../json/json-value.js';
import { isTerminal, type TaskStatus } from '../task/task-status.js';
import type { TaskOwner } from '../task/task-owner.js';
import type { Logger } from '../log/logger.js';
import { ownerHash } from '../log/owner-hash.js';
import { taskRunChannel, taskStatusChannel, type TaskRunMessage, type TaskStatusMessage } from './task-channels.js';
import { creatorLinks } from './task-trace-context.js';

/** Where telemetry goes; both default to the global OpenTelemetry providers (no-ops without an SDK). */
export interface TelemetryOptions {
  readonly tracerProvider?: TracerProvider;
  readonly meterProvider?: MeterProvider;
}

/** What identifies a task in every event, span and metric. */
export interface TaskLabels {
  readonly taskId: string;
  readonly tool: string;
  readonly server: string;
  /** Logged as its hash only; never in a span, a metric or a channel message. */
  readonly owner?: TaskOwner;
}

const SCOPE = '@mcp-tasks/core';

/** The `mcp.task.status` values of `mcp_tasks.finished`: each is exported at 0 from the start, so a rate of any of them has a series. */
const FINISHED_STATUSES = ['completed', 'failed', 'cancelled', 'expired'] as const;

/**
 * A node's telemetry: diagnostics_channel events, OpenTelemetry spans and metrics. Libraries only
 * use the API; an application that starts an OpenTelemetry SDK gets the data, and one that does not
 * pays for no-op calls. Channel messages are built only when someone subscribes.
 */
export class TaskTelemetry {
  readonly #nodeId: string;
  readonly #logger: Logger | undefined;
  readonly #tracerProvider: TracerProvider | undefined;
  readonly #created: Counter;
  readonly #finished: Counter;
  readonly #unfinished: Counter;
  readonly #abortsIgnored: Counter;
  readonly #running: UpDownCounter;
  readonly #runDuration: Histogram;
  readonly #inputWaits: Counter;
  readonly #cancelDelivery: Histogram;
  readonly #quotaRefusals: Counter;
  readonly #claims: Counter;
  readonly #handovers: Counter;
  /** What every run's telemetry records into: one object for all runs. */
  readonly #runInstruments: RunInstruments;

  constructor(nodeId: string, options: TelemetryOptions = {}, logger?: Logger) {
    this.#nodeId = nodeId;
    this.#logger = logger;
    this.#tracerProvider = options.tracerProvider;
    // Instruments are made here, not at import: the global meter provider is a no-op until the
    // application's SDK starts, and the API has no proxy for meters.
    const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE);
    this.#created = meter.createCounter('mcp_tasks.created', { description: 'Tasks created on this node' });
    this.#finished = meter.createCounter('mcp_tasks.finished', { description: 'Task runs ended on this node, by final status' });
    this.#unfinished = meter.createCounter('mcp_tasks.runs.unfinished', {
      description: 'Task runs ended on this node that left their task live, by how (parked, released, left)',
    });
    this.#abortsIgnored = meter.createCounter('mcp_tasks.runs.ignored_abort', {
      description: 'Aborted task runs that had not returned within the abort grace period; their run slots were given back',
    });
    this.#running = meter.createUpDownCounter('mcp_tasks.running', { description: 'Task runs executing on this node now' });
    this.#runDuration = meter.createHistogram('mcp_tasks.run.duration_seconds', {
      description: 'Duration of task runs',
      unit: 's',
      // Seconds, for runs from milliseconds to an hour (the SDK's default buckets suit milliseconds).
      advice: { explicitBucketBoundaries: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600] },
    });
    this.#inputWaits = meter.createCounter('mcp_tasks.input.waits', { description: 'Times a task waited for client input' });
    this.#cancelDelivery = meter.createHistogram('mcp_tasks.cancel.delivery_seconds', {
      description: 'Time from a cancel being stored to the run on this node noticing it',
      unit: 's',
      advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
    });
    this.#quotaRefusals = meter.createCounter('mcp_tasks.quota.refusals', { description: 'Task creations refused by maxPerPrincipal' });
    this.#claims = meter.createCounter('mcp_tasks.claims', { description: 'Queued or released tasks this node claimed to run' });
    this.#handovers = meter.createCounter('mcp_tasks.handovers', { description: 'Resumable runs this node released for another node at drain' });
    this.#runInstruments = { running: this.#running, finished: this.#finished, unfinished: this.#unfinished, duration: this.#runDuration };
    // A sum with no data point is not exported at all: record zero so scrapers and dashboards see
    // `mcp_tasks_created_total` and `mcp_tasks_running` from the start.
    this.#created.add(0, { 'mcp_tasks.node.id': nodeId });
    this.#running.add(0, { 'mcp_tasks.node.id': nodeId });
    this.#claims.add(0, { 'mcp_tasks.node.id': nodeId });
    this.#inputWaits.add(0, { 'mcp_tasks.node.id': nodeId });
    this.#quotaRefusals.add(0, { 'mcp_tasks.node.id': nodeId });
    this.#handovers.add(0, { 'mcp_tasks.node.id': nodeId });
    for (const status of FINISHED_STATUSES) this.#finished.add(0, { 'mcp_tasks.node.id': nodeId, 'mcp.task.status': status });
  }

  created(task: TaskLabels): void {
    this.#created.add(1, { 'gen_ai.tool.name': task.tool, 'mcp_tasks.server': task.server });
    this.#logger?.info(logFields(task), 'task created');
    this.status(task, 'working');
  }

  claimed(task: TaskLabels): void {
    this.#claims.add(1, { 'gen_ai.tool.name': task.tool, 'mcp_tasks.node.id': this.#nodeId });
  }

  handedOver(task: TaskLabels): void {
    this.#handovers.add(1, { 'gen_ai.tool.name': task.tool, 'mcp_tasks.node.id': this.#nodeId });
  }

  quotaRefused(tool: string, server: string): void {
    this.#quotaRefusals.add(1, { 'gen_ai.tool.name': tool, 'mcp_tasks.server': server });
  }

  inputWait(task: TaskLabels): void {
    this.#inputWaits.add(1, { 'gen_ai.tool.name': task.tool });
  }

  /** An aborted run overstayed its grace period (see `TaskRuntimeOptions.abortGraceMs`). */
  abortIgnored(task: TaskLabels): void {
    this.#abortsIgnored.add(1, { 'gen_ai.tool.name': task.tool, 'mcp_tasks.node.id': this.#nodeId });
  }

  cancelDelivered(seconds: number): void {
    this.#cancelDelivery.record(Math.max(0, seconds), { 'mcp_tasks.node.id': this.#nodeId });
  }

  /** Publishes a status transition this node made or saw. */
  status(task: TaskLabels, status: TaskStatus): void {
    // The node that wrote the terminal status says so, once per task.
    if (isTerminal(status)) this.#logger?.info({ ...logFields(task), status }, 'task ended');
    if (!taskStatusChannel.hasSubscribers) return;
    const message: TaskStatusMessage = { ...pick(task), nodeId: this.#nodeId, status, at: new Date() };
    taskStatusChannel.publish(message);
  }

  /**
   * Opens the telemetry of one run: the `start` event, the `execute_tool` span as a child of
   * `parent` (the context of the `tools/call` that created the task, or a root linked to it: see
   * `creatorContext`), and the running gauge.
   */
  runStarted(task: TaskLabels, parent: Context): RunTelemetry {
    return new RunTelemetry(task, this.#nodeId, parent, this.#tracerProvider, this.#runInstruments);
  }
}

interface RunInstruments {
  readonly running: UpDownCounter;
  readonly finished: Counter;
  readonly unfinished: Counter;
  readonly duration: Histogram;
}

/**
 * The telemetry of one run, from start to end. It lives as long as the run (a waiting one
 * included), so it keeps the span and what its end records, not the context the tool started in.
 */
export class RunTelemetry {
  readonly #parent: Context;
  readonly #span: Span;
  readonly #message: TaskRunMessage | undefined;
  readonly #instruments: RunInstruments;
  readonly #started = performance.now();
  readonly #attributes: Record<string, string>;

  constructor(task: TaskLabels, nodeId: string, parent: Context, tracerProvider: TracerProvider | undefined, instruments: RunInstruments) {
    this.#instruments = instruments;
    this.#attributes = { 'gen_ai.tool.name': task.tool, 'mcp_tasks.node.id': nodeId };
    const tracer = (tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
    const links = creatorLinks(parent);
    this.#span = tracer.startSpan(
      `execute_tool ${task.tool}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': task.tool,
          'gen_ai.tool.type': 'function',
          'mcp.task.id': task.taskId,
          'mcp_tasks.server': task.server,
          'mcp_tasks.node.id': nodeId,
          // A run in a trace of its own names the task's trace, as tasks/get and tasks/cancel do.
          ...(links[0] ? { 'mcp_tasks.task.trace_id': links[0].context.traceId } : {}),
        },
        links,
      },
      parent,
    );
    this.#parent = parent;
    instruments.running.add(1, this.#attributes);
    if (taskRunChannel.hasSubscribers) {
      this.#message = { ...pick(task), nodeId };
      taskRunChannel.start.publish(this.#message);
    }
  }

  /** Runs `fn` inside the run's span context: its own spans become children of `execute_tool`. */
  within<T>(fn: () => T): T {
    return otelContext.with(trace.setSpan(this.#parent, this.#span), fn);
  }

  /** The tool threw. */
  threw(error: unknown, rpcError: JsonRpcErrorObject | undefined): void {
    if (error instanceof Error) this.#span.recordException(error);
    if (this.#message) {
      this.#message.error = error;
      if (rpcError) this.#message.rpcError = rpcError;
      taskRunChannel.error.publish(this.#message);
    }
  }

  /**
   * The run is over and its task still live (see {@link RunEnd}): not a finished task, so
   * `mcp_tasks.finished` and the duration histogram do not count it; the span ends with the
   * status the store holds (`status`).
   */
  leftLive(end: RunEnd, status: TaskStatus): void {
    this.#span.setAttribute('mcp.task.status', status);
    this.#span.setAttribute('mcp_tasks.run.end', end);
    this.#span.end();
    this.#instruments.running.add(-1, this.#attributes);
    this.#instruments.unfinished.add(1, { ...this.#attributes, 'mcp_tasks.run.end': end });
    if (this.#message) {
      this.#message.status = status;
      taskRunChannel.end.publish(this.#message);
    }
  }

  /** The run is over and its outcome written; `status` is what the store holds now. */
  ended(status: TaskStatus | null, outcome: { result?: JsonObject; error?: JsonRpcErrorObject }): void {
    const final = status ?? 'expired';
    this.#span.setAttribute('mcp.task.status', final);
    if (status === 'failed' && outcome.error) {
      this.#span.setAttribute('error.type', String(outcome.error.code));
      this.#span.setAttribute('rpc.response.status_code', String(outcome.error.code));
      this.#span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.message });
    } else if (status === 'completed' && outcome.result?.['isError'] === true) {
      this.#span.setAttribute('error.type', 'tool_error');
      this.#span.setStatus({ code: SpanStatusCode.ERROR, message: 'The tool returned an error result' });
    } else if (status === 'completed') {
      this.#span.setStatus({ code: SpanStatusCode.OK });
    }
    this.#span.end();
    this.#instruments.running.add(-1, this.#attributes);
    this.#instruments.finished.add(1, { ...this.#attributes, 'mcp.task.status': final });
    this.#instruments.duration.record((performance.now() - this.#started) / 1000, { ...this.#attributes, 'mcp.task.status': final });
    if (this.#message) {
      this.#message.status = status;
      if (outcome.error) this.#message.rpcError = outcome.error;
      taskRunChannel.end.publish(this.#message);
    }
  }
}

/**
 * How a run ended without ending its task: `parked` (it gave its slot back to wait for an answer),
 * `released` (handed over for another run: a drain, a lost lease), `left` (its node gave it up,
 * the task as it was for the lease to settle: a close, the database out for a whole lease).
 */
export type RunEnd = 'parked' | 'released' | 'left';

function logFields(task: TaskLabels): Record<string, string> {
  return { taskId: task.taskId, tool: task.tool, server: task.server, ...(task.owner ? { owner: ownerHash(task.owner) } : {}) };
}

function pick(task: TaskLabels): TaskLabels {
  return { taskId: task.taskId, tool: task.tool, server: task.server };
}
