// `npm run package`: writes off-peak-tasks-<version>.vsix in the repository root (production
// bundles, see scripts/vsix/build.ts), prints its file list and fails if the list breaks the rule
// in scripts/vsix/contents.ts. Install the result with `code --install-extension <file>`.
// usage: node --import tsx scripts/package.ts
import path from 'node:path';
import { formatVsixEntries } from './vsix/contents';
import { buildVsix } from './vsix/build';
import { REPO_ROOT } from './vscode/tools';

buildVsix().then(
  ({ file, entries, problems }) => {
    console.log(`\n${path.relative(REPO_ROOT, file)}:\n${formatVsixEntries(entries)}`);
    if (problems.length > 0) {
      console.error(`package: the .vsix breaks the content rule (scripts/vsix/contents.ts):\n  ${problems.join('\n  ')}`);
      process.exit(1);
    }
    console.log(`package: ${path.relative(REPO_ROOT, file)} holds only what the extension runs`);
  },
  (err: unknown) => {
    console.error(`package: ${(err as Error).message}`);
    process.exit(1);
  },
);
