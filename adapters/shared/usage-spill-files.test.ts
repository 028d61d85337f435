import { execFileSync, spawn } from 'node:child_process';
import { appendFile, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { testUsageSpill } from '../../tests/conformance/usage-spill-suite.ts';
import type { UsageEvent } from '../../src/usage/usage-event.ts';
import { testUsageEvent } from '../../src/usage/usage-queue-test-events.ts';
import { createUsageQueue } from '../../src/usage/usage-queue.ts';
import { createTestUsageSink } from '../../src/usage/usage-queue-test-sink.ts';
import { openFileUsageSpill, parseSegment, type FileUsageSpill } from './usage-spill-files.ts';

const directories: string[] = [];
const spills: FileUsageSpill[] = [];

async function temporaryDirectory(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'torii-usage-spill-'));
  directories.push(directory);
  return directory;
}

async function open(
  directory: string,
  options: { staleAfterMs?: number; maxSegmentBytes?: number; minFreeBytes?: number } = {},
) {
  const spill = await openFileUsageSpill({ directory, ...options });
  spills.push(spill);
  return spill;
}

async function drain(spill: FileUsageSpill): Promise<UsageEvent[]> {
  const written: UsageEvent[] = [];
  await spill.replay(async (events) => void written.push(...events));
  return written;
}

const range = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, offset) => testUsageEvent(from + offset));
const ids = (events: readonly UsageEvent[]) => events.map((event) => event.requestId);
const segments = async (directory: string) => (await readdir(directory)).filter((name) => name.endsWith('.jsonl'));

