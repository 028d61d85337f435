/**
 * The part of Bun's global API the Bun adapter calls (the rest of Bun's types are not a dependency of this package):
 * `Bun.serve` and `Bun.file`, as Bun documents them.
 */
declare global {
  namespace Bun {
    /** Options of `Bun.serve` the adapter sets. */
    interface ServeOptions {
      port: number;
      hostname: string;
      /** Seconds without a byte either way before a connection is closed (Bun's maximum is 255). */
      idleTimeout?: number;
      /** Largest request body Bun reads, bytes. */
      maxRequestBodySize?: number;
      fetch(request: Request, server: Server): Response | Promise<Response>;
      error?(error: Error): Response | Promise<Response>;
    }
    /** A running `Bun.serve` server. */
    interface Server {
      readonly port: number;
      readonly hostname: string;
      /** Stops listening; in-flight requests go on unless `closeActiveConnections`. Resolves once none is left. */
      stop(closeActiveConnections?: boolean): Promise<void>;
      /** Sets one request's idle timeout, seconds (0: none). */
      timeout(request: Request, seconds: number): void;
    }
    /** A lazily read file. */
    interface BunFile {
      text(): Promise<string>;
    }
    function serve(options: ServeOptions): Server;
    function file(path: string): BunFile;
    const version: string;
  }
}

export {};
