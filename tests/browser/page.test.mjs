// The page: verdict and chart on first load, inputs that change the plan, URL state that
// survives a reload, hostile URLs, and a page that never leaves its origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, goto, assertClean, text, number, changed, setInput, BASE_URL, reveal } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

test('the default page renders a verdict and a per-rank chart', async () => {
  const { context, page, problems } = await open(browser, '/');
  const verdict = await text(page, 'verdict');
  assert.match(verdict, /^(Starts|Fails at)/);
  assert.equal(await page.locator('[data-testid="rank-chart"] .svg > svg').count(), 1);
  assert.equal(await page.locator('[data-testid="rank-bar-0"]').count(), 1);
  assert.ok((await page.locator('[data-testid="rank-bar-0"] rect.hit').count()) >= 3);
  assert.ok((await number(page, 'kv-cache-tokens')) > 0);
  assert.ok((await number(page, 'max-concurrency')) > 0);
  for (const id of ['ledger', 'vllm-log', 'copy-link', 'len-sweep', 'pool-sweep', 'examples', 'demand', 'full-length-requests']) {
    assert.equal(await page.locator(`[data-testid="${id}"]`).count(), 1, id);
  }
  assert.match(await text(page, 'vllm-log'), /Model loading took/);
  // Every input is labelled.
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea')]
      .filter((el) => !(el.labels && el.labels.length) && !el.closest('label'))
      .map((el) => el.dataset.testid || el.name),
  );
  assert.deepEqual(unlabelled, []);
  assertClean(problems);
  await context.close();
});

/** The CSP source that allows an inline element with this text: `'sha256-<base64>'`. */
async function cspHash(page, text) {
  const digest = await page.evaluate(async (t) => {
    const d = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(t));
    return btoa(String.fromCharCode(...new Uint8Array(d)));
  }, text);
  return `'sha256-${digest}'`;
}

test('a strict Content-Security-Policy: two hashed inline scripts and one hashed inline style, nothing else inline, no violations', async () => {
  const { context, page, problems } = await open(browser, '/?v=1');
  await context.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));
  });
  await goto(page, '/?v=1');
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  const directives = Object.fromEntries(csp.split(';').map((d) => d.trim().split(/\s+/)).map(([k, ...v]) => [k, v]));
  assert.deepEqual(directives['default-src'], ["'self'"]);
  assert.deepEqual(directives['object-src'], ["'none'"]);
  assert.deepEqual(directives['base-uri'], ["'none'"]);
  // The first paint's rules are the one inline style, allowed by its own hash; no inline
  // style attributes ('unsafe-hashes' or 'unsafe-inline' would allow them).
  const styleSrc = directives['style-src'];
  assert.equal(styleSrc[0], "'self'");
  assert.equal(styleSrc.length, 2, styleSrc.join(' '));
  const styles = await page.evaluate(() => [...document.querySelectorAll('style')].map((s) => s.textContent));
  assert.equal(styles.length, 1);
  assert.equal(styleSrc[1], await cspHash(page, styles[0]));
  assert.equal(await page.locator('[style]').count(), 0, 'no inline style attributes');
  const scriptSrc = directives['script-src'];
  // 'wasm-unsafe-eval' lets WebAssembly compile; it allows no JavaScript eval.
  assert.ok(!scriptSrc.some((s) => /^'unsafe-(inline|eval|hashes)'$|^'strict-dynamic'$|^\*$|^[a-z-]+:/.test(s)), scriptSrc.join(' '));
  const hashes = scriptSrc.filter((s) => s.startsWith("'sha256-"));
  assert.equal(hashes.length, 2, scriptSrc.join(' '));
  // The two inline scripts are the page's first script (public/early.js: the opening state and
  // the verdict program's fetch) and the loader (the verdict program's glue and boot.js), each
  // allowed by its own hash.
  const inline = await page.evaluate(() => [...document.querySelectorAll('script:not([src])')].map((s) => [s.type, s.textContent]));
  assert.deepEqual(
    inline.map(([type, t]) => [type, t.includes('var headroomEarly'), t.includes('first_verdict')]),
    [
      ['', true, false],
      ['module', false, true],
    ],
  );
  assert.deepEqual(hashes, [await cspHash(page, inline[0][1]), await cspHash(page, inline[1][1])]);
  // The app's glue is a module the loader imports from the page's origin, not a script tag.
  assert.equal(await page.locator('script[src]').count(), 0, 'the loader is inline');
  assert.match(await page.getAttribute('script[data-wasm]', 'data-js'), /^\/headroom-web-[0-9a-f]+\.js$/);
  // Both scripts come after the CSP (a meta CSP governs only what follows it), the first one
  // first, and they order the wasm fetches themselves (the verdict program's, then the app's):
  // no preload shares the bandwidth.
  const order = await page.evaluate(() => {
    const els = [...document.head.children];
    return ['meta[http-equiv="Content-Security-Policy"]', 'script:not([type])', 'script[data-wasm]'].map((sel) => els.findIndex((e) => e.matches(sel)));
  });
  assert.ok(order[0] >= 0 && order[0] < order[1] && order[1] < order[2], `head order ${order}`);
  assert.equal(await page.locator('link[rel=preload]').count(), 0);
  await setInput(page, 'gpu-memory-utilization', '0.8');
  await page.waitForFunction(() => /[?&]util=0\.8(&|$)/.test(location.search));
  assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);
  assertClean(problems);
  await context.close();
});

test('changing TP changes the per-rank figures and the chart', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct');
  const weights0 = await text(page, 'rank-0-weights');
  const pool0 = await text(page, 'kv-pool');
  assert.equal(await page.locator('[data-testid^="rank-bar-"]').count(), 1);
  await setInput(page, 'tensor-parallel-size', '4');
  await changed(page, 'rank-0-weights', weights0);
  assert.equal(await page.locator('[data-testid^="rank-bar-"]').count(), 4);
  assert.notEqual(await text(page, 'kv-pool'), pool0);
  const w4 = await number(page, 'rank-0-weights');
  assert.ok(w4 < Number(weights0.match(/[\d.]+/)[0]), 'TP=4 holds less per rank');
  await page.waitForFunction(() => /[?&]tp=4(&|$)/.test(location.search));
  assertClean(problems);
  await context.close();
});

test('a value the core rejects is flagged at its field; the rest keeps working', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-8b-instruct');
  await setInput(page, 'tensor-parallel-size', '3');
  const err = page.locator('#tensor-parallel-size-err');
  await err.filter({ hasText: /\S/ }).waitFor({ timeout: 10_000 });
  assert.match(await err.innerText(), /tensor-parallel-size|attention heads|divide/i);
  assert.match(await text(page, 'verdict'), /Cannot plan/);
  assert.match(await text(page, 'verdict'), /figures below are from the last valid inputs; fix tensor-parallel-size\./);
  assert.equal(await page.locator('[data-testid="rank-chart"] .svg > svg').count(), 1);
  // A text that is not a number is flagged too, and the page still plans with the default.
  await setInput(page, 'tensor-parallel-size', 'four');
  await page.locator('#tensor-parallel-size-err').filter({ hasText: /not a count|four/ }).waitFor();
  await setInput(page, 'gpu-memory-utilization', '0.8');
  // The input in error comes first, never under a green banner; the plan with its default follows.
  await page.waitForFunction(() => /^Fix --tensor-parallel-size: /.test(document.querySelector('[data-testid=verdict-headline]').innerText));
  assert.equal(await page.getAttribute('[data-testid=verdict]', 'class'), 'verdict invalid');
  assert.match(await text(page, 'verdict'), /With its default instead, the plan reads: (Starts|Fails at)/);
  assert.match(await text(page, 'verdict'), /These figures use the default for tensor-parallel-size/);
  await setInput(page, 'tensor-parallel-size', '2');
  await page.locator('#tensor-parallel-size-err:empty').waitFor({ state: 'attached' });
  await page.waitForFunction(() => /^(Starts|Fails at)/.test(document.querySelector('[data-testid=verdict-headline]').innerText));
  assertClean(problems);
  await context.close();
});

