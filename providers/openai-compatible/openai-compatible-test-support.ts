/** Test support: runs `run` and returns what it threw, failing when it did not throw. (Imported by tests only.) */
export function caught(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}
