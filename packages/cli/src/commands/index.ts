import type { Command } from '../command.js';
import { callCommand } from './call.js';
import { migrateCommand } from './migrate.js';
import { nodesCommand } from './nodes.js';
import { statusCommand } from './status.js';
import { tasksCommand } from './tasks.js';
import { toolsCommand } from './tools.js';

/** Every command, in the order `--help` lists them. A new command is one file and one line here. */
export const commands: readonly Command[] = [callCommand, toolsCommand, tasksCommand, nodesCommand, migrateCommand, statusCommand];
