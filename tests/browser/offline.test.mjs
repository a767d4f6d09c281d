// Offline and repeat visits: once loaded, the service worker serves the page's own files from
// its cache, with no network round trip for any of them, and a new build replaces it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { join, extname } from 'node:path';
import { launch, open, goto, assertClean, text } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

/** Loads the page with the worker allowed, and waits until the worker controls it. */
async function controlled(path) {
  const o = await open(browser, path, { serviceWorkers: 'allow' });
  await o.page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  // The worker takes control after its first install; reload once so it serves this page.
  await o.page.reload();
  await o.page.waitForSelector('[data-testid=verdict-headline]:not(:empty)');
  await o.page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  return o;
}

const cacheKeys = (page) =>
  page.evaluate(async () => {
    const out = {};
    for (const n of await caches.keys()) {
      out[n] = (await (await caches.open(n)).keys()).map((r) => new URL(r.url).pathname);
    }
    return out;
  });

/** A response's status, whether the worker gave it, and its first four bytes. */
const answered = async (r) => [r.status(), r.fromServiceWorker(), [...(await r.body()).subarray(0, 4)]];
// The plain wasm from the worker: its magic number, not gzip's 1f 8b.
const PLAIN_FROM_WORKER = [200, true, [0, 0x61, 0x73, 0x6d]];

test('the page works offline once loaded', async () => {
  const { context, page, problems } = await controlled('/?v=1&tp=2');
  const verdict = await text(page, 'verdict');
  await context.setOffline(true);
  await goto(page, '/?v=1&tp=2');
  assert.equal(await text(page, 'verdict'), verdict);
  assert.equal(await page.locator('[data-testid="rank-chart"] .svg > svg').count(), 1);
  // Another scenario's link works offline too: every page URL is the same document.
  await goto(page, '/?v=1&tp=4');
  assert.match(await text(page, 'verdict-headline'), /^Starts/);
  await context.setOffline(false);
  // One build's cache, holding the page and every file it names.
  const keys = await cacheKeys(page);
  const names = Object.keys(keys);
  assert.equal(names.length, 1, names.join(' '));
  assert.match(names[0], /^headroom-[0-9a-f]{16}$/);
  const files = keys[names[0]];
  assert.ok(
    files.includes('/') &&
      files.some((p) => /^\/headroom-web-.*_bg\.wasm$/.test(p)) &&
      // The verdict program as this browser's pages fetch it: the rest of a catalog link's
      // stream, of a pasted config's and of a config's beside a model, an example or a drafter,
      // after the head the page carries (public/early.js).
      !files.some((p) => /^\/headroom-verdict-.*_bg\.wasm\.gz$/.test(p)) &&
      files.filter((p) => /^\/headroom-verdict-[0-9a-f]{16}_bg\.wasm\.tail$/.test(p)).length === 1 &&
      files.filter((p) => /^\/headroom-verdict-[0-9a-f]{16}_bg\.wasm\.rtail$/.test(p)).length === 1 &&
      files.filter((p) => /^\/headroom-verdict-[0-9a-f]{16}_bg\.wasm\.btail$/.test(p)).length === 1 &&
      !files.some((p) => /^\/headroom-verdict-.*_bg\.wasm$/.test(p)) &&
      files.some((p) => p.endsWith('.css')),
    files.join(' '),
  );
  assertClean(problems);
  await context.close();
});

