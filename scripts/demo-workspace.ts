// `npm start`'s demo folder (README.md#quick-start): a git repository of its own with one commit,
// so the form's default ("Run on its own branch") gives the first task a worktree, as in a user's
// project. It lies under this project's git-ignored `.tools/`: as a plain folder there it would
// belong to this repository without being in it, and no branch of it could hold the task.
import fs from 'node:fs';
import path from 'node:path';
import { runGit } from '../src/agent/workplace/hardened-git';

const README = `# Off-Peak demo folder

A git repository of its own, made by \`npm start\`: queue "create hello.txt" from the
Off-Peak Tasks panel and the task works on its own offpeak/… branch; review, then merge or discard.
`;

/** Makes `folder` a repository with a first commit, unless it already is the top of one. */
export async function ensureDemoRepository(folder: string): Promise<'made' | 'kept'> {
  fs.mkdirSync(folder, { recursive: true });
  const top = (await runGit(['rev-parse', '--show-toplevel'], { cwd: folder }))?.trim();
  if (
    top &&
    path.resolve(top) === fs.realpathSync(folder) &&
    (await runGit(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { cwd: folder }))
  )
    return 'kept';
  const git = async (...args: string[]): Promise<void> => {
    if ((await runGit(args, { cwd: folder })) === null)
      throw new Error(`could not make the demo folder ${folder} a git repository (git ${args[0]} failed)`);
  };
  await git('init', '--quiet');
  if (!fs.existsSync(path.join(folder, 'README.md'))) fs.writeFileSync(path.join(folder, 'README.md'), README);
  await git('add', 'README.md');
  await git(
    '-c',
    'user.name=Off-Peak demo',
    '-c',
    'user.email=demo@offpeak.invalid',
    'commit',
    '--quiet',
    '-m',
    'Demo folder made by npm start',
  );
  return 'made';
}
