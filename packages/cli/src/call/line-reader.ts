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

  constructor(
    private readonly input: NodeJS.ReadableStream,
    private readonly output: NodeJS.WritableStream,
    private readonly terminal: boolean,
    /** Ctrl-C while a question is open: readline takes the key, so it is passed on here. */
    private readonly onInterrupt: () => void,
  ) {}

  /** The next line typed after `prompt`, or undefined once input ended. */
  ask(prompt: string): Promise<string | undefined> {
    const rl = this.#open();
    this.output.write(prompt);
    const queued = this.#lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.#ended) return Promise.resolve(undefined);
    rl.resume();
    return new Promise((resolve) => (this.#waiting = resolve));
  }

  /** Lets stdin go while nothing is being asked (Ctrl-C reaches the process again). */
  pause(): void {
    this.#rl?.pause();
  }

  close(): void {
    this.#rl?.close();
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
      this.#ended = true;
      const waiting = this.#waiting;
      this.#waiting = undefined;
      waiting?.(undefined);
    });
    rl.on('SIGINT', () => this.onInterrupt());
    this.#rl = rl;
    return rl;
  }
}
