/**
 * A small Prometheus registry: counters and histograms with labels, plus gauges that
 * are computed when scraped (queue depth reads the database, not a shadow counter).
 */
type Labels = Record<string, string>;

const LATENCY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Bound on label combinations per metric so an unexpected label value cannot exhaust memory. */
const SERIES_MAX = 5_000;

function labelKey(labels: Labels): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${k}="${String(labels[k]).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`)
    .join(",");
}

function withLabels(name: string, key: string, extra = ""): string {
  const all = [key, extra].filter(Boolean).join(",");
  return all ? `${name}{${all}}` : name;
}

class Counter {
  private readonly series = new Map<string, number>();
  constructor(readonly name: string, readonly help: string) {}
  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    if (!this.series.has(key) && this.series.size >= SERIES_MAX) return;
    this.series.set(key, (this.series.get(key) ?? 0) + by);
  }
  render(): string[] {
    return [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`,
      ...[...this.series].map(([k, v]) => `${withLabels(this.name, k)} ${v}`)];
  }
}

class Histogram {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(readonly name: string, readonly help: string, readonly buckets = LATENCY_BUCKETS_SECONDS) {}
  observe(labels: Labels, value: number): void {
    const key = labelKey(labels);
    let s = this.series.get(key);
    if (!s) {
      if (this.series.size >= SERIES_MAX) return;
      s = { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    this.buckets.forEach((le, i) => { if (value <= le) s.counts[i]! += 1; });
    s.sum += value;
    s.count += 1;
  }
  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const [k, s] of this.series) {
      this.buckets.forEach((le, i) => lines.push(`${withLabels(`${this.name}_bucket`, k, `le="${le}"`)} ${s.counts[i]}`));
      lines.push(`${withLabels(`${this.name}_bucket`, k, 'le="+Inf"')} ${s.count}`);
      lines.push(`${withLabels(`${this.name}_sum`, k)} ${s.sum}`, `${withLabels(`${this.name}_count`, k)} ${s.count}`);
    }
    return lines;
  }
}

export type GaugeSample = { labels: Labels; value: number };

export class Metrics {
  private readonly counters = new Map<string, Counter>();
  private readonly histograms = new Map<string, Histogram>();
  private readonly gauges = new Map<string, { help: string; collect: () => GaugeSample[] }>();

  counter(name: string, help: string): Counter {
    let c = this.counters.get(name);
    if (!c) this.counters.set(name, (c = new Counter(name, help)));
    return c;
  }

  histogram(name: string, help: string, buckets?: number[]): Histogram {
    let h = this.histograms.get(name);
    if (!h) this.histograms.set(name, (h = new Histogram(name, help, buckets)));
    return h;
  }

  /** Registers a gauge whose samples are read at scrape time. */
  gauge(name: string, help: string, collect: () => GaugeSample[]): void {
    this.gauges.set(name, { help, collect });
  }

  render(): string {
    const lines: string[] = [];
    for (const c of this.counters.values()) lines.push(...c.render());
    for (const h of this.histograms.values()) lines.push(...h.render());
    for (const [name, g] of this.gauges) {
      lines.push(`# HELP ${name} ${g.help}`, `# TYPE ${name} gauge`);
      for (const s of g.collect()) lines.push(`${withLabels(name, labelKey(s.labels))} ${s.value}`);
    }
    return `${lines.join("\n")}\n`;
  }
}
