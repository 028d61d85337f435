// The README's node:http recipe: the gateway as the whole server.
import { createServer } from 'node:http';
import { createGateway } from 'torii-gateway';
import { createNodeRequestHandler } from 'torii-gateway/node-handler';
import { config, options } from './gateway-config.mjs';

createServer(createNodeRequestHandler(createGateway(config, options))).listen(
  Number(process.env.PORT),
  '127.0.0.1',
  () => console.log('listening'),
);
