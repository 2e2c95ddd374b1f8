/**
 * Whether a URL's host is this machine's loopback, for a plain-http URL that carries a credential
 * (the model API's, a notification target's). Only a literal address counts: `127.0.0.0/8` or
 * `[::1]`, as `URL.hostname` writes them (it already turns `127.1` or `0x7f000001` into
 * `127.0.0.1`). Never a name: `localhost` goes through the resolver, Node tries `::1` before
 * `127.0.0.1`, and while the server listens on one of them the same port on the other is free for
 * another local user to bind and receive the credential.
 */
export function isLiteralLoopback(hostname: string): boolean {
  return hostname === '[::1]' || /^127(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/.test(hostname);
}
