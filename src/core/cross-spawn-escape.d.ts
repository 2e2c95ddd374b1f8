/** cross-spawn's cmd.exe escaping (its own module; the package ships no types). */
declare module 'cross-spawn/lib/util/escape' {
  /** The program's path with cmd.exe's meta characters escaped with `^`. */
  export function command(arg: string): string;
  /** One argument quoted for the C runtime, then its meta characters escaped for cmd.exe (twice for a shim that runs cmd.exe again). */
  export function argument(arg: string, doubleEscapeMetaChars?: boolean): string;
}
