// Measures the issue's three budgets on the release build (not a test: it prints numbers).
//
//   1. size: gzip -9 and brotli of the html + js + wasm + css that dist/ serves, and the critical
//      path: the bytes the first verdict waits for (the page, its stylesheet and the verdict
//      program's wasm; target 150 KB gzip);
//   2. navigation -> first verdict: median of 5 fresh loads, in ms from navigation start to the
//      verdict's text appearing (budget 100 ms), with the loader's marks and the time until the
//      rest of the page (built one task after the verdict) is there, and the harness's floor: the
//      same loads of a static page whose HTML already holds the verdict's text;
//   3. input change -> DOM update: median over 50 changes of gpu-memory-utilization, from the
//      input event to the MutationObserver seeing the DOM change, for the first change anywhere
//      and for the per-rank chart (budget 2 ms).
//
// Usage: build first (trunk build --release), then
//   node scripts/measure-budgets.mjs            # serves dist/ itself on a free port
//   JSFLAGS=--no-wasm-lazy-compilation node scripts/measure-budgets.mjs   # V8 flags, for analysis
//   LOADS=25 node scripts/measure-budgets.mjs   # more fresh loads for the first-verdict median
//   BASE_URL=http://127.0.0.1:8080 node scripts/measure-budgets.mjs
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import { createServer } from 'node:http';
import { join, extname } from 'node:path';
import { chromium } from 'playwright-core';
import { ORDERS, TAILS, gzPrefix, needed, upTo } from './split-verdict.mjs';

const DIST = new URL('../dist/', import.meta.url).pathname;
const gz9 = (bytes) => gzipSync(bytes, { level: 9 }).length;
const br11 = (bytes) => brotliCompressSync(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }).length;
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.svg': 'image/svg+xml' };

function sizes() {
  const rows = [];
  for (const f of readdirSync(DIST)) {
    const ext = extname(f);
    if (!['.html', '.js', '.wasm', '.css'].includes(ext)) continue;
    const raw = readFileSync(join(DIST, f));
    // A verdict program's bytes on the wire are its zopfli gzip (NAME_bg.wasm.gz), which the
    // page fetches where the browser can decompress a stream (public/early.js), whatever the
    // server compresses: a server sends a .gz as it is, so its brotli column is the same bytes.
    const gz = existsSync(join(DIST, `${f}.gz`)) ? statSync(join(DIST, `${f}.gz`)).size : null;
    rows.push({
      file: gz === null ? f : `${f}.gz`,
      raw: raw.length,
      gzip: gz ?? gz9(raw),
      brotli: gz ?? br11(raw),
    });
  }
  return rows;
}

