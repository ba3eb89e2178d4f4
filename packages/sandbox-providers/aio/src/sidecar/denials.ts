/** One refused egress attempt of the sandbox. */
export interface EgressDenial {
  /** Increasing per sidecar; the oldest unsurfaced denial has the smallest id. */
  id: number;
  at: string;
  host: string;
  port: number;
  /** `CONNECT`, or the method of a plain HTTP request. */
  method: string;
  /** `policy`: the name or port is not allowed. `address`: no answer was a reachable address. `sni`: the TLS name is not allowed. */
  kind: "policy" | "address" | "sni";
  reason: string;
}

/**
 * The sidecar's record of denials. Each is surfaced at most once: `claimOldest` hands out the oldest one not yet
 * surfaced (the runtime asks the user about it), `drain` takes all of them (runs that cannot ask deny them).
 */
export class DenialLog {
  private readonly entries: Array<EgressDenial & { surfaced: boolean }> = [];
  private next = 1;

  constructor(private readonly capacity = 1000) {}

  record(denial: Omit<EgressDenial, "id" | "at">): EgressDenial {
    const entry = { ...denial, id: this.next++, at: new Date().toISOString(), surfaced: false };
    this.entries.push(entry);
    // Beyond capacity the oldest surfaced ones go first; unsurfaced ones only when nothing else is left.
    while (this.entries.length > this.capacity) {
      const surfaced = this.entries.findIndex((e) => e.surfaced);
      this.entries.splice(Math.max(surfaced, 0), 1);
    }
    return strip(entry);
  }

  claimOldest(): EgressDenial | undefined {
    const entry = this.entries.find((e) => !e.surfaced);
    if (!entry) return undefined;
    entry.surfaced = true;
    return strip(entry);
  }

  drain(): EgressDenial[] {
    const open = this.entries.filter((e) => !e.surfaced);
    for (const e of open) e.surfaced = true;
    return open.map(strip);
  }

  list(): EgressDenial[] {
    return this.entries.map(strip);
  }
}

function strip(entry: EgressDenial & { surfaced: boolean }): EgressDenial {
  const { surfaced: _surfaced, ...rest } = entry;
  return rest;
}
