/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends through a CONNECT tunnel.
 * Only the name the client chose to send in clear is visible: the HTTP authority inside the encrypted stream
 * (and an ECH-protected inner name) cannot be inspected by the proxy.
 */
export type SniRead = { state: "need-more" } | { state: "not-tls" } | { state: "done"; name: string | undefined };

export function readClientHelloSni(buf: Buffer): SniRead {
  if (buf.length < 1) return { state: "need-more" };
  if (buf[0] !== 0x16) return { state: "not-tls" };
  if (buf.length < 5) return { state: "need-more" };
  const recordLength = buf.readUInt16BE(3);
  if (buf.length < 5 + recordLength) return recordLength > 16384 ? { state: "done", name: undefined } : { state: "need-more" };
  const hello = buf.subarray(5, 5 + recordLength);
  try {
    if (hello[0] !== 0x01) return { state: "done", name: undefined };
    let p = 4 + 2 + 32; // handshake header, client_version, random
    p += 1 + (hello[p] as number); // session id
    p += 2 + hello.readUInt16BE(p); // cipher suites
    p += 1 + (hello[p] as number); // compression methods
    if (p + 2 > hello.length) return { state: "done", name: undefined };
    const end = p + 2 + hello.readUInt16BE(p);
    p += 2;
    while (p + 4 <= end && p + 4 <= hello.length) {
      const type = hello.readUInt16BE(p);
      const length = hello.readUInt16BE(p + 2);
      p += 4;
      if (type === 0x0000) {
        // server_name_list: u16 length, then entries of (u8 type, u16 length, name)
        let q = p + 2;
        while (q + 3 <= p + length) {
          const nameType = hello[q] as number;
          const nameLength = hello.readUInt16BE(q + 1);
          if (nameType === 0)
            return {
              state: "done",
              name: hello
                .subarray(q + 3, q + 3 + nameLength)
                .toString("latin1")
                .toLowerCase(),
            };
          q += 3 + nameLength;
        }
      }
      p += length;
    }
  } catch {
    // A truncated or malformed hello: no name can be trusted from it.
  }
  return { state: "done", name: undefined };
}
