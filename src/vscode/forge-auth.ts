// The user's GitHub token for Open pull request (docs/flows.md#pull-requests): VS Code's own GitHub
// authentication session (`github`, or `github-enterprise` for an Enterprise host, whose address is
// VS Code's `github-enterprise.uri` setting), asked for each time and never stored by the extension.
import * as vscode from 'vscode';
import type { ForgeTokenProvider } from '../service';

/** `repo`: push to and open pull requests on the user's repositories. */
const SCOPES = ['repo'];

export const forgeToken: ForgeTokenProvider = async (host, { interactive, renew }) => {
  const session = await vscode.authentication.getSession(host.authProvider, SCOPES, {
    // The user asked for this: signing in may be asked for; a refused token asks for a new session.
    ...(renew
      ? { forceNewSession: { detail: `${host.host} did not accept the last sign-in.` } }
      : interactive
        ? { createIfNone: true }
        : { silent: true }),
  });
  return session?.accessToken;
};
