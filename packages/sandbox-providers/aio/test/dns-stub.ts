import { createSocket, type Socket } from "node:dgram";

/**
 * A real UDP DNS server on loopback that answers A/AAAA queries from a table and counts every query by name, so a
 * test can prove a name was (or was never) looked up. Unknown names get NXDOMAIN.
 */
export class CountingDnsStub {
  readonly queries = new Map<string, number>();
  private constructor(
    private readonly socket: Socket,
    readonly port: number,
    private readonly table: Map<string, string[]>,
  ) {}

  static async start(table: Record<string, string[]>): Promise<CountingDnsStub> {
    const socket = createSocket("udp4");
    await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", resolve));
    const stub = new CountingDnsStub(socket, socket.address().port, new Map(Object.entries(table)));
    socket.on("message", (msg, rinfo) => {
      const answer = stub.answer(msg);
      if (answer) socket.send(answer, rinfo.port, rinfo.address);
    });
    return stub;
  }

  get server(): string {
    return `127.0.0.1:${this.port}`;
  }

  count(name: string): number {
    return this.queries.get(name) ?? 0;
  }

  total(): number {
    return [...this.queries.values()].reduce((a, b) => a + b, 0);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private answer(msg: Buffer): Buffer | undefined {
    if (msg.length < 12) return undefined;
    const labels: string[] = [];
    let p = 12;
    while (p < msg.length && msg[p] !== 0) {
      const len = msg[p] as number;
      labels.push(msg.subarray(p + 1, p + 1 + len).toString("latin1"));
      p += 1 + len;
    }
    p += 1;
    const qtype = msg.readUInt16BE(p);
    const question = msg.subarray(12, p + 4);
    const name = labels.join(".").toLowerCase();
    this.queries.set(name, (this.queries.get(name) ?? 0) + 1);
    const known = this.table.get(name);
    const addresses = (known ?? []).filter((a) => (qtype === 1 ? !a.includes(":") : qtype === 28 ? a.includes(":") : false));
    const header = Buffer.alloc(12);
    msg.copy(header, 0, 0, 2);
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2);
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(addresses.length, 6);
    const records = addresses.map((address) => {
      const rdata = address.includes(":") ? ipv6Bytes(address) : Buffer.from(address.split(".").map(Number));
      const rr = Buffer.alloc(12);
      rr.writeUInt16BE(0xc00c, 0);
      rr.writeUInt16BE(address.includes(":") ? 28 : 1, 2);
      rr.writeUInt16BE(1, 4);
      rr.writeUInt32BE(0, 6);
      rr.writeUInt16BE(rdata.length, 10);
      return Buffer.concat([rr, rdata]);
    });
    return Buffer.concat([header, question, ...records]);
  }
}

function ipv6Bytes(address: string): Buffer {
  const [head = "", tail = ""] = address.split("::");
  const h = head ? head.split(":") : [];
  const t = tail ? tail.split(":") : [];
  const groups = [...h, ...Array(8 - h.length - t.length).fill("0"), ...t];
  const out = Buffer.alloc(16);
  groups.forEach((g, i) => {
    out.writeUInt16BE(Number.parseInt(g, 16), i * 2);
  });
  return out;
}
