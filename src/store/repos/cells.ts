/**
 * Reading SQL rows (snake_case columns, INTEGER booleans) into the core's camelCase records: the
 * cell readers, and `cellReader`, which every repository's row mapping uses so that a record's
 * fields are named once, by kind, and each column is the field's name in snake_case.
 */
import type { SqlRow } from '../db/sql';

/** A cell as text ('' for NULL). */
export const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
/** A cell as text, NULL kept. */
export const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
/** A cell as a number (0 for NULL). */
export const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
/** A cell as a number, NULL kept. */
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
/** An INTEGER flag cell (NULL and 0 are false). */
export const bool = (v: unknown): boolean => v !== null && v !== undefined && Number(v) !== 0;

/** A text cell that must be one of `allowed`; anything else (NULL included) reads as `otherwise`. */
export function oneOf<const T extends string, O>(v: unknown, allowed: readonly T[], otherwise: O): T | O {
  return (allowed as readonly unknown[]).includes(v) ? (v as T) : otherwise;
}

const READERS = { str, strOrNull, num, numOrNull, bool };
type Readers = typeof READERS;

/** A record's fields by the reader of their cells. */
export type CellSpec = { readonly [K in keyof Readers]?: readonly string[] };

type UnionToIntersection<U> = (U extends unknown ? (x: U) => void : never) extends (x: infer I) => void ? I : never;

/** The record part a spec reads: each field listed, typed by its reader. */
export type CellFields<S extends CellSpec> = UnionToIntersection<
  { [K in keyof S & keyof Readers]: { [F in NonNullable<S[K]>[number]]: ReturnType<Readers[K]> } }[keyof S & keyof Readers]
>;

/** `taskId` → `task_id`: the column of a record's field. */
export const columnOf = (field: string): string => field.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Where a reader finds its columns: after a prefix (`usage_`), and any field whose column is not its snake_case name. */
export interface CellColumns {
  prefix?: string;
  renamed?: Readonly<Record<string, string>>;
}

/**
 * A row mapping for the fields `spec` lists (each column the field's name in snake_case, unless
 * `columns` says otherwise), compiled once into one object literal: a loop that adds the fields key
 * by key measured 10x slower per row, and every snapshot maps every task row. The code is made
 * only from the spec's field and column names (identifiers in this repository), each quoted by
 * JSON.stringify, never from a row's data.
 */
export function cellReader<const S extends CellSpec>(spec: S, columns: CellColumns = {}): (r: SqlRow) => CellFields<S> {
  const columnFor = (field: string) => columns.renamed?.[field] ?? `${columns.prefix ?? ''}${columnOf(field)}`;
  const fields = (Object.keys(spec) as (keyof Readers)[]).flatMap((kind) =>
    (spec[kind] ?? []).map((field) => `${JSON.stringify(field)}: R.${kind}(r[${JSON.stringify(columnFor(field))}])`),
  );
  return new Function('R', `return (r) => ({ ${fields.join(', ')} });`)(READERS) as (r: SqlRow) => CellFields<S>;
}
