// Installs (or confirms, from the cache in .tools/) what tests inside VS Code need: Debian packages
// when missing and running as root, Node 24 and code-server. `npm run test:vscode` and `npm start`
// do this on their own; .ci/run calls it first so the one-time set-up shows up in the CI log.
// usage: node --import tsx scripts/setup-code-server.ts
import { ensureVsCodeTools } from './vscode/tools';

try {
  const started = Date.now();
  const tools = ensureVsCodeTools();
  console.log(`[setup] ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  console.log(`[setup]   Node 24:     ${tools.node24}`);
  console.log(`[setup]   code-server: ${tools.codeServerEntry}`);
  console.log(`[setup]   Chromium:    ${tools.chromium}`);
} catch (err) {
  console.error(`setup: ${(err as Error).message}`);
  process.exit(1);
}