test('an invalid link opened fresh says there are no figures yet, and names the field', async () => {
  const { context, page, problems } = await open(browser, '/?tp=3');
  const verdict = await text(page, 'verdict');
  assert.match(verdict, /^Cannot plan this: tensor-parallel-size 3/);
  assert.match(verdict, /No figures until the inputs are valid; fix tensor-parallel-size\./);
  assert.doesNotMatch(verdict, /last valid/);
  assert.equal(await text(page, 'kv-pool'), '—');
  assertClean(problems);
  await context.close();
});

test('inputs live in the URL: reload restores the same state', async () => {
  const { context, page, problems } = await open(browser, '/');
  await setInput(page, 'model', 'qwen3-32b');
  await setInput(page, 'tensor-parallel-size', '2');
  await setInput(page, 'gpu-memory-utilization', '0.85');
  await setInput(page, 'max-model-len', '32k');
  await page.selectOption('[data-testid="kv-cache-dtype"]', 'fp8');
  await reveal(page, 'enforce-eager');
  await page.check('[data-testid="enforce-eager"]');
  await page.check('[data-testid="unit-gb"]');
  await page.waitForFunction(() => location.search.includes('unit=gb') && location.search.includes('eager=true'));
  const url = page.url();
  assert.match(url, /v=1/);
  assert.match(url, /max-model-len=32k/);
  const figures = {};
  for (const id of ['verdict', 'kv-cache-tokens', 'max-concurrency', 'kv-pool', 'demand', 'rank-1-weights']) {
    figures[id] = await text(page, id);
  }
  assert.match(figures['kv-pool'], / GB$/);
  await page.reload();
  // The app, not only the shell's first verdict: the figures below are the app's.
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assert.equal(page.url(), url);
  for (const [id, v] of Object.entries(figures)) assert.equal(await text(page, id), v, id);
  assert.equal(await page.inputValue('[data-testid="tensor-parallel-size"]'), '2');
  assert.equal(await page.inputValue('[data-testid="max-model-len"]'), '32k');
  assert.equal(await page.inputValue('[data-testid="kv-cache-dtype"]'), 'fp8');
  assert.ok(await page.isChecked('[data-testid="enforce-eager"]'));
  // Without URL state, the last state comes back from local storage.
  await goto(page, '/');
  assert.equal(await page.inputValue('[data-testid="tensor-parallel-size"]'), '2');
  assert.equal(await text(page, 'kv-cache-tokens'), figures['kv-cache-tokens']);
  // Unchecking a flag takes its key out of the URL (false is vLLM's default), not eager=false.
  await reveal(page, 'enforce-eager');
  await page.uncheck('[data-testid="enforce-eager"]');
  await page.waitForFunction(() => !location.search.includes('eager'));
  assert.equal(await page.isChecked('[data-testid="enforce-eager"]'), false);
  assertClean(problems);
  await context.close();
});

test('a malformed or hostile URL gives a dismissible notice and a working page', async () => {
  const hostile =
    '/?v=9&tp=abc&util=2&%3Cscript%3Ealert(1)%3C%2Fscript%3E=1&kv-bytes=%ZZ' +
    '&model=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E&tp=2&max-model-len=99999999999999999999999' +
    '&config=!!!&pp=2';
  const { context, page, problems } = await open(browser, hostile);
  const notice = page.locator('[data-testid="url-notice"]');
  await notice.waitFor();
  const items = await notice.locator('li').allInnerTexts();
  assert.ok(items.length >= 7, items.join('\n'));
  assert.ok(items.some((i) => i.startsWith('<script>')), 'the hostile key is shown as text');
  // The page's two inline scripts are in the head: its first script (public/early.js) and its
  // loader (data-wasm); any other is injected.
  assert.equal(await page.locator('img[src=x], body script').count(), 0, 'nothing hostile was parsed as HTML');
  const headScripts = await page.evaluate(() => [...document.querySelectorAll('head script:not([data-wasm])')].map((s) => s.textContent.slice(0, 18)));
  assert.deepEqual(headScripts, ['var headroomEarly='], 'nothing hostile was parsed as HTML');
  assert.match(await text(page, 'verdict'), /^(Starts|Fails at)/);
  assert.equal(await page.inputValue('[data-testid="pipeline-parallel-size"]'), '2');
  assert.equal(await page.locator('[data-testid="rank-chart"] .svg > svg').count(), 1);
  await page.click('[data-testid="dismiss-notice"]');
  assert.equal(await notice.count(), 0);
  // The URL now holds only what was used.
  await page.waitForFunction(() => !location.search.includes('script'));
  assert.match(page.url(), /\?v=1&pp=2$/);
  assertClean(problems);
  await context.close();
});

test('the URL notice shows invisible and bidi characters as escapes', async () => {
  const { context, page, problems } = await open(browser, '/?%E2%80%AE=1&x%E2%81%A6y%E2%80%8F=2');
  const notice = page.locator('[data-testid="url-notice"]');
  await notice.waitFor();
  const shown = await notice.innerText();
  assert.match(shown, /\\u\{202e\}: unknown/, shown);
  assert.match(shown, /x\\u\{2066\}y\\u\{200f\}/, shown);
  assert.doesNotMatch(shown, /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u0000-\u0009\u000b-\u001f\u007f-\u009f]/u);
  assertClean(problems);
  await context.close();
});

test('the info line follows a redrawn chart: new figures for the same shape, never stale ones', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-8b-instruct');
  const pool = '[data-testid="rank-bar-0"] rect.hit[data-term="kv_pool"]';
  await page.focus(pool);
  const before = await text(page, 'chart-info');
  assert.match(before, /KV pool/);
  await setInput(page, 'gpu-memory-utilization', '0.5');
  await changed(page, 'chart-info', before);
  const after = await text(page, 'chart-info');
  assert.equal(after, await page.locator(`${pool} title`).textContent(), 'the redrawn shape');
  // The GiB/GB toggle redraws it in the other unit.
  await page.click('[data-testid="unit-gb"]');
  await changed(page, 'chart-info', after);
  assert.match(await text(page, 'chart-info'), / GB /);
  // A new segment before it (a drafter) shifts the shapes: the line and the keyboard focus
  // stay on the same term, not the same place.
  const slack = '[data-testid="rank-bar-0"] rect.hit[data-term="kv_rounding_slack"]';
  await reveal(page, 'speculative-config');
  await page.focus(slack);
  const unused = await text(page, 'chart-info');
  assert.match(unused, /unused by the pool/);
  await page.selectOption('[data-testid="speculative-config"]', 'eagle');
  await page.waitForSelector('[data-testid="rank-bar-0"] rect.hit[data-term="drafter"]');
  await page.waitForFunction((u) => document.querySelector('[data-testid="chart-info"]').textContent !== u, unused);
  assert.match(await text(page, 'chart-info'), /unused by the pool/);
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.term), 'kv_rounding_slack');
  assertClean(problems);
  await context.close();
});


