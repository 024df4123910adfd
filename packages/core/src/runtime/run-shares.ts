import { ownerKey } from '../task/task-owner.js';
import type { ActiveRun } from './active-run.js';

/**
 * The fair share of a contended node: while runs of more than one owner are in motion here (not
 * waiting for input), each owner's runs beyond `max(1, floor(budget / owners))` are held back at
 * their next context call (`ctx.step`, `ctx.progress`, `ctx.journal`) until the owner is within
 * its share again; the first runs to start go first. An owner alone is never held back, so a
 * node that serves one owner (every caller of a node without authorization shares one host
 * scope) runs exactly as before, and nothing is ever refused or queued in the store: held back
 * runs keep their tasks and go on where they stood.
 *
 * Why at the context calls: JavaScript cannot preempt a function, and a run's context calls are
 * where it meets the store; one owner's many runs there fill the pool and the event loop every
 * other owner's requests and runs wait behind.
 */
export class RunShares {
  readonly budget: number;
  /** Each owner's runs here, in the order they started. */
  readonly #owners = new Map<string, Set<ActiveRun>>();
  readonly #keys = new Map<ActiveRun, string>();
  /** Each owner's runs in motion (not waiting for input); an owner with none is absent. */
  readonly #motion = new Map<string, number>();
  /** Runs counted as waiting for input. */
  readonly #waiting = new Set<ActiveRun>();
  readonly #heldBack = new Set<ActiveRun>();
  #lifted = false;

  constructor(budget: number) {
    this.budget = budget;
  }

  /** Runs of one owner in motion while the node is contended (`Infinity` while it is not). */
  get share(): number {
    return this.#lifted || this.#motion.size <= 1 ? Infinity : Math.max(1, Math.floor(this.budget / this.#motion.size));
  }

  /** Runs held back now (tests, metrics). */
  get heldBack(): number {
    return this.#heldBack.size;
  }

  /** A run started here. */
  add(run: ActiveRun): void {
    const key = ownerKey(run.ref.owner);
    this.#keys.set(run, key);
    let runs = this.#owners.get(key);
    if (!runs) this.#owners.set(key, (runs = new Set()));
    runs.add(run);
    this.#move(key, 1);
  }

  /** A run no longer holds its slot here. */
  remove(run: ActiveRun): void {
    const key = this.#keys.get(run);
    if (key === undefined) return;
    this.#keys.delete(run);
    this.#heldBack.delete(run);
    const runs = this.#owners.get(key)!;
    runs.delete(run);
    if (runs.size === 0) this.#owners.delete(key);
    if (this.#waiting.delete(run)) return;
    this.#move(key, -1);
  }

  /** The run started or stopped waiting for input (waiting is not running). */
  changed(run: ActiveRun): void {
    const key = this.#keys.get(run);
    const waiting = run.waitingKeys.length > 0;
    if (key === undefined || waiting === this.#waiting.has(run)) return;
    if (waiting) this.#waiting.add(run);
    else this.#waiting.delete(run);
    this.#move(key, waiting ? -1 : 1);
  }

  /** Holds nothing back from now on (a draining node lets its runs finish). */
  lift(): void {
    this.#lifted = true;
    for (const run of this.#heldBack) run.wake();
    this.#heldBack.clear();
  }

  /** Whether `run` must wait for its turn now. */
  holds(run: ActiveRun): boolean {
    return this.#heldBack.has(run);
  }

  /** Resolves once the run may go on; an aborted run goes on, to find itself aborted. */
  async turn(run: ActiveRun): Promise<void> {
    while (this.#heldBack.has(run) && !run.aborted) await run.nextWake();
  }

  /** The owner's runs in motion changed by `delta`: judge again whom the change concerns. */
  #move(key: string, delta: number): void {
    const owners = this.#motion.size;
    const count = (this.#motion.get(key) ?? 0) + delta;
    if (count > 0) this.#motion.set(key, count);
    else this.#motion.delete(key);
    // The share depends on how many owners are in motion: when that changed, every owner is judged again.
    if (this.#motion.size !== owners) {
      for (const owner of this.#owners.keys()) this.#judge(owner);
    } else if (this.#motion.size > 1 || this.#heldBack.size > 0) {
      this.#judge(key);
    }
  }

  /** Holds back the owner's runs in motion beyond its share, first started first served, and lets go of the rest. */
  #judge(key: string): void {
    const runs = this.#owners.get(key);
    if (!runs) return;
    const share = this.share;
    let inMotion = 0;
    for (const run of runs) {
      if (this.#waiting.has(run)) continue;
      inMotion += 1;
      if (inMotion > share) {
        this.#heldBack.add(run);
      } else if (this.#heldBack.delete(run)) {
        run.wake();
      }
    }
  }
}
