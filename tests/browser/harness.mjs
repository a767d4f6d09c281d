// Shared set-up for the browser tests: Debian's chromium through playwright-core, against the
// release build served on localhost (BASE_URL, set by scripts/test.sh). Every request is routed
// through a check that it stays on the page's own origin, and console errors and warnings are
// collected.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';

export const BASE_URL = process.env.BASE_URL ?? 'http://127.0.0.1:8080';
const ORIGIN = new URL(BASE_URL).origin;

export const CHROMIUM_ARGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
  });
}

/** Console warnings a clean page may log: the tests block the service worker themselves. */
const EXPECTED_WARNINGS = [/^Service Worker registration blocked by Playwright/];

/** A fresh context and page; `problems` collects console errors and warnings and foreign requests. */
export async function open(browser, path = '/', options = {}) {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    serviceWorkers: options.serviceWorkers ?? 'block',
    ...options.context,
  });
  const problems = { console: [], foreign: [], requests: [] };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    problems.requests.push(url);
    if (new URL(url).origin !== ORIGIN) {
      problems.foreign.push(url);
      return route.abort();
    }
    return route.continue();
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') problems.console.push(m.text());
    else if (m.type() === 'warning' && !EXPECTED_WARNINGS.some((re) => re.test(m.text()))) {
      problems.console.push(`warning: ${m.text()}`);
    }
  });
  page.on('pageerror', (e) => problems.console.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    problems.console.push(`dialog: ${d.message()}`);
    d.dismiss();
  });
  if (path !== null) await goto(page, path);
  return { context, page, problems };
}

/**
 * Navigates and waits for the first verdict, then for the rest of the page, which is mounted
 * one task after the verdict.
 */
export async function goto(page, path) {
  await page.goto(new URL(path, BASE_URL).href);
  await page.waitForSelector('[data-testid=verdict-headline]:not(:empty)', { timeout: 20_000 });
  await page.waitForSelector('[data-testid=ledger]', { state: 'attached', timeout: 20_000 });
}

/** The page is clean: no console errors or warnings, nothing requested off the origin. */
export function assertClean(problems) {
  assert.deepEqual(problems.foreign, [], 'requests left the origin');
  assert.deepEqual(problems.console, [], 'console errors or warnings');
  assert.ok(problems.requests.length > 0, 'the route check saw the page load');
}

export const text = (page, id) => page.locator(`[data-testid="${id}"]`).first().innerText();

/** The number at the start of a figure such as "46.10 GB" or "4.29x" or "181,777". */
export async function number(page, id) {
  const t = await text(page, id);
  const m = t.replace(/,/g, '').match(/-?\d+(\.\d+)?/);
  assert.ok(m, `${id} shows a number, got ${JSON.stringify(t)}`);
  return Number(m[0]);
}

/** Waits until a figure's text differs from `before`. */
export async function changed(page, id, before) {
  await page.waitForFunction(
    ([sel, b]) => document.querySelector(sel)?.innerText !== b,
    [`[data-testid="${id}"]`, before],
    { timeout: 10_000 },
  );
}

/** Opens the disclosure an input sits behind ("N more"), as a user clicking it would. */
export async function reveal(page, flag) {
  const summary = page.locator(`details:not([open]):has([data-testid="${flag}"]) > summary`);
  if (await summary.count()) await summary.click();
}

/** Sets an input by its flag name, as a user typing would (opening its disclosure first). */
export async function setInput(page, flag, value) {
  await reveal(page, flag);
  await page.fill(`[data-testid="${flag}"]`, value);
}

/** Figures agree with an article's, which states them to its own precision. */
export function near(actual, expected, tolerance, what) {
  assert.ok(
    Math.abs(actual - expected) <= tolerance + 1e-9,
    `${what}: ${actual} is not within ${tolerance} of ${expected}`,
  );
}
