// public/early.js's delivery of the verdict program's six parts (scripts/split-verdict.mjs),
// run in Node on the release build's own program: the page's first script, as the page has it,
// with a fetch that hands the program over in chunks of chosen sizes. The browser tests get each
// file from a local server at once; this one cuts the stream at every awkward place, holds it
// back to see each part compile without the next, and cuts the file short.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { NS, ORDERS as STREAMS, TAILS as FILES, gzPrefix as prefix } from '../../scripts/split-verdict.mjs';

const DIST = new URL('../../dist/', import.meta.url);
const html = readFileSync(new URL('index.html', DIST), 'utf8');
const name = html.match(/data-verdict="\/([^"]+)"/)?.[1];
// The parts' sizes, and the three streams' orders (scripts/split-verdict.mjs).
const PARTS = Object.fromEntries((html.match(/data-verdict-parts="([^"]+)"/)?.[1] ?? '').split(',').map((p) => p.split(':')).map(([n, v]) => [n, Number(v)]));
const ORDERS = { catalog: ['C', ...STREAMS.catalog], config: ['C', ...STREAMS.config], beside: ['C', ...STREAMS.beside] };
const plain = readFileSync(new URL(name, DIST));
const gz = readFileSync(new URL(`${name}.gz`, DIST));
// A pasted config's stream after the page's head, and a config's beside an example or a drafter.
const rtail = readFileSync(new URL(`${name}.rtail`, DIST));
const btail = readFileSync(new URL(`${name}.btail`, DIST));
const source = readFileSync(new URL('../../public/early.js', import.meta.url), 'utf8');
// Where each part ends in the plain file (the catalog links' order).
const ends = [];
for (const n of ORDERS.catalog) ends.push((ends.at(-1) ?? 0) + PARTS[n]);
const at = ends[0];

// The shortest start of the .gz that decompresses to the first `n` bytes.
const gzPrefix = (n) => prefix(gz, n);

// A body that hands `bytes` over in chunks of `sizes` (the last size repeats); with `hold`, it
// waits after that many bytes until `release()` is called.
const body = (bytes, sizes, hold = Infinity) => {
  let at = 0;
  let k = 0;
  let release;
  const held = new Promise((resolve) => (release = resolve));
  const stream = new ReadableStream({
    async pull(c) {
      if (at >= bytes.length) return c.close();
      if (at >= hold) await held;
      let n = sizes[Math.min(k++, sizes.length - 1)];
      if (at < hold && at + n > hold) n = hold - at;
      c.enqueue(new Uint8Array(bytes.subarray(at, at + n)));
      at += n;
    },
  });
  return { stream, release };
};

// public/early.js in a context of its own, with this fetch; its `compile` is the page's.
const early = (respond, { decompress = true, head = 0, document, search = '', hash = '' } = {}) => {
  const context = vm.createContext({
    // The opening state (no address, no storage) planned ahead: no program fetched at start.
    HEADROOM_PLANNED: { '': [] },
    HEADROOM_VERDICT: '/p.wasm',
    HEADROOM_PARTS: PARTS,
    HEADROOM_ORDERS: ORDERS,
    HEADROOM_TAILS: FILES,
    HEADROOM_HEAD: head,
    location: { search, hash },
    ...(document ? { document, atob } : {}),
    fetch: respond,
    ReadableStream,
    Response,
    WebAssembly,
    ...(decompress ? { DecompressionStream } : {}),
  });
  vm.runInContext(source, context);
  return context.headroomEarly;
};
const response = (stream) => new Response(stream, { headers: { 'content-type': 'application/wasm' } });

test('the build has a program in six parts to test', () => {
  assert.ok(name && ORDERS.catalog.every((n) => PARTS[n] > 0) && Object.keys(PARTS).length === 6, `${name} ${JSON.stringify(PARTS)}`);
  for (const order of Object.values(ORDERS)) assert.deepEqual([...order].sort(), [...ORDERS.catalog].sort());
  assert.equal(ends.at(-1), plain.length);
});

// The parts as modules, in the stream's order: the first imports the placeholders, the others
// the first's exports.
const checkParts = async (compiled, order = ORDERS.catalog) => {
  const { module, parts } = await compiled;
  assert.ok(WebAssembly.Module.imports(module).some((i) => i.module === NS.placeholders));
  assert.deepEqual(Array.from(parts, (p) => p.name), order.slice(1));
  for (const p of parts) {
    assert.ok(WebAssembly.Module.imports(await p.module).every((i) => i.module === NS.first), p.name);
    assert.equal(p.ready, true, p.name);
  }
};

for (const [what, sizes] of [
  ['the .gz whole', [gz.length]],
  ['the .gz a byte at a time, then in 64 KB', [1, 1, 1, 65536]],
  ['the .gz in 1,000-byte chunks', [1000]],
]) {
  test(`a split program compiles part by part: ${what}`, async () => {
    const asked = [];
    const e = early((url) => (asked.push(url), Promise.resolve(response(body(gz, sizes).stream))));
    await checkParts(e.compile('catalog'));
    assert.deepEqual(asked, ['/p.wasm.gz']);
  });
}

// Decompressed, the stream's chunks may end anywhere: at a cut, a byte before, a byte after.
for (const [k, cut] of ends.slice(0, -1).entries()) {
  for (const shift of [-1, 0, 1]) {
    test(`the parts compile when a chunk ends ${shift === 0 ? 'at' : shift < 0 ? 'a byte before' : 'a byte after'} the end of ${ORDERS.catalog[k]} (${cut})`, async () => {
      // A server that decoded the .gz already: the page takes the chunks as they come.
      const e = early(() => Promise.resolve(response(body(plain, [cut + shift, 4096]).stream)));
      await checkParts(e.compile('catalog'));
    });
  }
}

test('each part compiles once its own bytes are in, while the next is still arriving', async () => {
  // Held back after the first part, then after the second (B).
  const { stream, release } = body(gz, [4096], gzPrefix(at) + 16);
  const e = early(() => Promise.resolve(response(stream)));
  const compiled = e.compile('catalog');
  const first = await Promise.race([compiled.then(() => 'compiled'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 5000))]);
  assert.equal(first, 'compiled', 'the first part compiled with the rest held back');
  const { parts } = await compiled;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(parts.map((p) => p.ready), ORDERS.catalog.slice(1).map(() => false), 'the other parts wait for their bytes');
  release();
  await checkParts(compiled);
  const { stream: s2, release: r2 } = body(gz, [4096], gzPrefix(ends[1]) + 16);
  const c2 = early(() => Promise.resolve(response(s2))).compile('catalog');
  const [b, k] = (await c2).parts;
  await b.module;
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual([b.ready, k.ready], [true, false], 'B is in, K waits for its bytes');
  r2();
  await checkParts(c2);
});

