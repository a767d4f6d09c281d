// The page's first script: decides what the first verdict needs and starts fetching it. The
// release build puts it in the page as a classic inline script right after the
// Content-Security-Policy (scripts/inline-loader.mjs, which fills in the six names below and
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
//                        one for catalog links and the seed examples, the one with the
//                        config.json reader for a pasted config, or the one with everything
//                        for a config beside an example or a drafter), compiling as its bytes
//                        arrive (`module` is compile(url)'s promise, below);
//   all                  the address of the program with everything, which plans any state
//                        another program hands over (it answers an empty list);
//   compile(url)         a program, compiled as its bytes arrive (from its .gz where the
//                        browser can decompress a stream, begun by the bytes the page carries
//                        where it carries some, HEADS below): a promise of { module, rest }, where
//                        a split program's (scripts/split-verdict.mjs) `module` is its first
//                        part, done as soon as that part's bytes are in, and `rest` a promise
//                        of its second part's module; a whole program's `rest` is null.
var headroomEarly = (() => {
  const PLANNED = HEADROOM_PLANNED;
  const VERDICT = HEADROOM_VERDICT;
  const VERDICT_CONFIG = HEADROOM_VERDICT_CONFIG;
  const VERDICT_ALL = HEADROOM_VERDICT_ALL;
  // Where each split program's second part begins in its file (scripts/split-verdict.mjs).
  const SPLITS = HEADROOM_SPLITS;
  // The programs whose .gz begins in the page itself: how many of its bytes the page carries
  // (scripts/inline-loader.mjs). On slow 4G the link is idle from the page's first bytes until
  // the program's first byte (the request leaves with this script, about 110 ms later at a
  // quarter of the CPU, then 150 ms of latency): about 40 KB. The page spends them on the
  // start of the catalog links' program, base64 in a comment at the end of the body, and the
  // request asks for the rest only (NAME_bg.wasm.tail).
  const HEADS = HEADROOM_HEADS;
  const link = `${location.search}${location.hash}`;
  // A stream of `chunks`, then of what `reader` still has (nothing more when `done`).
  const after = (chunks, reader, done = false) =>
    new ReadableStream({
      start(c) {
        for (const chunk of chunks) c.enqueue(chunk);
        if (done) c.close();
      },
      async pull(c) {
        const next = await reader.read();
        if (next.done) c.close();
        else c.enqueue(next.value);
      },
      cancel: (why) => reader.cancel(why),
    });
  // A program's bytes as a response to compile: the programs are kept gzip-compressed beside
  // themselves (NAME_bg.wasm.gz, by zopfli: 5% smaller than a server's own gzip), and the
  // browser decompresses them as they arrive. A server or proxy that decoded the file already
  // (it sent Content-Encoding: gzip) hands over the wasm itself: its first two bytes tell.
  const inflate = async (r) => {
    const reader = r.body.getReader();
    const chunks = [];
    let seen = 0;
    let done = false;
    while (!done && seen < 2) {
      const next = await reader.read();
      done = next.done;
      if (next.value) {
        chunks.push(next.value);
        seen += next.value.length;
      }
    }
    const byte = (i) => {
      for (const c of chunks) {
        if (i < c.length) return c[i];
        i -= c.length;
      }
      return undefined;
    };
    let body = after(chunks, reader, done);
    if (byte(0) === 0x1f && byte(1) === 0x8b) body = body.pipeThrough(new DecompressionStream('gzip'));
    return new Response(body, { headers: { 'content-type': 'application/wasm' } });
  };
  // A split program's stream cut where its second part begins (`at`): the first part as a
  // stream of its own, which compiles as it arrives, and the second as a promise of its bytes,
  // read behind it whether or not anything waits for it yet.
  const cut = (body, at) => {
    const reader = body.getReader();
    const tail = [];
    let done;
    let failed;
    const rest = new Promise((resolve, reject) => {
      done = resolve;
      failed = reject;
    });
    rest.catch(() => {});
    const drain = async () => {
      try {
        for (;;) {
          const next = await reader.read();
          if (next.done) break;
          tail.push(next.value);
        }
        const bytes = new Uint8Array(tail.reduce((n, c) => n + c.length, 0));
        let o = 0;
        for (const c of tail) {
          bytes.set(c, o);
          o += c.length;
        }
        done(bytes);
      } catch (e) {
        failed(e);
      }
    };
    let seen = 0;
    const head = new ReadableStream({
      async pull(c) {
        let next;
        try {
          next = await reader.read();
        } catch (e) {
          failed(e);
          throw e;
        }
        if (next.done) {
          const e = new Error('the program ends within its first part');
          failed(e);
          c.error(e);
          return;
        }
        const chunk = next.value;
        if (seen + chunk.length < at) {
          seen += chunk.length;
          c.enqueue(chunk);
          return;
        }
        c.enqueue(chunk.subarray(0, at - seen));
        tail.push(chunk.subarray(at - seen));
        c.close();
        drain();
      },
      // compileStreaming gave up on the first part (a body that is no wasm): so does the rest.
      cancel(why) {
        failed(why);
        return reader.cancel(why);
      },
    });
    return { head, rest };
  };
  const wasmType = { headers: { 'content-type': 'application/wasm' } };
  // The second part's module, compiled once its bytes are in (boot.js awaits it only when a run
  // needs it).
  const compiled = (bytes) => {
    const module = bytes.then((b) => WebAssembly.compile(b));
    module.catch(() => {});
    return module;
  };
  // A program compiled as its bytes arrive, from one request: its .gz where the browser can
  // decompress a stream and compile one. compileStreaming refuses a response a server sends as
  // another type than application/wasm, and an older browser has none: then the plain file's
  // bytes, compiled whole.
  const gz =
    typeof DecompressionStream === 'function' &&
    typeof ReadableStream === 'function' &&
    typeof WebAssembly === 'object' &&
    typeof WebAssembly.compileStreaming === 'function';
  // The start of a program's .gz that the page carries (HEADS): its bytes once the parser has
  // read the comment that holds them (at the end of the body, so the page is there first), or
  // null where the page has none (a proxy that strips comments, a page without a body). Only
  // in a document (compile's `headed`).
  let heads;
  const headOf = (url) => {
    heads ??= new Promise((resolve) => {
      const read = () => {
        const found = {};
        try {
          for (const node of document.body.childNodes) {
            const m = node.nodeType === 8 && /^headroom-head:(\S+):([A-Za-z0-9+/=]+)$/.exec(node.data);
            if (!m) continue;
            const bytes = typeof Uint8Array.fromBase64 === 'function' ? Uint8Array.fromBase64(m[2]) : Uint8Array.from(atob(m[2]), (c) => c.charCodeAt(0));
            if (bytes.length === HEADS[m[1]]) found[m[1]] = bytes;
          }
        } catch {
          // No head: the whole .gz.
        }
        resolve(found);
      };
      if (document.readyState !== 'loading') read();
      else document.addEventListener('readystatechange', read, { once: true });
    });
    return heads.then((found) => found[url] ?? null);
  };
  // A program's .gz from the start the page carries and the rest (NAME_bg.wasm.tail), asked
  // for at once; null, after cancelling the rest, when either is missing (a host that did not
  // publish the .tail, a proxy that stripped the comment) or the answer is not the rest: then
  // the whole .gz.
  const fromHead = async (url, signal) => {
    const tail = fetch(`${url}.tail`, { signal }).catch((e) => {
      if (signal?.aborted) throw e;
      return null;
    });
    // Handled where awaited, after the head: not an unhandled rejection meanwhile.
    tail.catch(() => {});
    const head = await headOf(url);
    const r = await tail;
    // Not the rest of the .gz: a page (a host that answers every path with its index). A
    // Content-Encoding is the server's own compression, which the browser undoes.
    const other = /^text\/html\b/.test(r?.headers.get('content-type') ?? '');
    if (!head || !r?.ok || other) {
      r?.body?.cancel().catch(() => {});
      return null;
    }
    return new Response(after([head], r.body.getReader()));
  };
  const compile = (url, signal) => {
    const at = Object.hasOwn(SPLITS, url) ? SPLITS[url] : null;
    const headed = gz && Object.hasOwn(HEADS, url) && typeof document === 'object' && document !== null;
    const module = (headed ? fromHead(url, signal) : Promise.resolve(null)).then(async (r) => {
      r ??= await fetch(gz ? `${url}.gz` : url, { signal });
      // A host that did not publish the .gz (404, or 403 from a bucket): the plain file
      // (inflate passes it through).
      if (gz && !r.ok) r = await fetch(url, { signal });
      if (!r.ok) throw new Error(`${r.url}: HTTP ${r.status}`);
      if (gz) {
        const body = (await inflate(r)).body;
        if (at === null) return { module: await WebAssembly.compileStreaming(new Response(body, wasmType)), rest: null };
        const { head, rest } = cut(body, at);
        return { module: await WebAssembly.compileStreaming(new Response(head, wasmType)), rest: compiled(rest) };
      }
      const wasm = /^application\/wasm\b/.test(r.headers.get('content-type') ?? '');
      if (at === null) return { module: await (wasm && typeof WebAssembly.compileStreaming === 'function' ? WebAssembly.compileStreaming(r) : r.arrayBuffer().then((b) => WebAssembly.compile(b))), rest: null };
      const bytes = new Uint8Array(await r.arrayBuffer());
      const rest = compiled(Promise.resolve(bytes.subarray(at)));
      return { module: await WebAssembly.compile(bytes.subarray(0, at)), rest };
    });
    // Awaited by boot.js, which may come after a failure: not an unhandled rejection meanwhile.
    module.catch(() => {});
    return module;
  };
  // The program texts need: the one with the config.json reader for a pasted config
  // (src/verdict.rs, handed_over) but for one beside a seed example or a drafter named by
  // draft-model (that program carries no other model row): the one with everything; else the
  // catalog links', which plans the examples too. A key this test misses (a percent-encoded
  // one) costs a second program, not a wrong verdict: the first answers an empty list.
  const names = (text, key) => new RegExp(`(?:^|[?&#])${key}=`).test(text);
  const programFor = (text) =>
    names(text, 'config') ? (names(text, 'example') || names(text, 'draft-model') ? VERDICT_ALL : VERDICT_CONFIG) : VERDICT;
  // A link with a state of its own opens with it, but for a reload of this tab with other texts
  // typed (below): its program is asked for before storage is read (the two reads took 5 to 35
  // ms at CPU / 4), and cancelled in that rare case. Not for a link planned ahead.
  let ahead = null;
  if (link.includes('=') && !Object.hasOwn(PLANNED, link)) {
    try {
      const url = programFor(link);
      const abort = new AbortController();
      ahead = { url, abort, module: compile(url, abort.signal) };
    } catch {
      // No fetch or no WebAssembly: boot.js says so when the app cannot start.
    }
  }
  const item = (store, key) => {
    try {
      return globalThis[store]?.getItem(key) ?? undefined;
    } catch {
      return undefined; // storage may be refused (a sandbox, privacy settings)
    }
  };
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
  let program = null;
  if (!planned) {
    const url = programFor(opening);
    if (ahead?.url === url) program = { url, module: ahead.module };
    else {
      try {
        program = { url, module: compile(url) };
      } catch {
        // No fetch or no WebAssembly: boot.js says so when the app cannot start.
      }
    }
  }
  if (ahead && program?.module !== ahead.module) ahead.abort.abort();
  return { link, stored, typed, planned, program, all: VERDICT_ALL, compile };
})();