test('a chart whose shapes stay the same ones is moved in place; new shapes redraw it whole', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=qwen3-32b&tp=2&gpu=a100-sxm4-80gb');
  const pool = '[data-testid="rank-bar-1"] rect.hit[data-term="kv_pool"]';
  await page.focus(pool);
  // Mark the nodes: an in-place redraw keeps them, a whole one replaces them.
  await page.evaluate((sel) => {
    window.__pool = document.querySelector(sel);
    window.__svg = document.querySelector('#rank-svg > svg');
  }, pool);
  const before = await page.locator(`${pool} title`).textContent();
  const height = await page.locator(pool).getAttribute('height');
  // Typed by a script, so the keyboard focus stays on the chart's shape.
  await page.evaluate(() => {
    const input = document.querySelector('[data-testid="gpu-memory-utilization"]');
    input.value = '0.8';
    input.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await page.waitForFunction((b) => document.querySelector('[data-testid="rank-bar-1"] rect.hit[data-term="kv_pool"] title').textContent !== b, before);
  const moved = await page.evaluate((sel) => ({
    same: document.querySelector(sel) === window.__pool && document.querySelector('#rank-svg > svg') === window.__svg,
    focused: document.activeElement === window.__pool,
  }), pool);
  assert.deepEqual(moved, { same: true, focused: true }, 'the same nodes, the focus kept');
  assert.notEqual(await page.locator(pool).getAttribute('height'), height, 'a smaller pool');
  // The node holds what a fresh page draws for the same link, attribute for attribute.
  const live = await page.evaluate(() => document.querySelector('#rank-svg').innerHTML);
  const fresh = await context.newPage();
  await goto(fresh, '/?v=1&model=qwen3-32b&tp=2&gpu=a100-sxm4-80gb&util=0.8');
  await fresh.waitForFunction(() => document.querySelector('#rank-svg > svg'));
  const drawn = await fresh.evaluate(() => document.querySelector('#rank-svg').innerHTML);
  // The roving Tab stop is the one thing the keyboard moved.
  const stops = (s) => s.replace(/tabindex="-?\d"/g, '');
  assert.equal(stops(live), stops(drawn));
  await fresh.close();
  // Four ranks are new shapes: drawn whole.
  await setInput(page, 'tensor-parallel-size', '4');
  await page.waitForSelector('[data-testid="rank-bar-3"]');
  assert.equal(await page.evaluate(() => document.querySelector('#rank-svg > svg') === window.__svg), false);
  assertClean(problems);
  await context.close();
});
test('dismissing the URL notice hands the keyboard to the verdict', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=qwen3-8b&foo=1');
  await page.focus('[data-testid="dismiss-notice"]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => !document.querySelector('[data-testid="url-notice"]'));
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), 'verdict');
  assertClean(problems);
  await context.close();
});

test('chart segments explain themselves on focus, and a table stands in for screen readers', async () => {
  const { context, page, problems } = await open(browser, '/');
  await page.focus('[data-testid="rank-bar-0"] rect.hit[data-term="weights"]');
  const info = await text(page, 'chart-info');
  assert.match(info, /Weights/);
  assert.match(info, /\d{1,3}(,\d{3})+ B\)/, 'exact bytes');
  assert.match(info, /\[(exact|estimate|measured)/, 'provenance');
  assert.equal(await page.locator('[data-testid="rank-table"] tbody tr').count(), 1);
  const title = await page.locator('[data-testid="rank-bar-0"] rect.hit title').first().textContent();
  assert.ok(title.length > 10);
  // Keyboard: the chart is one Tab stop however many ranks it has; the arrow keys walk it.
  await goto(page, '/?v=1&tp=8&model=llama-3.1-70b-instruct');
  const hits = page.locator('[data-testid="rank-chart"] .hit');
  assert.ok((await hits.count()) >= 8 * 4, 'eight bars of several shapes');
  assert.equal(await page.locator('[data-testid="rank-chart"] .hit[tabindex="0"]').count(), 1);
  await page.focus('[data-testid="unit-gb"]');
  let tabs = 0;
  while (!(await page.evaluate(() => document.activeElement?.classList.contains('hit'))) && tabs < 200) {
    await page.keyboard.press('Tab');
    tabs += 1;
  }
  const first = await text(page, 'chart-info');
  assert.match(first, /^rank 0: /, 'Tab lands on the first shape');
  // The arrows move as the eye does: Up to the segment above in the same bar, Down back,
  // Right to the same segment of the next bar.
  await page.keyboard.press('ArrowUp');
  const above = await text(page, 'chart-info');
  assert.match(above, /^rank 0: /, 'ArrowUp stays in the bar');
  assert.notEqual(above, first, 'ArrowUp moves to the segment above and explains it');
  await page.keyboard.press('ArrowDown');
  assert.equal(await text(page, 'chart-info'), first, 'ArrowDown comes back');
  await page.keyboard.press('ArrowRight');
  const second = await text(page, 'chart-info');
  assert.match(second, /^rank 1: /, 'ArrowRight moves to the next bar');
  assert.equal(second.split(':')[1], first.split(':')[1], 'the same term in the next bar');
  await page.keyboard.press('End');
  assert.match(await text(page, 'chart-info'), /^rank 7: /, 'End reaches the last bar');
  assert.equal(await page.locator('[data-testid="rank-chart"] .hit[tabindex="0"]').count(), 1, 'still one Tab stop');
  // One more Tab leaves the chart.
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement?.closest('[data-testid="rank-chart"]') === null || !document.activeElement.classList.contains('hit')), true);
  assertClean(problems);
  await context.close();
});

test('the ledger can be copied as Markdown and the link copied', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&tp=2', {
    context: { permissions: ['clipboard-read', 'clipboard-write'] },
  });
  await page.click('[data-testid="copy-markdown"]');
  await page.locator('[data-testid="ledger"] [role=status]').filter({ hasText: /Copied|refused/ }).waitFor();
  const md = await page.evaluate(() => navigator.clipboard.readText().catch(() => ''));
  assert.ok(md, 'the clipboard holds the ledger');
  // It says what it is the ledger of: the verdict, the model, the GPU, TP x PP and the link.
  const headline = await text(page, 'verdict-headline');
  assert.ok(md.startsWith(`# Headroom ledger\n\n**${headline}**\n\n`), md.slice(0, 200));
  assert.match(md, /\n- Model: Llama 3\.1 8B Instruct\n- GPU: NVIDIA H100 SXM 80GB\n- TP x PP: 2 x 1\n/);
  assert.ok(md.includes(`\n- Scenario: <${new URL('/?v=1&tp=2', BASE_URL).href}>\n\n## ranks 0–1 `), md.slice(0, 400));
  assert.match(md, /\| Weights \(Model loading took\) \|/);
  await page.click('[data-testid="copy-link"]');
  const link = await page.evaluate(() => navigator.clipboard.readText().catch(() => ''));
  if (link) assert.equal(link, page.url());
  assertClean(problems);
  await context.close();
});

test('a pasted config.json is a custom model that lives in the URL', async () => {
  const config = JSON.stringify({
    architectures: ['LlamaForCausalLM'],
    model_type: 'llama',
    hidden_size: 4096,
    intermediate_size: 14336,
    num_attention_heads: 32,
    num_hidden_layers: 24,
    num_key_value_heads: 8,
    vocab_size: 128256,
    max_position_embeddings: 65536,
    torch_dtype: 'bfloat16',
    tie_word_embeddings: false,
  });
  const { context, page, problems } = await open(browser, '/?v=1');
  const tokens = await text(page, 'kv-cache-tokens');
  await page.fill('[data-testid="config"]', config);
  await changed(page, 'kv-cache-tokens', tokens);
  await page.waitForFunction(() => location.search.includes('config='));
  assert.match(await text(page, 'verdict'), /65,536-token/);
  const custom = await text(page, 'kv-cache-tokens');
  await page.reload();
  // The app, not only the shell's first verdict: the figures below are the app's.
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  assert.equal(await text(page, 'kv-cache-tokens'), custom);
  assert.equal(await page.inputValue('[data-testid="config"]'), config);
  // A config the parser refuses is flagged at its field, and stops the plan: the figures
  // stay the pasted model's, not the catalog default's under a green verdict.
  await page.fill('[data-testid="config"]', '{"num_hidden_layers": "many"}');
  await page.locator('#config-err').filter({ hasText: /\S/ }).waitFor();
  assert.match(await text(page, 'verdict-headline'), /^Cannot plan this/);
  assert.equal(await text(page, 'kv-cache-tokens'), custom);
  assertClean(problems);
  await context.close();
});

