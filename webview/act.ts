// How the panel runs a request: its error goes to the banner, its result to the caller.
export type Act = <T>(work: Promise<T>) => Promise<T | undefined>;
