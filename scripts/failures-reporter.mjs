// A second reporter for `npm test` (scripts/test.mjs): it prints nothing while the run goes on and,
// at its end, every test that failed with its file, line and error. CI keeps the tail of a run's
// output, and a TAP stream tells a failure only where it happened, hundreds of tests earlier.
import path from 'node:path';

const SUITE_ROLLUP = /^\d+ subtests? failed$/;

function errorText(error) {
  const cause = error?.cause ?? error;
  const text = cause instanceof Error ? (cause.stack ?? `${cause.name}: ${cause.message}`) : String(cause);
  return text.split('\n').slice(0, 12).join('\n');
}

export default async function* failuresReporter(source) {
  const failures = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, line, details } = event.data;
    // A suite fails because a test in it did; the test itself is listed.
    if (SUITE_ROLLUP.test(details?.error?.cause?.message ?? details?.error?.message ?? '')) continue;
    const relative = file ? path.relative(process.cwd(), file) : undefined;
    failures.push({
      // A file that fails as a whole (a crash, its timeout) is named by its path.
      name: name === file ? relative : name,
      where: relative ? `${relative}${line ? `:${line}` : ''}` : '(no file)',
      error: errorText(details?.error),
    });
  }
  if (failures.length === 0) return;
  yield `\n# ${failures.length} failed test(s):\n`;
  for (const { where, name, error } of failures) {
    yield `\n# FAILED ${name}\n#   at ${where}\n${error.replace(/^/gm, '#     ')}\n`;
  }
}
