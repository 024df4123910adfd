// PostgreSQL 18, kept supported: the cluster smoke of test/support/postgres-major-smoke.ts on its pinned binaries.
import { majorSmoke } from '../support/postgres-major-smoke.js';

await majorSmoke('18');
