import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { denoRuntime } from './gateway-starters.ts';

defineGatewayE2ESuite(denoRuntime.name, denoRuntime.start);
