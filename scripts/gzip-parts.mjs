// One gzip stream out of several parts, each compressed on its own, so that streams that begin
// with the same part begin with the same bytes. Used by scripts/inline-loader.mjs for the
// verdict program's parts (scripts/split-verdict.mjs): the page carries the start of the first
// part's deflate, and a catalog link's stream (the first part, then the catalog links' parts),
// a pasted config's (the first part, then the reader's) and a config's beside a model, an
// example or a drafter all continue it; after the first part, each stream's other parts are one
// piece, deflated together.
//
// Each part is deflated by zopfli (5% smaller than zlib's level 9), then made non-final and
// flushed to a byte: the last block's BFINAL bit cleared and an empty stored block appended
// (zlib's Z_SYNC_FLUSH marker, 00 00 FF FF). Deflate blocks may follow one another that way; a
// back-reference never reaches into the part before, since each part was compressed alone. The
// last part of a stream stays final; the gzip header and trailer (CRC-32 and length of the whole)
// are the stream's own. One gzip member, not one per part: Chromium's DecompressionStream fails
// on a second member, and a server's Content-Encoding: gzip is decoded up to the first.
import * as zlib from 'node:zlib';
import { createRequire } from 'node:module';

const { inflateRawSync } = zlib;
// CRC-32 (the gzip trailer's): node:zlib's where it has one (Node 20.15 and later), else by table.
let table;
export const crc32 =
  zlib.crc32 ??
  ((bytes) => {
    table ??= Array.from({ length: 256 }, (_, n) => {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      return c >>> 0;
    });
    let c = 0xffffffff;
    for (const x of bytes) c = table[(c ^ x) & 0xff] ^ (c >>> 8);
    return (c ^ 0xffffffff) >>> 0;
  });

const { deflateAsync } = createRequire(import.meta.url)('@gfx/zopfli');

const LBASE = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258];
const LEXT = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0];
const DEXT = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13];
const ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];

// A canonical Huffman code from its symbols' code lengths (RFC 1951 3.2.2), as puff.c reads one.
const huffman = (lengths) => {
  const count = new Array(16).fill(0);
  for (const l of lengths) count[l]++;
  const offs = new Array(16).fill(0);
  for (let len = 1; len < 15; len++) offs[len + 1] = offs[len] + count[len];
  const symbol = [];
  lengths.forEach((l, s) => {
    if (l !== 0) symbol[offs[l]++] = s;
  });
  return { count, symbol };
};
const FIXED_LEN = huffman([...new Array(144).fill(8), ...new Array(112).fill(9), ...new Array(24).fill(7), ...new Array(8).fill(8)]);
const FIXED_DIST = huffman(new Array(30).fill(5));

// Where a raw deflate stream's blocks begin: [bit position of each block's header], and the bit
// position after the final block. Reads the stream as an inflater does, without writing output.
export function deflateBlocks(buf) {
  let pos = 0;
  const end = buf.length * 8;
  const bit = () => {
    if (pos >= end) throw new Error('gzip-parts: the deflate stream ends inside a block');
    const b = (buf[pos >> 3] >> (pos & 7)) & 1;
    pos++;
    return b;
  };
  const bits = (n) => {
    let v = 0;
    for (let i = 0; i < n; i++) v |= bit() << i;
    return v;
  };
  const decode = (h) => {
    let code = 0;
    let first = 0;
    let index = 0;
    for (let len = 1; len < 16; len++) {
      code |= bit();
      const count = h.count[len];
      if (code - count < first) return h.symbol[index + (code - first)];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    throw new Error('gzip-parts: a code no Huffman table has');
  };
  const blocks = [];
  for (let last = 0; !last; ) {
    blocks.push(pos);
    last = bit();
    const type = bits(2);
    if (type === 0) {
      pos = (pos + 7) & ~7;
      const len = bits(16);
      if ((bits(16) ^ 0xffff) !== len) throw new Error('gzip-parts: a stored block whose length check fails');
      pos += len * 8;
      continue;
    }
    let lencode = FIXED_LEN;
    let distcode = FIXED_DIST;
    if (type === 2) {
      const nlen = bits(5) + 257;
      const ndist = bits(5) + 1;
      const ncode = bits(4) + 4;
      const lengths = new Array(19).fill(0);
      for (let i = 0; i < ncode; i++) lengths[ORDER[i]] = bits(3);
      const lencodes = huffman(lengths);
      const all = [];
      while (all.length < nlen + ndist) {
        const sym = decode(lencodes);
        if (sym < 16) all.push(sym);
        else {
          const [value, n] = sym === 16 ? [all[all.length - 1], 3 + bits(2)] : sym === 17 ? [0, 3 + bits(3)] : [0, 11 + bits(7)];
          for (let i = 0; i < n; i++) all.push(value);
        }
      }
      lencode = huffman(all.slice(0, nlen));
      distcode = huffman(all.slice(nlen));
    } else if (type !== 1) throw new Error('gzip-parts: a block of type 3');
    for (;;) {
      const sym = decode(lencode);
      if (sym < 256) continue;
      if (sym === 256) break;
      const l = sym - 257;
      if (l >= LBASE.length) throw new Error('gzip-parts: a length code past 285');
      bits(LEXT[l]);
      const d = decode(distcode);
      if (d >= DEXT.length) throw new Error('gzip-parts: a distance code past 29');
      bits(DEXT[d]);
    }
  }
  return { blocks, end: pos };
}

// `bytes` deflated by zopfli, as a final stream (`last`) or made non-final and flushed to a byte.
export async function deflatePart(bytes, last) {
  const raw = Buffer.from(await deflateAsync(bytes, { numiterations: 15 }));
  if (last) return raw;
  const { blocks, end } = deflateBlocks(raw);
  const at = blocks[blocks.length - 1];
  const out = Buffer.alloc(((end + 3 + 7) >> 3) + 4);
  raw.copy(out, 0, 0, (end + 7) >> 3);
  // BFINAL off; then the bits after the last block are the empty stored block's header (000) and
  // its padding: all zero.
  out[at >> 3] &= ~(1 << (at & 7));
  for (let p = end; p < ((end + 3 + 7) >> 3) * 8; p++) out[p >> 3] &= ~(1 << (p & 7));
  out.set([0x00, 0x00, 0xff, 0xff], out.length - 4);
  return out;
}

// The gzip stream of `parts` (raw bytes, in order) from their deflates (deflatePart: every one
// but the last flushed, the last final). Checked: it decompresses to the parts.
export function gzipOf(parts, deflates, fail) {
  const whole = Buffer.concat(parts);
  const body = Buffer.concat(deflates);
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 3]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(whole), 0);
  trailer.writeUInt32LE(whole.length % 2 ** 32, 4);
  let back;
  try {
    back = inflateRawSync(body);
  } catch (e) {
    fail(`the parts' deflate streams do not inflate as one: ${e.message}`);
  }
  if (!back.equals(whole)) fail("the parts' deflate streams inflate to other bytes than the parts");
  return Buffer.concat([header, body, trailer]);
}
