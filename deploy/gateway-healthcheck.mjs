// The gateway's health check for a container or a service manager (deploy/gateway.Dockerfile's
// HEALTHCHECK): GET /healthz on the ops address (OFFPEAK_GATEWAY_OPS_LISTEN, else the API port on
// this host), with the ops token from the environment when one is set, never from argv. Exits 0
// when the gateway answers 200 (its store answered a query), 1 otherwise. Plain Node, no module.
/* global fetch, AbortSignal -- Node 18+ globals */
const listen = process.env.OFFPEAK_GATEWAY_OPS_LISTEN || `127.0.0.1:${process.env.OFFPEAK_GATEWAY_PORT || '8787'}`;
const colon = listen.lastIndexOf(':');
const host = listen.slice(0, colon);
const port = listen.slice(colon + 1);
// A wildcard listen address is reached on loopback from inside the same host or container.
const reachable = ['', '0.0.0.0', '::', '[::]'].includes(host) ? '127.0.0.1' : host;
const token = process.env.OFFPEAK_GATEWAY_OPS_TOKEN;
const timeoutMs = Number(process.env.OFFPEAK_HEALTHCHECK_TIMEOUT_MS || 4000);

try {
  const answer = await fetch(`http://${reachable}:${port}/healthz`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    signal: AbortSignal.timeout(timeoutMs),
  });
  process.stdout.write(`healthz ${answer.status}\n`);
  process.exit(answer.status === 200 ? 0 : 1);
} catch (error) {
  process.stdout.write(`healthz unreachable: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
