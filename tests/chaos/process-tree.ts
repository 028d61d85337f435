import { readdirSync, readFileSync } from 'node:fs';

/**
 * The pids of `parent`'s live child processes, read from /proc (Linux): the cluster workers of a gateway's primary.
 * Zombies (exited, not yet reaped) are left out.
 */
export function childProcessIds(parent: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'.
    const [state, parentPid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(parentPid) === parent && state !== 'Z') children.push(Number(entry));
  }
  return children.sort((left, right) => left - right);
}

/** The pids of the live processes of process group `group` (a detached child's pid is its group), from /proc. */
export function processGroupMembers(group: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // After the comm: state, ppid, pgrp.
    const [state, , processGroup] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(processGroup) === group && state !== 'Z') members.push(Number(entry));
  }
  return members;
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