test('a panic shows the error panel, not a dead page', async () => {
  const { context, page, problems } = await open(browser, null);
  // The first <header> the app asks for fails, once: the view code unwraps DOM calls, so the
  // wasm panics while mounting, and the panel (built with createElement too) must appear.
  await page.addInitScript(() => {
    const original = Document.prototype.createElement;
    Document.prototype.createElement = function (tag, ...rest) {
      if (String(tag).toLowerCase() === 'header') {
        Document.prototype.createElement = original;
        throw new Error('createElement refused by the test');
      }
      return original.call(this, tag, ...rest);
    };
  });
  await page.goto(new URL('/?v=1', BASE_URL).href);
  const panel = page.locator('[data-testid="panic-panel"]');
  await panel.waitFor({ timeout: 10_000 });
  assert.match(await panel.innerText(), /internal error/);
  assert.match(await panel.locator('pre').innerText(), /panicked|createElement/);
  assert.equal(await panel.locator('a[href="?v=1"]').count(), 1, 'a way to start over');
  // The panel is the first thing on the page and announces itself.
  assert.equal(await page.evaluate(() => document.body.firstElementChild.dataset.testid), 'panic-panel');
  assert.equal(await panel.getAttribute('role'), 'alert');
  assert.ok(problems.console.some((m) => /panicked/.test(m)), 'the panic is logged to the console');
  await context.close();
});

test('an exception a browser API throws through the wasm shows the error panel', async () => {
  const { context, page, problems } = await open(browser, '/?v=1');
  assert.equal(await page.locator('[data-testid="panic-panel"]').count(), 0);
  // The form's handler asks the input for its data-field; that call throws, once, from inside
  // the wasm, which leaves the update half done: the page must say so.
  await page.evaluate(() => {
    const original = Element.prototype.getAttribute;
    Element.prototype.getAttribute = function (name) {
      if (name === 'data-field') {
        Element.prototype.getAttribute = original;
        throw new Error('getAttribute refused by the test');
      }
      return original.call(this, name);
    };
    const tp = document.querySelector('[data-testid="tensor-parallel-size"]');
    tp.value = '2';
    tp.dispatchEvent(new Event('input', { bubbles: true }));
  });
  const panel = page.locator('[data-testid="panic-panel"]');
  await panel.waitFor({ timeout: 10_000 });
  assert.match(await panel.innerText(), /internal error/);
  assert.match(await panel.locator('pre').innerText(), /getAttribute refused by the test/);
  assert.equal(await panel.getAttribute('role'), 'alert');
  assert.equal(await page.evaluate(() => document.body.firstElementChild.dataset.testid), 'panic-panel');
  assert.ok(problems.console.some((m) => /getAttribute refused/.test(m)), 'the exception is reported');
  await context.close();
});

test('a wasm that cannot load shows a panel that says so, not a blank page', async () => {
  const { context, page } = await open(browser, null);
  await page.route('**/*.wasm', (route) => route.fulfill({ status: 404, body: 'gone' }));
  await page.goto(new URL('/?v=1', BASE_URL).href);
  const panel = page.locator('[data-testid="panic-panel"]');
  await panel.waitFor({ timeout: 10_000 });
  assert.match(await panel.locator('h2').innerText(), /could not start/);
  assert.match(await panel.locator('pre').innerText(), /\S/);
  assert.equal(await panel.locator('a[href="?v=1"]').count(), 1);
  assert.equal(await page.locator('[data-testid="verdict"]').count(), 0);
  await context.close();
});

test('the form: checkboxes, lists, badges, sources and messages follow the state', async () => {
  const { context, page, problems } = await open(browser, '/?v=1');
  const q = (sel, f) => page.$eval(sel, f);
  // Measured-term inputs carry the provenance of the figure they would replace.
  await page.waitForFunction(() => document.querySelector('#weights-badge')?.textContent === 'estimate');
  assert.match(await q('#weights-badge', (e) => e.title), /parameter counts/);
  // The model's name and repository first, then its row and source, linked where it can be.
  assert.match(await text(page, 'model-source'), /^Llama 3\.1 8B Instruct \(meta-llama\/Llama-3\.1-8B-Instruct\)\. Catalog row llama-3\.1-8b-instruct \(retrieved \d{4}-\d\d-\d\d\): \S/);
  assert.equal(
    await page.getAttribute('[data-testid=model-source] a', 'href'),
    'https://github.com/NVIDIA/TensorRT-LLM/blob/151c21c6a0034712a71fb0352cf7c75ea07b7b5b/tests/unittest/_torch/modeling/test_modeling_llama.py',
  );
  assert.match(await text(page, 'gpu-source'), /^Total [\d,]+ B: /);
  assert.equal(await q('#gpu-default', (e) => e.textContent), 'default (NVIDIA H100 SXM 80GB)');
  // A checkbox and a list write the URL, and the controls show what the state says.
  assert.equal(await q('[data-testid=enforce-eager]', (e) => e.checked), false);
  await reveal(page, 'enforce-eager');
  await page.click('[data-testid=enforce-eager]');
  await page.waitForFunction(() => location.search.includes('eager=true'));
  assert.equal(await q('[data-testid=enforce-eager]', (e) => e.checked), true);
  await page.selectOption('[data-testid=kv-cache-dtype]', 'fp8');
  await page.waitForFunction(() => location.search.includes('kv-dtype=fp8'));
  // A bad value is flagged at its field, and cleared when fixed.
  await setInput(page, 'max-model-len', 'abc');
  await page.locator('#max-model-len-err').filter({ hasText: /not a count/ }).waitFor();
  assert.equal(await q('#max-model-len', (e) => e.getAttribute('aria-invalid')), 'true');
  assert.match(await q('#max-model-len-field', (e) => e.className), /\binvalid\b/);
  await setInput(page, 'max-model-len', '32k');
  await page.locator('#max-model-len-err:empty').waitFor({ state: 'attached' });
  assert.equal(await q('#max-model-len', (e) => e.getAttribute('aria-invalid')), 'false');
  // Picking another model moves its catalog source; a reload keeps every control.
  await setInput(page, 'model', 'qwen3-8b');
  await page.waitForFunction(() => /Catalog row qwen3-8b /.test(document.querySelector('[data-testid=model-source]').textContent));
  await page.waitForFunction(() => location.search.includes('model=qwen3-8b'));
  await page.waitForTimeout(200);
  await goto(page, page.url());
  assert.equal(await page.inputValue('[data-testid=model]'), 'qwen3-8b');
  assert.equal(await page.inputValue('[data-testid=max-model-len]'), '32k');
  assert.equal(await page.inputValue('[data-testid=kv-cache-dtype]'), 'fp8');
  assert.equal(await q('[data-testid=enforce-eager]', (e) => e.checked), true);
  assertClean(problems);
  await context.close();
});

