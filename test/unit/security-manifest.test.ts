import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

interface Manifest {
  capabilities?: { untrustedWorkspaces?: { supported: boolean | string; description?: string } };
  contributes: { configuration: { properties: Record<string, { scope?: string }> } };
}

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as Manifest;

describe('extension manifest: what a workspace can change', () => {
  it('item 5: the gateway URL and the Claude Code path are machine settings, never read from a workspace', () => {
    const properties = manifest.contributes.configuration.properties;
    for (const key of ['offPeak.gatewayUrl', 'offPeak.claudeCodePath']) {
      assert.ok(['machine', 'application'].includes(properties[key]?.scope ?? 'window'), `${key} has scope ${properties[key]?.scope ?? '(none: window)'}`);
    }
  });

  it('item 5: the extension declares that it does not run in an untrusted (Restricted Mode) workspace, and says why', () => {
    const untrusted = manifest.capabilities?.untrustedWorkspaces;
    assert.equal(untrusted?.supported, false);
    assert.match(untrusted?.description ?? '', /trusted workspace/);
  });
});
