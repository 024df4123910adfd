import { createInterface, type Interface } from 'node:readline';

/**
 * Questions and answers, one line each, on the user's terminal (or on whatever stdin is: lines
 * piped in answer in order). Opened lazily, so a call that asks nothing never holds stdin open.
 */
export class LineReader {
  #rl: Interface | undefined;
  #lines: string[] = [];
  #waiting: ((line: string | undefined) => void) | undefined;
  #ended = false;
  #closing = false;
  // Set while the question being asked no longer stands (its task ended): every ask answers undefined.
  #withdrawn = false;

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly terminal: boolean,
    /** Ctrl-C while a question is open: readline takes the key, so it is passed on here. */
    private readonly onInterrupt: () => void,
  ) {}

  /** The next line typed after `prompt`, or undefined once input ended. */
  ask(prompt: string): Promise<string | undefined> {
    if (this.#withdrawn) return Promise.resolve(undefined);
    const rl = this.#open();
    this.output.write(prompt);
    const queued = this.#lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#ended) return Promise.resolve(undefined);
    rl.resume();
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  /**
   * Lets stdin go while nothing is being asked. On a terminal readline holds it in raw mode,
   * where Ctrl-C is a key and no signal: closing the interface gives the terminal back (the
   * next question opens a new one). Piped input is only paused, so no line already read is lost.
   */
  pause(): void {
    this.#withdrawn = false;
    if (this.terminal) this.close();
    else this.#rl?.pause();
  }

  /**
   * Takes back the open question (the task it was for ended, or was answered elsewhere): the
   * waiting ask answers undefined, as do any more until `pause`, and the prompt's line is ended.
   */
  withdraw(): void {
    this.#withdrawn = true;
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting) {
      this.output.write('\n');
      waiting(undefined);
    }
  }

  close(): void {
    this.#closing = true;
    this.#rl?.close();
    this.#closing = false;
    this.#rl = undefined;
  }

  #open(): Interface {
    if (this.#rl) return this.#rl;
    const rl = createInterface({ input: this.input, output: this.terminal ? this.output : undefined, terminal: this.terminal });
    rl.on('line', (line) => {
      // Piped answers are not echoed: end the prompt's line so the next one starts on its own.
      if (!this.terminal) this.output.write('\n');
      const waiting = this.#waiting;
      this.#waiting = undefined;
      if (waiting) waiting(line);
      else this.#lines.push(line);
    });
    rl.on('close', () => {
      // Input ended, unless this reader closed the interface itself.
      if (!this.#closing) this.#ended = true;
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.(undefined);
    });
    rl.on('SIGINT', () => this.onInterrupt());
    this.#rl = rl;
    return rl;
  }
}
