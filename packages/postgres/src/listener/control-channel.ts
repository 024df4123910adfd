/** What a control notification asks of the node running a task. Payloads carry ids only. */
export interface ControlMessage {
  /**
   * `cancel` and `input` go to the running node; `status` (and both others) to followers;
   * `claimable` (a task no run holds: queued or released) to every node that claims.
   */
  readonly op: 'cancel' | 'input' | 'status' | 'claimable';
  readonly taskId: string;
}

/** The NOTIFY channel of a schema's control messages. */
export function controlChannelOf(schema: string): string {
  return `${schema}_control`;
}

/**
 * The channel one node instance LISTENs on for its own wake-ups: cancels and answers of the tasks
 * it runs (migration 0021). The schema's first 40 characters keep it inside PostgreSQL's 63-byte
 * channel limit (schemas allow 48); the instance id (64 random bits) keeps it unique.
 */
export function wakeChannelOf(schema: string, instanceId: string): string {
  return `${schema.slice(0, 40)}_wake_${instanceId}`;
}

/** Parses a payload; `undefined` for anything this version does not understand. */
export function parseControlMessage(payload: string | undefined): ControlMessage | undefined {
  if (!payload) return undefined;
  try {
    const message = JSON.parse(payload) as Partial<ControlMessage> | null;
    if ((message?.op === 'cancel' || message?.op === 'input' || message?.op === 'status' || message?.op === 'claimable') && typeof message.taskId === 'string') {
      return { op: message.op, taskId: message.taskId };
    }
  } catch {
    // A payload from a newer or foreign writer: ignored; the backstop poll covers the task.
  }
  return undefined;
}
