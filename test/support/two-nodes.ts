import { TaskRuntime } from '@mcp-tasks/core';
import { PostgresTaskStore, type PostgresTaskNode, type PostgresTaskNodeOptions } from '@mcp-tasks/postgres';
import { listeningNode } from './listening-node.js';
import { within } from './within.js';

/** One node of {@link startTwoNodes}: its store, its listening node and the runtime on them. */
export interface TestNode {
  readonly store: PostgresTaskStore;
  readonly cluster: PostgresTaskNode;
  readonly runtime: TaskRuntime;
}

export interface TwoNodes {
  readonly a: TestNode;
  readonly b: TestNode;
  /** Closes both, runtimes first, and never hangs: each step is bounded and runs even when one before it failed. */
  close(): Promise<void>;
}

type NodeOptions = Omit<PostgresTaskNodeOptions, 'testSignals' | 'nodeId'>;

export interface TwoNodesOptions {
  /** The runtimes' poll interval; long by default, so that only delivery (never a poll) moves a test on. */
  readonly pollIntervalMs?: number;
  /** The stores' logger (the terminations a test makes warn there). */
  readonly logger?: Parameters<typeof PostgresTaskStore.connect>[0]['logger'];
  readonly a?: NodeOptions;
  readonly b?: NodeOptions;
}

/**
 * Two nodes on one database, as a delivery test needs them: `node-a` and `node-b`, each with a store
 * of its own and only its LISTEN connection ({@link listeningNode}). Every step is bounded, so a
 * database that does not answer fails the test instead of hanging it.
 */
export async function startTwoNodes(connectionString: string, options: TwoNodesOptions = {}): Promise<TwoNodes> {
  const started: TestNode[] = [];
  const close = async (): Promise<void> => {
    await within(Promise.allSettled(started.map((node) => node.runtime.close())), 10_000, 'the runtimes to close');
    await within(Promise.allSettled(started.map((node) => node.cluster.stop())), 10_000, 'the nodes to stop');
    await within(Promise.allSettled(started.map((node) => node.store.close())), 10_000, 'the stores to close');
  };
  try {
    for (const [nodeId, nodeOptions] of [['node-a', options.a], ['node-b', options.b]] as const) {
      const store = await within(PostgresTaskStore.connect({ connectionString, ...(options.logger ? { logger: options.logger } : {}) }), 30_000, `the store of ${nodeId} to connect`);
      const cluster = await within(listeningNode(store, { nodeId, ...nodeOptions }), 30_000, `${nodeId} to start`).catch(async (error: unknown) => {
        await store.close();
        throw error;
      });
      const runtime = new TaskRuntime({ store, node: cluster, pollIntervalMs: options.pollIntervalMs ?? 60_000, onError: () => {} });
      started.push({ store, cluster, runtime });
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { a: started[0]!, b: started[1]!, close };
}