afterEach(async () => {
  await Promise.all(spills.splice(0).map((spill) => spill.close()));
  await Promise.all(directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
});

testUsageSpill('file spill', async () => {
  const directory = await temporaryDirectory();
  return () => open(directory);
});

describe('openFileUsageSpill', () => {
  it('refuses an append that would eat into its free-space reserve, and says it is not writable', async () => {
    const directory = await temporaryDirectory();
    const roomy = await open(directory);
    expect(await roomy.health()).toMatchObject({ writable: true });
    const reserved = await open(await temporaryDirectory(), { minFreeBytes: Number.MAX_SAFE_INTEGER });
    const appended = await reserved.append(range(0, 3)).catch((error: unknown) => error as NodeJS.ErrnoException);
    expect(appended).toMatchObject({ code: 'ENOSPC', message: expect.stringMatching(/below the reserve/) });
    expect(await reserved.health()).toMatchObject({ writable: false, reason: expect.stringMatching(/no space left/) });
    expect(await reserved.size()).toBe(0);
  });

  it('writes one JSON line per event and rotates segments by size', async () => {
    const directory = await temporaryDirectory();
    const spill = await open(directory, { maxSegmentBytes: 2000 });
    for (let batch = 0; batch < 10; batch++) await spill.append(range(batch * 3, batch * 3 + 3));
    const names = await segments(directory);
    expect(names.length).toBeGreaterThan(3);
    expect(names.every((name) => name.endsWith(`.${spill.instanceId}.jsonl`))).toBe(true);
    expect(ids(await drain(spill))).toEqual(ids(range(0, 30)));
    expect(await segments(directory)).toEqual([]);
  });

  it('skips a torn last line left by a crash mid-write and keeps every complete one', async () => {
    const directory = await temporaryDirectory();
    const spill = await open(directory);
    await spill.append(range(0, 4));
    const [segment] = await segments(directory);
    await appendFile(join(directory, segment as string), JSON.stringify(testUsageEvent(4)).slice(0, 57));
    expect(await spill.size()).toBe(4);
    expect(ids(await drain(spill))).toEqual(ids(range(0, 4)));
    expect(spill.skippedLines).toBe(1);
  });

  it('parses segments line by line, skipping corrupt lines', () => {
    const good = JSON.stringify(testUsageEvent(1));
    expect(parseSegment(`${good}\n{"not":"an event"}\nnot json\n\n${good}\n{"requestId"`)).toEqual({
      events: [testUsageEvent(1), testUsageEvent(1)],
      skipped: 3,
    });
  });

  it('deletes a segment only after its events were written', async () => {
    const directory = await temporaryDirectory();
    const spill = await open(directory, { maxSegmentBytes: 1 });
    await spill.append(range(0, 2));
    await spill.append(range(2, 4));
    let calls = 0;
    await expect(
      spill.replay(async () => {
        calls += 1;
        if (calls === 2) throw new Error('sink down');
      }),
    ).rejects.toThrow('sink down');
    // The first segment was written and deleted; the second is still there.
    expect((await segments(directory)).length).toBe(1);
    expect(ids(await drain(spill))).toEqual(ids(range(2, 4)));
  });

  it('leaves a live process its segments, and adopts those of one whose heartbeat stopped', async () => {
    const directory = await temporaryDirectory();
    const first = await open(directory, { staleAfterMs: 60_000 });
    await first.append(range(0, 3));
    const second = await open(directory, { staleAfterMs: 60_000 });
    expect(await drain(second)).toEqual([]);
    // The first process stops marking itself alive (same pid here, so only the heartbeat tells).
    const old = new Date(Date.now() - 120_000);
    await utimes(join(directory, `${first.instanceId}.alive`), old, old);
    expect(ids(await drain(second))).toEqual(ids(range(0, 3)));
    expect(await readdir(directory)).toEqual([`${second.instanceId}.alive`]);
  });

  it('adopts segments of a process whose pid no longer exists at once', async () => {
    const directory = await temporaryDirectory();
    const deadOwner = '999999999-deadbeef';
    await writeFile(join(directory, `${deadOwner}.alive`), '');
    const line = (index: number) => JSON.stringify(testUsageEvent(index)) + '\n';
    await writeFile(join(directory, `000000000000002-000000-${deadOwner}.${deadOwner}.jsonl`), line(1));
    await writeFile(join(directory, `000000000000001-000000-${deadOwner}.${deadOwner}.jsonl`), line(0));
    const spill = await open(directory);
    expect(ids(await drain(spill))).toEqual(['request-0', 'request-1']);
  });

  it('hands a process killed mid-append (SIGKILL) over to the next one, losing no acknowledged event', async () => {
    const directory = await temporaryDirectory();
    const moduleUrl = pathToFileURL(join(import.meta.dirname, 'usage-spill-files.ts')).href;
    const eventsUrl = pathToFileURL(join(import.meta.dirname, '../../src/usage/usage-queue-test-events.ts')).href;
    const script = `
      const { openFileUsageSpill } = await import(${JSON.stringify(moduleUrl)});
      const { testUsageEvent } = await import(${JSON.stringify(eventsUrl)});
      const spill = await openFileUsageSpill({ directory: ${JSON.stringify(directory)} });
      for (let batch = 0; ; batch++) {
        const events = Array.from({ length: 200 }, (_, offset) => testUsageEvent(batch * 200 + offset));
        await spill.append(events);
        process.stdout.write('appended ' + (batch + 1) * 200 + '\\n');
      }`;
    const child = spawn(process.execPath, ['--input-type=module', '--no-warnings', '-e', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let acknowledged = 0;
    let errors = '';
    child.stderr.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        for (const match of chunk.toString().matchAll(/appended (\d+)/g)) acknowledged = Number(match[1]);
        if (acknowledged >= 2000 && !child.killed) {
          child.kill('SIGKILL');
          resolve();
        }
      });
      child.on('exit', (code) => (code === 0 || child.killed ? undefined : reject(new Error(errors))));
    });
    await new Promise((resolve) => child.once('exit', resolve));

    const spill = await open(directory);
    const replayed = ids(await drain(spill));
    expect(new Set(replayed).size).toBe(replayed.length);
    // Every event the child saw acknowledged is there, in order; at most the batch in progress is missing.
    expect(replayed.slice(0, acknowledged)).toEqual(ids(range(0, acknowledged)));
    expect(await segments(directory)).toEqual([]);
  }, 30_000);

  it('on Deno without --allow-run, leaves a live process its segments and goes by heartbeats', async () => {
    const directory = await temporaryDirectory();
    const line = (index: number) => JSON.stringify(testUsageEvent(index)) + '\n';
    // This test process is alive and marks itself so; the other owner's pid is unknown and its heartbeat stale.
    const live = `${process.pid}-live0001`;
    const stale = '999999999-stale001';
    await writeFile(join(directory, `${live}.alive`), '');
    await writeFile(join(directory, `000000000000001-000000-${live}.${live}.jsonl`), line(1));
    await writeFile(join(directory, `${stale}.alive`), '');
    const old = new Date(Date.now() - 120_000);
    await utimes(join(directory, `${stale}.alive`), old, old);
    await writeFile(join(directory, `000000000000002-000000-${stale}.${stale}.jsonl`), line(2));
    const script = join(directory, 'replay.ts');
    await writeFile(
      script,
      `import { openFileUsageSpill } from ${JSON.stringify(pathToFileURL(join(import.meta.dirname, 'usage-spill-files.ts')).href)};
      const spill = await openFileUsageSpill({ directory: ${JSON.stringify(directory)} });
      const ids: string[] = [];
      await spill.replay(async (events) => void ids.push(...events.map((event) => event.requestId)));
      await spill.close();
      console.log(JSON.stringify(ids));`,
    );
    const deno = join(dirname(createRequire(import.meta.url).resolve('deno/package.json')), 'deno');
    const output = execFileSync(deno, ['run', '--no-config', '--allow-read', '--allow-write', script], {
      encoding: 'utf8',
      env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' },
    });
    expect(JSON.parse(output)).toEqual(['request-2']);
    expect(await segments(directory)).toEqual([`000000000000001-000000-${live}.${live}.jsonl`]);
  }, 30_000);

  it('carries a queue through a restart: spilled on shutdown, replayed by the next process', async () => {
    const directory = await temporaryDirectory();
    const failing = createTestUsageSink();
    failing.mode = 'fail';
    const firstSpill = await open(directory);
    const first = createUsageQueue({ sink: failing, spill: firstSpill, maxBatchSize: 100 });
    for (const event of range(0, 750)) first.enqueue(event);
    expect(await first.flush({ timeoutMs: 50 })).toMatchObject({ spilled: 750, dropped: 0, drained: false });
    await firstSpill.close();

    const sink = createTestUsageSink();
    const second = createUsageQueue({ sink, spill: await open(directory), maxBatchSize: 100 });
    await expect.poll(() => sink.stored.size, { timeout: 5000 }).toBe(750);
    expect(second.stats()).toMatchObject({ replayed: 750, dropped: 0 });
    expect(await segments(directory)).toEqual([]);
  });
});
