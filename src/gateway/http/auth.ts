// Who is asking: users by API key (only the keys' sha256 is configured), and who may read
// /metrics and /healthz: the bearer of the operations token, or anyone who reaches the separate
// operations address; with neither configured, nobody outside --demo (they tell what runs, how
// busy it is and which users exist by their load).
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import type { Socket } from 'node:net';
import type { GatewayConfig } from '../config/schema';
import { LOCAL_KEY_HEADER } from '../../protocol/gateway';
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
  /** Neither a token nor an ops address, outside --demo: the operations routes are closed. */
  private readonly opsClosed: boolean;

  /** `onAuthenticated`: a request on this socket showed a valid key or the ops token. */
  constructor(
    c: GatewayConfig,
    private readonly onAuthenticated: (socket: Socket) => void = () => undefined,
  ) {
    const users = c.demo ? [{ id: 'demo', apiKey: c.demoKey, plan: c.eligiblePlans[0] ?? 'coding' }, ...c.users] : c.users;
    for (const u of users) {
      const user: GatewayUser = { id: u.id, plan: u.plan ?? c.eligiblePlans[0] ?? 'coding', exposure: u.exposure ?? true };
      this.usersByKeyHash.set(u.apiKeySha256?.toLowerCase() ?? sha256(u.apiKey as string), user);
    }
    this.opsTokenDigest = c.opsToken === null ? undefined : createHash('sha256').update(c.opsToken).digest();
    this.opsClosed = c.opsToken === null && c.opsListen === null && !c.demo;
  }

  /** The user whose key the request carries (x-offpeak-key, else Bearer or x-api-key); 401 otherwise. */
  user(req: http.IncomingMessage): GatewayUser {
    const local = req.headers[LOCAL_KEY_HEADER];
    let key = typeof local === 'string' ? local : bearerToken(req);
    if (key === undefined && typeof req.headers['x-api-key'] === 'string') key = req.headers['x-api-key'];
    if (!key) throw errors.unauthorized('missing API key: send Authorization: Bearer <key>');
    let user = this.usersByKey.get(key);
    if (!user) {
      user = this.usersByKeyHash.get(sha256(key));
      if (!user) throw errors.unauthorized('unknown API key');
      this.usersByKey.set(key, user);
    }
    this.onAuthenticated(req.socket);
    return user;
  }

  /**
   * With an ops token (env or file), /metrics and /healthz answer only to that bearer token; with
   * an ops address alone, to whoever reaches it; with neither, to nobody (in --demo, to anyone).
   */
  checkOpsToken(req: http.IncomingMessage): void {
    if (this.opsClosed) {
      throw errors.unauthorized(
        '/metrics and /healthz are closed: give the gateway an operations token (OFFPEAK_GATEWAY_OPS_TOKEN) or address (--ops-listen)',
      );
    }
    if (this.opsTokenDigest) {
      const given = createHash('sha256')
        .update(bearerToken(req) ?? '')
        .digest();
      if (!timingSafeEqual(given, this.opsTokenDigest))
        throw errors.unauthorized('this endpoint needs the operations token: Authorization: Bearer <token>');
    }
    this.onAuthenticated(req.socket);
  }
}
