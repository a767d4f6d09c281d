// Trunk's post-build hook (Trunk.toml): puts the wasm-bindgen glue and public/boot.js into the
// page as one inline module, allowed by its SHA-256 in the Content-Security-Policy.
//
// Why: with the glue in its own file, the page's first step waits for `import()` of that module
// (fetch, parse, link) after boot.js runs, and on the 2-core test machine that landed 10 to 20 ms
// after the wasm had already compiled. Inline, the loader starts as the HTML is parsed and the
// wasm's arrival is the only wait (first verdict 119-134 ms against 137-161 ms, medians of 15
// loads, alternating builds). The CSP stays strict: no 'unsafe-inline', a hash per inline element.
//
// Then the first verdict before the app: the small verdict program (src/bin/verdict.rs, the
// core without the page's framework) is built here in the same profile as the page, run through
// wasm-bindgen and wasm-opt, and split in six parts (scripts/split-verdict.mjs) written as one
// file, headroom-verdict-<hash>_bg.wasm, with its gzip and the three streams that continue the
// start of it the page carries (.tail for catalog links, .rtail for a pasted config.json, .btail
// for a config beside a model, an example or a drafter); its
// glue goes into the same inline module inside a function (its names do not meet the app's);
// public/early.js, a classic inline script before it, fetches the stream the opening state needs
// first (nothing is preloaded), and public/boot.js the app's wasm once that has arrived. A debug
// build (trunk serve without --release, TRUNK_PROFILE=debug) skips it: the app paints alone.
//
// With the verdict program, the app's glue is not inlined: it is not on the first verdict's path
// (boot.js imports it beside the app's wasm, after the verdict), and the verdict's glue is.
//
// Reads and rewrites $TRUNK_STAGING_DIR/index.html; drops boot.js, the glue's modulepreload and
// (when inlined) the glue file, and, without the verdict program, moves the wasm's preload up
// to the CSP. Fails the build, naming what it did not find, if the
// page or the glue does not have the shape this expects (a wasm-bindgen or Trunk upgrade).
//
//   node scripts/inline-loader.mjs [STAGING_DIR]     (Trunk sets TRUNK_STAGING_DIR)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';

// terser: the page's two inline scripts minified (below).
import { minify } from 'terser';
import { FEATURES, OPTIMISE, ORDERS, TAILS, besideCheckLinks, besideLinks, checkLinks, exampleLinks, splitParts, trainingLinks, uncommonLinks } from './split-verdict.mjs';
import { deflatePart, gzipOf } from './gzip-parts.mjs';
// Each stream's parts in order, and the file that holds it after the page's head (TAILS: a
// catalog link's NAME_bg.wasm.tail, the rest of the .gz; a pasted config's .rtail; a config's
// beside a model, an example or a drafter .btail; public/early.js).
const STREAMS = Object.fromEntries(Object.entries(ORDERS).map(([kind, order]) => [kind, { order: ['C', ...order], file: TAILS[kind] }]));

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

// A wasm-bindgen glue made a plain module body: its exports become names in scope, for boot.js
// (the app's) or for the function that wraps it (the verdict program's).
const moduleBody = (text, what) => {
  const exportList = /^export \{ initSync, __wbg_init as default \};\n?/m;
  if (!exportList.test(text)) fail(`${what} does not end with wasm-bindgen's "export { initSync, __wbg_init as default };"`);
  const body = text.replace(exportList, '').replace(/^export (class|function|const|let) /gm, '$1 ');
  const stray = body.match(/^\s*(export|import)\b.*$/m);
  if (stray) fail(`${what} has a statement the inline module cannot keep: ${stray[0].trim()}`);
  return body;
};
const glue = moduleBody(readFileSync(local(jsUrl), 'utf8'), jsUrl);

