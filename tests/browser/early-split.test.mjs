// public/early.js's delivery of a split verdict program (scripts/split-verdict.mjs), run in
// Node on the release build's own catalog-links program: the page's first script, as the page
// has it, with a fetch that hands the program over in chunks of chosen sizes. The browser tests
// get each file from a local server at once; this one cuts the stream at every awkward place,
// holds the tail back to see the first part compile without it, and cuts the file short.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';
import { gzPrefix as prefix } from '../../scripts/split-verdict.mjs';

const DIST = new URL('../../dist/', import.meta.url);
const html = readFileSync(new URL('index.html', DIST), 'utf8');
const name = html.match(/data-verdict="\/([^"]+)"/)?.[1];
const at = Number(html.match(/data-verdict-split="(\d+)"/)?.[1] ?? NaN);
const plain = readFileSync(new URL(name, DIST));
const gz = readFileSync(new URL(`${name}.gz`, DIST));
const source = readFileSync(new URL('../../public/early.js', import.meta.url), 'utf8');

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
const early = (respond, { decompress = true, heads = {}, document } = {}) => {
  const context = vm.createContext({
    // The opening state (no address, no storage) planned ahead: no program fetched at start.
    HEADROOM_PLANNED: { '': [] },
    HEADROOM_VERDICT: '/p.wasm',
    HEADROOM_VERDICT_CONFIG: '/c.wasm',
    HEADROOM_VERDICT_ALL: '/a.wasm',
    HEADROOM_SPLITS: { '/p.wasm': at },
    HEADROOM_HEADS: heads,
    location: { search: '', hash: '' },
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

test('the build has a split catalog-links program to test', () => {
  assert.ok(name && at > 0 && at < plain.length, `${name} ${at}`);
});

// The parts as modules: the first imports the placeholders, the second the first's exports.
const checkParts = async (compiled) => {
  const { module, rest } = await compiled;
  assert.ok(WebAssembly.Module.imports(module).some((i) => i.module === 'placeholder'));
  assert.ok(WebAssembly.Module.imports(await rest).every((i) => i.module === 'primary'));
};

for (const [what, sizes] of [
  ['the .gz whole', [gz.length]],
  ['the .gz a byte at a time, then in 64 KB', [1, 1, 1, 65536]],
  ['the .gz in 1,000-byte chunks', [1000]],
]) {
  test(`a split program compiles part by part: ${what}`, async () => {
    const asked = [];
    const e = early((url) => (asked.push(url), Promise.resolve(response(body(gz, sizes).stream))));
    await checkParts(e.compile('/p.wasm'));
    assert.deepEqual(asked, ['/p.wasm.gz']);
  });
}

// Decompressed, the stream's chunks may end anywhere: at the cut, a byte before, a byte after.
{
  for (const shift of [-1, 0, 1]) {
    test(`a split program compiles when a chunk ends ${shift === 0 ? 'at' : shift < 0 ? 'a byte before' : 'a byte after'} the cut at ${at}`, async () => {
      // A server that decoded the .gz already: the page takes the chunks as they come.
      const e = early(() => Promise.resolve(response(body(plain, [at + shift, 4096]).stream)));
      await checkParts(e.compile('/p.wasm'));
    });
  }
}

test('the first part compiles while the rest of the program is still arriving', async () => {
  const { stream, release } = body(gz, [4096], gzPrefix(at) + 16);
  const e = early(() => Promise.resolve(response(stream)));
  const compiled = e.compile('/p.wasm');
  const first = await Promise.race([compiled.then(() => 'compiled'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 5000))]);
  assert.equal(first, 'compiled', 'the first part compiled with the rest held back');
  const { rest } = await compiled;
  let second = 'waiting';
  rest.then(() => (second = 'compiled'));
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(second, 'waiting', 'the second part waits for its bytes');
  release();
  await checkParts(compiled);
});

test('a program cut short: the first part compiles, the second fails, nothing unhandled', async () => {
  const unhandled = [];
  const onRejection = (e) => unhandled.push(e);
  process.on('unhandledRejection', onRejection);
  try {
    const e = early(() => Promise.resolve(response(body(gz.subarray(0, gz.length - 2000), [4096]).stream)));
    const { module, rest } = await e.compile('/p.wasm');
    assert.ok(module instanceof WebAssembly.Module);
    await assert.rejects(rest);
    const early2 = early(() => Promise.resolve(response(body(plain.subarray(0, 1000), [100]).stream)));
    await assert.rejects(early2.compile('/p.wasm'));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', onRejection);
  }
});

test('without DecompressionStream the plain file comes, cut the same way', async () => {
  const asked = [];
  const e = early((url) => (asked.push(url), Promise.resolve(response(body(plain, [65536]).stream))), { decompress: false });
  await checkParts(e.compile('/p.wasm'));
  assert.deepEqual(asked, ['/p.wasm']);
});

// The page carries the start of the catalog links' program (scripts/inline-loader.mjs's
// HEAD_BYTES), base64 in a comment at the end of its body: early.js asks for the rest only
// (.tail), at once, and reads the comment once the parser is done with the page.
const HEAD = 40000;
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
const headComment = (bytes = gz.subarray(0, HEAD)) => `headroom-head:/p.wasm:${Buffer.from(bytes).toString('base64')}`;
const served = (files) => (asked) => (url) => {
  asked.push(url);
  return Promise.resolve(files[url] ? response(body(files[url], [4096]).stream) : new Response(null, { status: 404 }));
};

test('a program the page begins: the rest of its .gz, asked for before the page is parsed', async () => {
  const asked = [];
  const doc = page(headComment(), 'loading');
  const e = early(served({ '/p.wasm.tail': gz.subarray(HEAD) })(asked), { heads: { '/p.wasm': HEAD }, document: doc });
  const compiled = e.compile('/p.wasm');
  const first = await Promise.race([compiled.then(() => 'compiled'), new Promise((resolve) => setTimeout(() => resolve('waiting'), 200))]);
  assert.equal(first, 'waiting', 'the program waits for the head in the page');
  assert.deepEqual(asked, ['/p.wasm.tail']);
  doc.parsed();
  await checkParts(compiled);
  assert.deepEqual(asked, ['/p.wasm.tail']);
});

for (const [what, comment, files] of [
  ['a page whose comment a proxy stripped', null, { '/p.wasm.tail': gz.subarray(HEAD), '/p.wasm.gz': gz }],
  ['a head of another length than the build gave', headComment(gz.subarray(0, HEAD - 1)), { '/p.wasm.tail': gz.subarray(HEAD), '/p.wasm.gz': gz }],
  ['a host without the .tail', headComment(), { '/p.wasm.gz': gz }],
]) {
  test(`${what}: the whole .gz`, async () => {
    const asked = [];
    const e = early(served(files)(asked), { heads: { '/p.wasm': HEAD }, document: page(comment) });
    await checkParts(e.compile('/p.wasm'));
    assert.deepEqual(asked, ['/p.wasm.tail', '/p.wasm.gz']);
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
    const e = early(respond, { heads: { '/p.wasm': HEAD }, document: page(headComment()) });
    await checkParts(e.compile('/p.wasm'));
    assert.deepEqual(asked, ['/p.wasm.tail', '/p.wasm.gz']);
  });
}

test('a network failure on the .tail: the whole .gz', async () => {
  const asked = [];
  const e = early((url) => (asked.push(url), url.endsWith('.tail') ? Promise.reject(new TypeError('Failed to fetch')) : Promise.resolve(response(body(gz, [4096]).stream))), { heads: { '/p.wasm': HEAD }, document: page(headComment()) });
  await checkParts(e.compile('/p.wasm'));
  assert.deepEqual(asked, ['/p.wasm.tail', '/p.wasm.gz']);
});

test('without DecompressionStream the page\'s head goes unused: the plain file', async () => {
  const asked = [];
  const e = early(served({ '/p.wasm': plain })(asked), { decompress: false, heads: { '/p.wasm': HEAD }, document: page(headComment()) });
  await checkParts(e.compile('/p.wasm'));
  assert.deepEqual(asked, ['/p.wasm']);
});
