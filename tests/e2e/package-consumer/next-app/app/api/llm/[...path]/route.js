// The README's Next.js recipe: an App Router route handler; Next passes the full path, so the gateway gets basePath.
import { createGateway } from 'torii-gateway';
import { config, options } from '../../../../gateway-config.mjs';

const gateway = createGateway(config, { ...options, basePath: '/api/llm' });
const handler = (request) => gateway.fetch(request);

export { handler as GET, handler as POST, handler as DELETE };
export const dynamic = 'force-dynamic';
