// Loads the wasm app, then registers the service worker that keeps the page's own files for
// offline use. The release build puts this file and the wasm-bindgen glue in the page as one
// inline module (scripts/inline-loader.mjs, a Trunk post-build hook), allowed by its hash in the
// Content-Security-Policy; as a file of its own it imports the glue instead.
//
// The tag is `async`, but an inline module still runs in a task of its own once the parser and
// the first layout are done with the page: the verdict program's fetch starts earlier, in the
// page's first script (public/early.js), and this starts the app's wasm after it.
performance.mark('boot');

// Failures the wasm cannot report itself get the panel a Rust panic gets (src/bin/web.rs):
// a load that fails (no WebAssembly, a missing or damaged file), and an exception a browser
// API throws through the wasm, which stops the app halfway through an update. A panic's own
// trap, which follows its panel, finds the panel there and adds nothing.
function showError(title, lead, detail) {
  if (document.querySelector('[data-testid="panic-panel"]')) return;
  const panel = document.createElement('div');
  panel.className = 'panic-panel';
  panel.setAttribute('role', 'alert');
  panel.setAttribute('data-testid', 'panic-panel');
  const add = (tag, text) => {
    const el = document.createElement(tag);
    el.textContent = text;
    panel.append(el);
    return el;
  };
  add('h2', title);
  add('p', lead);
  add('pre', detail);
  add('a', 'Start over with the default scenario').setAttribute('href', '?v=1');
  const body = document.body ?? document.documentElement;
  body.insertBefore(panel, body.firstChild);
}
const describe = (e) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));
const broken = (detail) =>
  showError(
    'Headroom hit an internal error',
    'The page stopped working. Your inputs are in the address bar; reloading may help, or start over with the link below. Please report the message.',
    detail,
  );
addEventListener('error', (e) => broken(e.error ? describe(e.error) : e.message));
addEventListener('unhandledrejection', (e) => broken(describe(e.reason)));

// While the wasm loads, the shell says what the link plans, from the address alone (the app
// then shows the verdict in its place). Text only, each value cut short: a link cannot make it
// say anything but its own keys.
const describeLink = () => {
  const line = document.getElementById('shell-scenario');
  const q = new URLSearchParams(location.search);
  const v = (k) => (q.get(k) ?? '').slice(0, 80);
  const parts = [];
  if (v('example')) parts.push(`the example ${v('example')}`);
  if (v('model')) parts.push(`model ${v('model')}`);
  else if (v('config') || location.hash.includes('config')) parts.push('a pasted config.json');
  // A count only as the link writes it (gpus): how many GPUs the plan uses is the verdict's to
  // say (calc), which follows in a moment; the grid the link gives is named below.
  if (v('gpu')) parts.push(v('gpus') ? `on ${v('gpus')} x ${v('gpu')}` : `on ${v('gpu')}`);
  else if (v('gpus')) parts.push(`on ${v('gpus')} GPUs`);
  const grid = ['tp', 'pp', 'dp'].filter((k) => v(k)).map((k) => `${k.toUpperCase()}=${v(k)}`);
  if (grid.length) parts.push(grid.join(' x '));
  if (v('vllm')) parts.push(`vLLM ${v('vllm')}`);
  if (line) {
    line.textContent = `${parts.length ? `Planning ${parts.join(', ')}` : 'Planning the default scenario'}: the page's program is loading; the verdict and every figure follow in a moment.`;
  }
};
// The shell parsed whole: the parser has gone past its end (#shell's next sibling is there),
// or is done with the page. Not DOMContentLoaded: the page ends with the start of the verdict
// program (a comment of about 67 KB of base64, scripts/inline-loader.mjs), which on slow 4G
// arrives about 250 ms after the shell.
let shellParsed;
const shellReady = () =>
  (shellParsed ??= new Promise((resolve) => {
    const done = () => document.readyState !== 'loading' || document.getElementById('shell')?.nextSibling != null;
    if (done()) return resolve();
    const watch = new MutationObserver(() => {
      if (!done()) return;
      watch.disconnect();
      resolve();
    });
    watch.observe(document, { childList: true, subtree: true });
    document.addEventListener(
      'DOMContentLoaded',
      () => {
        watch.disconnect();
        resolve();
      },
      { once: true },
    );
  }));
