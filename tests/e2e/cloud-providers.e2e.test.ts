import { defineCloudProvidersE2ESuite } from './cloud-providers-e2e-suite.ts';
import { gatewayRuntimes } from './gateway-starters.ts';

for (const runtime of gatewayRuntimes) defineCloudProvidersE2ESuite(runtime.name, runtime.start);
