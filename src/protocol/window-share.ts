// The header a gateway with account limits adds to each model answer: its share of the account's
// windows (docs/flows.md#capacity-and-cost). Both ends read and write it here.
/**
 * On a model answer of a gateway run with account limits (docs/flows.md#capacity-and-cost): the
 * account's reading in this answer's headers and the share of its windows used since the account's
 * previous answer, credited to that answer's ticket (`t`, only when it is the same user's; the
 * headers of an answer count what was used before it), as
 * `t=<ticket>;5h=0.0012;7d=0.0003;u5h=0.42;u7d=0.71;r5h=<epoch ms>;r7d=<epoch ms>`.
 */
export const WINDOW_SHARE_HEADER = 'x-off-peak-window-share';

/** What WINDOW_SHARE_HEADER carries: the answer's share (0..1) and the account's reading it came from. */
export interface WindowShareReading {
  /** The ticket the share is credited to (the account's previous answer's); null: none, the share is 0. */
  ticketId: string | null;
  fiveHour: number;
  sevenDay: number;
  utilization5h: number;
  utilization7d: number;
  reset5hAt: number | null;
  reset7dAt: number | null;
}

export function formatWindowShare(r: WindowShareReading): string {
  const reset = (at: number | null) => (at === null ? '' : String(at));
  return `t=${r.ticketId ?? ''};5h=${r.fiveHour};7d=${r.sevenDay};u5h=${r.utilization5h};u7d=${r.utilization7d};r5h=${reset(r.reset5hAt)};r7d=${reset(r.reset7dAt)}`;
}

/** WINDOW_SHARE_HEADER read back; undefined when absent or not in its shape. */
export function readWindowShare(value: string | string[] | undefined): WindowShareReading | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return undefined;
  const fields = new Map(text.split(';').map((part) => part.split('=', 2) as [string, string]));
  const share = (key: string) => {
    const n = Number(fields.get(key));
    return fields.get(key) !== undefined && fields.get(key) !== '' && Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined;
  };
  const at = (key: string) => {
    const n = Number(fields.get(key));
    return fields.get(key) && Number.isSafeInteger(n) ? n : null;
  };
  const [fiveHour, sevenDay, utilization5h, utilization7d] = [share('5h'), share('7d'), share('u5h'), share('u7d')];
  if (fiveHour === undefined || sevenDay === undefined || utilization5h === undefined || utilization7d === undefined) return undefined;
  const ticket = fields.get('t');
  const ticketId = ticket && /^[A-Za-z0-9_-]{1,128}$/.test(ticket) ? ticket : null;
  return { ticketId, fiveHour, sevenDay, utilization5h, utilization7d, reset5hAt: at('r5h'), reset7dAt: at('r7d') };
}
