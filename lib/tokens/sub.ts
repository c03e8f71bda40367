/**
 * The platform's `sub` encoding: base64url without padding of the protobuf message
 * `{ 1: user id (string), 2: connector id (string) }`, which downstream services decode.
 */
export type Subject = { userId: string; connector: string };

export function encodeSubject({ userId, connector }: Subject): string {
  return Buffer.concat([stringField(1, userId), stringField(2, connector)]).toString("base64url");
}

export function decodeSubject(sub: string): Subject {
  const bytes = Buffer.from(sub, "base64url");
  const fields = new Map<number, string>();
  let offset = 0;
  while (offset < bytes.length) {
    const [key, afterKey] = readVarint(bytes, offset);
    if ((key & 7) !== 2) throw new Error("sub: unexpected protobuf wire type");
    const [length, start] = readVarint(bytes, afterKey);
    if (start + length > bytes.length) throw new Error("sub: truncated field");
    fields.set(key >> 3, bytes.subarray(start, start + length).toString("utf8"));
    offset = start + length;
  }
  const userId = fields.get(1);
  const connector = fields.get(2);
  if (userId === undefined || connector === undefined) throw new Error("sub: missing user id or connector");
  return { userId, connector };
}

/** A length-delimited protobuf field (wire type 2). */
function stringField(field: number, value: string): Buffer {
  const data = Buffer.from(value, "utf8");
  return Buffer.concat([varint((field << 3) | 2), varint(data.length), data]);
}

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}

function readVarint(bytes: Buffer, offset: number): [value: number, next: number] {
  let value = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (offset >= bytes.length) break;
    const byte = bytes[offset++];
    value |= (byte & 0x7f) << shift;
    if (byte < 0x80) return [value >>> 0, offset];
  }
  throw new Error("sub: malformed varint");
}
