// Imported first by main.tsx, before any schema is built (zod reads this when a schema is made):
// the panel's CSP forbids eval, so zod's compiled parsers cannot run here. Saying so up front
// skips zod's eval probe (a CSP violation report each load) and the parsers' compile attempts.
import { config } from 'zod/mini';

config({ jitless: true });
