import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { nodeClusterRuntime } from './gateway-starters.ts';

defineGatewayE2ESuite(nodeClusterRuntime.name, nodeClusterRuntime.start);
