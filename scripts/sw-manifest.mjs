// Run by inline-loader.mjs (Trunk's post-build hook) once the page is final: writes the build's id and file list into
// the service worker ($TRUNK_STAGING_DIR/sw.js), so the worker serves a repeat visit from its
// cache without a network round trip and a new build (a new sw.js) replaces the old one.
//
// BUILD is a SHA-256 of every file's path and bytes, so any change to the page or a file it
// names gives a new worker. FILES is '/' (the page, under every query), each file index.html
// refers to, and each verdict program's .gz. Fails the build, naming what it did not find, if
// sw.js or the page does not have the shape this expects.
//
//   node scripts/sw-manifest.mjs [STAGING_DIR]     (Trunk sets TRUNK_STAGING_DIR; also run alone)
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TAILS } from './split-verdict.mjs';

const dir = process.argv[2] ?? process.env.TRUNK_STAGING_DIR;
const fail = (why) => {
  console.error(`sw-manifest: ${why}`);
  process.exit(1);
};
if (!dir) fail('no staging directory (TRUNK_STAGING_DIR is not set and none was given)');

const html = readFileSync(join(dir, 'index.html'), 'utf8');
const named = [...html.matchAll(/(?:href|src|data-js|data-wasm|data-verdict|data-css)="(\/[^"#?]*)"/g)].map((m) => m[1]);
// Each verdict program's zopfli gzip beside it (NAME_bg.wasm.gz, scripts/inline-loader.mjs):
// the page fetches it where the browser can decompress a stream, and the worker keeps it there.
// The program begins in the page (data-verdict-head, scripts/inline-loader.mjs): its pages ask
// for the rest of a catalog link's stream (NAME_bg.wasm.tail), a pasted config's
// (NAME_bg.wasm.rtail) or a config's beside a model, an example or a drafter
// (NAME_bg.wasm.btail), which the worker keeps instead of the .gz where the page it fetches
// carries the head (public/sw.js).
const headed = /data-verdict-head="[1-9]\d*"/.test(html) ? html.match(/data-verdict="(\/[^"#?]*)"/)?.[1] : undefined;
const verdicts = [...html.matchAll(/data-verdict="(\/[^"#?]*)"/g)].flatMap((m) => (m[1] === headed ? [`${m[1]}.gz`, ...Object.values(TAILS).map((t) => `${m[1]}.${t}`)] : [`${m[1]}.gz`]));
const files = ['/', ...new Set([...named, ...verdicts].filter((p) => p !== '/' && p !== '/sw.js'))];
for (const p of files.slice(1)) {
  if (!existsSync(join(dir, p))) fail(`index.html names ${p}, which the build does not have`);
}
if (!files.some((p) => p.endsWith('.wasm'))) fail('index.html names no .wasm file');

const swPath = join(dir, 'sw.js');
let sw = readFileSync(swPath, 'utf8');
// Every file's bytes, so a change to a file whose name has no hash (the page) is a new build too.
const digest = createHash('sha256');
for (const p of files) digest.update(p).update(readFileSync(join(dir, p === '/' ? 'index.html' : p)));
const build = digest.digest('hex').slice(0, 16);
for (const [re, value] of [
  [/^const BUILD = 'dev';$/m, `const BUILD = '${build}';`],
  [/^const FILES = \[\];$/m, `const FILES = ${JSON.stringify(files)};`],
]) {
  if (!re.test(sw)) fail(`sw.js has no line matching ${re}`);
  sw = sw.replace(re, value);
}
writeFileSync(swPath, sw);
console.log(`sw-manifest: build ${build}, ${files.length} files: ${files.join(' ')}`);