// The verdict program: built, bound, optimised and split, or null in a debug build. One build of
// src/bin/verdict.rs (`catalog-compiled,config-reader`: the catalog as Rust values, the seed
// examples and the config.json reader), split by what links run: C, what every common link runs;
// B, the examples' builders and their rows (catalog links, and a config beside an example or a
// drafter); K, the other rows; R, the reader; V, the uncommon flags and the refused inputs; X,
// the rest. A catalog link waits for C, B and K, a pasted config for C and R (and B beside a
// model, an example or a drafter; V with an uncommon flag), and the page carries C's start.
// How much of the program's .gz the page carries, at the end of its body (base64 in a comment; a
// server's gzip of the page takes the base64 back to about these bytes). On a phone on slow 4G
// (the bench's 1.6 Mbit/s, 150 ms RTT, CPU / 4) the link is idle from the page's first bytes to
// the program's first byte: public/early.js's request leaves about 110 ms after the page's first
// byte, and its answer comes 150 ms later, about 50 KB at 200 KB/s, of which the page itself
// takes 10 KB; and the request asks only for the rest of its link's stream. Every stream begins
// with C, so the head serves every link. Measured side by side on slow 4G, 12 loads
// (.bench/results/m6-slow4g, m7-slow4g), a catalog link's and a pasted config's first verdict:
// 955 and 958 ms with 40,000 B; 893 and 944 ms, then 884 and 944 ms with 50,000 B; 885 and 938
// ms with 60,000 B; 882 and 938 ms with 70,000 B (InferPlan 1,062 and 1,014 ms in those runs):
// past 50,000 B the link is busy anyway, and the page only ends later. The first paint comes
// before the comment either way.
const HEAD_BYTES = 50000;
const verdict = process.env.TRUNK_PROFILE === 'debug' ? null : await buildVerdicts();
async function buildVerdicts() {
  const run = (cmd, args, env) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: env ?? process.env });
  const profile = 'wasm-release';
  const tmp = mkdtempSync(join(tmpdir(), 'headroom-verdict-'));
  // The program is built with the standard library compiled again in its profile, with
  // panics that abort at once (`-Cpanic=immediate-abort`): no panic message, location or
  // formatting machinery is linked, and std's own code is optimised for size with the program.
  // When it was measured (2026-12-07), the catalog links' program of then was 9.6 KB smaller on
  // the wire (126,486 -> 116,840 B, 7.6 %).
  // Both are unstable cargo and rustc options, enabled on this stable toolchain by
  // RUSTC_BOOTSTRAP (std's source is the toolchain's rust-src component, which
  // scripts/setup.sh installs). A panic was already an
  // abort in this profile (`panic = "abort"`): the program traps either way and public/boot.js
  // lets the app paint. Their own target directory, so these flags never rebuild the app's.
  const sysroot = run('rustc', ['--print', 'sysroot']).trim();
  if (!existsSync(join(sysroot, 'lib', 'rustlib', 'src', 'rust', 'library', 'Cargo.lock'))) {
    fail(`the toolchain has no rust-src component (${sysroot}): run scripts/setup.sh, or rustup component add rust-src`);
  }
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const env = {
    ...process.env,
    RUSTC_BOOTSTRAP: '1',
    RUSTFLAGS: '-Zunstable-options -Cpanic=immediate-abort',
    CARGO_TARGET_DIR: join(root, 'target', 'verdict'),
  };
  delete env.CARGO_ENCODED_RUSTFLAGS;
  // The program is split in six (scripts/split-verdict.mjs, by Debian's wasm-split that
  // scripts/setup.sh unpacks): trained on the catalog, the seed examples named in the page,
  // every catalog model's config.json and the uncommon flags and refused inputs on both.
  const wasmSplit = join(root, 'tools', 'binaryen-108', 'usr', 'bin', 'wasm-split');
  if (!existsSync(wasmSplit)) fail(`no ${wasmSplit}: run scripts/setup.sh, which unpacks Debian's binaryen 108 for its wasm-split`);
  const exampleIds = [...new Set([...html.matchAll(/data-example="([^"]+)"/g)].map((m) => m[1]))];
  if (exampleIds.length === 0) fail('index.html names no seed examples (data-example="...")');
  const features = 'verdict,catalog-compiled,config-reader';
  const prefix = 'headroom-verdict';
  const out = run('cargo', ['build', '-Zbuild-std=std,panic_abort', '--target', 'wasm32-unknown-unknown', '--profile', profile, '--bin', 'headroom-verdict', '--no-default-features', '--features', features, '--message-format=json-render-diagnostics'], env);
  const artifact = out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'headroom-verdict')?.filenames?.find((f) => f.endsWith('.wasm'));
  if (!artifact) fail(`cargo built no headroom-verdict .wasm (features ${features})`);
  try {
    const outDir = join(tmp, prefix);
    run('wasm-bindgen', ['--target', 'web', '--no-typescript', '--out-dir', outDir, '--out-name', 'verdict', artifact]);
    const wasmOut = join(outDir, 'verdict.opt.wasm');
    const glueFile = join(outDir, 'verdict.js');
    // The passes (OPTIMISE, scripts/split-verdict.mjs) and the WebAssembly features wasm-opt
    // must accept to read wasm-bindgen 0.2.130's output.
    run('wasm-opt', [...OPTIMISE, ...FEATURES, join(outDir, 'verdict_bg.wasm'), '-o', wasmOut]);
    const whole = readFileSync(wasmOut);
    // Six parts (scripts/split-verdict.mjs): C, what every common link runs; B, the examples'
    // builders and their rows; K, the other rows; R, the config.json reader; V, the uncommon
    // flags and the refused inputs; X, the rest.
    const beside = besideLinks(root, exampleIds);
    const catalogTraining = trainingLinks(root, 'catalog', exampleIds);
    const split = await splitParts({
      tmp: outDir,
      prefix,
      bytes: whole,
      glueFile,
      training: {
        catalog: catalogTraining,
        config: trainingLinks(root, 'config', exampleIds),
        beside,
        examples: exampleLinks(catalogTraining),
        uncommonCatalog: uncommonLinks(root, 'catalog', exampleIds),
        uncommonConfig: uncommonLinks(root, 'config', exampleIds),
      },
      checks: {
        catalog: checkLinks(root, 'catalog', exampleIds),
        config: checkLinks(root, 'config', exampleIds),
        beside: besideCheckLinks(root, exampleIds),
      },
      wasmSplit,
      wasmOpt: 'wasm-opt',
      fail,
    });
    const { parts } = split;
    const count = (a) => a.map((n, k) => `${n} with ${k} part(s) after C`).join(', ');
    console.log(`inline-loader: ${prefix} in six parts: ${Object.entries(parts).map(([n, b]) => `${n} ${b.length} B`).join(', ')} (whole ${whole.length} B; functions ${Object.entries(split.functions).map(([n, k]) => `${n} ${k}`).join(', ')}); answered: catalog ${count(split.answered.catalog)}; config ${count(split.answered.config)}; config beside an example or a drafter ${count(split.answered.beside)}`);
    // The plain file: the parts in the catalog links' order, C, B, K, V, X, R; public/early.js
    // cuts them apart by their sizes (PARTS). Beside it, its gzip (scripts/gzip-parts.mjs,
    // zopfli with 15 iterations, 5% smaller than a server's own gzip), in the same order: a
    // browser that can decompress a stream fetches it where the page lacks its head. C is
    // deflated alone and flushed, so that every stream begins with the same bytes; the parts
    // after it as one deflate per stream, each part's back-references reaching into the parts
    // before it (a config beside an example or a drafter waits for 0.3 KB less, a catalog link
    // for 0.5 KB less, than with each part deflated alone).
    const plain = Buffer.concat(STREAMS.catalog.order.map((n) => parts[n]));
    const deflates = { C: await deflatePart(parts.C, false) };
    const rest = (order) => Buffer.concat(order.slice(1).map((n) => parts[n]));
    const streamOf = async (order) => gzipOf([parts.C, rest(order)], [deflates.C, await deflatePart(rest(order), true)], fail);
    const gzs = {};
    for (const [kind, { order }] of Object.entries(STREAMS)) gzs[kind] = await streamOf(order);
    const gz = gzs.catalog;
    if (!gunzipSync(gz).equals(plain)) fail('the gzip of the verdict program does not decompress to it');
    // The page carries the first HEAD_BYTES of it, all within C's deflate (after the gzip
    // header's 10 B), which every stream begins with; a link asks for the rest of its own
    // stream (STREAMS): a catalog link the rest of the .gz (NAME_bg.wasm.tail), a pasted
    // config's .rtail, a config's beside a model, an example or a drafter .btail.
    if (10 + deflates.C.length < HEAD_BYTES) fail(`the program's first part is ${deflates.C.length} B of deflate: too small for a head of ${HEAD_BYTES} B`);
    for (const [kind, g] of Object.entries(gzs)) if (!g.subarray(0, HEAD_BYTES).equals(gz.subarray(0, HEAD_BYTES))) fail(`the ${kind} stream's head differs from the catalog links'`);
    const head = gz.subarray(0, HEAD_BYTES);
    // Named after every form's bytes and where the head ends: a page of one build never meets a
    // tail of another under the same name (an HTTP cache keeps a hashed name for long).
    const hash = createHash('sha256').update(plain);
    for (const g of Object.values(gzs)) hash.update(g);
    const name = `${prefix}-${hash.update(String(HEAD_BYTES)).digest('hex').slice(0, 16)}_bg.wasm`;
    writeFileSync(join(dir, name), plain);
    writeFileSync(join(dir, `${name}.gz`), gz);
    for (const [kind, { file }] of Object.entries(STREAMS)) writeFileSync(join(dir, `${name}.${file}`), gzs[kind].subarray(HEAD_BYTES));
    const vglue = moduleBody(readFileSync(glueFile, 'utf8'), 'the verdict glue');
    if (!/^function first_verdict\(/m.test(vglue)) fail('the verdict glue has no first_verdict function');
    // The links every visitor can open from the header (the default page and the examples),
    // planned now by the whole program: public/early.js hands such a link's verdict to boot.js,
    // which paints it at once when nothing stored or typed changes what it opens with; then no
    // verdict program is fetched.
    const glueModule = await import(pathToFileURL(glueFile).href);
    glueModule.initSync({ module: whole });
    const links = ['', ...[...html.matchAll(/<a href="(\?v=1[^"]*)" data-testid="example-[^"]+"/g)].map((m) => m[1].replaceAll('&amp;', '&'))];
    if (links.length < 3) fail('index.html names no examples to plan ahead (<a href="?v=1..." data-testid="example-...">)');
    const planned = Object.fromEntries(links.map((l) => [l, glueModule.first_verdict(l, undefined, undefined)]));
    // A factory: boot.js runs the program on fresh instances, each with its own instance of
    // the glue, with the glue's import table and instance hook (boot.js links the parts itself).
    for (const f of ['__wbg_get_imports', '__wbg_finalize_init']) if (!new RegExp(`^function ${f}\\(`, 'm').test(vglue)) fail(`the verdict glue has no ${f} function`);
    const code = `const headroomVerdictGlue = () => {\n${vglue}\nreturn { init: __wbg_init, first_verdict, imports: __wbg_get_imports, finalize: __wbg_finalize_init };\n};\n`;
    console.log(`inline-loader: verdict program ${name} (${plain.length} B; .gz ${gz.length} B, of which C's deflate ${deflates.C.length} B; .rtail ${gzs.config.length - HEAD_BYTES} B, .btail ${gzs.beside.length - HEAD_BYTES} B); planned ahead: ${links.map((l) => l || '(no query)').join(' ')}`);
    const url = `${base}${name}`;
    return { url, parts: Object.fromEntries(Object.entries(parts).map(([n, b]) => [n, b.length])), head, code, planned };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const boot = readFileSync(local(`${base}boot.js`), 'utf8');
if (!boot.includes("typeof __wbg_init === 'function'")) fail('public/boot.js does not look for an inline __wbg_init');
// Comment lines go: they are for the sources' readers, and the page carries them on every
// first visit (1.3 KB gzip of the inline module); so do blank lines and each line's leading
// spaces (0.2 KB; line breaks stay, so statements end where they did). Only whole lines whose
// first characters are `//` are dropped. Such a line could be text only inside a template
// literal spanning lines, and leading spaces only there or after a string's backslash line
// continuation, which neither the glue nor boot.js has: checked as a code line with an odd
// number of backticks, or ending in a backslash (the build fails rather than guess).
const uncommented = (text, what) => {
  const lines = text.split('\n');
  const code = lines.filter((l) => !l.trimStart().startsWith('//'));
  const odd = code.find((l) => (l.replace(/\\`/g, '').match(/`/g)?.length ?? 0) % 2 === 1);
  if (odd !== undefined) fail(`${what} may have a template literal over several lines, whose lines cannot be told from comments: ${odd.trim()}`);
  const continued = code.find((l) => /\\\s*$/.test(l));
  if (continued !== undefined) fail(`${what} has a line continued by a backslash, whose next line's spaces are text: ${continued.trim()}`);
  return code
    .map((l) => l.trim())
    .filter((l) => l !== '')
    .join('\n');
};
// With the verdict program the app's glue stays a file, fetched beside the app's wasm after the
// first verdict (boot.js): its 8 KB (gzip) are not on the first verdict's path.
// Then both inline scripts are minified by terser: their names shortened, the glue's doc
// comments and the rest of the whitespace gone. Every first visit carries them before its first
// verdict: 1.6 KB gzip less (the inline module 4,567 -> about 3,300 B, public/early.js 2,444 ->
// about 2,100 B). The one global, `headroomEarly`, keeps its name (public/early.js is a classic
// script: its top-level names are not mangled); the verdict glue's factory, called once, is
// inlined where boot.js calls it.
const minified = async (text, what, module) => {
  let out;
  try {
    out = await minify(text, { module, ecma: 2020, compress: { passes: 2 }, mangle: true, format: { comments: false } });
  } catch (e) {
    fail(`terser could not minify ${what}: ${e.message ?? e}`);
  }
  if (typeof out?.code !== 'string' || out.code === '') fail(`terser gave nothing for ${what}`);
  return out.code;
};
const code = await minified(uncommented(verdict ? `${verdict.code}${boot}` : `${glue}\n${boot}`, 'the inline module'), 'the inline module', true);
// What the page carries inline: text that cannot close its element or open a comment, and the
// CSP source that allows exactly it.
const inlined = (text, tag, what) => {
  if (text.toLowerCase().includes(`</${tag}`) || text.includes('<!--')) fail(`${what} would contain "</${tag}" or "<!--"`);
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
};
const codeSource = inlined(code, 'script', 'the inline module');
// The verdict program's address and parts are public/early.js's (below); the tag names them too,
// for the service worker's manifest (scripts/sw-manifest.mjs) and scripts/measure-budgets.mjs.
const verdictAttr = verdict
  ? ` data-js="${jsUrl}" data-verdict="${verdict.url}" data-verdict-parts="${Object.entries(verdict.parts).map(([n, size]) => `${n}:${size}`).join(',')}" data-verdict-head="${verdict.head.length}"`
  : '';

// The page's first script (public/early.js): a classic one, run as the parser reaches it, which
// reads the opening state and starts fetching the verdict program it needs (the inline module
// runs only after the first layout). Its six names are filled in as JSON: the verdicts planned
// ahead, the program's address, its parts' sizes, the three streams' orders and files, and how
// many bytes of its .gz the page carries. Only with the verdict program.
const jsValue = (value) => JSON.stringify(value).replaceAll('<', '\\u003c');
let earlyCode = null;
if (verdict) {
  let early = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'public', 'early.js'), 'utf8');
  for (const [name, value] of [
    ['HEADROOM_PLANNED', jsValue(verdict.planned)],
    ['HEADROOM_VERDICT', jsValue(verdict.url)],
    ['HEADROOM_PARTS', jsValue(verdict.parts)],
    ['HEADROOM_ORDERS', jsValue(Object.fromEntries(Object.entries(STREAMS).map(([kind, { order }]) => [kind, order])))],
    ['HEADROOM_TAILS', jsValue(TAILS)],
    ['HEADROOM_HEAD', jsValue(verdict.head.length)],
  ]) {
    const at = new RegExp(`= ${name};`);
    if ((early.match(new RegExp(`\\b${name}\\b`, 'g')) ?? []).length !== 1 || !at.test(early)) fail(`public/early.js does not name ${name} exactly once, as "= ${name};"`);
    early = early.replace(at, () => `= ${value};`);
  }
  earlyCode = await minified(uncommented(early, 'public/early.js'), 'public/early.js', false);
}
const earlySource = earlyCode === null ? null : inlined(earlyCode, 'script', 'public/early.js');
// The rest of the page's rules (public/page.css, as Trunk links it): out of the head, where it
// would block the first paint, and named to boot.js, which loads it beside the app's wasm and
// starts the app once it is in (with its integrity hash, as Trunk wrote it).
const pageCssRe = /<link rel="stylesheet" href="([^"]*\/page-[0-9a-f]+\.css)"(?: integrity="([^"]+)")?\s*\/?>/;
const pageCss = html.match(pageCssRe);
if (!pageCss) fail('index.html has no stylesheet link for public/page.css (<link rel="stylesheet" href=".../page-HASH.css">)');
html = html.replace(pageCss[0], '');
const cssAttr = ` data-css="${pageCss[1]}"${pageCss[2] ? ` data-css-integrity="${pageCss[2]}"` : ''}`;
html = html.replace(tag[0], () => `<script type="module" async data-wasm="${wasmUrl}"${verdictAttr}${cssAttr}>${code}</script>`);

// The first paint's rules (public/style.css) go into the page as one <style>, allowed by its
// SHA-256: linked, they cost a round trip of their own before the first paint (150 ms on slow
// 4G, where the first paint was 1.32x the vanilla page's, whose rules are inline).
const styleRe = /<link rel="stylesheet" href="([^"]*\/style-[0-9a-f]+\.css)"(?: integrity="[^"]+")?\s*\/?>/;
const style = html.match(styleRe);
if (!style) fail('index.html has no stylesheet link for public/style.css (<link rel="stylesheet" href=".../style-HASH.css">)');
const css = readFileSync(local(style[1]), 'utf8').replace(/\r\n?/g, '\n').trim();
const cssSource = inlined(css, 'style', 'public/style.css');
html = html.replace(style[0], () => `<style>${css}</style>`);
const styleCspRe = /(<meta\s+http-equiv="Content-Security-Policy"\s+content="[^"]*style-src 'self')/;
if (!styleCspRe.test(html)) fail("index.html's Content-Security-Policy has no \"style-src 'self'\"");
html = html.replace(styleCspRe, (m) => `${m} ${cssSource}`);
rmSync(local(style[1]));

