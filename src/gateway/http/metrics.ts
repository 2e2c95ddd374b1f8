// Prometheus text exposition without a client library: a handful of counters, one histogram,
// and gauges read from the authority at scrape time.

type Labels = Record<string, string>;

/** The `# HELP` and `# TYPE` lines every metric's exposition opens with. */
function header(name: string, help: string, type: 'counter' | 'gauge' | 'histogram'): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}`;
}

/** A gauge's exposition: its header, then one line a sample (`labels` already rendered, '' for none). */
function gauge(name: string, help: string, samples: [labels: string, value: number][]): string {
  return [header(name, help, 'gauge'), ...samples.map(([labels, value]) => `${name}${labels} ${value}`)].join('\n');
}

function labelKey(labels: Labels | undefined): string {
  if (!labels) return '';
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  return entries.length === 0
    ? ''
    : `{${entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
}

export class Counter {
  private readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  /** Increments the series with an already rendered label set, e.g. `{route="status",status="200"}`. */
  incRendered(renderedLabels: string, by = 1): void {
    this.values.set(renderedLabels, (this.values.get(renderedLabels) ?? 0) + by);
  }
  inc(labelsOrAmount?: Labels | number, amount = 1): void {
    const labels = typeof labelsOrAmount === 'object' ? labelsOrAmount : undefined;
    const by = typeof labelsOrAmount === 'number' ? labelsOrAmount : amount;
    const key = labelKey(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }
  get(labels?: Labels): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  render(): string {
    const lines = [header(this.name, this.help, 'counter')];
    if (this.values.size === 0) lines.push(`${this.name} 0`);
    for (const [key, value] of this.values) lines.push(`${this.name}${key} ${value}`);
    return lines.join('\n');
  }
}

export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: number[],
  ) {
    this.counts = buckets.map(() => 0);
  }
  observe(value: number): void {
    this.sum += value;
    this.count += 1;
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]) this.counts[i] += 1;
  }
  get observations(): number {
    return this.count;
  }
  render(): string {
    const lines = [header(this.name, this.help, 'histogram')];
    this.buckets.forEach((b, i) => lines.push(`${this.name}_bucket{le="${b}"} ${this.counts[i]}`));
    lines.push(`${this.name}_bucket{le="+Inf"} ${this.count}`, `${this.name}_sum ${this.sum}`, `${this.name}_count ${this.count}`);
    return lines.join('\n');
  }
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** Every counter the gateway keeps: its name and help, in the order they are rendered. */
const COUNTERS = {
  httpRequests: ['offpeak_http_requests_total', 'HTTP requests answered, by route and status.'],
  errors: ['offpeak_errors_total', 'Error answers by business or general code (3102, 3105, invalid_request, ...).'],
  takes: ['offpeak_tickets_taken_total', 'New tickets taken (a retried take that got the same ticket: not counted).'],
  promotions: ['offpeak_tickets_promoted_total', 'Tickets promoted queued -> ready by the promote timer.'],
  expirations: ['offpeak_tickets_expired_total', 'Tickets expired, by the state they expired from.'],
  settles: ['offpeak_tickets_settled_total', 'Tickets settled (repeated settles not counted).'],
  admissions: ['offpeak_model_admissions_total', 'Model requests admitted and forwarded upstream.'],
  upstreamErrors: ['offpeak_upstream_errors_total', 'Model requests that failed upstream or broke mid-stream.'],
  clientAborts: ['offpeak_model_client_aborts_total', 'Client hung up mid-answer (upstream aborted).'],
  longPollRechecks: ['offpeak_long_poll_rechecks_total', 'Status long-polls re-read: a ticket they watch changed.'],
  longPollsOverCap: ['offpeak_long_polls_over_cap_total', 'Long-polls answered at once: their user held the most.'],
} as const;

export class GatewayMetrics {
  /** Every counter and histogram below, in the order they are declared and rendered. */
  private readonly declared: (Counter | Histogram)[] = [];
  /** The counters of COUNTERS, by key. */
  readonly count = Object.fromEntries(Object.entries(COUNTERS).map(([key, [name, help]]) => [key, this.counter(name, help)])) as Record<
    keyof typeof COUNTERS,
    Counter
  >;
  readonly upstreamHeaders = this.latency('offpeak_upstream_response_seconds', 'Time from admission to upstream response headers.');
  readonly upstreamTotal = this.latency('offpeak_upstream_duration_seconds', 'Time from admission to the end of the upstream response.');

  private counter(name: string, help: string): Counter {
    return this.declare(new Counter(name, help));
  }

  /** A histogram of seconds in the latency buckets. */
  private latency(name: string, help: string): Histogram {
    return this.declare(new Histogram(name, help, LATENCY_BUCKETS));
  }

  private declare<M extends Counter | Histogram>(metric: M): M {
    this.declared.push(metric);
    return metric;
  }

  /** Hot path: one call per HTTP request; route labels are fixed strings, so no escaping needed. */
  countRequest(route: string, status: number): void {
    this.count.httpRequests.incRendered(`{route="${route}",status="${status}"}`);
  }

  render(gauges: {
    byState: Record<string, number>;
    queueLength: number;
    inFlight: number;
    windowsOpen: boolean;
    longPolls: number;
  }): string {
    const sections = [
      gauge(
        'offpeak_tickets',
        'Tickets by state.',
        Object.entries(gauges.byState).map(([state, n]) => [`{state="${state}"}`, n]),
      ),
      gauge('offpeak_queue_length', 'Queued tickets waiting for promotion.', [['', gauges.queueLength]]),
      gauge('offpeak_model_requests_in_flight', 'Model requests being forwarded now.', [['', gauges.inFlight]]),
      gauge('offpeak_window_open', '1 while the off-peak windows are open.', [['', gauges.windowsOpen ? 1 : 0]]),
      gauge('offpeak_long_polls', 'Status long-polls waiting now.', [['', gauges.longPolls]]),
      ...this.declared.map((metric) => metric.render()),
    ];
    return sections.join('\n') + '\n';
  }
}
