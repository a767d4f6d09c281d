// The page's first script: decides what the first verdict needs and starts fetching it. The
// release build puts it in the page as a classic inline script right after the
// Content-Security-Policy (scripts/inline-loader.mjs, which fills in the four names below and
// adds its hash to the CSP), so it runs as soon as the parser reaches it, before anything is
// laid out or painted.
//
// Why a script of its own: the inline module (the verdict glue and public/boot.js) is run in a
// task after the parser and the first layout are done with the page. On a phone on slow 4G (the
// bench's 1.6 Mbit/s, 150 ms RTT and CPU / 4) that was 30 to 230 ms after the page's last byte,
// and the verdict program's fetch waited for it; its 140 KB gzip are the first verdict's longest
// wait. A classic script runs as it is parsed.
//
// No module can wait for this one: it defines the one global `headroomEarly`, read by boot.js:
//   link, stored, typed  the opening state: the address, the state kept in local storage and the
//                        texts kept for this tab (storage may be refused: then undefined);
//   planned              the opening state's verdict planned at build time, or null;
//   program              null, or { url, module }: the verdict program this state needs (the
//                        one for catalog links, the one with the config.json reader for a
//                        pasted config, or the one with everything for a seed example),
//                        compiling as its bytes arrive;
//   all                  the address of the program with everything, which plans any state
//                        another program hands over (it answers an empty list);
//   compile(url)         a program's module, compiled as its bytes arrive.
var headroomEarly = (() => {
  const PLANNED = HEADROOM_PLANNED;
  const VERDICT = HEADROOM_VERDICT;
  const VERDICT_CONFIG = HEADROOM_VERDICT_CONFIG;
  const VERDICT_ALL = HEADROOM_VERDICT_ALL;
  const item = (store, key) => {
    try {
      return globalThis[store]?.getItem(key) ?? undefined;
    } catch {
      return undefined; // storage may be refused (a sandbox, privacy settings)
    }
  };
  const link = `${location.search}${location.hash}`;
  const stored = item('localStorage', 'headroom:last-query');
  const typed = item('sessionStorage', 'headroom:typed');
  // The texts the page opens with, as src/verdict.rs reads them (opening_texts): the texts typed
  // in this tab when they were kept for this same address (a reload), else the address's, else,
  // for an address without a state, the stored state's. All are query strings (`config=` may be
  // in the hash).
  const nl = typeof typed === 'string' ? typed.indexOf('\n') : -1;
  const href = nl >= 0 ? typed.slice(0, nl) : undefined;
  const opening =
    href !== undefined && (href === link || (link === '' && href === '?v=1'))
      ? typed.slice(nl + 1)
      : link.includes('=') || stored === undefined
        ? link
        : stored;
  // The default page's and the examples' verdicts, planned at build time by the same program
  // from the address alone: this link's, when the page opens with the address's own texts.
  const planned = Object.hasOwn(PLANNED, link) && opening === link ? PLANNED[link] : null;
  // Whether they name a seed example or a pasted config.json, which the catalog links' program
  // hands over (src/verdict.rs, beyond_catalog). A key this test misses (a percent-encoded one)
  // costs a second program, not a wrong verdict: the first answers an empty list.
  const names = (key) => new RegExp(`(?:^|[?&#])${key}=`).test(opening);
  const example = names('example');
  const config = names('config');
  // A program compiled as its bytes arrive, from one request. compileStreaming refuses a response
  // a server sends as another type than application/wasm, and an older browser has none: then
  // the bytes, compiled whole.
  const compile = (url) => {
    const module = fetch(url).then((r) => {
      if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
      const wasm = /^application\/wasm\b/.test(r.headers.get('content-type') ?? '');
      return wasm && typeof WebAssembly.compileStreaming === 'function' ? WebAssembly.compileStreaming(r) : r.arrayBuffer().then((b) => WebAssembly.compile(b));
    });
    // Awaited by boot.js, which may come after a failure: not an unhandled rejection meanwhile.
    module.catch(() => {});
    return module;
  };
  let program = null;
  if (!planned) {
    try {
      const url = example ? VERDICT_ALL : config ? VERDICT_CONFIG : VERDICT;
      program = { url, module: compile(url) };
    } catch {
      // No WebAssembly: boot.js says so when the app cannot start.
    }
  }
  return { link, stored, typed, planned, program, all: VERDICT_ALL, compile };
})();
