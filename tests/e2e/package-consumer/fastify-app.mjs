// The README's Fastify recipe: a scope under /llm that leaves the body unparsed and hands the raw request over.
import Fastify from 'fastify';
import { createGateway } from 'torii-gateway';
import { createNodeRequestHandler } from 'torii-gateway/node-handler';
import { config, options } from './gateway-config.mjs';

const fastify = Fastify();
const handler = createNodeRequestHandler(createGateway(config, { ...options, basePath: '/llm' }));
await fastify.register(
  async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    scope.all('/*', (request, reply) => {
      reply.hijack();
      void handler(request.raw, reply.raw);
    });
  },
  { prefix: '/llm' },
);
fastify.get('/', async () => 'the host app');
await fastify.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('listening');
