// `npm install` on the README's Node prints no engine warnings (EBADENGINE): every package the
// lockfile installs accepts the oldest Node that package.json's `engines.node` allows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';

const root = path.join(__dirname, '..', '..');
const readJson = (file: string): unknown => JSON.parse(readFileSync(path.join(root, file), 'utf8'));

interface LockedPackage {
  engines?: { node?: unknown } | unknown[];
}

describe('Node engines', () => {
  const manifest = readJson('package.json') as { engines: { node: string } };
  const oldestNode = semver.minVersion(manifest.engines.node);

  it('package.json names an oldest Node, and the README names the same one', () => {
    assert.ok(oldestNode, `engines.node ${manifest.engines.node} has no lowest version`);
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const [major, minor] = [oldestNode.major, oldestNode.minor];
    assert.match(readme, new RegExp(`Node ${major}\\.${minor}\\+`));
  });

  it('every locked package accepts that Node (npm install prints no EBADENGINE)', () => {
    const lock = readJson('package-lock.json') as { packages: Record<string, LockedPackage> };
    const refusing: string[] = [];
    for (const [where, pkg] of Object.entries(lock.packages)) {
      const engines = pkg.engines;
      const wanted = engines && !Array.isArray(engines) ? engines.node : undefined;
      if (typeof wanted !== 'string' || !oldestNode) continue;
      if (!semver.satisfies(oldestNode, wanted)) refusing.push(`${where} wants node ${wanted}`);
    }
    assert.deepEqual(refusing, []);
  });
});
