import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { idleCpuGroup } from './bench-services.ts';

describe('idleCpuGroup', () => {
  it('moves a process into a new CPU cgroup marked idle and removes the group once the process is gone, or says why not', async () => {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    await once(child, 'spawn');
    const pid = child.pid!;
    const group = idleCpuGroup([pid]);
    try {
      // Root with cgroup v1's cpu hierarchy (this project's bench host) must get the group.
      const capable = process.getuid?.() === 0 && existsSync('/sys/fs/cgroup/cpu/cpu.idle');
      if (!capable && group.description.startsWith('no idle CPU group')) {
        // Not root, or no cpu controller here: the bench runs on without it and logs the reason.
        expect(group.description).toMatch(/^no idle CPU group \(.+\)$/);
        return;
      }
      const directory = group.description.replace(/^idle CPU group /, '');
      expect(readFileSync(`${directory}/cpu.idle`, 'utf8').trim()).toBe('1');
      expect(readFileSync(`${directory}/cgroup.procs`, 'utf8').split('\n')).toContain(String(pid));
      expect(readFileSync(`/proc/${pid}/cgroup`, 'utf8')).toContain(directory.split('/').pop());
      child.kill('SIGKILL');
      await once(child, 'exit');
      group.remove(5000);
      expect(existsSync(directory)).toBe(false);
    } finally {
      child.kill('SIGKILL');
      group.remove(5000);
    }
  });
});
