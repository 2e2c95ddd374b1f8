// Which copy of the extension this VS Code runs: the harness says where it must come from (the
// directory `--install-extension` put the .vsix in, or the development folder) and this checks it,
// so a run that claims to test the package cannot silently test the repository instead.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import * as vscode from 'vscode';

const EXTENSION_ID = 'offpeak.off-peak-tasks';

describe('Off-Peak Tasks package under test', () => {
  it('is loaded from where the harness installed it (or from the development folder)', () => {
    const expected = process.env.OFFPEAK_VSCODE_EXTENSION_PATH;
    assert.ok(expected, 'the harness sets OFFPEAK_VSCODE_EXTENSION_PATH');
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} is not loaded in this VS Code`);
    assert.equal(fs.realpathSync(ext.extensionPath), fs.realpathSync(expected));
    console.log(`  [host] ${EXTENSION_ID} ${ext.packageJSON.version} from ${ext.extensionPath}`);
  });
});
