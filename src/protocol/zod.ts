// The one zod the project's schemas are built with: zod/mini, whose functions a bundle keeps only
// when used (the classic build's methods carry all of zod into every bundle, ~190 kB minified).
// zod/mini ships no messages of its own ("Invalid input"); English, as the classic build has it,
// is set here, where every schema module gets its `z` (docs/architecture.md#lazy-bundles).
import { config } from 'zod/mini';
import { en } from 'zod/locales';

export * from 'zod/mini';

/** Set before any schema parses: each importer of this module has it set. */
export const ZOD_LOCALE = config(en());
