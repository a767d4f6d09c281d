// What only a rendered page shows: every placeholder fits its input, chart text stays readable
// on a phone (the chart scrolls sideways in its panel, the page never does), at a phone's and a
// desktop's width, in light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { launch, open, goto, assertClean } from './harness.mjs';

let browser;
before(async () => {
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const PHONE = { width: 360, height: 740 };
const DESKTOP = { width: 1280, height: 900 };
// The default page, the three examples (their model is the empty model input's default), many
// ranks, and the DeepSeek models whose notes carry long backend names.
const PAGES = [
  '/?v=1',
  '/?v=1&example=s1-three-cards',
  '/?v=1&example=s2-unified-gate',
  '/?v=1&example=s3-synthetic-tp4',
  '/?v=1&model=llama-3.1-70b-instruct&tp=8&pp=2',
  // Long backend names in the notes (DEEPSEEK_V32_INDEXER/FLASH_ATTN_MLA_SPARSE) and V4's
  // five KV groups.
  '/?v=1&model=deepseek-v3.2&gpu=h200-141gb&tp=8',
  '/?v=1&model=deepseek-v4-flash&gpu=h200-141gb&tp=8',
];

/** Shown placeholders (of empty inputs) wider than their input's room: [id, text, width, room]. */
const clippedPlaceholders = (page) =>
  page.evaluate(() => {
    const ctx = document.createElement('canvas').getContext('2d');
    return [...document.querySelectorAll('.inputs input[placeholder]:placeholder-shown')].flatMap((el) => {
      const cs = getComputedStyle(el);
      ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const width = ctx.measureText(el.placeholder).width;
      const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
      return width > room ? [[el.id, el.placeholder, Math.round(width), Math.round(room)]] : [];
    });
  });

/** Each chart: its smallest text in CSS px, and whether its box scrolls sideways. */
const charts = (page) =>
  page.evaluate(() =>
    [...document.querySelectorAll('.chart .svg')].flatMap((box) => {
      const svg = box.querySelector('svg');
      if (!svg) return [];
      const scale = svg.getScreenCTM().a;
      const sizes = [...svg.querySelectorAll('text')].map((t) => parseFloat(t.getAttribute('font-size')) * scale);
      return [{ id: box.id, text: Math.min(...sizes), scrolls: box.scrollWidth > box.clientWidth }];
    }),
  );

for (const colorScheme of ['light', 'dark']) {
  test(`placeholders fit, chart text is readable and the page never scrolls sideways (${colorScheme})`, async () => {
    const { context, page, problems } = await open(browser, null, { context: { viewport: PHONE, colorScheme } });
    for (const viewport of [PHONE, DESKTOP]) {
      await page.setViewportSize(viewport);
      for (const path of PAGES) {
        await goto(page, path);
        // The slow lane (defaults, sweeps) is one task behind the verdict.
        // A sweep with nothing to draw (S1 never gets past loading) says so in a sentence.
        await page.waitForFunction(() => document.querySelector('#model')?.placeholder && document.querySelector('#pool-svg svg, #pool-svg .sweep-note') && document.querySelector('#timeline svg'));
        const where = `${path} at ${viewport.width}px`;
        assert.deepEqual(await clippedPlaceholders(page), [], `clipped placeholders, ${where}`);
        const shown = await charts(page);
        const notes = await page.locator('.chart .svg .sweep-note').count();
        // The per-rank chart, the phase timeline and the two sweeps (or a note in a sweep's place).
        assert.ok(shown.length >= 2 && shown.length + notes === 4, `${shown.length} charts drawn and ${notes} sweep notes, ${where}`);
        for (const c of shown) {
          assert.ok(c.text >= 9, `${c.id}: ${c.text.toFixed(1)} px text, ${where}`);
          if (viewport === DESKTOP) assert.equal(c.scrolls, false, `${c.id} scrolls, ${where}`);
        }
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
        assert.equal(overflow, 0, `the page scrolls sideways, ${where}`);
      }
    }
    // What the KV pin's empty default means needs a sentence: its label says it.
    assert.match(await page.locator('label[for="kv-cache-memory-bytes"]').innerText(), /not set: the budget sizes the pool/);
    assert.equal(await page.getAttribute('#kv-cache-memory-bytes', 'placeholder'), 'default: not set');
    assertClean(problems);
    await context.close();
  });
}