test('every figure says how certain it is, the sweeps too', async () => {
  const { context, page, problems } = await open(browser, '/?v=1');
  const badge = (id) => page.$eval(`#fig-${id}-prov`, (e) => [e.textContent, e.title]);
  await page.waitForFunction(() => document.querySelector('#fig-kv-pool-prov')?.textContent !== '');
  // The H100's driver total is not confirmed from a reading, so the budget and the pool built
  // on it are estimates; one request's bytes and the demand are exact block arithmetic.
  for (const id of ['kv-cache-tokens', 'max-concurrency', 'full-length-requests', 'kv-pool', 'budget', 'concurrency-at-average']) {
    const [label, basis] = await badge(id);
    assert.equal(label, 'estimate', id);
    assert.match(basis, /estimate|not confirmed/, id);
  }
  for (const id of ['per-request', 'demand']) assert.deepEqual(await badge(id), ['exact', ''], id);
  // Sweep points carry it in their explanation and their table.
  assert.match(await page.locator('[data-testid="pool-sweep"] .hit title').first().textContent(), /\[estimate: /);
  assert.match(await page.locator('[data-testid="len-sweep"] .sr-only tbody tr td').last().textContent(), /^estimate$/);
  // Seed 002's pool comes from a measured ratio: measured, never exact.
  await goto(page, '/?v=1&example=s2-unified-gate');
  await page.waitForFunction(() => document.querySelector('#fig-per-request-prov')?.textContent === 'measured');
  assert.match((await badge('per-request'))[1], /002/);
  assertClean(problems);
  await context.close();
});

test('on a phone the figures come before the form, on screen and in Tab order', async () => {
  const { context, page, problems } = await open(browser, '/', { context: { viewport: { width: 390, height: 844 } } });
  // Where each block sits on screen, and whether the DOM (which Tab follows) agrees.
  const order = () =>
    page.evaluate(() => {
      const form = document.querySelector('#layout > .inputs');
      const results = document.querySelector('#layout > .results');
      return {
        domResultsFirst: !!(results.compareDocumentPosition(form) & Node.DOCUMENT_POSITION_FOLLOWING),
        seenResultsFirst: results.getBoundingClientRect().top < form.getBoundingClientRect().top,
      };
    });
  assert.deepEqual(await order(), { domResultsFirst: true, seenResultsFirst: true });
  // Tab from the last control before the layout reaches the figures before any input.
  await page.focus('[data-testid="copy-link"]');
  let inResults = false;
  for (let tabs = 0; tabs < 60; tabs += 1) {
    await page.keyboard.press('Tab');
    const where = await page.evaluate(() => document.activeElement?.closest('#layout > *')?.className ?? '');
    if (/results/.test(where)) {
      inResults = true;
      break;
    }
    assert.doesNotMatch(where, /inputs/, 'Tab reached the form before the figures');
  }
  assert.ok(inResults, 'Tab reaches the figures');
  // A wide window puts the form first again, on screen and in the DOM; narrow again, figures first.
  await page.setViewportSize({ width: 1280, height: 900 });
  await page.waitForFunction(() => document.querySelector('#layout > :not(.deploy-wrap)').classList.contains('inputs'));
  // Your own deployment sits above both on a wide screen.
  assert.ok(await page.evaluate(() => document.querySelector('#layout > *').classList.contains('deploy-wrap')));
  const wide = await order();
  assert.equal(wide.domResultsFirst, false);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.waitForFunction(() => document.querySelector('#layout > :not(.deploy-wrap)').classList.contains('results'));
  assert.deepEqual(await order(), { domResultsFirst: true, seenResultsFirst: true });
  // On a phone it comes after the figures, before the form.
  assert.ok(await page.evaluate(() => {
    const d = document.querySelector('#layout > .deploy-wrap');
    return d.previousElementSibling?.classList.contains('results') && d.nextElementSibling?.classList.contains('inputs');
  }));
  assertClean(problems);
  await context.close();
});

test('the rank chart draws what each case holds: a measured overhead, a pin above the GPU', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&example=s2-unified-gate');
  const terms = () => page.$$eval('[data-testid="rank-bar-0"] rect.hit', (rs) => rs.map((r) => r.dataset.term));
  let t = await terms();
  assert.ok(t.includes('measured_overhead'), t.join());
  for (const gone of ['activation', 'other_consumption', 'cuda_graphs', 'outside_budget']) {
    assert.ok(!t.includes(gone), `${gone} is drawn beside the measured overhead: ${t.join()}`);
  }
  // A pool pinned above what loading leaves: the verdict names the allocation, and the bar
  // has no "outside the budget" block (the pool is not sized from the budget).
  await goto(page, '/?v=1&model=llama-3.1-8b-instruct&kv-bytes=70GiB');
  assert.match(await text(page, 'verdict-headline'), /^Fails at allocating the KV cache/);
  t = await terms();
  assert.ok(t.includes('kv_pool') && !t.includes('outside_budget'), t.join());
  // The default case keeps it: the pool fills the budget.
  await goto(page, '/?v=1');
  assert.ok((await terms()).includes('outside_budget'));
  assertClean(problems);
  await context.close();
});

test('Copy link copies the inputs as they are; an example click can be undone with Back', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=qwen3-14b&tp=2', {
    context: { permissions: ['clipboard-read', 'clipboard-write'] },
  });
  // The address bar follows the inputs 150 ms late; the copied link must not.
  await setInput(page, 'max-num-seqs', '64');
  await page.click('[data-testid="copy-link"]');
  await page.locator('#link-status').filter({ hasText: /Copied|refused/ }).waitFor();
  const link = await page.evaluate(() => navigator.clipboard.readText().catch(() => ''));
  assert.ok(link, 'the clipboard holds the link');
  assert.match(link, /[?&]max-num-seqs=64(&|$)/, link);
  assert.ok(link.startsWith(new URL('/?v=1', BASE_URL).href.replace(/\?.*/, '?')), link);
  // An example replaces the scenario; Back brings the previous one back, URL and inputs.
  await page.click('[data-testid="example-s3-synthetic-tp4"]');
  await page.waitForFunction(() => location.search.includes('example=s3-synthetic-tp4'));
  await page.goBack();
  await page.waitForFunction(() => /[?&]model=qwen3-14b(&|$)/.test(location.search));
  await page.waitForFunction(() => document.querySelector('[data-testid="tensor-parallel-size"]').value === '2');
  assert.equal(await page.inputValue('[data-testid="max-num-seqs"]'), '64');
  await page.goForward();
  await page.waitForFunction(() => location.search.includes('example=s3-synthetic-tp4'));
  await page.waitForFunction(() => document.querySelector('[data-testid="tensor-parallel-size"]').value === '');
  assertClean(problems);
  await context.close();
});

