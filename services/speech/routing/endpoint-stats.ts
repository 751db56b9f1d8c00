/** What this process has measured of an endpoint; unset until its first measurement. */
export interface EndpointMeasure {
  /** Time from the attempt's start to its first audio byte, ms (moving average). */
  ttfbMs?: number;
  /** Audio bytes per second after the first byte, over whole streams (moving average). */
  throughputBps?: number;
}

/**
 * Weight of the newest sample: about the last five requests dominate, so a provider that
 * slows down is noticed within a few requests, and one slow request does not swamp the rest.
 */
const ALPHA = 0.3;

function ewma(previous: number | undefined, sample: number): number {
  return previous === undefined ? sample : previous + ALPHA * (sample - previous);
}

/**
 * Live latency and throughput per endpoint, measured by this speech process on the requests it
 * serves (provider.sort "latency" and "throughput" order by them; explain and the metrics show
 * them). In memory, per replica: no store round trip on the hot path, and each replica ranks
 * endpoints as it reaches them.
 */
export class EndpointStats {
  private readonly measures = new Map<string, EndpointMeasure>();

  constructor(private readonly onMeasure?: (key: string, m: EndpointMeasure) => void) {}

  get(key: string): EndpointMeasure {
    return this.measures.get(key) ?? {};
  }

  private update(key: string, change: (m: EndpointMeasure) => void): void {
    let m = this.measures.get(key);
    if (!m) {
      m = {};
      this.measures.set(key, m);
    }
    change(m);
    this.onMeasure?.(key, m);
  }

  firstByte(key: string, ms: number): void {
    if (!(ms >= 0)) return;
    this.update(key, (m) => {
      m.ttfbMs = ewma(m.ttfbMs, ms);
    });
  }

  /** A completed stream: `bytes` after its first piece arrived over `ms`. */
  streamed(key: string, bytes: number, ms: number): void {
    // A stream that came in one piece says nothing about throughput (its time is ~0).
    if (bytes <= 0 || !(ms > 0)) return;
    this.update(key, (m) => {
      m.throughputBps = ewma(m.throughputBps, (bytes * 1000) / ms);
    });
  }
}
