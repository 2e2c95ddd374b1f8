// Programs the extension runs by name (git, claude, taskkill, …) come from PATH only, never from
// the working directory (Windows' CreateProcess looks there first unless
// NoDefaultCurrentDirectoryInExePath is set) nor from a relative PATH entry. Windows and macOS are
// injected platforms over an in-memory file list; a relative path stands for "in the working
// directory", where a repository could have put a program of its own.
import assert from 'node:assert/strict';
import { locateClaudeCode, type LocateHost } from '../../src/agent/runtime/claude-code-locate';
import { findOnPath } from '../../src/core/executable-path';

/** A host whose only files are `files`; a relative name is a file in the working directory. */
function host(platform: NodeJS.Platform, env: Record<string, string>, files: string[]): LocateHost {
  return {
    platform,
    env,
    homedir: platform === 'win32' ? 'C:\\Users\\me' : '/Users/me',
    isFile: (f) => files.includes(f),
    readText: () => undefined,
    uid: platform === 'win32' ? undefined : 501,
    statOf: () => ({ uid: 501, mode: 0o755 }),
  };
}

describe('programs run by name come from PATH only', () => {
  const windows = host(
    'win32',
    { Path: '.;C:\\Program Files\\Git\\cmd;;tools;C:\\Users\\me\\.local\\bin', PATHEXT: '.COM;.EXE;.BAT;.CMD' },
    [
      // Planted by a repository in the working directory (and a relative PATH entry's folder).
      'git.exe',
      'git.EXE',
      'claude.exe',
      'tools\\git.exe',
      'tools\\claude.exe',
      'taskkill.exe',
      // The real ones.
      'C:\\Program Files\\Git\\cmd\\git.exe',
      'C:\\Users\\me\\.local\\bin\\claude.exe',
      'C:\\Windows\\System32\\taskkill.exe',
    ],
  );

  it('item 5: on Windows git is resolved from PATH only: an absolute PATH folder, never the working directory or a relative PATH entry', () => {
    assert.equal(findOnPath('git', windows), 'C:\\Program Files\\Git\\cmd\\git.exe');
    assert.equal(findOnPath('taskkill', windows), undefined, 'not on PATH: not found, though the working directory has one');
    assert.equal(
      findOnPath('taskkill', { ...windows, env: { ...windows.env, Path: 'C:\\Windows\\System32' } }),
      'C:\\Windows\\System32\\taskkill.exe',
    );
  });

  it('item 5: on Windows claude is resolved from PATH only: never the working directory or a relative PATH entry', () => {
    assert.deepEqual(locateClaudeCode('claude', windows), {
      found: 'C:\\Users\\me\\.local\\bin\\claude.exe',
      command: 'C:\\Users\\me\\.local\\bin\\claude.exe',
      argsPrefix: [],
    });
    const onlyRelative = { ...windows, env: { ...windows.env, Path: '.;tools' } };
    assert.equal(locateClaudeCode('my-claude', onlyRelative), undefined, 'a name found only in relative PATH folders is not found');
  });

  it('item 5: on macOS and Linux the same: an absolute PATH folder only', () => {
    const mac = host('darwin', { PATH: ':.:bin:/opt/homebrew/bin:/usr/bin' }, ['git', 'bin/git', '/usr/bin/git', '/opt/homebrew/bin/git']);
    assert.equal(findOnPath('git', mac), '/opt/homebrew/bin/git');
    assert.equal(findOnPath('git', { ...mac, platform: 'linux', env: { PATH: 'bin:/usr/bin' } }), '/usr/bin/git');
    assert.equal(findOnPath('/usr/local/bin/git', mac), '/usr/local/bin/git', 'a path is taken as it is');
  });
});