test('the partition editor keeps the focus and follows the list', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&pp=3');
  await page.waitForSelector('[data-testid="pp-stage-2"]');
  // Edit a stage, Tab on: the focus lands on the next stage, not on the page.
  await page.fill('[data-testid="pp-stage-0"]', '28');
  await page.keyboard.press('Tab');
  await page.waitForFunction(() => /[?&]pp-partition=28%2C27%2C26|pp-partition=28,27,26/.test(location.search));
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.stage), '1');
  // A refused stage value does not linger once the list is typed again.
  await page.fill('[data-testid="pp-stage-2"]', '');
  await page.press('[data-testid="pp-stage-2"]', 'Enter');
  await setInput(page, 'pp-layer-partition', '27,27,26');
  await page.waitForFunction(() => document.querySelector('[data-testid="pp-stage-2"]').value === '26');
  assert.equal(await page.inputValue('[data-testid="pp-stage-0"]'), '27');
  assert.match(await text(page, 'pp-partition-effective'), /27, 27, 26/);
  // An invalid stage stays in its box, flagged at the field; the other stages keep what was
  // typed, and the summary gives the split the figures use.
  await page.fill('[data-testid="pp-stage-0"]', '30');
  await page.press('[data-testid="pp-stage-0"]', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="pp-layer-partition"]').value === '30,27,26');
  await page.fill('[data-testid="pp-stage-1"]', '0');
  await page.press('[data-testid="pp-stage-1"]', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-testid="pp-layer-partition"]').value === '30,0,26');
  await page.locator('#pp-layer-partition-err').filter({ hasText: /\S/ }).waitFor();
  assert.equal(await page.inputValue('[data-testid="pp-stage-0"]'), '30');
  assert.equal(await page.inputValue('[data-testid="pp-stage-1"]'), '0');
  assert.match(await text(page, 'pp-partition-effective'), /^Split in the figures: 27, 27, 26$/);
  // The boxes are marked with the field, and the verdict's button leads to a box.
  assert.equal(await page.evaluate(() => document.getElementById('pp-stages').classList.contains('invalid')), true);
  await page.click('[data-testid="verdict-goto"]');
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.stage), '0');
  // A stage follows typing, with no Enter and no blur: the list, the field's message and the
  // figures' split change while the focus stays in the box.
  await page.fill('[data-testid="pp-stage-1"]', '28');
  await page.waitForFunction(() => document.querySelector('[data-testid="pp-layer-partition"]').value === '30,28,26');
  await page.fill('[data-testid="pp-stage-0"]', '26');
  await page.waitForFunction(() => document.querySelector('[data-testid="pp-layer-partition"]').value === '26,28,26');
  await page.waitForFunction(() => /^Split in the figures: 26, 28, 26$/.test(document.querySelector('[data-testid="pp-partition-effective"]').textContent));
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.stage), '0');
  assert.equal(await page.locator('#pp-layer-partition-err').textContent(), '');
  // The boxes follow the pipeline size even while the typed list is another length: a fourth,
  // empty box appears where the list is flagged, and filling it mends the list.
  await setInput(page, 'pipeline-parallel-size', '4');
  await page.waitForSelector('[data-testid="pp-stage-3"]');
  assert.equal(await page.inputValue('[data-testid="pp-stage-3"]'), '');
  await page.locator('#pp-layer-partition-err').filter({ hasText: /\S/ }).waitFor();
  await page.fill('[data-testid="pp-stage-0"]', '20');
  await page.fill('[data-testid="pp-stage-3"]', '6');
  await page.waitForFunction(() => document.querySelector('[data-testid="pp-layer-partition"]').value === '20,28,26,6');
  await page.waitForFunction(() => document.querySelector('#pp-layer-partition-err').textContent === '');
  // One stage: no boxes.
  await setInput(page, 'pipeline-parallel-size', '1');
  await page.waitForFunction(() => !document.querySelector('[data-testid="pp-stage-0"]'));
  assertClean(problems);
  await context.close();
});

test('a GPU total given by hand: the source line says so and follows the GPU', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&gpu=l4-24gb');
  assert.match(await text(page, 'gpu-source'), /^Total 24,152,899,584 B: .*L4/);
  await setInput(page, 'gpu-memory', '30GiB');
  await page.waitForFunction(() => /^Total given: 32,212,254,720 B, in place of the catalog row's 24,152,899,584 B/.test(document.querySelector('[data-testid="gpu-source"]').textContent));
  await page.selectOption('[data-testid="gpu"]', 'a10g-24gb');
  await page.waitForFunction(() => /A10G/.test(document.querySelector('[data-testid="gpu-source"]').textContent));
  assert.match(await text(page, 'gpu-source'), /^Total given: 32,212,254,720 B/);
  // Alone (no GPU chosen), the total is a custom GPU: no catalog row to cite.
  await goto(page, '/?v=1&gpu-memory=30GiB');
  assert.equal((await text(page, 'gpu-source')).trim(), '');
  assertClean(problems);
  await context.close();
});

test('on a phone the sweeps fit the screen, their ringed point in view', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&tp=4', {
    context: { viewport: { width: 360, height: 800 } },
  });
  for (const id of ['len-svg', 'pool-svg']) {
    await page.waitForSelector(`#${id} [data-current="true"]`, { state: 'attached' });
    const seen = await page.evaluate((id) => {
      const box = document.getElementById(id);
      const ring = box.querySelector('[data-current="true"]').getBoundingClientRect();
      const view = box.getBoundingClientRect();
      const axis = box.querySelector('svg text').getBoundingClientRect();
      return {
        scrolls: box.scrollWidth > box.clientWidth,
        inside: ring.left >= view.left - 1 && ring.right <= view.right + 1,
        axis: axis.left >= view.left - 1,
      };
    }, id);
    assert.equal(seen.scrolls, false, `${id} scrolls sideways on a phone`);
    assert.ok(seen.inside, `${id}: the ringed point is in view`);
    assert.ok(seen.axis, `${id}: the y axis is in view`);
  }
  // Drawn for the phone, the sweeps need no "scroll sideways" line.
  assert.equal(await page.locator('.sweeps > .narrow-only').isVisible(), false);
  assertClean(problems);
  await context.close();
});

test('on a phone many ranks scroll, opening at the deciding rank; a few fit', async () => {
  // Eight stages are wider than a 360 px screen: the chart scrolls to the rank that decides.
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&pp=8&max-model-len=8192', {
    context: { viewport: { width: 360, height: 800 } },
  });
  await page.waitForSelector('#rank-svg [data-current="true"]', { state: 'attached' });
  await page.waitForFunction(() => {
    const box = document.getElementById('rank-svg');
    const bar = box.querySelector('[data-current="true"]').getBoundingClientRect();
    const view = box.getBoundingClientRect();
    return box.scrollWidth > box.clientWidth && bar.left >= view.left - 1 && bar.right <= view.right + 1;
  });
  assert.equal(await page.locator('[aria-labelledby="chart-h"] > .narrow-only').isVisible(), true);
  // S1's three stages fit: no scrolling, every bar and the axis on screen.
  await goto(page, '/?v=1&example=s1-three-cards');
  await page.waitForSelector('#rank-svg [data-testid="rank-bar-2"]', { state: 'attached' });
  const fit = await page.evaluate(() => {
    const box = document.getElementById('rank-svg');
    const view = box.getBoundingClientRect();
    const bar = box.querySelector('[data-testid="rank-bar-2"]').getBoundingClientRect();
    return { scrolls: box.scrollWidth > box.clientWidth, inside: bar.right <= view.right + 1 };
  });
  assert.deepEqual(fit, { scrolls: false, inside: true });
  assertClean(problems);
  await context.close();
});

test('the legend lists only what a bar draws', async () => {
  const { context, page, problems } = await open(browser, '/?v=1');
  const shown = (term) => page.locator(`[data-testid="rank-chart"] .legend li[data-term="${term}"]`).isVisible();
  await page.waitForSelector('[data-testid="rank-chart"] .hit[data-term="kv_pool"]', { state: 'attached' });
  for (const term of ['weights', 'kv_pool', 'free', 'budget', 'total']) assert.equal(await shown(term), true, term);
  for (const term of ['measured_overhead', 'drafter']) assert.equal(await shown(term), false, term);
  await goto(page, '/?v=1&example=s2-unified-gate');
  await page.waitForSelector('[data-testid="rank-chart"] .hit[data-term="measured_overhead"]', { state: 'attached' });
  assert.equal(await shown('measured_overhead'), true);
  assertClean(problems);
  await context.close();
});

test('a draft model named in the form joins the last stage: its weights and its KV layers', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=qwen2.5-72b-instruct&tp=4&max-model-len=32768');
  const shown = await text(page, 'kv-cache-tokens');
  const tokens = await number(page, 'kv-cache-tokens');
  await reveal(page, 'speculative-config');
  await page.selectOption('[data-testid="speculative-config"]', 'draft_model');
  await setInput(page, 'draft-model', 'qwen2.5-7b-instruct');
  await page.waitForFunction(() => location.search.includes('draft-model=qwen2.5-7b-instruct'));
  // 28 more layers in every block: fewer tokens fit, and the ledger names the drafter.
  await changed(page, 'kv-cache-tokens', shown);
  const after = await number(page, 'kv-cache-tokens');
  assert.ok(after < tokens, `${after} < ${tokens}`);
  assert.match(await text(page, 'ledger'), /Qwen2\.5 7B/);
  assert.match(await text(page, 'vllm-log'), /Worker_TP0 pid=P/);
  // A draft model without the draft_model method is flagged at its field.
  await reveal(page, 'speculative-config');
  await page.selectOption('[data-testid="speculative-config"]', 'mtp');
  await page.waitForSelector('#draft-model-err:not(:empty)');
  assert.match(await page.locator('#draft-model-err').innerText(), /choose draft_model/);
  assertClean(problems);
  await context.close();
});

