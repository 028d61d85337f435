// The accounting and Postgres driver entries, imported as a strict consumer does (skipLibCheck: false). It exposes Drizzle's database
// types, so drizzle-orm's own declarations are checked too.
import { createGateway } from 'torii-gateway';
import { openDatabaseAccounting, createDrizzleKeyStore, type DatabaseAccounting } from 'torii-gateway/accounting';
import { createDrizzleUsageSink, openPostgresDatabase } from 'torii-gateway/drivers/postgres';

export async function open(databaseUrl: string): Promise<DatabaseAccounting> {
  const accounting = await openDatabaseAccounting({ masterKey: 'sk-x', databaseUrl });
  createGateway({ modelGroups: {} }, { accounting, environment: process.env });
  return accounting;
}
export const keyStore = createDrizzleKeyStore;
export async function sink(databaseUrl: string) {
  const database = await openPostgresDatabase({ DATABASE_URL: databaseUrl });
  return createDrizzleUsageSink(database.db);
}
