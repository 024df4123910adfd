import { printable } from '../printable.js';

/** Rows as aligned columns under a header, the way `ps` prints (the last column is not padded). */
export function textTable(header: readonly string[], cells: readonly (readonly string[])[]): string {
  // Cells come from task rows (status messages, tool names): nothing in them may drive the terminal.
  const rows = cells.map((row) => row.map((cell) => printable(cell)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
