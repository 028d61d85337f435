// The README's Express recipe: the gateway mounted before express.json(). With PARSER_FIRST=1 a global
// express.json() runs first (the order users get wrong), and the gateway must still answer.
import express from 'express';
import { createGateway } from 'torii-gateway';
import { createNodeRequestHandler } from 'torii-gateway/node-handler';
import { config, options } from './gateway-config.mjs';

const app = express();
if (process.env.PARSER_FIRST === '1') app.use(express.json());
app.use('/llm', createNodeRequestHandler(createGateway(config, options)));
app.use(express.json());
app.post('/echo', (request, response) => response.json(request.body));
app.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