// The page carries the start of the verdict program and asks for the rest of its link's stream
// (.tail for a catalog link, .rtail for a pasted config, .btail for a config beside an example,
// public/early.js), which the worker
// keeps: a repeat visit paints its first verdict from the program offline too.
for (const [kind, link, ext] of [
  ['a catalog link', '/?v=1&model=llama-3.1-70b-instruct&tp=4', 'tail'],
  ['a pasted config', '/?v=1&tp=2#config=eyJhcmNoaXRlY3R1cmVzIjpbIkxsYW1hRm9yQ2F1c2FsTE0iXSwibW9kZWxfdHlwZSI6ImxsYW1hIiwibnVtX2hpZGRlbl9sYXllcnMiOjMyLCJoaWRkZW5fc2l6ZSI6NDA5NiwibnVtX2F0dGVudGlvbl9oZWFkcyI6MzIsIm51bV9rZXlfdmFsdWVfaGVhZHMiOjgsImludGVybWVkaWF0ZV9zaXplIjoxNDMzNiwidm9jYWJfc2l6ZSI6MTI4MjU2fQ', 'rtail'],
  ['a config beside an example', '/?v=1&example=s1-three-cards#config=eyJhcmNoaXRlY3R1cmVzIjpbIkxsYW1hRm9yQ2F1c2FsTE0iXSwibW9kZWxfdHlwZSI6ImxsYW1hIiwibnVtX2hpZGRlbl9sYXllcnMiOjMyLCJoaWRkZW5fc2l6ZSI6NDA5NiwibnVtX2F0dGVudGlvbl9oZWFkcyI6MzIsIm51bV9rZXlfdmFsdWVfaGVhZHMiOjgsImludGVybWVkaWF0ZV9zaXplIjoxNDMzNiwidm9jYWJfc2l6ZSI6MTI4MjU2fQ', 'btail'],
])
test(`offline, the rest of ${kind}'s stream after the page's head comes from the worker`, async () => {
  const { context, page, problems } = await controlled('/?v=1');
  const html = readFileSync(new URL('../../dist/index.html', import.meta.url), 'utf8');
  const wasm = html.match(/data-verdict="(\/[^"]+)"/)[1];
  const tail = readFileSync(new URL(`../../dist${wasm}.${ext}`, import.meta.url));
  await context.setOffline(true);
  const answer = page.waitForResponse((r) => new URL(r.url()).pathname === `${wasm}.${ext}`);
  await goto(page, link);
  assert.match(await text(page, 'verdict-headline'), /^(Starts|Fails at)/);
  const r = await answer;
  assert.deepEqual(await answered(r), [200, true, [...tail.subarray(0, 4)]]);
  assert.equal((await r.body()).length, tail.length);
  // The program painted the first verdict before the app (boot.js marks it).
  assert.equal(await page.evaluate(() => performance.getEntriesByName('first-verdict').length), 1);
  await context.setOffline(false);
  assertClean(problems);
  await context.close();
});

// The worker keeps the verdict programs in the form its own test says this browser's pages
// ask for (public/sw.js). Should a page ask for a .gz the cache lacks, the worker answers with
// the plain file it keeps, and the page compiles that (its first bytes tell, public/early.js).
test('offline, a verdict program kept only plain answers a request for its .gz', async () => {
  const { context, page, problems } = await controlled('/?v=1');
  const gz = await page.evaluate(async () => {
    const [name] = await caches.keys();
    const cache = await caches.open(name);
    const keys = (await cache.keys()).map((r) => new URL(r.url).pathname);
    const tail = keys.find((p) => /^\/headroom-verdict-[0-9a-f]{16}_bg\.wasm\.tail$/.test(p));
    const plain = tail.slice(0, -'.tail'.length);
    await cache.put(plain, await fetch(plain, { cache: 'no-store' }));
    await cache.delete(tail);
    return `${plain}.gz`;
  });
  await context.setOffline(true);
  const answer = page.waitForResponse((r) => new URL(r.url()).pathname === gz);
  await goto(page, '/?v=1&model=llama-3.1-70b-instruct&tp=4');
  assert.match(await text(page, 'verdict-headline'), /^Starts/);
  const r = await answer;
  // The worker's answer: the plain wasm.
  assert.deepEqual(await answered(r), PLAIN_FROM_WORKER);
  await context.setOffline(false);
  // The page asked first for the rest of the .gz after the head it carries (.tail): not kept
  // here, and offline, that request fails (the one console message), and the page asks for the
  // whole .gz, which the worker answers with the plain file (never the .tail: the page puts
  // its head before what that request brings).
  assert.ok(problems.console.length <= 1 && problems.console.every((m) => /Failed to load resource/.test(m)), problems.console.join('\n'));
  problems.console = [];
  assertClean(problems);
  await context.close();
});