test('a program cut short: the first part compiles, the second fails, nothing unhandled', async () => {
  const unhandled = [];
  const onRejection = (e) => unhandled.push(e);
  process.on('unhandledRejection', onRejection);
  try {
    const e = early(() => Promise.resolve(response(body(gz.subarray(0, gz.length - 2000), [4096]).stream)));
    const { module, parts } = await e.compile('catalog');
    assert.ok(module instanceof WebAssembly.Module);
    await parts[0].module;
    await assert.rejects(parts.at(-1).module);
    const early2 = early(() => Promise.resolve(response(body(plain.subarray(0, 1000), [100]).stream)));
    await assert.rejects(early2.compile('catalog'));
    // A stream longer than its parts: the last part fails, not a wrong module.
    const early3 = early(() => Promise.resolve(response(body(Buffer.concat([plain, Buffer.from([0])]), [4096]).stream)));
    await assert.rejects((await early3.compile('catalog')).parts.at(-1).module);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onRejection);
  }
});

test('without DecompressionStream the plain file comes, cut the same way', async () => {
  const asked = [];
  const e = early((url) => (asked.push(url), Promise.resolve(response(body(plain, [65536]).stream))), { decompress: false });
  await checkParts(e.compile('config'));
  assert.deepEqual(asked, ['/p.wasm']);
});

