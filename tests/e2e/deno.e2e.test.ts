import { defineAnthropicMessagesE2ESuite } from './anthropic-messages-e2e-suite.ts';
import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { denoRuntime } from './gateway-starters.ts';

defineGatewayE2ESuite(denoRuntime.name, denoRuntime.start);
defineAnthropicMessagesE2ESuite(denoRuntime.name, denoRuntime.start);