const cspRe = /(<meta\s+http-equiv="Content-Security-Policy"\s+content="[^"]*script-src 'self' 'wasm-unsafe-eval')/;
if (!cspRe.test(html)) fail("index.html's Content-Security-Policy has no \"script-src 'self' 'wasm-unsafe-eval'\"");
html = html.replace(cspRe, (m) => `${m}${earlySource === null ? '' : ` ${earlySource}`} ${codeSource}`);

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
// With the verdict program there is no preload: public/early.js fetches the verdict's wasm first,
// unless the link's verdict was planned ahead, and boot.js the app's after it, so the first
// verdict's bytes do not share the bandwidth with the app's.
if (!verdict) html = `${html.slice(0, afterCsp)}\n    ${wasmPreload[0]}${html.slice(afterCsp)}`;
// With it, the page's first script goes there, before the inline module.
else html = `${html.slice(0, afterCsp)}\n    <script>${earlyCode}</script>${html.slice(afterCsp)}`;

// HTML comments go too: they explain the page's source (index.html) to its readers, and every
// first visit would carry them. Only outside the inline module, which was checked above to hold
// no "<!--".
const [head, ...rest] = html.split(/(<script type="module"[^>]*>[\s\S]*?<\/script>)/);
html = [head.replace(/<!--[\s\S]*?-->\s*/g, ''), ...rest.map((part, i) => (i % 2 === 0 ? part : part.replace(/<!--[\s\S]*?-->\s*/g, '')))].join('');
// The head (HEAD_BYTES, above), last in the body: a comment, `headroom-head:URL:BASE64` (base64
// has no "-" or ">", so it cannot end the comment), which public/early.js reads once the parser
// is done with the page.
if (verdict) {
  if ((html.match(/<\/body>/g) ?? []).length !== 1) fail("index.html has no single </body> for the program's head");
  const comment = `<!--headroom-head:${verdict.url}:${Buffer.from(verdict.head).toString('base64')}-->`;
  // After a line break of its own: the shell's end is then followed by a text node as soon as
  // the parser reaches the comment, which public/boot.js takes as the shell parsed whole.
  html = html.replace('</body>', () => `\n${comment}</body>`);
}
writeFileSync(htmlPath, html);
if (!verdict) rmSync(local(jsUrl));
rmSync(local(`${base}boot.js`));
console.log(`inline-loader: ${verdict ? 'the verdict glue' : jsUrl} and boot.js inlined (${code.length} B, ${codeSource})`);

// The page is final: the service worker's manifest names its files (one hook, so in order).
await import('./sw-manifest.mjs');
