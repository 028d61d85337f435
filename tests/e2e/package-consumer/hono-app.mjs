// The README's Hono recipe: app.route('/llm', createGateway(...)), served by @hono/node-server.
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createGateway } from 'torii-gateway';
import { config, options } from './gateway-config.mjs';

const app = new Hono();
app.get('/', (c) => c.text('the host app'));
app.route('/llm', createGateway(config, options));
serve({ fetch: app.fetch, port: Number(process.env.PORT), hostname: '127.0.0.1' }, () => console.log('listening'));