// A host that did not publish the programs' .gz files: the page takes the plain files
// (public/early.js), and the worker keeps them in their place, for offline visits too.
test('a host without the .gz files: the worker keeps the plain programs and serves them offline', async () => {
  const { state, server, base } = await deployServer();
  state.noGz = true;
  const { context, page, errors, visit } = await controlledAt(base);
  const files = Object.values(await cacheKeys(page)).flat();
  assert.equal(files.filter((p) => /^\/headroom-verdict-.*_bg\.wasm$/.test(p)).length, 1, files.join(' '));
  assert.ok(!files.some((p) => /\.(?:gz|r?tail)$/.test(p)), files.join(' '));
  await context.setOffline(true);
  // The page asks for a catalog link's .tail (it carries the .gz's start), which fails
  // offline, then for the .gz, which the worker answers with the plain file.
  const answer = page.waitForResponse((r) => /\/headroom-verdict-[0-9a-f]{16}_bg\.wasm\.gz$/.test(r.url()));
  await visit('?v=1&model=llama-3.1-70b-instruct&tp=4');
  const r = await answer;
  assert.deepEqual(await answered(r), PLAIN_FROM_WORKER);
  assert.match(await page.textContent('[data-testid=verdict-headline]'), /^Starts/);
  await context.setOffline(false);
  assert.deepEqual(errors, []);
  await context.close();
  server.close();
});

// A host whose pages lose their comments (an HTML minifier): the page carries no head, and asks
// for the program's whole .gz, which the worker then keeps instead of the tails.
test("a host that strips the page's comments: the worker keeps the program's .gz, for offline visits too", async () => {
  const { state, server, base } = await deployServer();
  state.noComments = true;
  // Only a page planned ahead before going offline: what the worker keeps is its install's (a
  // later visit's requests are kept too, as they pass the worker).
  let files;
  const { context, page, errors, visit } = await controlledAt(base, {
    then: '?v=1',
    installed: async (page) => {
      files = Object.values(await cacheKeys(page)).flat();
    },
  });
  assert.ok(files.some((p) => /^\/headroom-verdict-[0-9a-f]{16}_bg\.wasm\.gz$/.test(p)) && !files.some((p) => /\.r?tail$/.test(p)), files.join(' '));
  await context.setOffline(true);
  const answer = page.waitForResponse((r) => /\/headroom-verdict-[0-9a-f]{16}_bg\.wasm\.gz$/.test(r.url()));
  await visit('?v=1&model=llama-3.1-70b-instruct&tp=4');
  const r = await answer;
  assert.deepEqual((await answered(r)).slice(0, 2), [200, true]);
  assert.deepEqual((await answered(r))[2].slice(0, 2), [0x1f, 0x8b]);
  assert.equal(await page.evaluate(() => performance.getEntriesByName('first-verdict').length), 1);
  assert.match(await page.textContent('[data-testid=verdict-headline]'), /^Starts/);
  await context.setOffline(false);
  assert.deepEqual(errors, []);
  await context.close();
  server.close();
});

test('a repeat visit makes no network round trip for any of the page files', async () => {
  const { context, page, problems } = await controlled('/?v=1');
  const before = problems.requests.length;
  const fromWorker = [];
  page.on('response', (r) => fromWorker.push([new URL(r.url()).pathname, r.fromServiceWorker()]));
  await goto(page, '/?v=1&tp=2&max-model-len=8192');
  await page.waitForSelector('[data-testid=rank-chart] .svg > svg');
  // What reached the server (the route sees the page's and the worker's requests): at most
  // the browser's update check of the worker itself.
  const reached = problems.requests
    .slice(before)
    .map((u) => new URL(u).pathname)
    .filter((p) => p !== '/sw.js');
  assert.deepEqual(reached, [], `requests that reached the server: ${reached.join(' ')}`);
  const own = fromWorker.filter(([p]) => p !== '/sw.js');
  assert.ok(own.length >= 2, JSON.stringify(own));
  assert.ok(own.every(([, sw]) => sw), `not from the worker: ${JSON.stringify(own.filter(([, sw]) => !sw))}`);
  assertClean(problems);
  await context.close();
});

