// Loads the wasm app. An external module instead of Trunk's inline loader, so the page's
// Content-Security-Policy can forbid inline scripts. Then registers the service worker that
// keeps the page's own files for offline use.
//
// The tag is `async`: this runs as soon as it arrives, without waiting for the stylesheet or
// the end of parsing, and starts compiling the wasm (already preloaded) while the JS glue
// loads.
performance.mark('boot');
const tag = document.querySelector('script[data-js][data-wasm]');
const url = tag.dataset.wasm;
// A server that does not send application/wasm makes compileStreaming refuse; the glue then
// fetches and compiles it the slow way.
const module = WebAssembly.compileStreaming(fetch(url)).catch(() => url);
const { default: init } = await import(tag.dataset.js);
performance.mark('js');
const compiled = await module;
performance.mark('compiled');
if (document.readyState === 'loading') {
  await new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve, { once: true }));
}
await init({ module_or_path: compiled });
performance.mark('init-end');

if ('serviceWorker' in navigator && location.protocol !== 'file:') {
  navigator.serviceWorker.register('/sw.js').catch(() => {
    // Offline use is a bonus; the page works without it.
  });
}
