// Who is asking: users by API key (only the keys' sha256 is configured), and the optional
// operations token that guards /metrics and /healthz.
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { GatewayConfig } from './config';
import { errors } from './errors';

export interface GatewayUser {
  id: string;
  plan: string;
  /** Feature exposed to this user (gray release). */
  exposure: boolean;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function bearerToken(req: http.IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  return header && /^bearer\s+/i.test(header) ? header.replace(/^bearer\s+/i, '').trim() : undefined;
}

export class GatewayAuth {
  private readonly usersByKeyHash = new Map<string, GatewayUser>();
  /** Keys seen to be valid, so the hot path skips hashing (only valid keys enter: no unbounded growth). */
  private readonly usersByKey = new Map<string, GatewayUser>();
  private readonly opsTokenDigest: Buffer | undefined;

  constructor(c: GatewayConfig) {
    const users = c.demo ? [{ id: 'demo', apiKey: c.demoKey, plan: c.eligiblePlans[0] ?? 'coding' }, ...c.users] : c.users;
    for (const u of users) {
      const user: GatewayUser = { id: u.id, plan: u.plan ?? c.eligiblePlans[0] ?? 'coding', exposure: u.exposure ?? true };
      this.usersByKeyHash.set(u.apiKeySha256?.toLowerCase() ?? sha256(u.apiKey as string), user);
    }
    this.opsTokenDigest = c.opsToken === null ? undefined : createHash('sha256').update(c.opsToken).digest();
  }

  /** The user whose key the request carries (Bearer or x-api-key); 401 otherwise. */
  user(req: http.IncomingMessage): GatewayUser {
    let key = bearerToken(req);
    if (key === undefined && typeof req.headers['x-api-key'] === 'string') key = req.headers['x-api-key'];
    if (!key) throw errors.unauthorized('missing API key: send Authorization: Bearer <key>');
    const known = this.usersByKey.get(key);
    if (known) return known;
    const user = this.usersByKeyHash.get(sha256(key));
    if (!user) throw errors.unauthorized('unknown API key');
    this.usersByKey.set(key, user);
    return user;
  }

  /** With --ops-token (env), /metrics and /healthz answer only to that bearer token. */
  checkOpsToken(req: http.IncomingMessage): void {
    if (!this.opsTokenDigest) return;
    const given = createHash('sha256').update(bearerToken(req) ?? '').digest();
    if (!timingSafeEqual(given, this.opsTokenDigest)) throw errors.unauthorized('this endpoint needs the operations token: Authorization: Bearer <token>');
  }
}
