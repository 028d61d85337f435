import { defineAnthropicMessagesE2ESuite } from './anthropic-messages-e2e-suite.ts';
import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { bunRuntime } from './gateway-starters.ts';

defineGatewayE2ESuite(bunRuntime.name, bunRuntime.start);
defineAnthropicMessagesE2ESuite(bunRuntime.name, bunRuntime.start);
