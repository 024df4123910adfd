/**
 * Checks the cancel hints of one run against the row before the run is aborted: a notification
 * can be sent by any database connection, so only the row says whether the task ended. One read
 * is in flight at a time; hints that arrive during it coalesce into one more read, so a flood of
 * hints costs at most one read after another, per run.
 */
export class CancelHintCheck {
  readonly #ended: () => Promise<boolean>;
  readonly #abort: () => void;
  readonly #onError: (error: unknown) => void;
  #reading = false;
  #again = false;

  /** `ended` reads the row: true when the task is terminal or gone. */
  constructor(ended: () => Promise<boolean>, abort: () => void, onError: (error: unknown) => void) {
    this.#ended = ended;
    this.#abort = abort;
    this.#onError = onError;
  }

  /** A cancel was announced: read the row (or once more after the read under way) and abort if it ended. */
  hint(): void {
    if (this.#reading) {
      this.#again = true;
      return;
    }
    this.#reading = true;
    void this.#check();
  }

  async #check(): Promise<void> {
    try {
      do {
        this.#again = false;
        if (await this.#ended()) {
          this.#abort();
          return;
        }
      } while (this.#again);
    } catch (error) {
      // The backstop poll reads the row again soon.
      this.#onError(error);
    } finally {
      this.#reading = false;
    }
  }
}
