// The declaration of workerd's `cloudflare:workers` module (see key-counters-durable-object.ts for why a path
// reference).
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./cloudflare-workers-module.d.ts" />
import { DurableObject, type DurableObjectState } from 'cloudflare:workers';
import { parseSharedCircuitChange, type SharedCircuitChange } from '../../src/routing/circuit-bus.ts';
import type { OpenCircuit } from '../../src/routing/polled-circuit-bus.ts';
import type { CircuitsObject } from './durable-object-circuit-store.ts';

/** One open circuit as stored. */
type CircuitRow = { deployment_id: string; open_until: number; origin: string };

/** The most circuits the object keeps: a config has far fewer deployments; a flood of made-up ids stops here. */
export const maxStoredCircuits = 10_000;

/**
 * The Durable Object that holds a Worker's shared circuit breakers (durable-object-circuit-store.ts names it): which
 * deployments are cooling down and until when, in the object's SQLite storage (so a deploy or an eviction loses no
 * cooldown). An opening keeps the later of its end and one already stored; a closing deletes the row; rows past
 * their end are deleted as the object writes. Every call finishes without awaiting anything (the SQL API is
 * synchronous), so each one is atomic. Created by a `new_sqlite_classes` migration.
 *
 * @example
 * ```ts
 * export { ToriiCircuits } from './circuits-durable-object.ts';
 * // wrangler.toml:
 * // [[durable_objects.bindings]]
 * // name = "TORII_CIRCUITS"
 * // class_name = "ToriiCircuits"
 * // [[migrations]]
 * // tag = "v2"
 * // new_sqlite_classes = ["ToriiCircuits"]
 * ```
 */
export class ToriiCircuits extends DurableObject implements CircuitsObject {
  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    ctx.storage.sql.exec(
      'CREATE TABLE IF NOT EXISTS torii_circuits (deployment_id TEXT PRIMARY KEY, open_until INTEGER NOT NULL, origin TEXT NOT NULL)',
    );
  }

  /** Records an opening or a closing (a malformed change records nothing); answers the circuits open afterwards. */
  record(change: SharedCircuitChange): Promise<OpenCircuit[]> {
    const parsed = parseSharedCircuitChange(change);
    const now = Date.now();
    const { sql } = this.ctx.storage;
    sql.exec('DELETE FROM torii_circuits WHERE open_until <= ?', now);
    if (parsed?.state === 'closed') {
      sql.exec('DELETE FROM torii_circuits WHERE deployment_id = ?', parsed.deploymentId);
    } else if (parsed !== undefined && parsed.openUntil > now) {
      const { stored } = sql.exec<{ stored: number }>('SELECT count(*) AS stored FROM torii_circuits').one();
      const known = sql.exec('SELECT 1 FROM torii_circuits WHERE deployment_id = ?', parsed.deploymentId).toArray();
      if (stored < maxStoredCircuits || known.length > 0) {
        sql.exec(
          `INSERT INTO torii_circuits (deployment_id, open_until, origin) VALUES (?, ?, ?)
           ON CONFLICT (deployment_id) DO UPDATE SET
             origin = CASE WHEN excluded.open_until > torii_circuits.open_until THEN excluded.origin ELSE torii_circuits.origin END,
             open_until = max(torii_circuits.open_until, excluded.open_until)`,
          parsed.deploymentId,
          Math.round(parsed.openUntil),
          parsed.origin,
        );
      }
    }
    return this.openCircuits();
  }

  /** The circuits open now. */
  openCircuits(): Promise<OpenCircuit[]> {
    const rows = this.ctx.storage.sql
      .exec<CircuitRow>('SELECT deployment_id, open_until, origin FROM torii_circuits WHERE open_until > ?', Date.now())
      .toArray();
    return Promise.resolve(
      rows.map((row) => ({ deploymentId: row.deployment_id, openUntil: row.open_until, origin: row.origin })),
    );
  }
}
