/**
 * The web console of `tsmq start` in headless Chromium (Debian's `chromium`, driven by
 * playwright-core) against a broker holding data produced and consumed by the real ali-ons
 * client (observed-broker.ts). Every page is loaded and what it shows is asserted; a screenshot
 * of each page goes to a temp directory (docs/console/<page>.png with TSMQ_CONSOLE_SHOTS=docs). Without Chromium the test is skipped, except in
 * CI (CI=true), where it fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DLQ_GROUP, FIRST, GROUP, TOPIC, TOTAL, bodyOf, startObservedBroker, type ObservedBroker } from './observed-broker.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
/**
 * Screenshots go to a temp directory (a test run leaves the clone clean); with
 * TSMQ_CONSOLE_SHOTS=docs they refresh docs/console/<page>.png, the ones docs/console.md shows.
 */
const SHOTS = process.env.TSMQ_CONSOLE_SHOTS === 'docs'
  ? join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'docs', 'console')
  : mkdtempSync(join(tmpdir(), 'tsmq-console-shots-'));
const inCi = process.env.CI === 'true';

if (!CHROMIUM && inCi) throw new Error('chromium is not installed: .ci/run installs the Debian package chromium');

describe('web console in headless Chromium', { timeout: 240_000, skip: CHROMIUM ? false : 'chromium not installed (apt-get install chromium)' }, () => {
  let o: ObservedBroker;
  let browser: Browser;
  let page: Page;

  before(async () => {
    o = await startObservedBroker({ consolePort: '0' });
    assert.ok(o.broker.consoleUrl, `banner names the console URL:\n${o.broker.log}`);
    browser = await chromium.launch({ executablePath: CHROMIUM!, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    page = await browser.newPage({ viewport: { width: 1360, height: 900 } });
  });

  after(async () => {
    await browser?.close();
    await o?.close();
  });

  async function open(name: string): Promise<void> {
    await page.goto(`${o.broker.consoleUrl}/#/${name}`);
    await page.waitForSelector(`main[data-loaded="${name}"]`, { timeout: 15_000 });
  }

  async function shot(name: string): Promise<void> {
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  }

  it('cluster: the broker, its role, version and the nameserver', async () => {
    await open('cluster');
    const text = await page.innerText('main');
    assert.match(text, /Cluster DefaultCluster/);
    assert.match(text, /broker-a/);
    assert.match(text, /ASYNC_MASTER/);
    assert.match(text, /V4_9_4/);
    assert.ok(text.includes(o.broker.namesrvAddr), text);
    assert.equal(await page.innerText('#state'), 'running');
    await shot('cluster');
  });

  it('topics: the max offset of OBS_T is 50; creating a topic through the form shows it', async () => {
    await open('topics');
    assert.equal(await page.innerText(`[data-testid="max-${TOPIC}"]`), String(TOTAL));
    await page.fill('#topic-form input[name=topic]', 'CONSOLE_MADE');
    await page.fill('#topic-form input[name=readQueueNums]', '2');
    await page.fill('#topic-form input[name=writeQueueNums]', '2');
    await page.click('#topic-form button');
    await page.waitForSelector('[data-testid="max-CONSOLE_MADE"]');
    const row = await page.innerText('tr:has([data-testid="max-CONSOLE_MADE"])');
    assert.match(row, /CONSOLE_MADE\s+2\s+2\s+RW\s+0/);
    await shot('topics');
  });

  it('consumer groups: GID_OBS lags by 10 after consuming 40 of 50, the DLQ group holds 1', async () => {
    await open('groups');
    assert.equal(await page.innerText(`[data-testid="lag-${GROUP}"]`), String(TOTAL - FIRST));
    assert.equal(await page.innerText(`[data-testid="dlq-${DLQ_GROUP}"]`), '1');
    const text = await page.innerText('main');
    assert.match(text, /GID_OBS_LIVE online: 1 client/);
    await shot('groups');
  });

  it('messages: found by key with its body as text and JSON', async () => {
    await open('messages');
    await page.selectOption('#msg-form select[name=by]', 'key');
    await page.fill('#msg-form input[name=topic]', TOPIC);
    await page.fill('#msg-form input[name=key]', 'k7');
    await page.selectOption('#msg-form select[name=view]', 'json');
    await page.click('#msg-form button');
    await page.waitForSelector('[data-testid="body"]');
    const body = await page.innerText('[data-testid="body"]');
    assert.deepEqual(JSON.parse(body), JSON.parse(bodyOf(7)));
    const sent = o.sent.get('k7')!;
    const results = await page.innerText('#results');
    assert.ok(results.includes(sent.msgId), `message id ${sent.msgId} shown:\n${results}`);
    await shot('messages');
  });

  it('messages: found by queue + offset, body as text', async () => {
    const sent = o.sent.get('k12')!;
    await page.selectOption('#msg-form select[name=by]', 'queue');
    await page.fill('#msg-form input[name=queueId]', String(sent.queueId));
    await page.fill('#msg-form input[name=offset]', String(sent.queueOffset));
    await page.selectOption('#msg-form select[name=view]', 'text');
    await page.click('#msg-form button');
    await page.waitForFunction(`document.querySelector('[data-testid="body"]')?.textContent?.includes('"n":12')`);
    assert.equal(await page.innerText('[data-testid="body"]'), bodyOf(12));
  });

  it('messages: a failed search clears the previous results and shows only its own error; the next search clears the error', async () => {
    // the page still shows k12 from the test above
    assert.equal(await page.locator('[data-testid="body"]').count(), 1);
    await page.selectOption('#msg-form select[name=by]', 'msgId');
    await page.fill('#msg-form input[name=key]', 'not-a-message-id');
    await page.click('#msg-form button');
    await page.waitForSelector('main .error');
    assert.equal(await page.locator('[data-testid="body"]').count(), 0, 'no stale result under the error');
    assert.match(await page.innerText('main .error'), /32 hex digits/);
    await page.fill('#msg-form input[name=topic]', 'NO_SUCH_TOPIC_X');
    await page.selectOption('#msg-form select[name=by]', 'key');
    await page.fill('#msg-form input[name=key]', 'k1');
    await page.click('#msg-form button');
    await page.waitForFunction(`document.querySelector('main .error')?.textContent?.includes('NO_SUCH_TOPIC_X')`);
    assert.equal(await page.locator('main .error').count(), 1, 'one error banner: the last search');
    await page.fill('#msg-form input[name=topic]', TOPIC);
    await page.click('#msg-form button');
    await page.waitForSelector('[data-testid="body"]');
    assert.equal(await page.locator('main .error').count(), 0, 'a successful search removes the error');
  });

  it('store: segments, flush/dispatch behind and retention', async () => {
    await open('store');
    const text = await page.innerText('main');
    assert.match(text, /00000000000000000000/);
    assert.match(text, /fileReservedTime/);
    assert.match(text, /72 h/);
    assert.equal(await page.innerText('[data-testid="dispatch-behind"] .v'), '0 B');
    await shot('store');
  });

  it('HA: the role of a broker without slaves', async () => {
    await open('ha');
    assert.equal(await page.innerText('[data-testid="ha-role"]'), 'ASYNC_MASTER');
    await shot('ha');
  });
});