// The page carries the start of the program's .gz (scripts/inline-loader.mjs's HEAD_BYTES),
// base64 in a comment at the end of its body: early.js asks for the rest of its stream only (a
// catalog link's .tail, a pasted config's .rtail, a config's beside an example or a drafter
// .btail), at once, and reads the comment once the
// parser is done with the page.
const HEAD = Number(html.match(/data-verdict-head="(\d+)"/)?.[1] ?? NaN);
const page = (comment, readyState = 'interactive') => {
  const listeners = [];
  return {
    readyState,
    body: { childNodes: [{ nodeType: 1 }, ...(comment === null ? [] : [{ nodeType: 8, data: comment }])] },
    addEventListener: (type, f) => listeners.push([type, f]),
    parsed() {
      this.readyState = 'interactive';
      for (const [type, f] of listeners.splice(0)) if (type === 'readystatechange') f();
    },
  };
};
const headComment = (bytes = gz.subarray(0, HEAD), url = '/p.wasm') => `headroom-head:${url}:${Buffer.from(bytes).toString('base64')}`;
const served = (files) => (asked) => (url) => {
  asked.push(url);
  return Promise.resolve(files[url] ? response(body(files[url], [4096]).stream) : new Response(null, { status: 404 }));
};

test('the build\'s three streams continue the same head', () => {
  assert.ok(gz.length > HEAD * 2);
  // Each stream's parts after C are one deflate of their own (scripts/inline-loader.mjs), so
  // the rests differ in length as well as in order.
  const parts = {};
  for (const [k, n] of ORDERS.catalog.entries()) parts[n] = plain.subarray(k === 0 ? 0 : ends[k - 1], ends[k]);
  for (const [kind, rest] of [['config', rtail], ['beside', btail]]) {
    assert.ok(rest.length > 0 && rest.length < gz.length, kind);
    // Each decompresses, after the head, to the parts in its order.
    assert.ok(gunzipSync(Buffer.concat([gz.subarray(0, HEAD), rest])).equals(Buffer.concat(ORDERS[kind].map((n) => parts[n]))), kind);
  }
  assert.ok(gunzipSync(gz).equals(plain));
});

// Each stream's tail as early.js asks for it (the build's names: .tail, .rtail, .btail).
const TAILS = Object.fromEntries(Object.entries(FILES).map(([kind, ext]) => [kind, `/p.wasm.${ext}`]));
const tails = () => ({ [TAILS.catalog]: gz.subarray(HEAD), [TAILS.config]: rtail, [TAILS.beside]: btail });
for (const [kind, file] of Object.entries(TAILS)) {
  test(`a ${{ catalog: 'catalog link', config: 'pasted config', beside: 'config beside an example or a drafter' }[kind]}'s stream: the rest after the page's head (${file.slice(7)}), asked for before the page is parsed`, async () => {
    const asked = [];
    const doc = page(headComment(), 'loading');
    const e = early(served(tails())(asked), { head: HEAD, document: doc });
    const compiled = e.compile(kind);
    const first = await Promise.race([compiled.then(() => 'compiled'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 200))]);
    assert.equal(first, 'waiting', 'the program waits for the head in the page');
    assert.deepEqual(asked, [file]);
    doc.parsed();
    await checkParts(compiled, ORDERS[kind]);
    assert.deepEqual(asked, [file]);
  });
}

