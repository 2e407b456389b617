// Loads every page of a rendered site in Debian's headless Chromium (through playwright-core, which
// never downloads a browser of its own) at a desktop and a phone viewport, and fails when:
// - the document is wider than the window (the page scrolls sideways);
// - on the desktop viewport, a box marked `scroll fit` (a table the page is read by, such as the
//   composition's) has to scroll its own overflow: part of the table is hidden at first sight;
// - a stacked bar (svg.stack) has no legend naming each of its colours with a share;
// - the browser logs anything to the console, or a page throws (the pages have no JavaScript, so
//   any message is an error), or a page asks for anything outside the site (no network).
// Screenshots (the first screen at each width, and the whole front page) go to --shots.
//
// Usage: node check.mjs SITE_DIR [--shots DIR] [--expect-fail]
// --expect-fail inverts the verdict, for the fixture that proves the checks can fail.
import { chromium } from 'playwright-core';
import { mkdtempSync, readdirSync, rmSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, basename } from 'node:path';
import { pathToFileURL } from 'node:url';

const VIEWPORTS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
];
const ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

const argv = process.argv.slice(2);
let site = null;
let shots = resolve('target/site-shots');
let expectFail = false;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--shots') shots = resolve(argv[++i]);
  else if (argv[i] === '--expect-fail') expectFail = true;
  else site = resolve(argv[i]);
}
if (!site || !existsSync(site)) {
  console.error('usage: node check.mjs SITE_DIR [--shots DIR] [--expect-fail]');
  process.exit(2);
}
mkdirSync(shots, { recursive: true });
const pages = readdirSync(site).filter((f) => f.endsWith('.html')).sort();
if (pages.length === 0) {
  console.error(`browser-check: no .html pages in ${site}`);
  process.exit(2);
}

// In the page: the outermost elements that reach past the window's right edge, to name the culprit.
function tooWide() {
  const w = window.innerWidth;
  const out = [];
  const walk = (el) => {
    const r = el.getBoundingClientRect();
    if (r.right > w + 0.5 && getComputedStyle(el).position !== 'fixed') {
      const name = el.tagName.toLowerCase() + (el.id ? `#${el.id}` : '') + (el.className && typeof el.className === 'string' ? `.${el.className.trim().split(/\s+/).join('.')}` : '');
      out.push(`${name} (right edge at ${Math.round(r.right)} px)`);
      return;
    }
    // A box that scrolls its own overflow keeps it: what is inside does not widen the page.
    const ox = getComputedStyle(el).overflowX;
    if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') return;
    for (const c of el.children) if (out.length < 5) walk(c);
  };
  walk(document.body);
  return out;
}

// In the page: the boxes marked to fit a desktop window that scroll instead, with how far.
function clipped() {
  return [...document.querySelectorAll('.scroll.fit')]
    .filter((e) => e.scrollWidth > e.clientWidth + 1)
    .map((e) => {
      // The nearest heading before the box, in its parent or further up: the table's own.
      let h = '';
      for (let n = e; n && !h; n = n.parentElement) {
        for (let p = n.previousElementSibling; p && !h; p = p.previousElementSibling) {
          if (/^H[2-4]$/.test(p.tagName)) h = p.textContent.trim();
        }
      }
      return `a table the page says fits is ${e.scrollWidth} px in a ${e.clientWidth} px box (${h.slice(0, 60)})`;
    });
}

// In the page: every stacked bar's segment colours against its figure's legend.
function legendProblems() {
  const problems = [];
  const colour = (el, prop) => getComputedStyle(el)[prop].replace(/\s+/g, '');
  document.querySelectorAll('svg.stack').forEach((svg, k) => {
    const name = svg.querySelector('title')?.textContent || `stacked bar ${k + 1}`;
    const fills = [...svg.querySelectorAll('rect')]
      .filter((r) => Number(r.getAttribute('width')) > 0)
      .map((r) => colour(r, 'fill'));
    const fig = svg.closest('figure');
    const keys = fig ? [...fig.querySelectorAll('.legend .key')] : [];
    if (keys.length === 0) {
      problems.push(`${name}: stacked bar without a legend`);
      return;
    }
    const named = new Map(keys.map((k) => [colour(k.querySelector('i') || k, 'backgroundColor'), k.textContent]));
    for (const f of new Set(fills)) {
      if (!named.has(f)) problems.push(`${name}: colour ${f} is not in its legend`);
    }
    for (const [, text] of named) {
      if (!/\d%/.test(text)) problems.push(`${name}: legend entry "${text.trim()}" gives no share`);
    }
  });
  return problems;
}

const profile = mkdtempSync(join(tmpdir(), 'pqprof-chromium-'));
const failures = [];
const widths = [];
let context;
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ARGS,
    viewport: VIEWPORTS[0],
    offline: true,
  });
  for (const vp of VIEWPORTS) {
    for (const name of pages) {
      const page = await context.newPage();
      await page.setViewportSize(vp);
      const where = `${name} at ${vp.width}x${vp.height}`;
      page.on('console', (m) => failures.push(`${where}: console ${m.type()}: ${m.text()}`));
      page.on('pageerror', (e) => failures.push(`${where}: page error: ${e.message}`));
      await page.route('**/*', (route) => {
        const url = route.request().url();
        if (url.startsWith('file://')) return route.continue();
        failures.push(`${where}: asks for ${url} (the site must need no network)`);
        return route.abort();
      });
      await page.goto(pathToFileURL(join(site, name)).href, { waitUntil: 'load' });
      const m = await page.evaluate(() => ({
        doc: document.documentElement.scrollWidth,
        body: document.body ? document.body.scrollWidth : 0,
        win: window.innerWidth,
      }));
      const wide = Math.max(m.doc, m.body);
      widths.push(`${where}: document ${wide} px in a ${m.win} px window`);
      if (wide > m.win) {
        const culprits = await page.evaluate(tooWide);
        failures.push(`${where}: document is ${wide} px wide in a ${m.win} px window (scrolls sideways): ${culprits.join(', ')}`);
      }
      for (const p of await page.evaluate(legendProblems)) failures.push(`${where}: ${p}`);
      if (vp.width >= 1280) {
        for (const p of await page.evaluate(clipped)) failures.push(`${where}: ${p}`);
      }
      const stem = basename(name, '.html');
      await page.screenshot({ path: join(shots, `${stem}-${vp.width}.png`) });
      if (stem === 'index') await page.screenshot({ path: join(shots, `${stem}-${vp.width}-full.png`), fullPage: true });
      await page.close();
    }
  }
} finally {
  if (context) await context.close();
  rmSync(profile, { recursive: true, force: true });
}

for (const w of widths) console.log(`browser-check: ${w}`);
if (expectFail) {
  if (failures.length === 0) {
    console.error(`browser-check: ${site} was expected to fail and did not`);
    process.exit(1);
  }
  for (const f of failures) console.log(`browser-check: expected failure: ${f}`);
  process.exit(0);
}
if (failures.length > 0) {
  for (const f of failures) console.error(`browser-check: ${f}`);
  process.exit(1);
}
console.log(`browser-check: ok: ${pages.length} page(s) at ${VIEWPORTS.map((v) => `${v.width}x${v.height}`).join(' and ')}; screenshots in ${shots}`);
