// The fix a failure notification offers (docs/flows.md#notifications-and-unseen-marks): each reason the product
// writes that names its fix gets a button running exactly that command, titled as the palette titles it.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loginMissingText } from '../../src/agent/runtime/claude-code-adapter';
import { CLAUDE_LOGIN_COMMAND, failureFix, FIX_COMMANDS } from '../../src/panel/failure-fix';

describe('failure notifications offer the fix the reason names', () => {
  it('item 5: a refused or missing model key, a missing gateway key, a missing Claude Code login and an unreachable model API each get their fix as a button', () => {
    assert.deepEqual(
      failureFix(
        'The model API https://api.anthropic.com refused the model API key (401 authentication_error): run "Off-Peak: Set Model API Key…" to set it again, or check offPeak.personal.baseUrl',
      ),
      { label: 'Set Model API Key…', command: 'offPeak.setModelApiKey' },
    );
    assert.deepEqual(
      failureFix(
        'No model API key is set and the agent sent no login of its own: set the key with "Off-Peak: Set Model API Key…", or use Claude Code with its own login',
      ),
      { label: 'Set Model API Key…', command: 'offPeak.setModelApiKey' },
    );
    assert.deepEqual(failureFix('no gateway API key is set'), { label: 'Set Gateway API Key…', command: 'offPeak.setApiKey' });
    assert.deepEqual(failureFix(loginMissingText('Not logged in · Please run /login', '/opt/claude')), {
      label: 'Log In to Claude Code',
      command: CLAUDE_LOGIN_COMMAND,
    });
    assert.deepEqual(failureFix('The model API http://127.0.0.1:9 cannot be reached (ECONNREFUSED): check offPeak.personal.baseUrl'), {
      label: 'Open Setting offPeak.personal.baseUrl',
      command: 'offPeak.openSetting',
      args: ['offPeak.personal.baseUrl'],
    });
    assert.equal(failureFix('the agent exited with code 1'), undefined, 'no fix is made up');
  });

  it("item 5: the commands a fix names carry package.json's exact titles (the … included)", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'package.json'), 'utf8')) as {
      contributes: { commands: { command: string; title: string }[] };
    };
    for (const [command, title] of Object.entries(FIX_COMMANDS))
      assert.equal(manifest.contributes.commands.find((c) => c.command === command)?.title, title, command);
  });
});