test('a split refused from the start says so in the partition editor, and at its field', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=deepseek-v4-flash&gpu=h200-141gb&tp=4&pp=2&pp-partition=2,41');
  await page.waitForSelector('#pp-layer-partition-err:not(:empty)');
  assert.match(await page.locator('#pp-layer-partition-err').innerText(), /Workers disagree on supported KV cache layouts/);
  assert.match(await text(page, 'pp-partition-effective'), /No figures yet: an input is refused/);
  assert.match(await text(page, 'vllm-log-provenance'), /none yet/);
  assertClean(problems);
  await context.close();
});

test('DeepSeek-V4: the attention backend, DSpark and async scheduling change the pool from the form', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=deepseek-v4-flash&gpu=b200-192gb&tp=2');
  // vLLM's own choice is shown as the default; FlashMLA stores fp8_ds_mla blobs.
  assert.match(await text(page, 'vllm-log'), /fp8_ds_mla KV cache format/);
  assert.match(await page.locator('#attention-backend-default').textContent(), /FLASHMLA_SPARSE_DSV4/);
  // The catalog row's notes are shown with its source.
  await page.waitForFunction(() => /Notes: Seeds confirm/.test(document.querySelector('[data-testid=model-source]').textContent));
  const tokens = await text(page, 'kv-cache-tokens');
  const packed = await number(page, 'kv-cache-tokens');
  // FlashInfer's DSV4 backend keeps plain bf16 rows on SM 10.x: fewer tokens, no fp8_ds_mla.
  await reveal(page, 'attention-backend');
  await page.selectOption('[data-testid="attention-backend"]', 'FLASHINFER_MLA_SPARSE_DSV4');
  await page.waitForFunction(() => location.search.includes('attention-backend=FLASHINFER_MLA_SPARSE_DSV4'));
  await changed(page, 'kv-cache-tokens', tokens);
  assert.ok((await number(page, 'kv-cache-tokens')) < packed);
  assert.doesNotMatch(await text(page, 'vllm-log'), /fp8_ds_mla KV cache format/);
  // Without async scheduling one batch is in flight: the bounded caches need fewer blocks.
  const before = await text(page, 'kv-cache-tokens');
  await reveal(page, 'no-async-scheduling');
  await page.check('[data-testid="no-async-scheduling"]');
  await page.waitForFunction(() => location.search.includes('no-async=true'));
  await changed(page, 'kv-cache-tokens', before);
  // DSpark needs the config's DSpark heads, which the catalog's V4-Flash config lacks: refused
  // at its field, in vLLM's terms.
  await reveal(page, 'speculative-config');
  await page.selectOption('[data-testid="speculative-config"]', 'dspark');
  await page.locator('#speculative-config-err').filter({ hasText: /dspark_target_layer_ids/ }).waitFor();
  await reveal(page, 'speculative-config');
  await page.selectOption('[data-testid="speculative-config"]', 'none');
  // On another model the backend is refused at its field; the page keeps working.
  await setInput(page, 'model', 'llama-3.1-8b-instruct');
  await page.locator('#attention-backend-err').filter({ hasText: /DeepSeek-V4 only/ }).waitFor();
  await page.reload();
  assert.equal(await page.inputValue('[data-testid="attention-backend"]'), 'FLASHINFER_MLA_SPARSE_DSV4');
  assert.equal(await page.isChecked('[data-testid="no-async-scheduling"]'), true);
  assertClean(problems);
  await context.close();
});

test('placeholders give vLLM defaults even when the start fails early, and stale log figures say so', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&gpu=t4-16gb');
  assert.match(await text(page, 'verdict'), /^Fails at/);
  // A 16 GB part: vLLM's API-server defaults for GPUs under 70 GiB.
  await page.waitForFunction(() => document.querySelector('[data-testid="max-num-seqs"]').placeholder === 'default: 256');
  assert.equal(await page.getAttribute('[data-testid="max-num-batched-tokens"]', 'placeholder'), 'default: 2048');
  assert.equal(await page.getAttribute('[data-testid="other-tenants"]', 'placeholder'), 'default: none');
  // A refused value leaves the last valid figures on screen, and their provenance says so.
  await setInput(page, 'block-size', '7');
  await page.locator('#block-size-err').filter({ hasText: /multiple of 16/ }).waitFor();
  await page.waitForFunction(() => /^Figures: .*from the last valid inputs/.test(document.querySelector('[data-testid="vllm-log-provenance"]').textContent));
  assertClean(problems);
  await context.close();
});

test('the utilization sweep rings the fraction typed, one task after the figures', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-8b-instruct');
  await page.waitForSelector('#pool-svg [data-current="true"]', { state: 'attached' });
  await setInput(page, 'gpu-memory-utilization', '0.6');
  await page.waitForFunction(() => /^gpu-memory-utilization 0\.60: /.test(document.querySelector('#pool-svg [data-current="true"] title')?.textContent ?? ''));
  await setInput(page, 'gpu-memory-utilization', '0.85');
  await page.waitForFunction(() => /^gpu-memory-utilization 0\.85: /.test(document.querySelector('#pool-svg [data-current="true"] title')?.textContent ?? ''));
  assertClean(problems);
  await context.close();
});

test('the verdict leads to the input in error, and on a phone to the inputs', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&spec=mtp');
  // vLLM has no MTP drafter for Llama: the long refusal keeps one sentence in the headline.
  const headline = await text(page, 'verdict-headline');
  assert.equal(headline, "Cannot plan this: Unsupported speculative method: 'mtp' (vLLM's NotImplementedError).");
  assert.match(await text(page, 'verdict'), /is not one of them/);
  const goto = page.locator('[data-testid="verdict-goto"]');
  assert.equal(await goto.innerText(), 'Go to speculative-config');
  await goto.click();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'speculative-config');
  // A valid state on a wide screen has no button; on a phone it leads to the form below.
  await reveal(page, 'speculative-config');
  await page.selectOption('[data-testid="speculative-config"]', '');
  await page.waitForFunction(() => !location.search.includes('spec='));
  assert.equal(await goto.isVisible(), false);
  await page.setViewportSize({ width: 360, height: 740 });
  assert.equal(await goto.isVisible(), true);
  assert.equal(await goto.innerText(), 'Change the inputs');
  await goto.click();
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'model');
  assertClean(problems);
  await context.close();
});

test('a pasted config in error stops the plan instead of planning the default model', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=qwen3-8b');
  const before = await text(page, 'kv-cache-tokens');
  const config = JSON.stringify({
    model_type: 'qwen2', architectures: ['Qwen2ForCausalLM'], hidden_size: 3584, intermediate_size: 18944,
    num_attention_heads: 28, num_hidden_layers: 28, num_key_value_heads: 4, vocab_size: 152064,
    max_position_embeddings: 32768, torch_dtype: 'bfloat16',
  });
  await setInput(page, 'config', config);
  await page.waitForFunction((b) => document.querySelector('[data-testid="kv-cache-tokens"]').innerText !== b, before);
  const pasted = await text(page, 'kv-cache-tokens');
  // Three KV heads do not divide 28: the config is refused, and the figures stay the pasted
  // model's (the last valid inputs), not the catalog default's.
  await setInput(page, 'config', config.replace('"num_key_value_heads":4', '"num_key_value_heads":3'));
  await page.waitForFunction(() => document.querySelector('[data-testid="verdict-headline"]').innerText.startsWith('Cannot plan this'));
  assert.equal(await text(page, 'kv-cache-tokens'), pasted);
  assert.match(await text(page, 'verdict'), /last valid inputs/);
  assert.doesNotMatch(await text(page, 'verdict'), /use the default for config/);
  assert.equal(await page.locator('[data-testid="verdict-goto"]').innerText(), 'Go to config');
  assertClean(problems);
  await context.close();
});

