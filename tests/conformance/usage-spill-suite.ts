import { describe, expect, it } from 'vitest';
import type { UsageEvent, UsageSpill } from '../../src/usage/usage-event.ts';
import { testUsageEvent } from '../../src/usage/usage-queue-test-events.ts';

/** Opens a spill over the same storage each time it is called, as a restarted process would. */
export type OpenUsageSpill = () => Promise<UsageSpill>;

const range = (from: number, to: number): UsageEvent[] =>
  Array.from({ length: to - from }, (_, offset) => testUsageEvent(from + offset));

const ids = (events: readonly UsageEvent[]) => events.map((event) => event.requestId);

/**
 * The behaviour every {@link UsageSpill} implementation must have. `openFresh` answers a factory over new, empty
 * storage; each call of that factory opens the same storage again (a restart).
 */
export function testUsageSpill(name: string, openFresh: () => Promise<OpenUsageSpill>): void {
  describe(`UsageSpill conformance: ${name}`, () => {
    it('replays appended events oldest first, then holds nothing', async () => {
      const spill = await (await openFresh())();
      await spill.append(range(0, 3));
      await spill.append(range(3, 5));
      expect(await spill.size()).toBe(5);
      const written: UsageEvent[] = [];
      expect(await spill.replay(async (events) => void written.push(...events))).toBe(5);
      expect(ids(written)).toEqual(ids(range(0, 5)));
      expect(written[4]).toEqual(testUsageEvent(4));
      expect(await spill.size()).toBe(0);
      expect(await spill.replay(async () => {})).toBe(0);
    });

    it('keeps what a failed write did not take, and replays it next time', async () => {
      const spill = await (await openFresh())();
      await spill.append(range(0, 2));
      await expect(
        spill.replay(async () => {
          throw new Error('sink down');
        }),
      ).rejects.toThrow('sink down');
      expect(await spill.size()).toBe(2);
      const written: UsageEvent[] = [];
      await spill.replay(async (events) => void written.push(...events));
      expect(ids(written)).toEqual(ids(range(0, 2)));
    });

    it('loses nothing appended while a replay runs', async () => {
      const spill = await (await openFresh())();
      await spill.append(range(0, 2));
      const written: UsageEvent[] = [];
      let appended: Promise<void> | undefined;
      await spill.replay(async (events) => {
        appended ??= spill.append(range(2, 4));
        await appended;
        written.push(...events);
      });
      await spill.replay(async (events) => void written.push(...events));
      expect(new Set(ids(written))).toEqual(new Set(ids(range(0, 4))));
      expect(await spill.size()).toBe(0);
    });

    it('hands what one instance appended to the next one (restart)', async () => {
      const open = await openFresh();
      const first = await open();
      await first.append(range(0, 3));
      await (first as UsageSpill & { close?: () => Promise<void> }).close?.();
      const second = await open();
      const written: UsageEvent[] = [];
      expect(await second.replay(async (events) => void written.push(...events))).toBe(3);
      expect(ids(written)).toEqual(ids(range(0, 3)));
    });
  });
}