for (const [what, comment, files] of [
  ['a page whose comment a proxy stripped', null, { '/p.wasm.tail': gz.subarray(HEAD), '/p.wasm.gz': gz }],
  ['a head of another length than the build gave', headComment(gz.subarray(0, HEAD - 1)), { '/p.wasm.tail': gz.subarray(HEAD), '/p.wasm.gz': gz }],
  ['a head for another program', headComment(gz.subarray(0, HEAD), '/q.wasm'), { '/p.wasm.tail': gz.subarray(HEAD), '/p.wasm.gz': gz }],
  ['a host without the .tail', headComment(), { '/p.wasm.gz': gz }],
]) {
  test(`${what}: the whole .gz`, async () => {
    const asked = [];
    const e = early(served(files)(asked), { head: HEAD, document: page(comment) });
    await checkParts(e.compile('catalog'));
    assert.deepEqual(asked, ['/p.wasm.tail', '/p.wasm.gz']);
  });
}

// The stream a link's keys call for, asked for as the page's first script runs.
for (const [link, kind] of [
  [['?v=1&model=qwen3-32b&tp=2', ''], 'catalog'],
  [['?v=1&example=s1-three-cards&util=0.95', ''], 'catalog'],
  [['?v=1&tp=2', '#config=e30'], 'config'],
  [['?v=1&tp=2&quantization=fp8', '#config=e30'], 'config'],
  [['?v=1&example=s1-three-cards', '#config=e30'], 'beside'],
  [['?v=1&spec=draft_model&draft-model=qwen3-4b', '#config=e30'], 'beside'],
  [['?v=1&config=e30&example=s1-three-cards', ''], 'beside'],
  [['?v=1&model=qwen3-32b&tp=2', '#config=e30'], 'beside'],
]) {
  test(`${link.join('')} asks for the ${kind} stream (${TAILS[kind].slice(7)})`, async () => {
    const asked = [];
    const e = early(served(tails())(asked), { head: HEAD, document: page(headComment()), search: link[0], hash: link[1] });
    assert.equal(e.program.kind, kind);
    await checkParts(e.program.module, ORDERS[kind]);
    assert.deepEqual(asked, [TAILS[kind]]);
  });
}

for (const kind of ['config', 'beside']) {
  test(`a host without the ${TAILS[kind].slice(7)}: the whole .gz, in the catalog links' order`, async () => {
    const asked = [];
    const e = early(served({ '/p.wasm.gz': gz })(asked), { head: HEAD, document: page(headComment()) });
    await checkParts(e.compile(kind), ORDERS.catalog);
    assert.deepEqual(asked, [TAILS[kind], '/p.wasm.gz']);
  });
}

for (const [what, headers] of [['a host that answers every path with its page', { 'content-type': 'text/html; charset=utf-8' }]]) {
  test(`${what}: the whole .gz`, async () => {
    const asked = [];
    const respond = (url) => {
      asked.push(url);
      if (url.endsWith('.tail')) return Promise.resolve(new Response(body(gz.subarray(HEAD), [4096]).stream, { headers }));
      return Promise.resolve(response(body(gz, [4096]).stream));
    };
    const e = early(respond, { head: HEAD, document: page(headComment()) });
    await checkParts(e.compile('catalog'));
    assert.deepEqual(asked, ['/p.wasm.tail', '/p.wasm.gz']);
  });
}

test('a network failure on the .tail: the whole .gz', async () => {
  const asked = [];
  const e = early((url) => (asked.push(url), url.endsWith('.tail') ? Promise.reject(new TypeError('Failed to fetch')) : Promise.resolve(response(body(gz, [4096]).stream))), { head: HEAD, document: page(headComment()) });
  await checkParts(e.compile('catalog'));
  assert.deepEqual(asked, ['/p.wasm.tail', '/p.wasm.gz']);
});

test('without DecompressionStream the page\'s head goes unused: the plain file', async () => {
  const asked = [];
  const e = early(served({ '/p.wasm': plain })(asked), { decompress: false, head: HEAD, document: page(headComment()) });
  await checkParts(e.compile('config'));
  assert.deepEqual(asked, ['/p.wasm']);
});
