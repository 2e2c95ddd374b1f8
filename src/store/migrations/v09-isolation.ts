/**
 * v9: task isolation (own branch in a git worktree, or in place). No delete trigger: the row tells
 * whoever removes a deleted task's worktree where it is, then is removed (`tx.isolation.forget`).
 */
import { tablesStep } from './migration-step';
import { ISOLATION_TABLE } from './tables';

export const SCHEMA_V9_SQL = `
CREATE TABLE IF NOT EXISTS ${ISOLATION_TABLE} (
  task_id       TEXT PRIMARY KEY,
  mode          TEXT NOT NULL,
  repo_path     TEXT NOT NULL,
  worktree_path TEXT,
  branch        TEXT,
  base_commit   TEXT,
  note          TEXT,
  changes_json  TEXT,
  missing_at    INTEGER,
  brought_home    TEXT,
  brought_home_at INTEGER,
  created_at    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ${ISOLATION_TABLE}_worktree ON ${ISOLATION_TABLE} (worktree_path);
`;

export const v09 = tablesStep(
  9,
  'task isolation: own branch in a git worktree or in place; worktree path, branch, base commit, changed files',
  SCHEMA_V9_SQL,
);