/**
 * A server of the build's own files whose sw.js can be changed, as a deploy changes it: this
 * test needs a server that really changes (a route in the browser does not see the browser's
 * own update checks of the worker).
 */
async function deployServer() {
  const dist = new URL('../../dist/', import.meta.url).pathname;
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };
  // build: the BUILD sw.js names instead of its own; noGz: answer 404 for every .gz and tail;
  // noComments: the page without its comments (a host that strips them), so without the head.
  const state = { build: null, hits: [], noGz: false, noComments: false };
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    state.hits.push(path);
    const file = join(dist, path === '/' ? 'index.html' : path);
    if (!file.startsWith(dist) || !existsSync(file) || (state.noGz && /\.(?:gz|r?tail)$/.test(path))) {
      res.writeHead(404).end();
      return;
    }
    let body = readFileSync(file);
    if (path === '/' && state.noComments) body = Buffer.from(body.toString('utf8').replace(/<!--[\s\S]*?-->/g, ''));
    if (path === '/sw.js' && state.build) {
      body = body.toString('utf8').replace(/^const BUILD = '[0-9a-f]{16}';$/m, `const BUILD = '${state.build}';`);
    }
    res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
    res.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { state, server, base: `http://127.0.0.1:${server.address().port}` };
}

/**
 * A page of `deployServer`'s build once its worker controls it (installed on the first visit,
 * in charge from the second, `then`; `installed(page)` runs in between): `visit(q)` loads a link
 * there, `errors` collects page errors.
 */
async function controlledAt(base, { then = '?v=1&tp=2', installed } = {}) {
  const context = await browser.newContext({ serviceWorkers: 'allow' });
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const visit = async (q) => {
    await page.goto(`${base}/${q}`);
    await page.waitForSelector('[data-testid=verdict-headline]:not(:empty)');
  };
  await visit('?v=1');
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  await installed?.(page);
  await visit(then);
  await page.waitForFunction(() => navigator.serviceWorker.controller !== null);
  return { context, page, errors, visit };
}

test('a new build replaces the old one: its worker installs, the build before stays one deploy for a page still loading, older ones go', async () => {
  const { state, server, base } = await deployServer();
  const { context, page, errors, visit } = await controlledAt(base);
  const [oldCache] = Object.keys(await cacheKeys(page));
  assert.match(oldCache, /^headroom-[0-9a-f]{16}$/);
  // The deploy: sw.js names another build. The browser checks the worker for updates on its
  // own after a navigation (when, is its choice); the test asks for the check at once.
  const check = () => page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.update());
  state.build = 'ffffffffffffffff';
  await visit('?v=1&tp=4');
  await check();
  // The new worker installs and activates. The build before it stays (a page of it may still
  // be loading).
  const settle = async (want) => {
    let keys = {};
    const done = () =>
      Object.keys(keys).join() === want.join() && (keys[want.at(-1)] ?? []).some((p) => p.endsWith('_bg.wasm'));
    // Up to 60 s: an install caches every file of the build (the verdict program's forms among
    // them), and a loaded machine once took more than 20 s.
    for (let i = 0; i < 300 && !done(); i += 1) {
      await page.waitForTimeout(200);
      keys = await cacheKeys(page);
    }
    assert.deepEqual(Object.keys(keys), want);
    return keys;
  };
  const keys = await settle([oldCache, 'headroom-ffffffffffffffff']);
  assert.ok(keys['headroom-ffffffffffffffff'].some((p) => p.endsWith('_bg.wasm')), JSON.stringify(keys));
  // A second deploy: the first build's cache goes, one build back stays.
  state.build = 'eeeeeeeeeeeeeeee';
  await visit('?v=1&tp=2');
  await check();
  await settle(['headroom-ffffffffffffffff', 'headroom-eeeeeeeeeeeeeeee']);
  // The next visit comes from the new build's cache: only the worker's own update check
  // reaches the server.
  state.hits.length = 0;
  await visit('?v=1&tp=8');
  assert.deepEqual(state.hits.filter((p) => p !== '/sw.js'), []);
  assert.deepEqual(errors, []);
  await context.close();
  server.close();
});
