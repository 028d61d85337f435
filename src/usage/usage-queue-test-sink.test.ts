import { testUsageSpill } from '../../tests/conformance/usage-spill-suite.ts';
import { createTestUsageSpill } from './usage-queue-test-sink.ts';

// The in-memory spill the queue's tests use must behave as the real one does.
testUsageSpill('in-memory test spill', async () => {
  const storage = createTestUsageSpill();
  return async () => storage;
});
