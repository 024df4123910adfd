// What Linux's /proc says about a process the bench started: its resident memory and CPU time.
import { readFile } from 'node:fs/promises';

/** Resident set (VmRSS of /proc/PID/status), MiB. */
export async function rssMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1]) / 1024;
}

/** User plus system CPU time (fields 14 and 15 of /proc/PID/stat, in ticks of 1/100 s, Linux's USER_HZ), ms. */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
