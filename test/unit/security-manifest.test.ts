import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { CLAUDE_SETTING_SOURCES, DEFAULT_CLAUDE_SETTING_SOURCES } from '../../src/agent/runtime/claude-code-adapter';
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
      assert.ok(
        ['machine', 'application'].includes(properties[key]?.scope ?? 'window'),
        `${key} has scope ${properties[key]?.scope ?? '(none: window)'}`,
      );
    }
  });

  it("item 8: the agent and the Claude Code setting sources are machine settings; the default loads only the user's own Claude Code settings", () => {
    const properties = manifest.contributes.configuration.properties as Record<
      string,
      { scope?: string; default?: unknown; enum?: unknown[] }
    >;
    for (const key of ['offPeak.agent', 'offPeak.claudeCodeSettingSources']) {
      assert.ok(
        ['machine', 'application'].includes(properties[key]?.scope ?? 'window'),
        `${key} has scope ${properties[key]?.scope ?? '(none: window)'}`,
      );
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

/** Evaluates the when-clauses used here (`a == b`, `a != b`, `!a`, `a`, joined by && and ||; && binds first, as VS Code's). */
function whenHolds(when: string, context: Record<string, string>): boolean {
  const term = (t: string): boolean => {
    const m = /^(\S+)\s*(==|!=)\s*(\S+)$/.exec(t.trim());
    if (m) return (context[m[1]] === m[3]) === (m[2] === '==');
    const name = t.trim();
    return name.startsWith('!') ? !context[name.slice(1)] : Boolean(context[name]);
  };
  return when.split('||').some((any) => any.split('&&').every(term));
}

describe('extension manifest: commands by mode (docs/flows.md#what-the-panel-says)', () => {
  const palette = (
    JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      contributes: { menus: { commandPalette: { command: string; when: string }[] } };
    }
  ).contributes.menus.commandPalette;
  const shown = (context: Record<string, string>) =>
    palette
      .filter((m) => whenHolds(m.when, context))
      .map((m) => m.command)
      .sort();
  const gatewayKeys = ['offPeak.clearApiKey', 'offPeak.setApiKey'];
  const modelKeys = ['offPeak.clearModelApiKey', 'offPeak.setModelApiKey'];

  it('the gateway key commands show in team mode only, the model key commands in personal mode only', () => {
    assert.deepEqual(
      shown({ 'config.offPeak.mode': 'auto', 'config.offPeak.gatewayUrl': '' }),
      modelKeys,
      'auto without a gateway URL is personal',
    );
    assert.deepEqual(shown({ 'config.offPeak.mode': 'auto', 'config.offPeak.gatewayUrl': 'http://gw:8787' }), gatewayKeys);
    assert.deepEqual(shown({ 'config.offPeak.mode': 'personal', 'config.offPeak.gatewayUrl': 'http://gw:8787' }), modelKeys);
    assert.deepEqual(shown({ 'config.offPeak.mode': 'gateway', 'config.offPeak.gatewayUrl': '' }), gatewayKeys);
  });
});
