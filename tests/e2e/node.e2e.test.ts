import { defineAnthropicMessagesE2ESuite } from './anthropic-messages-e2e-suite.ts';
import { defineGatewayE2ESuite } from './gateway-e2e-suite.ts';
import { nodeClusterRuntime } from './gateway-starters.ts';

defineGatewayE2ESuite(nodeClusterRuntime.name, nodeClusterRuntime.start);
defineAnthropicMessagesE2ESuite(nodeClusterRuntime.name, nodeClusterRuntime.start);
