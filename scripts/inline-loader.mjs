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
// core without the page's framework) is built here in the same profile as the page, three times
// (for catalog links, headroom-verdict-<hash>_bg.wasm; for a pasted config.json,
// headroom-verdict-config-<hash>_bg.wasm; and with everything,
// headroom-verdict-all-<hash>_bg.wasm), run through wasm-bindgen and wasm-opt; their one glue
// goes into the same inline module inside a function (its names do not meet the app's);
// public/early.js, a classic inline script before it, fetches the wasm the opening state needs
// first (nothing is preloaded), and public/boot.js the app's once that has arrived. A debug
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

// zopfli (npm's @gfx/zopfli, a CommonJS package): the verdict programs' gzip.
const { gzipAsync } = createRequire(import.meta.url)('@gfx/zopfli');
// terser: the page's two inline scripts minified (below).
import { minify } from 'terser';
import { FEATURES, checkLinks, splitProgram, trainingLinks } from './split-verdict.mjs';

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

// The verdict programs: built, bound and optimised, or null in a debug build. Three builds of
// src/bin/verdict.rs: the one for catalog links and the seed examples (`catalog-compiled`: the
// catalog as Rust values, no JSON or config.json reader), which every link but a pasted config
// fetches; the one for a pasted config.json (`config-reader` too, one model row, no examples);
// and the one with everything (the catalog's JSON text), for a config beside an example or a
// drafter.
// public/early.js chooses from the address and storage; the first two answer an empty list for
// a state they hand over. Their glue is the same (the same exports and imports), checked here,
// so the page carries it once.
// How much of the catalog links' program the page carries, at the end of its body (base64 in a
// comment; a server's gzip of the page takes the base64 back to about these bytes). On a phone on
// slow 4G (the bench's 1.6 Mbit/s, 150 ms RTT, CPU / 4) the link is idle from the page's first
// bytes to the program's first byte: public/early.js's request leaves about 110 ms after the
// page's first byte, and its answer comes 150 ms later. At 200 KB/s that is about 50 KB, of which
// the page itself takes 9.5 KB; so the program's first 40,000 bytes come in that time, and the
// request asks only for the rest (NAME_bg.wasm.tail). Measured on the catalog link of the
// bench, 9 loads each: first verdict 1,111 -> 912 ms; a pasted config's link (another program,
// which does not wait for the comment) 1,202 -> 1,198 ms; the first paint unchanged (the comment
// comes after everything the page paints). Only one program: the window holds one head, and a
// head given to the config's program too would be taken from this one's.
const HEAD_BYTES = 40000;
const verdict = process.env.TRUNK_PROFILE === 'debug' ? null : await buildVerdicts();
async function buildVerdicts() {
  const run = (cmd, args, env) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env: env ?? process.env });
  const profile = 'wasm-release';
  const tmp = mkdtempSync(join(tmpdir(), 'headroom-verdict-'));
  // The programs are built with the standard library compiled again in their profile, with
  // panics that abort at once (`-Cpanic=immediate-abort`): no panic message, location or
  // formatting machinery is linked, and std's own code is optimised for size with the program.
  // On the wire the catalog links' program is 9.6 KB smaller (126,486 -> 116,840 B, 7.6 %).
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
  // The catalog links' and the pasted config's programs are split in two (scripts/
  // split-verdict.mjs, by Debian's wasm-split that scripts/setup.sh unpacks): trained on the
  // catalog and the seed examples named in the page.
  const wasmSplit = join(root, 'tools', 'binaryen-108', 'usr', 'bin', 'wasm-split');
  if (!existsSync(wasmSplit)) fail(`no ${wasmSplit}: run scripts/setup.sh, which unpacks Debian's binaryen 108 for its wasm-split`);
  const exampleIds = [...new Set([...html.matchAll(/data-example="([^"]+)"/g)].map((m) => m[1]))];
  if (exampleIds.length === 0) fail('index.html names no seed examples (data-example="...")');
  const build = async (features, prefix, kind) => {
    const out = run('cargo', ['build', '-Zbuild-std=std,panic_abort', '--target', 'wasm32-unknown-unknown', '--profile', profile, '--bin', 'headroom-verdict', '--no-default-features', '--features', features, '--message-format=json-render-diagnostics'], env);
    const artifact = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l))
      .find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'headroom-verdict')?.filenames?.find((f) => f.endsWith('.wasm'));
    if (!artifact) fail(`cargo built no headroom-verdict .wasm (features ${features})`);
    const outDir = join(tmp, prefix);
    run('wasm-bindgen', ['--target', 'web', '--no-typescript', '--out-dir', outDir, '--out-name', 'verdict', artifact]);
    const wasmOut = join(outDir, 'verdict.opt.wasm');
    // The WebAssembly features wasm-opt must accept to read wasm-bindgen 0.2.130's output.
    // No inlining of a function into its one caller beyond -Oz's own small sizes: by default
    // wasm-opt merges the chain first_verdict -> plan -> plan_given into one 87 KB function,
    // and the browser compiles a function whole on its first call (V8 compiles wasm lazily),
    // branches never taken included. Without it the program is 1.2 KB smaller too.
    run('wasm-opt', ['-Oz', '--one-caller-inline-max-function-size', '0', ...FEATURES, join(outDir, 'verdict_bg.wasm'), '-o', wasmOut]);
    let bytes = readFileSync(wasmOut);
    // Split: its two parts as one file, the first first; `split` is where the second begins.
    let split = null;
    if (kind) {
      const parts = await splitProgram({
        tmp: outDir,
        prefix,
        bytes,
        glueFile: join(outDir, 'verdict.js'),
        training: trainingLinks(root, kind, exampleIds),
        checks: checkLinks(root, kind, exampleIds),
        wasmSplit,
        wasmOpt: 'wasm-opt',
        fail,
      });
      const [a, b] = parts.parts;
      const [one, two] = parts.answered;
      console.log(`inline-loader: ${prefix} split: parts of ${a.length} and ${b.length} B (whole ${bytes.length} B); ${parts.trained} training states and ${parts.checked} others checked: ${one} answered by the first part, ${two} needed the second`);
      split = a.length;
      bytes = Buffer.concat([a, b]);
    }
    const name = `${prefix}-${createHash('sha256').update(bytes).digest('hex').slice(0, 16)}_bg.wasm`;
    writeFileSync(join(dir, name), bytes);
    // Beside it, the same bytes gzip-compressed by zopfli: 4.7% smaller than the same server's
    // own gzip of the program (132,282 B against 138,741 B at level 6, about 30 ms on slow 4G).
    // public/early.js fetches it where the browser can decompress a stream, and this file where
    // it cannot. A server sends a .gz as it is (it is not text), so the gzip is never redone.
    const gz = Buffer.from(await gzipAsync(bytes, { numiterations: 15 }));
    if (!gunzipSync(gz).equals(bytes)) fail(`zopfli's gzip of ${name} does not decompress to it`);
    writeFileSync(join(dir, `${name}.gz`), gz);
    // The catalog links' program begins in the page itself (HEAD_BYTES, below): the rest of its
    // .gz beside it, which public/early.js asks for instead of the whole.
    const head = kind === 'catalog' ? gz.subarray(0, HEAD_BYTES) : null;
    if (head) {
      if (gz.length <= HEAD_BYTES * 2) fail(`${name}.gz is ${gz.length} B: too small for a head of ${HEAD_BYTES} B`);
      writeFileSync(join(dir, `${name}.tail`), gz.subarray(HEAD_BYTES));
    }
    return { name, bytes, split, head, glueFile: join(outDir, 'verdict.js'), glue: readFileSync(join(outDir, 'verdict.js'), 'utf8') };
  };
  try {
    // Built one after the other: all write the same target/ artifact.
    const all = await build('verdict', 'headroom-verdict-all');
    const config = await build('verdict,catalog-compiled,config-reader', 'headroom-verdict-config', 'config');
    const catalog = await build('verdict,catalog-compiled', 'headroom-verdict', 'catalog');
    if (all.glue !== catalog.glue || all.glue !== config.glue) fail('the verdict programs have different wasm-bindgen glue (their exports or imports differ)');
    const vglue = moduleBody(all.glue, 'the verdict glue');
    if (!/^function first_verdict\(/m.test(vglue)) fail('the verdict glue has no first_verdict function');
    // The links every visitor can open from the header (the default page and the examples),
    // planned now by the program with everything: public/early.js hands such a link's verdict to
    // boot.js, which paints it at once when nothing stored or typed changes what it opens with;
    // then no verdict program is fetched.
    const glueModule = await import(pathToFileURL(all.glueFile).href);
    glueModule.initSync({ module: all.bytes });
    const links = ['', ...[...html.matchAll(/<a href="(\?v=1[^"]*)" data-testid="example-[^"]+"/g)].map((m) => m[1].replaceAll('&amp;', '&'))];
    if (links.length < 3) fail('index.html names no examples to plan ahead (<a href="?v=1..." data-testid="example-...">)');
    const planned = Object.fromEntries(links.map((l) => [l, glueModule.first_verdict(l, undefined, undefined)]));
    // A factory: boot.js may run both programs, each with its own instance of the glue.
    // With the glue's import table and instance hook, for a split program (boot.js links its
    // parts itself).
    for (const f of ['__wbg_get_imports', '__wbg_finalize_init']) if (!new RegExp(`^function ${f}\\(`, 'm').test(vglue)) fail(`the verdict glue has no ${f} function`);
    const code = `const headroomVerdictGlue = () => {\n${vglue}\nreturn { init: __wbg_init, first_verdict, imports: __wbg_get_imports, finalize: __wbg_finalize_init };\n};\n`;
    console.log(`inline-loader: verdict programs ${catalog.name} (${catalog.bytes.length} B, catalog links), ${config.name} (${config.bytes.length} B, a pasted config.json) and ${all.name} (${all.bytes.length} B, the rest); planned ahead: ${links.map((l) => l || '(no query)').join(' ')}`);
    const splits = { [`${base}${catalog.name}`]: catalog.split, [`${base}${config.name}`]: config.split };
    const heads = { [`${base}${catalog.name}`]: catalog.head };
    return { url: `${base}${catalog.name}`, urlConfig: `${base}${config.name}`, urlAll: `${base}${all.name}`, splits, heads, code, planned };
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
// script: its top-level names are not mangled), and so does the verdict glue's factory, which
// the browser tests look for.
const minified = async (text, what, module) => {
  let out;
  try {
    out = await minify(text, { module, ecma: 2020, compress: { passes: 2 }, mangle: module ? { reserved: ['headroomVerdictGlue'] } : true, format: { comments: false } });
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
// The verdict programs' addresses are public/early.js's (below); the tag names them too, for the
// service worker's manifest (scripts/sw-manifest.mjs) and scripts/measure-budgets.mjs.
const verdictAttr = verdict
  ? ` data-js="${jsUrl}" data-verdict="${verdict.url}" data-verdict-split="${verdict.splits[verdict.url]}" data-verdict-config="${verdict.urlConfig}" data-verdict-config-split="${verdict.splits[verdict.urlConfig]}" data-verdict-all="${verdict.urlAll}" data-verdict-head="${verdict.heads[verdict.url].length}"`
  : '';

// The page's first script (public/early.js): a classic one, run as the parser reaches it, which
// reads the opening state and starts fetching the verdict program it needs (the inline module
// runs only after the first layout). Its five names are filled in as JSON: the verdicts planned
// ahead, the three programs' addresses and where the split programs' second parts begin. Only
// with the verdict program.
const jsValue = (value) => JSON.stringify(value).replaceAll('<', '\\u003c');
let earlyCode = null;
if (verdict) {
  let early = readFileSync(join(dirname(fileURLToPath(import.meta.url)), '..', 'public', 'early.js'), 'utf8');
  for (const [name, value] of [
    ['HEADROOM_PLANNED', jsValue(verdict.planned)],
    ['HEADROOM_VERDICT', jsValue(verdict.url)],
    ['HEADROOM_VERDICT_CONFIG', jsValue(verdict.urlConfig)],
    ['HEADROOM_VERDICT_ALL', jsValue(verdict.urlAll)],
    ['HEADROOM_SPLITS', jsValue(verdict.splits)],
    ['HEADROOM_HEADS', jsValue(Object.fromEntries(Object.entries(verdict.heads).map(([url, head]) => [url, head.length])))],
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
// The heads (HEAD_BYTES, above), last in the body: a comment each, `headroom-head:URL:BASE64`
// (base64 has no "-" or ">", so it cannot end the comment), which public/early.js reads once the
// parser is done with the page.
if (verdict) {
  if ((html.match(/<\/body>/g) ?? []).length !== 1) fail('index.html has no single </body> for the programs\' heads');
  const comments = Object.entries(verdict.heads).map(([url, bytes]) => `<!--headroom-head:${url}:${Buffer.from(bytes).toString('base64')}-->`);
  // After a line break of their own: the shell's end is then followed by a text node as soon as
  // the parser reaches the comment, which public/boot.js takes as the shell parsed whole.
  html = html.replace('</body>', () => `\n${comments.join('')}</body>`);
}
writeFileSync(htmlPath, html);
if (!verdict) rmSync(local(jsUrl));
rmSync(local(`${base}boot.js`));
console.log(`inline-loader: ${verdict ? 'the verdict glue' : jsUrl} and boot.js inlined (${code.length} B, ${codeSource})`);

// The page is final: the service worker's manifest names its files (one hook, so in order).
await import('./sw-manifest.mjs');
