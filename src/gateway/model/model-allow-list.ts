// The gateway forwards only the models it offers (--models). A request naming another model (or
// none) is sent as the default model, or refused with a clear 400 (--unknown-model reject).
// A listed model leaves the body byte for byte as received. A body naming a top-level key twice
// (two "model"s: one checked here, the other read upstream) is refused with 400, allow-list or not.
import { errors } from '../http/errors';
import { refuseDuplicateKeys } from '../http/json-keys';

export interface ModelAllowList {
  models: readonly { id: string }[];
  defaultModel: string | null;
  unknownModel: 'default' | 'reject';
}

/** The body to forward; throws a 400 GatewayHttpError when the request cannot be forwarded. */
export function applyModelAllowList(body: Buffer, policy: ModelAllowList): Buffer {
  refuseDuplicateKeys(body.toString('utf8'), 'model request body');
  if (policy.models.length === 0) return body; // no allow-list configured
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw errors.invalidRequest('model request body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw errors.invalidRequest('model request body must be a JSON object');
  const request = parsed as { model?: unknown };
  if (typeof request.model === 'string' && policy.models.some((m) => m.id === request.model)) return body;
  const allowed = policy.models.map((m) => m.id).join(', ');
  if (policy.unknownModel === 'reject' || policy.defaultModel === null) {
    const named = typeof request.model === 'string' ? `model "${request.model.slice(0, 100)}" is` : 'a request without a model is';
    throw errors.invalidRequest(`${named} not offered by this gateway; allowed: ${allowed}`);
  }
  return Buffer.from(JSON.stringify({ ...request, model: policy.defaultModel }));
}
