import { testUpstreamFetch } from '../../tests/conformance/upstream-fetch-suite.ts';
import { createUndiciUpstreamFetch } from './undici-upstream-fetch.ts';

testUpstreamFetch('undici dispatch (Node)', () => createUndiciUpstreamFetch(), { bodyReader: true });
