import { readdirSync, readFileSync } from 'node:fs';

/** A live process as /proc/<pid>/stat describes it: its id, parent and process group. */
interface ProcessEntry {
  pid: number;
  parentPid: number;
  processGroup: number;
}

/** Every live process (zombies, exited and not yet reaped, left out), read from /proc (Linux). */
function liveProcesses(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so read after the last ')'.
    const [state, parentPid, processGroup] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state !== 'Z')
      entries.push({ pid: Number(entry), parentPid: Number(parentPid), processGroup: Number(processGroup) });
  }
  return entries;
}

/** The pids of `parent`'s live child processes: the cluster workers of a gateway's primary. */
export function childProcessIds(parent: number): number[] {
  return liveProcesses()
    .filter((entry) => entry.parentPid === parent)
    .map((entry) => entry.pid)
    .sort((left, right) => left - right);
}

/** The pids of the live processes of process group `group` (a detached child's pid is its group). */
export function processGroupMembers(group: number): number[] {
  return liveProcesses()
    .filter((entry) => entry.processGroup === group)
    .map((entry) => entry.pid);
}

/** Whether a process exists (and is not a zombie). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Polls `condition` every 50 ms until it holds; fails with `what` after `timeoutMs`. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return performance.now() - started;
}
