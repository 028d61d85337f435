import { defineAnthropicMessagesE2ESuite } from './anthropic-messages-e2e-suite.ts';
import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { workerdRuntime } from './gateway-starters.ts';

defineGatewayE2ESuite(workerdRuntime.name, workerdRuntime.start);
defineAnthropicMessagesE2ESuite(workerdRuntime.name, workerdRuntime.start);
