import type { InputRequest, InputResponse, InputResponses } from '../input/input-request.js';
import type { TaskInput } from '../task/task-record.js';
import type { TaskStatus, TerminalTaskStatus } from '../task/task-status.js';

// One table of lifecycle cases. `core` checks its pure decisions against it, and every store runs
// it through its real operations (runTaskMachineCases), so the SQL store's statements and the memory
// store are held to the same answers as the state machine itself.

/** How a case's task stands before the act; reached through ordinary store operations. */
export interface MachineGiven {
  /** Keys asked, in order. */
  readonly asked?: readonly string[];
  /** Asked keys that were answered (accepted answers). */
  readonly answered?: readonly string[];
  /** How the task ended, if it did. */
  readonly ended?: TerminalTaskStatus;
  /**
   * The first run handed the task over and {@link RUNNER} claimed it again: attempt 2 holds it,
   * and attempt 1 is a superseded run.
   */
  readonly reclaimed?: boolean;
  /** The run waiting on the first asked key gave the task back (`park`), before any answer. */
  readonly parked?: boolean;
  /** The task survives the loss of its run (default false). */
  readonly resumable?: boolean;
  /** Runs it may lose (default 3). */
  readonly maxAttempts?: number;
}

/**
 * What a case does. A `claim` names the node a run writes as (the task's runner is {@link RUNNER})
 * and `attempt` the attempt it writes under (default: the one that holds the task).
 */
export type MachineAct =
  | ({ readonly op: 'ask'; readonly key: string } & RunWrite)
  | { readonly op: 'read'; readonly key: string }
  | { readonly op: 'answer'; readonly responses: Readonly<Record<string, 'good' | 'bad'>> }
  | { readonly op: 'cancel' }
  | ({ readonly op: 'finish' } & RunWrite)
  | ({ readonly op: 'progress' } & RunWrite)
  | ({ readonly op: 'step' } & RunWrite)
  | ({ readonly op: 'park'; readonly key: string } & RunWrite)
  | { readonly op: 'claim' }
  /** The runner's run was lost (its node's lease expired, or its node holds no run for it): the lost-run rule. */
  | { readonly op: 'lose' }
  /** The same owner creates another task under a live-task limit of `maxLive`: the quota rule. */
  | { readonly op: 'create'; readonly maxLive: number };

/** Who a run's write claims to be. */
export interface RunWrite {
  readonly claim?: string;
  readonly attempt?: number;
}

/**
 * What the act answered, in words: `pending`, `answered`, `ended` (ask, read); `accepted:a,b` or
 * `refused` (answer); `cancelled`, `unchanged` (cancel); `written`, `lost` (finish, progress); `run`, `lost` (step);
 * `parked`, `kept` (park); `claimed`, `none` (claim by {@link RUNNER}); `released`, `failed`,
 * `unchanged` (lose); `created`, `refused` (create).
 */
export type MachineAnswer = string;

export interface MachineExpect {
  readonly answer: MachineAnswer;
  /** The status after the act. */
  readonly status: TaskStatus;
  /** The keys outstanding after the act. */
  readonly outstanding: readonly string[];
  /**
   * Who holds the task after the act: the attempt that held it (`runner`, the default), no run
   * (`none`), or the runner's next attempt (`next`, a claim).
   */
  readonly holder?: 'runner' | 'none' | 'next';
}

export interface MachineCase {
  readonly name: string;
  readonly given: MachineGiven;
  readonly act: MachineAct;
  readonly expect: MachineExpect;
}

/** The node whose run holds every case's task. */
export const RUNNER = 'node-a';

/** The request every case's keys ask. */
export const CASE_REQUEST: InputRequest = {
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
};

const GOOD: InputResponse = { action: 'accept', content: { name: 'Ada' } };
const BAD: InputResponse = { action: 'maybe' };

/** The `tasks/update` answers of an `answer` act. */
export function caseResponses(responses: Readonly<Record<string, 'good' | 'bad'>>): InputResponses {
  const out: InputResponses = {};
  for (const [key, kind] of Object.entries(responses)) out[key] = kind === 'good' ? GOOD : BAD;
  return out;
}

/** The inputs of a case's task before the act. */
export function caseInputs(given: MachineGiven): Record<string, TaskInput> {
  const inputs: Record<string, TaskInput> = {};
  for (const key of given.asked ?? []) inputs[key] = given.answered?.includes(key) ? { request: CASE_REQUEST, response: GOOD } : { request: CASE_REQUEST };
  return inputs;
}

/** The status of a case's task before the act. */
export function caseStatus(given: MachineGiven): TaskStatus {
  if (given.ended) return given.ended;
  const outstanding = (given.asked ?? []).filter((key) => !given.answered?.includes(key));
  return outstanding.length > 0 ? 'input_required' : 'working';
}

