// Trunk's post-build hook (Trunk.toml): puts the wasm-bindgen glue and public/boot.js into the
// page as one inline module, allowed by its SHA-256 in the Content-Security-Policy.
//
// Why: with the glue in its own file, the page's first step waits for `import()` of that module
// (fetch, parse, link) after boot.js runs, and on the 2-core test machine that landed 10 to 20 ms
// after the wasm had already compiled. Inline, the loader starts as the HTML is parsed and the
// wasm's arrival is the only wait (first verdict 119-134 ms against 137-161 ms, medians of 15
// loads, alternating builds). The CSP stays strict: no 'unsafe-inline', one hash.
//
// Reads and rewrites $TRUNK_STAGING_DIR/index.html; drops the now unreferenced glue file,
// boot.js and the glue's modulepreload, and moves the wasm's preload up to the CSP. Fails the build, naming what it did not find, if the
// page or the glue does not have the shape this expects (a wasm-bindgen or Trunk upgrade).
//
//   node scripts/inline-loader.mjs [STAGING_DIR]     (Trunk sets TRUNK_STAGING_DIR)
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? process.env.TRUNK_STAGING_DIR;
const fail = (why) => {
  console.error(`inline-loader: ${why}`);
  process.exit(1);
};
if (!dir) fail('no staging directory (TRUNK_STAGING_DIR is not set and none was given)');

const htmlPath = join(dir, 'index.html');
let html = readFileSync(htmlPath, 'utf8');

// The tag Trunk.toml's pattern_script writes.
const tagRe = /<script type="module" async src="([^"]*)boot\.js" data-js="([^"]+)" data-wasm="([^"]+)"><\/script>/;
const tag = html.match(tagRe);
if (!tag) fail(`index.html has no loader tag like Trunk.toml's pattern_script (${tagRe})`);
const [, base, jsUrl, wasmUrl] = tag;
const local = (url) => join(dir, url.slice(base.length));

// The glue, made a plain module body: its exports become module-scoped names boot.js can use.
let glue = readFileSync(local(jsUrl), 'utf8');
const exportList = /^export \{ initSync, __wbg_init as default \};\n?/m;
if (!exportList.test(glue)) fail(`${jsUrl} does not end with wasm-bindgen's "export { initSync, __wbg_init as default };"`);
glue = glue.replace(exportList, '');
glue = glue.replace(/^export (class|function|const|let) /gm, '$1 ');
const stray = glue.match(/^\s*(export|import)\b.*$/m);
if (stray) fail(`${jsUrl} has a statement the inline module cannot keep: ${stray[0].trim()}`);

const boot = readFileSync(local(`${base}boot.js`), 'utf8');
if (!boot.includes("typeof __wbg_init === 'function'")) fail('public/boot.js does not look for an inline __wbg_init');
const code = `${glue}\n${boot}`;
if (/<\/script/i.test(code) || code.includes('<!--')) fail('the inline module would contain "</script" or "<!--"');

const hash = createHash('sha256').update(code, 'utf8').digest('base64');
html = html.replace(tag[0], () => `<script type="module" async data-wasm="${wasmUrl}">${code}</script>`);

const cspRe = /(<meta\s+http-equiv="Content-Security-Policy"\s+content="[^"]*script-src 'self' 'wasm-unsafe-eval')/;
if (!cspRe.test(html)) fail("index.html's Content-Security-Policy has no \"script-src 'self' 'wasm-unsafe-eval'\"");
html = html.replace(cspRe, (m) => `${m} 'sha256-${hash}'`);

const preload = new RegExp(`<link rel="modulepreload" href="${jsUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"[^>]*>`);
if (!preload.test(html)) fail(`index.html has no modulepreload of ${jsUrl}`);
html = html.replace(preload, '');

// The wasm is the last file the first verdict waits for: its preload goes first in the page,
// right after the CSP (which governs only what follows it), not after the inline module where
// Trunk puts it (first verdict 118-128 ms against 133-151 ms, alternating builds).
const wasmPreloadRe = /<link rel="preload" href="[^"]+\.wasm"[^>]*>/;
const wasmPreload = html.match(wasmPreloadRe);
if (!wasmPreload) fail("index.html has no preload of the wasm");
html = html.replace(wasmPreload[0], '');
const cspEnd = html.search(/<meta\s+http-equiv="Content-Security-Policy"/);
const afterCsp = html.indexOf('/>', cspEnd) + 2;
html = `${html.slice(0, afterCsp)}\n    ${wasmPreload[0]}${html.slice(afterCsp)}`;

writeFileSync(htmlPath, html);
rmSync(local(jsUrl));
rmSync(local(`${base}boot.js`));
console.log(`inline-loader: ${jsUrl} and boot.js inlined (${code.length} B, sha256-${hash})`);

// The page is final: the service worker's manifest names its files (one hook, so in order).
await import('./sw-manifest.mjs');
