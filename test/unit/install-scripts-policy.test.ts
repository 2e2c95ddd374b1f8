// npm 11 lists, after every `npm install`, the dependencies whose install scripts package.json's
// `allowScripts` does not cover (and a later npm blocks them). Every package the lockfile marks
// `hasInstallScript` is named there, allowed or denied on purpose: a new one fails this test.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

const repoRoot = path.resolve(__dirname, '..', '..');
const readJson = (file: string): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(repoRoot, file), 'utf8')) as Record<string, unknown>;

/** A lockfile key `node_modules/a/node_modules/@s/b` → `@s/b`. */
function packageName(lockKey: string): string {
  return lockKey.slice(lockKey.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

/** An allowScripts key `name`, `name@1.2.3` or `@scope/name@^1` → its package name. */
function policyName(key: string): string {
  const at = key.indexOf('@', 1);
  return at === -1 ? key : key.slice(0, at);
}

describe('install scripts policy (package.json allowScripts)', () => {
  it('item 8: every lockfile package with an install script is allowed or denied by name in allowScripts', () => {
    const lock = readJson('package-lock.json') as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = new Set(
      Object.entries(lock.packages)
        .filter(([key, entry]) => key !== '' && entry.hasInstallScript === true)
        .map(([key]) => packageName(key)),
    );
    assert.ok(withScripts.size > 0, 'the lockfile marks some install scripts (esbuild has one)');
    const policy = (readJson('package.json').allowScripts ?? {}) as Record<string, unknown>;
    const named = new Set(Object.keys(policy).map(policyName));
    const uncovered = [...withScripts].filter((name) => !named.has(name)).sort();
    assert.deepEqual(uncovered, [], `not in package.json's allowScripts (allow or deny them there)`);
    for (const [key, value] of Object.entries(policy)) assert.equal(typeof value, 'boolean', `${key}: true (allowed) or false (denied)`);
    // What the product needs to build and run.
    assert.equal(policy.esbuild, true, 'esbuild: the build');
    assert.equal(policy['better-sqlite3'], true, "better-sqlite3: the gateway's SQLite store");
  });
});
