import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CLAUDE_SETTING_SOURCES, DEFAULT_CLAUDE_SETTING_SOURCES } from '../../src/agent/runtime/adapters';
import { AGENT_SETTINGS } from '../../src/agent/runtime/claude-code-locate';

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

  it('item 8: the agent and the Claude Code setting sources are machine settings; the default loads only the user\'s own Claude Code settings', () => {
    const properties = manifest.contributes.configuration.properties as Record<string, { scope?: string; default?: unknown; enum?: unknown[] }>;
    for (const key of ['offPeak.agent', 'offPeak.claudeCodeSettingSources']) {
      assert.ok(['machine', 'application'].includes(properties[key]?.scope ?? 'window'), `${key} has scope ${properties[key]?.scope ?? '(none: window)'}`);
    }
    assert.equal(properties['offPeak.claudeCodeSettingSources'].default, DEFAULT_CLAUDE_SETTING_SOURCES);
    assert.equal(DEFAULT_CLAUDE_SETTING_SOURCES, 'user');
    assert.deepEqual(properties['offPeak.claudeCodeSettingSources'].enum, [...CLAUDE_SETTING_SOURCES]);
  });

  it('offPeak.agent defaults to auto (docs/flows.md#which-agent), and its values are the ones the settings reader knows', () => {
    const agent = manifest.contributes.configuration.properties['offPeak.agent'] as { default?: unknown; enum?: unknown[] };
    assert.equal(agent.default, 'auto');
    assert.deepEqual(agent.enum, [...AGENT_SETTINGS]);
  });

  it('item 5: the extension declares that it does not run in an untrusted (Restricted Mode) workspace, and says why', () => {
    const untrusted = manifest.capabilities?.untrustedWorkspaces;
    assert.equal(untrusted?.supported, false);
    assert.match(untrusted?.description ?? '', /trusted workspace/);
  });
});
