// The Settings editor's texts (package.json `contributes.configuration`): a plain `description`
// shows backticks as they are, and the tab a machine setting lives on is named as the Settings
// editor names it (User locally, Remote [host] in a remote or browser window).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

type Property = { description?: string; markdownDescription?: string; enumDescriptions?: string[] };
const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, Property> } | { properties: Record<string, Property> }[] };
};
const sections = [manifest.contributes.configuration].flat();
const properties = Object.entries(Object.assign({}, ...sections.map((s) => s.properties)) as Record<string, Property>);

describe("the settings' texts", () => {
  it('item 8: no literal backticks in plain (non-markdown) setting texts', () => {
    for (const [key, p] of properties)
      for (const text of [p.description ?? '', ...(p.enumDescriptions ?? [])]) assert.ok(!text.includes('`'), `${key}: ${text}`);
  });

  it('item 8: a machine setting says where it is set as the Settings editor names the tabs ("Remote [host]" in a remote window), never "Only user (machine) settings count"', () => {
    for (const [key, p] of properties) {
      const text = `${p.description ?? ''} ${p.markdownDescription ?? ''}`;
      assert.ok(!text.includes('Only user (machine) settings count'), key);
    }
    const gatewayUrl = properties.find(([key]) => key === 'offPeak.gatewayUrl')![1];
    assert.match(gatewayUrl.description ?? '', /User settings, or Remote \[host\] in a remote window/);
  });
});
