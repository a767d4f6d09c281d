// Loads the wasm app. An external module instead of Trunk's inline loader, so the page's
// Content-Security-Policy can forbid inline scripts. Then registers the service worker that
// keeps the page's own files for offline use.
const tag = document.querySelector('script[data-js][data-wasm]');
const { default: init } = await import(tag.dataset.js);
await init({ module_or_path: tag.dataset.wasm });

if ('serviceWorker' in navigator && location.protocol !== 'file:') {
  navigator.serviceWorker.register('/sw.js').catch(() => {
    // Offline use is a bonus; the page works without it.
  });
}
