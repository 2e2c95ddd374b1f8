/**
 * v22: a task's pull request (src/store/repos/pull-request-repo.ts, docs/flows.md#pull-requests):
 * the forge, repository and number, its link, the branches, what the forge last said of it (state,
 * checks, review), the ETag of that answer and when it was asked; removed with the task. Additive:
 * the readable-by mark stays.
 */
import { followTaskDeleteSql, tablesStep } from './migration-step';
import { PULL_REQUESTS_TABLE } from './tables';

export const SCHEMA_V22_SQL = `
CREATE TABLE IF NOT EXISTS ${PULL_REQUESTS_TABLE} (
  task_id     TEXT PRIMARY KEY,
  forge       TEXT NOT NULL,
  api_url     TEXT NOT NULL,
  owner       TEXT NOT NULL,
  repo        TEXT NOT NULL,
  number      INTEGER NOT NULL,
  url         TEXT NOT NULL,
  head        TEXT NOT NULL,
  base        TEXT NOT NULL,
  state       TEXT NOT NULL,
  checks      TEXT NOT NULL DEFAULT 'none',
  review      TEXT NOT NULL DEFAULT 'none',
  etag        TEXT,
  checked_at  INTEGER,
  created_at  INTEGER NOT NULL
);
${followTaskDeleteSql(PULL_REQUESTS_TABLE)}
`;

export const v22 = tablesStep(
  22,
  "pull requests: a task's pull request on its forge, its state, checks and review as last asked, with the answer's ETag",
  SCHEMA_V22_SQL,
);
