// Reading a request body on node:http with a size limit and a time limit, so a slow or huge
// body costs the gateway nothing but its connection.
import type http from 'node:http';
import { errors, type GatewayHttpError } from './errors';
import { refuseDuplicateKeys } from './json-keys';

/** The client went away or broke the body: there is nobody to answer, the socket is dropped. */
export class PayloadError extends Error {}

/** The whole body, at most `limit` bytes (413), all of it within `timeoutMs` (408). */
export function readBody(req: http.IncomingMessage, limit: number, timeoutMs: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(errors.tooLarge(`request body over ${limit} bytes`));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (error: Error) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.pause();
      reject(error);
    };
    const timer = setTimeout(() => stop(errors.requestTimeout(`request body not received within ${timeoutMs} ms`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) stop(errors.tooLarge(`request body over ${limit} bytes`));
      else chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => stop(new PayloadError(error.message)));
    req.on('close', () => {
      if (!req.complete) stop(new PayloadError('client closed before the body was complete'));
    });
  });
}

export async function readJson(req: http.IncomingMessage, limit: number, timeoutMs: number): Promise<unknown> {
  const raw = await readBody(req, limit, timeoutMs);
  if (raw.length === 0) throw errors.invalidRequest('request body must be JSON');
  const text = raw.toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw errors.invalidRequest('request body is not valid JSON');
  }
  refuseDuplicateKeys(text, 'request body', parsed);
  return parsed;
}

/** A zod failure as the gateway's 400. */
export function schemaError(issues: { path: PropertyKey[]; message: string }[]): GatewayHttpError {
  return errors.invalidRequest(issues.map((i) => `${i.path.map(String).join('.') || 'body'}: ${i.message}`).join('; '));
}