export const TASK_MACHINE_CASES: readonly MachineCase[] = [
  { name: 'a new key moves a working task to input_required', given: {}, act: { op: 'ask', key: 'a' }, expect: { answer: 'pending', status: 'input_required', outstanding: ['a'] } },
  { name: 'asking an outstanding key again keeps it pending', given: { asked: ['a'] }, act: { op: 'ask', key: 'a' }, expect: { answer: 'pending', status: 'input_required', outstanding: ['a'] } },
  { name: 'asking a second key keeps the first outstanding', given: { asked: ['a'] }, act: { op: 'ask', key: 'b' }, expect: { answer: 'pending', status: 'input_required', outstanding: ['a', 'b'] } },
  { name: 'asking an answered key replays its first answer and changes nothing', given: { asked: ['a'], answered: ['a'] }, act: { op: 'ask', key: 'a' }, expect: { answer: 'answered', status: 'working', outstanding: [] } },
  { name: 'an answered key is replayed even once the task ended', given: { asked: ['a'], answered: ['a'], ended: 'completed' }, act: { op: 'ask', key: 'a' }, expect: { answer: 'answered', status: 'completed', outstanding: [] } },
  { name: 'a terminal task asks nothing', given: { ended: 'cancelled' }, act: { op: 'ask', key: 'a' }, expect: { answer: 'ended', status: 'cancelled', outstanding: [] } },
  { name: 'a run that no longer holds its task asks nothing', given: {}, act: { op: 'ask', key: 'a', claim: 'node-b' }, expect: { answer: 'ended', status: 'working', outstanding: [] } },
  { name: 'an inherited property name is a key like any other', given: {}, act: { op: 'ask', key: 'constructor' }, expect: { answer: 'pending', status: 'input_required', outstanding: ['constructor'] } },
  { name: 'a pending key reads as pending', given: { asked: ['a'] }, act: { op: 'read', key: 'a' }, expect: { answer: 'pending', status: 'input_required', outstanding: ['a'] } },
  { name: 'an answered key reads as answered', given: { asked: ['a', 'b'], answered: ['a'] }, act: { op: 'read', key: 'a' }, expect: { answer: 'answered', status: 'input_required', outstanding: ['b'] } },
  { name: 'a key of a failed task reads as ended', given: { asked: ['a'], ended: 'failed' }, act: { op: 'read', key: 'a' }, expect: { answer: 'ended', status: 'failed', outstanding: ['a'] } },
  { name: 'answering the only outstanding key returns the task to working', given: { asked: ['a'] }, act: { op: 'answer', responses: { a: 'good' } }, expect: { answer: 'accepted:a', status: 'working', outstanding: [] } },
  { name: 'a partial answer keeps the task input_required with the rest outstanding', given: { asked: ['a', 'b'] }, act: { op: 'answer', responses: { a: 'good' } }, expect: { answer: 'accepted:a', status: 'input_required', outstanding: ['b'] } },
  { name: 'answers to unknown keys are ignored', given: { asked: ['a'] }, act: { op: 'answer', responses: { z: 'good' } }, expect: { answer: 'accepted:', status: 'input_required', outstanding: ['a'] } },
  { name: 'an inherited property name answers no key', given: { asked: ['a'] }, act: { op: 'answer', responses: { constructor: 'good' as const, toString: 'good' as const } }, expect: { answer: 'accepted:', status: 'input_required', outstanding: ['a'] } },
  { name: 'an answered key takes no second answer', given: { asked: ['a', 'b'], answered: ['a'] }, act: { op: 'answer', responses: { a: 'good' } }, expect: { answer: 'accepted:', status: 'input_required', outstanding: ['b'] } },
  { name: 'one bad answer writes none of the answers', given: { asked: ['a', 'b'] }, act: { op: 'answer', responses: { a: 'good', b: 'bad' } }, expect: { answer: 'refused', status: 'input_required', outstanding: ['a', 'b'] } },
  { name: 'a terminal task takes no answer', given: { asked: ['a'], ended: 'cancelled' }, act: { op: 'answer', responses: { a: 'good' } }, expect: { answer: 'accepted:', status: 'cancelled', outstanding: ['a'] } },
  { name: 'a cancel ends a working task', given: {}, act: { op: 'cancel' }, expect: { answer: 'cancelled', status: 'cancelled', outstanding: [] } },
  { name: 'a cancel ends a task waiting for input', given: { asked: ['a'] }, act: { op: 'cancel' }, expect: { answer: 'cancelled', status: 'cancelled', outstanding: ['a'] } },
  { name: 'a cancel leaves a completed task as it is', given: { ended: 'completed' }, act: { op: 'cancel' }, expect: { answer: 'unchanged', status: 'completed', outstanding: [] } },
  { name: 'the run that holds a task finishes it', given: {}, act: { op: 'finish' }, expect: { answer: 'written', status: 'completed', outstanding: [] } },
  { name: 'a run may finish a task that waits for input', given: { asked: ['a'] }, act: { op: 'finish' }, expect: { answer: 'written', status: 'completed', outstanding: ['a'] } },
  { name: 'a run that no longer holds its task cannot finish it', given: {}, act: { op: 'finish', claim: 'node-b' }, expect: { answer: 'lost', status: 'working', outstanding: [] } },
  { name: 'a finish after a cancel loses', given: { ended: 'cancelled' }, act: { op: 'finish' }, expect: { answer: 'lost', status: 'cancelled', outstanding: [] } },
  { name: 'a finish after a failure loses', given: { ended: 'failed' }, act: { op: 'finish' }, expect: { answer: 'lost', status: 'failed', outstanding: [] } },
  { name: 'progress keeps a waiting task waiting', given: { asked: ['a'] }, act: { op: 'progress' }, expect: { answer: 'written', status: 'input_required', outstanding: ['a'] } },
  { name: 'progress from a run that no longer holds its task is refused', given: {}, act: { op: 'progress', claim: 'node-b' }, expect: { answer: 'lost', status: 'working', outstanding: [] } },
  { name: 'a write from a superseded attempt cannot finish the task', given: { reclaimed: true }, act: { op: 'finish', attempt: 1 }, expect: { answer: 'lost', status: 'working', outstanding: [] } },
  { name: 'the attempt that holds a reclaimed task finishes it', given: { reclaimed: true }, act: { op: 'finish' }, expect: { answer: 'written', status: 'completed', outstanding: [] } },
  { name: 'progress from a superseded attempt is refused', given: { reclaimed: true }, act: { op: 'progress', attempt: 1 }, expect: { answer: 'lost', status: 'working', outstanding: [] } },
  { name: 'a superseded attempt asks nothing', given: { reclaimed: true }, act: { op: 'ask', key: 'a', attempt: 1 }, expect: { answer: 'ended', status: 'working', outstanding: [] } },
  { name: 'a superseded attempt journals no step', given: { reclaimed: true }, act: { op: 'step', attempt: 1 }, expect: { answer: 'lost', status: 'working', outstanding: [] } },
  { name: 'the attempt that holds the task starts a step', given: { reclaimed: true }, act: { op: 'step' }, expect: { answer: 'run', status: 'working', outstanding: [] } },
  { name: 'a run that no longer holds its task journals no step', given: {}, act: { op: 'step', claim: 'node-b' }, expect: { answer: 'lost', status: 'working', outstanding: [] } },
  { name: 'a later attempt of the same node that held the task fences off the earlier one even once it ended', given: { reclaimed: true, ended: 'cancelled' }, act: { op: 'finish', attempt: 1 }, expect: { answer: 'lost', status: 'cancelled', outstanding: [] } },
  { name: 'progress after the end is refused', given: { ended: 'completed' }, act: { op: 'progress' }, expect: { answer: 'lost', status: 'completed', outstanding: [] } },
  { name: 'a run waiting on an outstanding key gives its task back, which stays input_required with no run', given: { asked: ['a'] }, act: { op: 'park', key: 'a' }, expect: { answer: 'parked', status: 'input_required', outstanding: ['a'], holder: 'none' } },
  { name: 'a run whose key was answered first keeps its task', given: { asked: ['a', 'b'], answered: ['a'] }, act: { op: 'park', key: 'a' }, expect: { answer: 'kept', status: 'input_required', outstanding: ['b'] } },
  { name: 'a run of a working task keeps it', given: {}, act: { op: 'park', key: 'a' }, expect: { answer: 'kept', status: 'working', outstanding: [] } },
  { name: 'a superseded attempt cannot give the task back', given: { reclaimed: true, asked: ['a'] }, act: { op: 'park', key: 'a', attempt: 1 }, expect: { answer: 'kept', status: 'input_required', outstanding: ['a'] } },
  { name: 'a run that no longer holds its task cannot give it back', given: { asked: ['a'] }, act: { op: 'park', key: 'a', claim: 'node-b' }, expect: { answer: 'kept', status: 'input_required', outstanding: ['a'] } },
  { name: 'a task that ended cannot be given back', given: { asked: ['a'], ended: 'cancelled' }, act: { op: 'park', key: 'a' }, expect: { answer: 'kept', status: 'cancelled', outstanding: ['a'] } },
  { name: 'a parked task is not claimable while its key is outstanding', given: { asked: ['a'], parked: true }, act: { op: 'claim' }, expect: { answer: 'none', status: 'input_required', outstanding: ['a'], holder: 'none' } },
  { name: 'answering a parked task returns it to working with no run', given: { asked: ['a'], parked: true }, act: { op: 'answer', responses: { a: 'good' } }, expect: { answer: 'accepted:a', status: 'working', outstanding: [], holder: 'none' } },
  { name: 'an answered parked task is claimed by the next attempt', given: { asked: ['a'], parked: true, answered: ['a'] }, act: { op: 'claim' }, expect: { answer: 'claimed', status: 'working', outstanding: [], holder: 'next' } },
  { name: 'a partial answer keeps a parked task unclaimable', given: { asked: ['a', 'b'], parked: true, answered: ['a'] }, act: { op: 'claim' }, expect: { answer: 'none', status: 'input_required', outstanding: ['b'], holder: 'none' } },
  { name: 'the parked run cannot finish its task', given: { asked: ['a'], parked: true }, act: { op: 'finish' }, expect: { answer: 'lost', status: 'input_required', outstanding: ['a'], holder: 'none' } },
  { name: 'the parked run journals no step', given: { asked: ['a'], parked: true }, act: { op: 'step' }, expect: { answer: 'lost', status: 'input_required', outstanding: ['a'], holder: 'none' } },
  { name: 'a cancel ends a parked task', given: { asked: ['a'], parked: true }, act: { op: 'cancel' }, expect: { answer: 'cancelled', status: 'cancelled', outstanding: ['a'], holder: 'none' } },
  { name: 'a running task is not claimable', given: {}, act: { op: 'claim' }, expect: { answer: 'none', status: 'working', outstanding: [] } },
  // The lost-run rule (postgres/src/sql/lost-run.ts, core's decideLostRun).
  { name: 'a lost run of a resumable task with attempts left releases it as it stood', given: { resumable: true }, act: { op: 'lose' }, expect: { answer: 'released', status: 'working', outstanding: [], holder: 'none' } },
  { name: 'a lost run of a resumable task waiting for input releases it still waiting', given: { resumable: true, asked: ['a'] }, act: { op: 'lose' }, expect: { answer: 'released', status: 'input_required', outstanding: ['a'], holder: 'none' } },
  { name: 'a lost run fails a task that is not resumable', given: {}, act: { op: 'lose' }, expect: { answer: 'failed', status: 'failed', outstanding: [] } },
  { name: 'a resumable task whose run was lost on its last attempt fails', given: { resumable: true, maxAttempts: 1 }, act: { op: 'lose' }, expect: { answer: 'failed', status: 'failed', outstanding: [] } },
  { name: 'a hand-over is no lost attempt', given: { resumable: true, maxAttempts: 2, reclaimed: true }, act: { op: 'lose' }, expect: { answer: 'released', status: 'working', outstanding: [], holder: 'none' } },
  { name: 'a lost run leaves a task that ended as it is', given: { resumable: true, ended: 'completed' }, act: { op: 'lose' }, expect: { answer: 'unchanged', status: 'completed', outstanding: [] } },
  { name: 'a parked task is no lost run', given: { resumable: true, asked: ['a'], parked: true }, act: { op: 'lose' }, expect: { answer: 'unchanged', status: 'input_required', outstanding: ['a'], holder: 'none' } },
  // The quota rule: live tasks (not terminal, not expired) count, whoever holds them.
  { name: 'an owner under its live-task limit gets a new task', given: {}, act: { op: 'create', maxLive: 2 }, expect: { answer: 'created', status: 'working', outstanding: [] } },
  { name: 'an owner at its live-task limit gets no new task', given: {}, act: { op: 'create', maxLive: 1 }, expect: { answer: 'refused', status: 'working', outstanding: [] } },
  { name: 'a task waiting for input counts against the limit', given: { asked: ['a'] }, act: { op: 'create', maxLive: 1 }, expect: { answer: 'refused', status: 'input_required', outstanding: ['a'] } },
  { name: 'a parked task counts against the limit', given: { asked: ['a'], parked: true, resumable: true }, act: { op: 'create', maxLive: 1 }, expect: { answer: 'refused', status: 'input_required', outstanding: ['a'], holder: 'none' } },
  { name: 'a task that ended does not count against the limit', given: { ended: 'cancelled' }, act: { op: 'create', maxLive: 1 }, expect: { answer: 'created', status: 'cancelled', outstanding: [] } },
  { name: 'without a limit an owner always gets a new task', given: { asked: ['a'] }, act: { op: 'create', maxLive: Infinity }, expect: { answer: 'created', status: 'input_required', outstanding: ['a'] } },
];
