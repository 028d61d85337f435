// Bun: `bun bun-app.mjs` serves the gateway with the package's Bun entry, configured by the environment (TORII_CONFIG,
// PORT, TORII_MASTER_KEY), as `bun adapters/bun/server.ts` does from a clone.
import { startBunServer } from 'torii-gateway/bun';

await startBunServer();
