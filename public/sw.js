// Headroom's service worker: the page's own files from the cache, so a repeat visit (and an
// offline one) makes no network round trip for any of them; a new build is picked up because
// this file changes with every build. It only ever fetches from its own origin.
//
// The release build writes BUILD (a hash of the page) and FILES (every file the page refers
// to) below (scripts/sw-manifest.mjs, a Trunk post-build hook). Installing fetches and keeps
// them in a cache named after the build; activating keeps the build before it (for a page of
// it still loading) and deletes older ones. The
// browser checks this file for changes on every navigation (updateViaCache: 'none'), so the
// first visit after a deploy installs the new build in the background and the next one runs it.
// Without a manifest (a development build) the worker keeps what it serves, network first.
const BUILD = 'dev';
const FILES = [];
const CACHE = `headroom-${BUILD}`;
// The verdict program is in FILES as NAME_bg.wasm, its gzip NAME_bg.wasm.gz, and the three
// streams that continue the start of the .gz the page carries (a comment at the end of its
// body): NAME_bg.wasm.tail, a catalog link's, NAME_bg.wasm.rtail, a pasted config's, and
// NAME_bg.wasm.btail, a config's beside a model, an example or a drafter. A page fetches a tail
// where the browser can decompress and compile a stream (public/early.js) and the page carries
// the head, the .gz where it does not, and the plain file elsewhere. Installing keeps the forms
// this browser's pages ask for, by the same test in the worker's scope: the tails where the page
// it fetched carries the head, else the .gz (a host whose pages lose their comments). Should a
// page's answer differ from the worker's, or the host not have published a form, a request for
// the .gz the cache lacks gets the plain file it keeps (early.js tells them apart by their first
// bytes); a request for a tail never does (the page puts its head before what it gets): it
// fails, and the page asks for the .gz.
const GZ =
  typeof DecompressionStream === 'function' &&
  typeof ReadableStream === 'function' &&
  typeof WebAssembly === 'object' &&
  typeof WebAssembly.compileStreaming === 'function';
const HEAD = '<!--headroom-head:';
// The forms to try for a file, in order: a program's .tail, then its .gz, then the plain file
// (a host that did not publish one, or an answer whose body cannot be kept: one marked with an
// encoding it does not have).
const tail = (p) => /\.[rb]?tail$/.test(p);
const plainOf = (p) => p.replace(/\.(?:[rb]?tail|gz)$/, '');
const forms = (p) => (tail(p) ? [p, `${plainOf(p)}.gz`, plainOf(p)] : p.endsWith('.gz') ? [p, plainOf(p)] : [p]);
const kept = (headed) =>
  FILES.filter((p) => {
    if (tail(p)) return GZ && headed;
    if (p.endsWith('.gz')) return GZ && !(headed && FILES.includes(`${plainOf(p)}.tail`));
    return !(GZ && FILES.includes(`${p}.gz`));
  });

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // Straight from the network: a stale HTTP cache must not pin an old file under a new build.
      // The page first: whether it carries the head says which form of that program to keep.
      let headed = false;
      if (FILES.includes('/')) {
        const page = await fetch('/', { cache: 'no-cache' });
        if (!page.ok) throw new Error(`/: ${page.status}`);
        headed = (await page.clone().text()).includes(HEAD);
        await cache.put('/', page);
      }
      await Promise.all(
        kept(headed)
          .filter((p) => p !== '/')
          .map(async (p) => {
            let why;
            for (const key of forms(p)) {
              try {
                const res = await fetch(key, { cache: 'no-cache' });
                if (!res.ok) throw new Error(`${key}: ${res.status}`);
                // Reads the whole body: one that fails to decode fails here, not in a page.
                await cache.put(key, res);
                return;
              } catch (e) {
                why = e;
              }
            }
            throw why;
          }),
      );
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      // The build before this one stays until the next deploy: a page of it that is still
      // loading gets its files from it (caches list in the order they were made).
      const builds = (await caches.keys()).filter((k) => k.startsWith('headroom-') && k !== CACHE);
      for (const key of builds.slice(0, -1)) await caches.delete(key);
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin || url.pathname === '/sw.js') return;
  // Every page URL (any query) is the same document.
  const key = req.mode === 'navigate' ? '/' : url.pathname;
  event.respondWith(
    (async () => {
      // caches.match, not caches.open: a worker that a newer build replaced must not bring its
      // deleted cache back while it still serves an open page.
      const hit =
        (await caches.match(key, { cacheName: CACHE })) ??
        (key === '/' ? undefined : await caches.match(key)) ??
        (key.endsWith('.gz') ? await caches.match(plainOf(key)) : undefined);
      if (hit && BUILD !== 'dev') return hit;
      try {
        const res = await fetch(req);
        if (res.ok && (BUILD === 'dev' || FILES.includes(key)) && (await caches.has(CACHE))) {
          const copy = res.clone();
          event.waitUntil(caches.open(CACHE).then((c) => c.put(key, copy)));
        }
        return res;
      } catch (err) {
        if (hit) return hit;
        throw err;
      }
    })(),
  );
});