// This module may run before the body is parsed (it is async): then once the shell is.
shellReady().then(() => {
  try {
    describeLink();
  } catch {
    // The shell's own line stays.
  }
});

// The first verdict, before the app: a small verdict program (src/bin/verdict.rs, the core's
// own planner and words; its glue is `headroomVerdictGlue` in this inline module) plans the
// page's opening state and its words go into the shell as text. It comes in six parts
// (scripts/split-verdict.mjs): C, what every common link runs, B the examples' builders and
// their rows, K the other rows, R the config.json reader, V the uncommon flags and the refused
// inputs, X the rest. The page's first script (public/early.js, inline before this module) read
// the opening state, and started fetching and compiling the stream it needs (C, B, K then V; C,
// R then V; or C, R then B), if any: a link planned at build time needs none.
// Nothing is preloaded, and the app's wasm is fetched once the verdict's has arrived, so the two
// do not share the bandwidth. Without it (a development build, a failure) the shell waits for
// the app.
const domReady = () =>
  document.readyState === 'loading'
    ? new Promise((resolve) => document.addEventListener('DOMContentLoaded', resolve, { once: true }))
    : Promise.resolve();
const paintVerdict = (v) => {
  const shell = document.getElementById('shell');
  const banner = document.getElementById('shell-verdict');
  if (!shell || !banner || !Array.isArray(v) || v.length < 5) return;
  const [cls, headline, sub, warn, unit] = v;
  banner.className = cls;
  const lines = banner.querySelectorAll('p');
  lines[0].textContent = headline;
  lines[1].textContent = sub;
  lines[2].textContent = warn;
  // The app's button goes to the input at fault when one is ("Go to ..."): it brings its own.
  if (cls.includes('invalid')) banner.querySelector('button')?.remove();
  const radio = shell.querySelector(`input[name="unit"][data-testid="${unit}"]`);
  if (radio) radio.checked = true;
  for (let i = 5; i + 2 < v.length; i += 3) {
    const dd = shell.querySelector(`dd[data-testid="${v[i]}"]`);
    if (!dd) continue;
    dd.textContent = v[i + 1];
    const badge = dd.previousElementSibling?.querySelector('.badge');
    if (badge) {
      badge.className = v[i + 2] ? `badge ${v[i + 2]}` : 'badge';
      badge.textContent = v[i + 2];
    }
  }
  performance.mark('first-verdict');
};
const early = typeof headroomEarly === 'object' && headroomEarly !== null ? headroomEarly : null;
// What a placeholder of the program's first part throws (scripts/split-verdict.mjs): the run
// needs a function of a part not linked yet.
const needsRest = new Error('the verdict program needs another part');
// The program's first part, instantiated with its own instance of the glue, with the parts in
// `modules` linked to it (each fills the first's function table where its placeholders were).
const linked = async (program, modules) => {
  const glue = headroomVerdictGlue();
  const imports = glue.imports();
  // The import modules scripts/split-verdict.mjs names (NS): p, the first part's placeholders;
  // c, the first part's exports, in the later parts.
  imports.p = new Proxy({}, { get: () => () => { throw needsRest; } });
  const instance = await WebAssembly.instantiate(program.module, imports);
  for (const m of modules) await WebAssembly.instantiate(m, { c: instance.exports });
  glue.finalize(instance, program.module);
  return glue;
};
// The program (early.compile's promise), then a function that runs it on the opening state.
// Each run its own instance of the glue; once done, it and its linear memory (about 1.3 MB) may
// be collected. The run needs the first part (C) and the stream's second (B for a catalog link,
// then K; R for a pasted config, then V with an uncommon flag; R for a config beside a model, an
// example or a drafter, then B: of the build's check states, 4 catalog ones and 2 config ones
// are planned by C alone), so it starts once both are in; a run that calls into a part not
// linked (a placeholder throws) runs again once the stream's next part is in, on a fresh
// instance with it linked too (the throw left the first one's stack and heap halfway): the
// answer is the whole program's. While C waits for the second part's bytes, it plans the
// default page's state, whose answer is dropped: V8 compiles a function on its first call, for
// every instance of the module, so the planner's functions the link then calls are compiled
// while those bytes arrive (not when they are in already: on a fast link that run would only
// delay the verdict).
const verdictRun = (compiled) => async () => {
  const program = await compiled;
  const plan = (glue) => glue.first_verdict(early.link, early.stored, early.typed);
  if (!program.parts[0].arrived) {
    performance.mark('verdict-warm');
    try {
      (await linked(program, [])).first_verdict('?v=1', undefined, undefined);
    } catch {
      // A function of another part: what ran is compiled all the same.
    }
  }
  const modules = [];
  for (let n = 0; ; n++) {
    modules.push(await program.parts[n].module);
    performance.mark(`verdict-part-${program.parts[n].name}`);
    try {
      return plan(await linked(program, modules));
    } catch (e) {
      if (e !== needsRest || n + 1 === program.parts.length) throw e;
    }
  }
};

