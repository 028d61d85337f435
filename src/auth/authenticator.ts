import type { VirtualKeyRecord } from './virtual-key-record.ts';

/**
 * Who is calling, as established by an {@link Authenticator}. The master key is the administrator; a virtual key
 * carries its own record (allow-list, limits, budget).
 */
export interface AuthContext {
  /** `master`, or the virtual key's id. */
  subject: string;
  kind: 'master' | 'virtual-key';
  /** The model groups this caller may use; `all` for no restriction. */
  allowedModelGroups: ReadonlySet<string> | 'all';
  /** The virtual key's record; undefined for the master key. */
  key?: VirtualKeyRecord;
}

/**
 * The auth seam. `authenticate` receives the presented secret (from `Authorization: Bearer` or `x-api-key`), or
 * undefined when none was sent, and returns the caller or throws a 401 GatewayError. It may answer synchronously
 * (the common, cached case) to keep the request path free of awaits.
 */
export interface Authenticator {
  authenticate(secret: string | undefined): AuthContext | Promise<AuthContext>;
}