function serve() {
  const server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const file = join(DIST, path === '/' ? 'index.html' : path);
    try {
      if (!statSync(file).isFile()) throw new Error('not a file');
      res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      res.end(readFileSync(file));
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const rows = sizes();
const total = rows.reduce((a, r) => a + r.gzip, 0);
const totalBr = rows.reduce((a, r) => a + r.brotli, 0);
for (const r of rows) console.log(`size ${r.file}: ${r.raw} B raw, ${r.file.endsWith('.gz') ? `${r.gzip} B zopfli gzip (as sent, also by a brotli server)` : `${r.gzip} B gzip, ${r.brotli} B brotli`}`);
console.log(`size whole app (html+js+wasm+css): ${total} B gzip = ${(total / 1000).toFixed(1)} KB, ${totalBr} B brotli = ${(totalBr / 1000).toFixed(1)} KB`);
// The critical path: what must arrive before the first verdict. The page (its inline module
// holds the verdict program's glue and the loader, its end the start of the program's .gz), its
// stylesheet (render-blocking) and the verdict program's parts the link runs
// (scripts/split-verdict.mjs, NEEDS), from the rest of its stream (public/early.js): C, B and K
// for a catalog link, C and B for a seed example with keys of its own (not planned ahead), from
// the rest of the catalog links' stream (NAME_bg.wasm.tail); C and R for a pasted config.json,
// from the rest of its stream (NAME_bg.wasm.rtail); C, R and B for a config beside an example
// or a drafter (NAME_bg.wasm.btail); and up to the end of V for a link with an uncommon flag or
// a refused input. Each is the shortest start of the stream that decompresses to those parts,
// less the head the page carries. The app's wasm and glue load after.
const html = readFileSync(join(DIST, 'index.html'), 'utf8');
const headBytes = Number(html.match(/data-verdict-head="(\d+)"/)?.[1] ?? 0);
const verdictWasm = html.match(/data-verdict="\/([^"]+)"/)?.[1];
const parts = Object.fromEntries((html.match(/data-verdict-parts="([^"]+)"/)?.[1] ?? '').split(',').filter(Boolean).map((p) => p.split(':')).map(([n, v]) => [n, Number(v)]));
if (headBytes > 0) console.log(`size the page's head of the verdict program: ${headBytes} B of its .gz, base64 in index.html (index.html ${gz9(Buffer.from(html))} B gzip with it, ${gz9(Buffer.from(html.replace(/<!--headroom-head:[^>]*-->/g, '')))} B without)`);
// Every build with the verdict program carries its head (scripts/inline-loader.mjs).
if (verdictWasm && headBytes > 0 && ['C', ...ORDERS.catalog].every((n) => parts[n] > 0)) {
  console.log(`size the verdict program's parts: ${Object.entries(parts).map(([n, v]) => `${n} ${v} B`).join(', ')}`);
  const gz = readFileSync(join(DIST, `${verdictWasm}.gz`));
  const blocking = rows.filter((r) => [...html.matchAll(/<link rel="stylesheet" href="\/([^"]+)"/g)].some((m) => m[1] === r.file));
  const page = rows.find((r) => r.file === 'index.html');
  for (const [what, stream, needs] of [
    ['a catalog link', 'catalog', needed('catalog')],
    ['an example with keys of its own (not planned ahead)', 'catalog', needed('examples')],
    ['a pasted config.json', 'config', needed('config')],
    ['a pasted config.json beside an example or a drafter', 'beside', needed('beside')],
    // The uncommon flags (releases before 0.20, --dtype and --quantization, an attention
    // backend, measured values, ...) and the refused inputs (a typo in a link): V's.
    ['a catalog link with an uncommon flag or a refused input', 'catalog', needed('uncommonCatalog')],
    ['a pasted config.json with an uncommon flag or a refused input', 'config', needed('uncommonConfig')],
    ['a pasted config.json beside an example or a drafter, with an uncommon flag', 'beside', upTo('beside', 'V')],
    // What the training leaves to X (rare shapes' errors, a key the loader's test misses):
    // such a link waits for its stream up to the end of X.
    ['a catalog link that reaches X', 'catalog', upTo('catalog', 'X')],
    ['a pasted config.json that reaches X', 'config', upTo('config', 'X')],
  ]) {
    const streamBytes = Buffer.concat([gz.subarray(0, headBytes), readFileSync(join(DIST, `${verdictWasm}.${TAILS[stream]}`))]);
    const raw = needs.reduce((a, n) => a + parts[n], 0);
    const wait = gzPrefix(streamBytes, raw) - headBytes;
    const critical = [page, ...blocking, { file: `${verdictWasm}.${TAILS[stream]} (to the end of ${needs.join(', ')}, ${raw} B, after the page's ${headBytes} B)`, gzip: wait, brotli: wait }];
    const criticalGz = critical.reduce((a, r) => a + r.gzip, 0);
    const criticalBr = critical.reduce((a, r) => a + r.brotli, 0);
    console.log(`size critical path, ${what} (${critical.map((r) => r.file).join(' + ')}): ${criticalGz} B gzip = ${(criticalGz / 1000).toFixed(1)} KB (target 150 KB), ${criticalBr} B brotli`);
  }
} else console.log('size critical path: no verdict program in parts, with its head in the page, in this build: the whole app is on it');

let server;
let base = process.env.BASE_URL;
if (!base) {
  server = await serve();
  base = `http://127.0.0.1:${server.address().port}`;
}
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: [...(process.env.JSFLAGS ? [`--js-flags=${process.env.JSFLAGS}`] : []), '--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

// Records performance.now() when the verdict first shows text, and when the rest of the page
// (the per-rank chart's SVG) is there too.
const firstVerdict = () => {
  new MutationObserver((_, mo) => {
    const el = document.querySelector('[data-testid=verdict-headline]');
    // The shell's pending banner ("Working out the plan…") is not a verdict; the verdict
    // program's (or the app's) is.
    const pending = el?.closest('.pending');
    if (window.__firstVerdict === undefined && el && !pending && el.textContent.trim() && !/Planning/.test(el.textContent)) {
      window.__firstVerdict = performance.now();
    }
    if (document.querySelector('[data-testid=rank-chart] svg')) {
      window.__wholePage = performance.now();
      mo.disconnect();
    }
  }).observe(document, { childList: true, subtree: true, characterData: true });
};

const loads = [];
const whole = [];
const phases = {};
const LOADS = Number(process.env.LOADS ?? 5);
for (let i = 0; i < LOADS; i++) {
  const ctx = await browser.newContext({ serviceWorkers: 'block' });
  await ctx.addInitScript(firstVerdict);
  const page = await ctx.newPage();
  await page.goto(`${base}/${process.env.LINK ?? "?v=1"}`);
  await page.waitForFunction(() => window.__wholePage !== undefined, null, { timeout: 20000 });
  const r = await page.evaluate(() => ({
    verdict: window.__firstVerdict,
    whole: window.__wholePage,
    // Marks set by public/boot.js and src/bin/web.rs.
    marks: Object.fromEntries(performance.getEntriesByType('mark').map((m) => [m.name, m.startTime])),
  }));
  loads.push(r.verdict);
  whole.push(r.whole);
  for (const [k, v] of Object.entries(r.marks)) (phases[k] ??= []).push(v);
  await ctx.close();
}
console.log(`first verdict after navigation: ${loads.map((x) => x.toFixed(1)).join(' / ')} ms, median ${median(loads).toFixed(1)} ms (budget 100 ms)`);
console.log(`  where the time goes (medians, ms after navigation): ${Object.entries(phases).map(([k, v]) => `${k} ${median(v).toFixed(1)}`).join(', ')}`);
console.log(`  whole page (form, figures and per-rank chart) after navigation: median ${median(whole).toFixed(1)} ms`);
// The harness's own floor: a static page with the verdict's text already in its HTML, loaded the
// same way (fresh context, same observer). No page that builds its verdict can show it sooner.
const floorServer = createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' });
  res.end('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>floor</title></head><body><h2 data-testid="verdict-headline">Starts: 3.45 full-length requests fit per replica</h2><div data-testid="rank-chart"><svg></svg></div></body></html>');
});
await new Promise((resolve) => floorServer.listen(0, '127.0.0.1', resolve));
const floor = [];
for (let i = 0; i < LOADS; i++) {
  const ctx = await browser.newContext({ serviceWorkers: 'block' });
  await ctx.addInitScript(firstVerdict);
  const page = await ctx.newPage();
  await page.goto(`http://127.0.0.1:${floorServer.address().port}/`);
  await page.waitForFunction(() => window.__firstVerdict !== undefined, null, { timeout: 20000 });
  floor.push(await page.evaluate(() => window.__firstVerdict));
  await ctx.close();
}
floorServer.close();
console.log(`  floor: a static page with the verdict in its HTML, same harness: median ${median(floor).toFixed(1)} ms`);

const ctx = await browser.newContext({ serviceWorkers: 'block' });
const page = await ctx.newPage();
await page.goto(`${base}/?v=1`);
await page.waitForSelector('[data-testid=verdict-headline]:not(:empty)');
const changes = await page.evaluate(async () => {
  const input = document.querySelector('[data-testid="gpu-memory-utilization"]');
  const results = document.body;
  const chart = document.querySelector('[data-testid="rank-chart"] .svg');
  const out = [];
  for (let i = 0; i < 50; i++) {
    const value = (0.8 + (i % 2 ? 0.1 : 0) + i * 0.001).toFixed(3);
    const r = await new Promise((resolve) => {
      let first;
      let chartAt;
      const done = () => {
        if (first !== undefined && chartAt !== undefined) {
          a.disconnect();
          b.disconnect();
          resolve({ first, chart: chartAt });
        }
      };
      const a = new MutationObserver(() => {
        if (first === undefined) first = performance.now() - t0;
        done();
      });
      const b = new MutationObserver(() => {
        if (chartAt === undefined) chartAt = performance.now() - t0;
        done();
      });
      a.observe(results, { childList: true, subtree: true, characterData: true, attributes: true });
      b.observe(chart, { childList: true, subtree: true });
      input.value = value;
      const t0 = performance.now();
      input.dispatchEvent(new Event('input', { bubbles: true }));
    });
    out.push(r);
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  }
  return out;
});
const med = (k) => median(changes.map((c) => c[k]));
console.log(`input change -> first DOM update: median ${med('first').toFixed(2)} ms over ${changes.length} changes (budget 2 ms)`);
console.log(`input change -> per-rank chart updated: median ${med('chart').toFixed(2)} ms (min ${Math.min(...changes.map((c) => c.chart)).toFixed(2)}, max ${Math.max(...changes.map((c) => c.chart)).toFixed(2)})`);
await browser.close();
server?.close();
