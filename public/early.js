// The page's first script: decides what the first verdict needs and starts fetching it. The
// release build puts it in the page as a classic inline script right after the
// Content-Security-Policy (scripts/inline-loader.mjs, which fills in the six names below and
// adds its hash to the CSP), so it runs as soon as the parser reaches it, before anything is
// laid out or painted.
//
// Why a script of its own: the inline module (the verdict glue and public/boot.js) is run in a
// task after the parser and the first layout are done with the page. On a phone on slow 4G (the
// bench's 1.6 Mbit/s, 150 ms RTT and CPU / 4) that was 30 to 230 ms after the page's last byte,
// and the verdict program's fetch waited for it; its bytes are the first verdict's longest wait.
// A classic script runs as it is parsed.
//
// No module can wait for this one: it defines the one global `headroomEarly`, read by boot.js:
//   link, stored, typed  the opening state: the address, the state kept in local storage and the
//                        texts kept for this tab (storage may be refused: then undefined);
//   planned              the opening state's verdict planned at build time, or null;
//   program              null, or { kind, module }: the verdict program's stream this state
//                        needs: a catalog link's (`catalog`), a pasted config's (`config`) or a
//                        config's beside a model, an example or a drafter (`beside`), compiling
//                        as its bytes arrive (`module` is compile(kind)'s promise);
//   compile(kind)        the program, compiled as its bytes arrive (from its .gz where the
//                        browser can decompress a stream, begun by the bytes the page carries
//                        where it carries them, HEAD below): a promise of { module, parts },
//                        where `module` is its first part (C, scripts/split-verdict.mjs), done
//                        as soon as that part's bytes are in, and `parts` the others in the
//                        order the stream brings them: each { name, module, arrived, ready },
//                        `module` a promise of that part's module, `arrived` true once its
//                        bytes are in and `ready` once it is compiled.
var headroomEarly = (() => {
  const PLANNED = HEADROOM_PLANNED;
  const VERDICT = HEADROOM_VERDICT;
  // The program's six parts (scripts/split-verdict.mjs) and their sizes: C, what every common
  // link runs, B the examples' builders and their rows, K the other rows, R the config.json
  // reader, V the uncommon flags and the refused inputs, X the rest. The plain file and its .gz
  // hold them in the catalog links' order, C, B, K, V, X, R; a pasted config's stream in C, R,
  // V, X, B, K; a config's beside a model, an example or a drafter in C, R, B, V, K, X.
  const PARTS = HEADROOM_PARTS;
  const ORDERS = HEADROOM_ORDERS;
  // The file each stream continues the page's head in (NAME_bg.wasm.EXT).
  const TAILS = HEADROOM_TAILS;
  // How many bytes of the program's .gz the page carries (scripts/inline-loader.mjs), all
  // within C. On slow 4G the link is idle from the page's first bytes until the program's
  // first byte (the request leaves with this script, about 110 ms later at a quarter of the
  // CPU, then 150 ms of latency): about 50 KB. The page spends them on the start of C, base64
  // in a comment at the end of the body, and the request asks for the rest of its stream only
  // (TAILS): NAME_bg.wasm.tail for a catalog link, .rtail for a pasted config, .btail for a
  // config beside a model, an example or a drafter. Every stream begins with C's bytes.
  const HEAD = HEADROOM_HEAD;
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
  // The program's bytes as a response to compile: it is kept gzip-compressed beside itself
  // (NAME_bg.wasm.gz and the three tails, by zopfli: 5% smaller than a server's own gzip), and the
  // browser decompresses it as it arrives. A server or proxy that decoded the file already
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
  // The program's stream cut into its parts (`order`, by their sizes): the first as a stream of
  // its own, which compiles as it arrives, and each other as a promise of its bytes, read behind
  // it whether or not anything waits for them yet.
  const cut = (body, order) => {
    const reader = body.getReader();
    const sizes = order.map((n) => PARTS[n]);
    const rests = sizes.slice(1).map(() => {
      let done;
      let failed;
      const bytes = new Promise((resolve, reject) => {
        done = resolve;
        failed = reject;
      });
      bytes.catch(() => {});
      return { bytes, done, failed };
    });
    const failAll = (e) => {
      for (const r of rests) r.failed(e);
    };
    // Parts 1.. from `chunks` (what came after the first part), then the rest of the stream.
    const drain = async (chunks) => {
      let k = 0;
      let buf = new Uint8Array(sizes[1]);
      let filled = 0;
      const take = (chunk) => {
        while (chunk.length > 0 && k < rests.length) {
          const n = Math.min(chunk.length, buf.length - filled);
          buf.set(chunk.subarray(0, n), filled);
          filled += n;
          chunk = chunk.subarray(n);
          if (filled === buf.length) {
            // The last part once the stream has ended there (a longer stream is no program).
            if (k === rests.length - 1) {
              k++;
              break;
            }
            rests[k++].done(buf);
            buf = new Uint8Array(sizes[k + 1]);
            filled = 0;
          }
        }
        if (chunk.length > 0) throw new Error('the program is longer than its parts');
      };
      try {
        for (const c of chunks) take(c);
        for (;;) {
          const next = await reader.read();
          if (next.done) break;
          take(next.value);
        }
        if (k < rests.length) throw new Error('the program ends within its parts');
        rests[k - 1].done(buf);
      } catch (e) {
        failAll(e);
        reader.cancel(e).catch(() => {});
      }
    };
    let seen = 0;
    const head = new ReadableStream({
      async pull(c) {
        let next;
        try {
          next = await reader.read();
        } catch (e) {
          failAll(e);
          throw e;
        }
        if (next.done) {
          const e = new Error('the program ends within its first part');
          failAll(e);
          c.error(e);
          return;
        }
        const chunk = next.value;
        if (seen + chunk.length < sizes[0]) {
          seen += chunk.length;
          c.enqueue(chunk);
          return;
        }
        c.enqueue(chunk.subarray(0, sizes[0] - seen));
        c.close();
        drain([chunk.subarray(sizes[0] - seen)]);
      },
      // compileStreaming gave up on the first part (a body that is no wasm): so do the rest.
      cancel(why) {
        failAll(why);
        return reader.cancel(why);
      },
    });
    return { head, rests: rests.map((r) => r.bytes) };
  };
  const wasmType = { headers: { 'content-type': 'application/wasm' } };
  // The parts after the first, each compiled once its bytes are in (boot.js awaits one only
  // when a run needs it).
  const compiled = (order, rests) =>
    rests.map((bytes, k) => {
      const part = { name: order[k + 1], arrived: false, ready: false };
      bytes.then(() => (part.arrived = true), () => {});
      part.module = bytes.then((b) => WebAssembly.compile(b));
      part.module.then(() => (part.ready = true), () => {});
      return part;
    });
  // A program compiled as its bytes arrive, from one request: its .gz where the browser can
  // decompress a stream and compile one. compileStreaming refuses a response a server sends as
  // another type than application/wasm, and an older browser has none: then the plain file's
  // bytes, compiled whole.
  const gz =
    typeof DecompressionStream === 'function' &&
    typeof ReadableStream === 'function' &&
    typeof WebAssembly === 'object' &&
    typeof WebAssembly.compileStreaming === 'function';
  // The start of the program's .gz that the page carries (HEAD): its bytes once the parser has
  // read the comment that holds them (at the end of the body, so the page is there first), or
  // null where the page has none (a proxy that strips comments, a page without a body). Only in
  // a document (compile's `headed`).
  let head;
  const headOf = () =>
    (head ??= new Promise((resolve) => {
      const read = () => {
        let found = null;
        try {
          for (const node of document.body.childNodes) {
            const m = node.nodeType === 8 && /^headroom-head:(\S+):([A-Za-z0-9+/=]+)$/.exec(node.data);
            if (!m || m[1] !== VERDICT) continue;
            const bytes = typeof Uint8Array.fromBase64 === 'function' ? Uint8Array.fromBase64(m[2]) : Uint8Array.from(atob(m[2]), (c) => c.charCodeAt(0));
            if (bytes.length === HEAD) found = bytes;
          }
        } catch {
          // No head: the whole .gz.
        }
        resolve(found);
      };
      if (document.readyState !== 'loading') read();
      else document.addEventListener('readystatechange', read, { once: true });
    }));
  // The program's .gz from the start the page carries and the rest of this kind's stream
  // (TAILS), asked for at once; null, after cancelling the rest, when either is missing (a host
  // that did not publish it, a proxy that stripped the comment) or the answer is not the rest:
  // then the whole .gz.
  const fromHead = async (file) => {
    const tail = fetch(file).catch(() => null);
    // Handled where awaited, after the head: not an unhandled rejection meanwhile.
    tail.catch(() => {});
    const start = await headOf();
    const r = await tail;
    // Not the rest of the .gz: a page (a host that answers every path with its index). A
    // Content-Encoding is the server's own compression, which the browser undoes.
    const other = /^text\/html\b/.test(r?.headers.get('content-type') ?? '');
    if (!start || !r?.ok || other) {
      r?.body?.cancel().catch(() => {});
      return null;
    }
    return new Response(after([start], r.body.getReader()));
  };
  const compile = (kind) => {
    const headed = gz && HEAD > 0 && typeof document === 'object' && document !== null;
    const stream = Object.hasOwn(TAILS, kind) ? kind : 'catalog';
    const module = (headed ? fromHead(`${VERDICT}.${TAILS[stream]}`) : Promise.resolve(null)).then(async (r) => {
      // The stream's order: its tail's, else the .gz's and the plain file's (the catalog links').
      const order = r ? ORDERS[stream] : ORDERS.catalog;
      r ??= await fetch(gz ? `${VERDICT}.gz` : VERDICT);
      // A host that did not publish the .gz (404, or 403 from a bucket): the plain file
      // (inflate passes it through).
      if (gz && !r.ok) r = await fetch(VERDICT);
      if (!r.ok) throw new Error(`${r.url}: HTTP ${r.status}`);
      if (gz) {
        const { head: first, rests } = cut((await inflate(r)).body, order);
        // The other parts compile as their bytes come, beside the first's compile (on a fast
        // link they are in before it is done), not after it.
        const parts = compiled(order, rests);
        return { module: await WebAssembly.compileStreaming(new Response(first, wasmType)), parts };
      }
      const bytes = new Uint8Array(await r.arrayBuffer());
      const sizes = order.map((n) => PARTS[n]);
      if (bytes.length !== sizes.reduce((a, b) => a + b, 0)) throw new Error(`${r.url}: ${bytes.length} B, not the program's parts`);
      const rests = [];
      for (let k = 1, o = sizes[0]; k < sizes.length; o += sizes[k++]) rests.push(Promise.resolve(bytes.subarray(o, o + sizes[k])));
      const parts = compiled(order, rests);
      return { module: await WebAssembly.compile(bytes.subarray(0, sizes[0])), parts };
    });
    // Awaited by boot.js, which may come after a failure: not an unhandled rejection meanwhile.
    module.catch(() => {});
    return module;
  };
  // The stream a state needs: a pasted config's (the reader after C, then the uncommon flags'
  // part), a config's beside a seed example, a drafter or a catalog model (the reader, then the
  // examples' and the drafter's rows) or a catalog link's (the catalog links' parts after C; the
  // seed examples are theirs). Each plans any state: a key this test misses (a percent-encoded
  // one) costs waiting for a later part, never a wrong verdict.
  const has = (text, key) => new RegExp(`(?:^|[?&#])${key}=`).test(text);
  const kindFor = (text) => (!has(text, 'config') ? 'catalog' : ['example', 'draft-model', 'model'].some((key) => has(text, key)) ? 'beside' : 'config');
  // A link with a state of its own opens with it, but for a reload of this tab with other texts
  // typed (below): its stream is asked for before storage is read (the two reads took 5 to 35
  // ms at CPU / 4), and kept in that rare case too (it brings every part; asking again would
  // cost a round trip and the first part's bytes again). Not for a link planned ahead.
  let ahead = null;
  if (link.includes('=') && !Object.hasOwn(PLANNED, link)) {
    try {
      const kind = kindFor(link);
      ahead = { kind, module: compile(kind) };
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
    if (ahead) program = ahead;
    else {
      try {
        const kind = kindFor(opening);
        program = { kind, module: compile(kind) };
      } catch {
        // No fetch or no WebAssembly: boot.js says so when the app cannot start.
      }
    }
  }
  return { link, stored, typed, planned, program, compile };
})();
