import { TaskCancelledError } from '../errors/task-cancelled-error.js';
import type { ClientCapabilities } from '../input/client-capabilities.js';
import type { InputRequest, InputResponse } from '../input/input-request.js';
import type { JsonObject, JsonValue } from '../json/json-value.js';
import type { TaskStep } from '../store/task-store.js';
import type { TaskOwner } from '../task/task-owner.js';
import type { ActiveRun } from './active-run.js';
import type { ElicitParams, ElicitResult, RootsResult, SampleParams, SampleResult, TaskContext } from './task-context.js';

/** What a run's context asks of its runtime: one object per runtime, shared by every run. */
export interface RunContextHost {
  step<T extends JsonValue | void>(run: ActiveRun, name: string, fn: () => T | Promise<T>): Promise<T>;
  journal(run: ActiveRun): Promise<readonly TaskStep[]>;
  progress(run: ActiveRun, progress: number, total: number | undefined, message: string | undefined): Promise<void>;
  /** Asks for input and waits for the answer; `undefined` when the task ended meanwhile. */
  ask(run: ActiveRun, capabilities: ClientCapabilities | undefined, key: string, request: InputRequest): Promise<InputResponse | undefined>;
}

/** The accessors every context defines on itself (made in the class's static block, which sees its private fields). */
let ACCESSORS: PropertyDescriptorMap;

/**
 * The {@link TaskContext} a run's tool gets. A node may hold many thousand runs waiting for input,
 * each with its context alive in the tool's frame, so the context holds its run and nothing per
 * method: `signal` and the methods are own enumerable accessors whose getters are shared by every
 * context (one hidden class for all). Reading a method makes a function bound to its context, so
 * `ctx.elicit(…)`, `const { elicit } = ctx` and `{ ...ctx }` all work as with plain properties;
 * the run's `AbortController` is made only when `signal` is read.
 */
export class RunContext implements TaskContext {
  readonly taskId: string;
  readonly owner: TaskOwner;
  readonly attempt: number;
  declare readonly signal: AbortSignal;
  declare readonly cancelled: () => boolean;
  declare readonly step: TaskContext['step'];
  declare readonly journal: () => Promise<readonly TaskStep[]>;
  declare readonly progress: (progress: number, total?: number, message?: string) => Promise<void>;
  declare readonly elicit: (key: string, params: ElicitParams) => Promise<ElicitResult>;
  declare readonly sample: (key: string, params: SampleParams) => Promise<SampleResult>;
  declare readonly roots: (key: string) => Promise<RootsResult>;
  readonly #run: ActiveRun;
  readonly #host: RunContextHost;
  readonly #capabilities: ClientCapabilities | undefined;

  constructor(run: ActiveRun, host: RunContextHost, capabilities: ClientCapabilities | undefined) {
    this.taskId = run.ref.taskId;
    this.owner = run.ref.owner;
    this.attempt = run.claim.attempt;
    this.#run = run;
    this.#host = host;
    this.#capabilities = capabilities;
    Object.defineProperties(this, ACCESSORS);
  }

  /** A context of the same run with `fields` added as own properties (what `{ ...ctx, ...fields }` gives, keeping the accessors). */
  with<T extends object>(fields: T): this & T {
    return Object.assign(new RunContext(this.#run, this.#host, this.#capabilities), fields) as this & T;
  }

  static {
    const accessor = (get: (ctx: RunContext) => unknown): PropertyDescriptor => ({
      enumerable: true,
      get(this: RunContext) {
        return get(this);
      },
    });
    ACCESSORS = {
      signal: accessor((ctx) => ctx.#run.signal),
      cancelled: accessor((ctx) => () => ctx.#run.aborted),
      step: accessor((ctx) => <T extends JsonValue | void>(name: string, fn: () => T | Promise<T>) => ctx.#host.step(ctx.#run, name, fn)),
      journal: accessor((ctx) => () => ctx.#host.journal(ctx.#run)),
      progress: accessor((ctx) => (progress: number, total?: number, message?: string) => ctx.#host.progress(ctx.#run, progress, total, message)),
      elicit: accessor(
        (ctx) => (key: string, params: ElicitParams) =>
          ctx.#host.ask(ctx.#run, ctx.#capabilities, key, { method: 'elicitation/create', params: params as JsonObject }).then(elicitResult),
      ),
      sample: accessor(
        (ctx) => (key: string, params: SampleParams) =>
          ctx.#host.ask(ctx.#run, ctx.#capabilities, key, { method: 'sampling/createMessage', params: params as JsonObject }).then(answered<SampleResult>),
      ),
      roots: accessor((ctx) => (key: string) => ctx.#host.ask(ctx.#run, ctx.#capabilities, key, { method: 'roots/list', params: {} }).then(answered<RootsResult>)),
    };
  }
}

/** A cancelled task's elicitation reads as the client cancelling it. */
function elicitResult(response: InputResponse | undefined): ElicitResult {
  return (response ?? { action: 'cancel' }) as ElicitResult;
}

/** Sampling and roots have no "cancel" answer: a task cancelled meanwhile rejects. */
function answered<T>(response: InputResponse | undefined): T {
  if (!response) throw new TaskCancelledError();
  return response as T;
}

/**
 * `ctx` with `fields` added, as `{ ...ctx, ...fields }` gives (what a layer above the runtime
 * hands its tools), without reading its accessors: the copy of a run's context makes no signal
 * and no method functions until they are used.
 */
export function extendTaskContext<T extends object>(ctx: TaskContext, fields: T): TaskContext & T {
  return ctx instanceof RunContext ? ctx.with(fields) : { ...ctx, ...fields };
}
