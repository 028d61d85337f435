/**
 * Test-only preload (`NODE_OPTIONS=--import <this file>`) that makes a Node cluster worker of the gateway spin on
 * purpose, without any hook in the product: in each cluster worker's main thread it polls `TORII_CHAOS_SPIN_DIR` for a
 * file named `spin-<its pid>`; when that file appears and the worker's server is listening, it writes
 * `spinning-<pid>` and runs `for (;;) {}`, which blocks the main thread for good (no timer, signal handler or IPC
 * message of that thread runs again). The primary and the watchdog threads are left alone.
 */
import cluster from 'node:cluster';
import { existsSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const directory = process.env.TORII_CHAOS_SPIN_DIR;
if (directory !== undefined && cluster.isWorker && isMainThread) {
  // A worker spins only once its server is listening: one that spun before would be a start-up miss (bounded by the
  // much longer start timeout), not the running worker whose heartbeat the test is about. On a busy machine the test
  // can ask a worker to spin while it is still starting.
  let listening = false;
  const listen = net.Server.prototype.listen;
  net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
    this.once('listening', () => (listening = true));
    return (listen as (...listenArgs: unknown[]) => net.Server).apply(this, args);
  } as typeof listen;
  const trigger = join(directory, `spin-${process.pid}`);
  const poll = setInterval(() => {
    if (!listening || !existsSync(trigger)) return;
    clearInterval(poll);
    writeFileSync(join(directory, `spinning-${process.pid}`), '');
    for (;;) {
      // spin: the event loop never turns again
    }
  }, 50);
  poll.unref();
}
