// Headroom's service worker: keeps the page's own files so it works offline once loaded.
// Network first (a new release is picked up at once), the cache when the network fails.
// It only ever fetches from its own origin: the page requests nothing else.
const CACHE = 'headroom-v1';

// The files a page refers to: the hashed file names are in the page itself.
const filesOf = (html) => new Set([...html.matchAll(/(?:href|src|data-js|data-wasm)="(\/[^"]*)"/g)].map((m) => m[1]));

// Drops what the current page no longer refers to (a release's hashed wasm, JS and CSS are
// replaced by the next one's), so the cache holds one release.
async function prune(cache, html) {
  const keep = filesOf(html);
  keep.add('/');
  for (const req of await cache.keys()) {
    if (!keep.has(new URL(req.url).pathname)) await cache.delete(req);
  }
}

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      const res = await fetch('/', { cache: 'no-cache' });
      await cache.put('/', res.clone());
      const html = await res.text();
      await Promise.all(
        [...filesOf(html)].map((p) => fetch(p).then((r) => (r.ok ? cache.put(p, r) : null)).catch(() => null)),
      );
      await prune(cache, html);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) {
        if (key !== CACHE) await caches.delete(key);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const req = event.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== self.location.origin) return;
  // Every page URL (any query) is the same document.
  const key = req.mode === 'navigate' ? '/' : url.pathname;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      try {
        const res = await fetch(req);
        if (res.ok) {
          cache.put(key, res.clone());
          // A fresh page names this release's files: the previous release's go.
          if (key === '/') event.waitUntil(res.clone().text().then((html) => prune(cache, html)));
        }
        return res;
      } catch (err) {
        const hit = await cache.match(key);
        if (hit) return hit;
        throw err;
      }
    })(),
  );
});