test('a start that fails before the pool says why the pool figures are dashes', async () => {
  const { context, page, problems } = await open(browser, '/?v=1&model=llama-3.1-70b-instruct&tp=2');
  assert.match(await text(page, 'verdict-headline'), /^Fails at the capacity check/);
  assert.equal(await text(page, 'kv-pool'), '—');
  assert.match(await text(page, 'no-pool'), /^No KV pool: the start fails at the capacity check before vLLM allocates one/);
  await setInput(page, 'tensor-parallel-size', '4');
  await page.waitForFunction(() => document.querySelector('[data-testid="verdict-headline"]').innerText.startsWith('Starts'));
  assert.equal(await page.locator('[data-testid="no-pool"]').isVisible(), false);
  assertClean(problems);
  await context.close();
});

test('a long pasted config travels in the fragment, so the link still loads', async () => {
  const config = JSON.stringify({
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 4096, intermediate_size: 14336,
    num_attention_heads: 32, num_hidden_layers: 24, num_key_value_heads: 8, vocab_size: 128256,
    max_position_embeddings: 65536, torch_dtype: 'bfloat16', notes: 'x'.repeat(60_000),
  });
  const { context, page, problems } = await open(browser, '/?v=1');
  const tokens = await text(page, 'kv-cache-tokens');
  await page.fill('[data-testid="config"]', config);
  await changed(page, 'kv-cache-tokens', tokens);
  await page.waitForFunction(() => location.hash.startsWith('#config='));
  const custom = await text(page, 'kv-cache-tokens');
  const url = await page.evaluate(() => location.href);
  assert.ok(new URL(url).search.length <= 2000, 'the query stays short enough for any server');
  // The link opens in a fresh context (no storage) with the same model.
  const fresh = await open(browser, null);
  await goto(fresh.page, url);
  assert.equal(await text(fresh.page, 'kv-cache-tokens'), custom);
  assert.equal(await fresh.page.inputValue('[data-testid="config"]'), config);
  assertClean(fresh.problems);
  await fresh.context.close();
  assertClean(problems);
  await context.close();
});

test('a reload keeps a text still in error, and placeholders come back once it is fixed', async () => {
  const { context, page, problems } = await open(browser, '/?v=1');
  const placeholder = () => page.getAttribute('[data-testid="tensor-parallel-size"]', 'placeholder');
  assert.equal(await placeholder(), 'default: 1');
  await setInput(page, 'max-model-len', '32k5');
  await page.locator('#max-model-len-err').filter({ hasText: /\S/ }).waitFor();
  await page.waitForTimeout(400); // the address and the storage follow 150 ms late
  await page.reload();
  // The app, not only the shell's first verdict: the figures below are the app's.
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached' });
  await page.waitForSelector('[data-testid="max-model-len"]');
  assert.equal(await page.inputValue('[data-testid="max-model-len"]'), '32k5');
  await page.locator('#max-model-len-err').filter({ hasText: /\S/ }).waitFor();
  await setInput(page, 'max-model-len', '');
  // An input that stops the plan, a change meanwhile, then the fix: the defaults follow.
  await setInput(page, 'headroom', '8GiB');
  await page.locator('#headroom-err').filter({ hasText: /\S/ }).waitFor();
  await page.check('[data-testid="unit-gb"]');
  await setInput(page, 'headroom', '');
  await page.waitForFunction(() => document.querySelector('[data-testid="tensor-parallel-size"]').placeholder === 'default: 1');
  assertClean(problems);
  await context.close();
});

test('the verdict names its scenario and why, and stays in view while the inputs change', async () => {
  const { context, page, problems } = await open(browser, '/');
  await goto(page, '/?v=1&model=llama-3.1-70b-instruct&tp=4&gpus=4&gpu=h100-sxm-80gb&max-model-len=16384');
  const verdict = await text(page, 'verdict');
  assert.match(verdict, /Planned: Llama 3\.1 70B Instruct \(bfloat16\) on 4 x NVIDIA H100 SXM 80GB, TP 4 x PP 1; max-model-len 16,384\./);
  assert.match(verdict, /Rank 0: budget 72\.85 GiB - weights [\d.]+ GiB - other [\d.]+ GiB - activation [\d.]+ GiB - graphs [\d.]+ GiB leaves [\d.]+ GiB for KV \(estimate\)\./);
  // Scrolled down to the engine flags at 1280 px, the banner is still on screen.
  await page.locator('#max-model-len').scrollIntoViewIfNeeded();
  await page.evaluate(() => window.scrollBy(0, 400));
  const box = await page.locator('[data-testid=verdict]').boundingBox();
  assert.ok(box && box.y >= 0 && box.y < 50, `the banner at ${JSON.stringify(box)}`);
  // And the input it covers is not hidden under it when the page scrolls to it.
  await setInput(page, 'max-model-len', '8192');
  await page.waitForFunction(() => /max-model-len 8,192\./.test(document.querySelector('[data-testid=verdict]').innerText));
  assertClean(problems);
  await context.close();
});

test('the common inputs first, the rest one click away; a link opens what it sets; a skip link to the results', async () => {
  const { context, page, problems } = await open(browser, '/?v=1');
  await page.waitForSelector('[data-testid="max-model-len"]');
  const visible = await page.locator('form.inputs [data-field]:visible').count();
  assert.ok(visible <= 16, `${visible} inputs shown at first`);
  assert.equal(await page.locator('[data-testid="enforce-eager"]').isVisible(), false);
  assert.equal(await page.locator('[data-testid="more-engine-flags"] > summary').innerText(), '7 more');
  // A link that sets a flag behind a disclosure opens it, and the summary counts it.
  await goto(page, '/?v=1&eager=true&block-size=32');
  await page.waitForFunction(() => document.querySelector('[data-testid="more-engine-flags"]').open);
  assert.equal(await page.locator('[data-testid="enforce-eager"]').isChecked(), true);
  assert.equal(await page.locator('[data-testid="more-engine-flags"] > summary').innerText(), '7 more (2 set)');
  // The verdict's button goes to a field in error even behind a closed disclosure.
  await goto(page, '/?v=1&block-size=7');
  await page.waitForSelector('#block-size-err:not(:empty)', { state: 'attached' });
  await page.click('[data-testid="verdict-goto"]');
  await page.waitForFunction(() => document.activeElement?.id === 'block-size');
  assert.equal(await page.locator('[data-testid="block-size"]').isVisible(), true);
  // The first Tab stop is the skip link; following it puts the keyboard at the results.
  await goto(page, '/?v=1');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.testid), 'skip-to-results');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement?.id === 'results' || location.hash === '#results');
  assertClean(problems);
  await context.close();
});

test('a pasted config.json without a name is named by the catalog row of its shape', async () => {
  const { context, page, problems } = await open(browser, '/?v=1');
  const row = await (await fetch(new URL('/', BASE_URL))).ok;
  assert.ok(row);
  const config = JSON.stringify({
    architectures: ['LlamaForCausalLM'], model_type: 'llama', hidden_size: 4096, intermediate_size: 14336,
    num_attention_heads: 32, num_hidden_layers: 32, num_key_value_heads: 8, vocab_size: 128256,
    max_position_embeddings: 131072, torch_dtype: 'bfloat16',
  });
  await setInput(page, 'config', config);
  await page.waitForFunction(() => /Planned: llama, shaped like Llama 3\.1 8B Instruct \(bfloat16\)/.test(document.querySelector('[data-testid=verdict]').innerText));
  assertClean(problems);
  await context.close();
});