try {
  const tag = document.querySelector('script[data-wasm]');
  const url = tag.dataset.wasm;
  // The first verdict, painted once planned; never rejects (a trap in the verdict program leaves
  // the shell's own words, and the app follows).
  const show = async (run) => {
    try {
      const v = await run();
      if (Array.isArray(v) && v.length > 0) {
        await shellReady();
        paintVerdict(v);
      }
    } catch {
      // The shell's own words stay; the app paints the verdict itself.
    }
  };
  let shown = Promise.resolve();
  if (early?.planned) {
    // Once the shell is parsed whole.
    const planned = early.planned;
    shellReady().then(() => paintVerdict(planned));
  } else if (early?.program && typeof headroomVerdictGlue === 'function') {
    try {
      // Planned as soon as the first part is compiled; the app's wasm comes after the rest of
      // the program's bytes.
      const program = await early.program.module;
      shown = show(verdictRun(early.program.module));
      await Promise.allSettled(program.parts.map((p) => p.module));
    } catch {
      // The app paints the verdict itself.
    }
  }
  // The rest of the page's rules (page.css; the first paint's are inline in the page), fetched
  // beside the app's wasm, after the first verdict's program: the app starts once they are in
  // (or failed to come: the page then works without them rather than not at all).
  const css = tag.dataset.css
    ? new Promise((resolve) => {
        const sheet = document.createElement('link');
        sheet.rel = 'stylesheet';
        sheet.href = tag.dataset.css;
        if (tag.dataset.cssIntegrity) sheet.integrity = tag.dataset.cssIntegrity;
        sheet.addEventListener('load', resolve, { once: true });
        sheet.addEventListener('error', resolve, { once: true });
        document.head.append(sheet);
      })
    : Promise.resolve();
  // A server that does not send application/wasm makes compileStreaming refuse, and an older
  // browser has none; the glue then fetches and compiles it the slow way.
  const module = typeof WebAssembly.compileStreaming === 'function' ? WebAssembly.compileStreaming(fetch(url)).catch(() => url) : Promise.resolve(url);
  // __wbg_init is the glue's, when both are one inline module (scripts/inline-loader.mjs);
  // else its file comes beside the wasm.
  const glue = typeof __wbg_init === 'function' ? Promise.resolve(__wbg_init) : import(tag.dataset.js).then((m) => m.default);
  glue.catch(() => {}); // reported below when awaited, not as an unhandled rejection meanwhile
  await shown;
  const init = await glue;
  performance.mark('js');
  const compiled = await module;
  performance.mark('compiled');
  await domReady();
  await css;
  await init({ module_or_path: compiled });
  performance.mark('init-end');
} catch (e) {
  // The shell's banner and figures promise a page that is not coming.
  for (const id of ['shell-verdict', 'shell-figures']) document.getElementById(id)?.remove();
  showError(
    'Headroom could not start',
    'The page could not load or start its WebAssembly program. Headroom needs a browser with WebAssembly (any current one); if this persists, reload, or report the message.',
    describe(e),
  );
}

if ('serviceWorker' in navigator && location.protocol !== 'file:') {
  // updateViaCache 'none': the update check of sw.js never takes the HTTP cache's copy, so a
  // deploy is seen on the next navigation.
  navigator.serviceWorker.register('/sw.js', { updateViaCache: 'none' }).catch(() => {
    // Offline use is a bonus; the page works without it.
  });
}
