import { testUpstreamFetch } from '../../tests/conformance/upstream-fetch-suite.ts';
import { createFetchUpstream } from './fetch-upstream.ts';

// The platform fetch as Workers, Deno and the library use it; here Node's global fetch plays the platform.
testUpstreamFetch('platform fetch', () => createFetchUpstream());
