// Drives the store settings Webhooks page in headless Chromium as an administrator: sign in
// (login and an application password); a URL the page must refuse (http without an allowlist);
// add an endpoint for the receiver with two kinds and an allowlist (its secret shown once, the
// copy button); send a test event and reload its delivery log until the delivery is delivered;
// disable and enable it; rotate its secret (a new one shown once); a form posted without the
// CSRF token; delete it. Environment: PAGE_URL, RECEIVER_URL, LOGIN, PASSWORD, CHROMIUM,
// SCREENSHOTS (optional: a directory for webhooks-error.png, webhooks.png, webhooks-log.png and
// webhooks-disabled.png).
//
// Output, one JSON line each: {step: "secret", secret} once the endpoint is added, after which
// the script waits for a line on stdin (the test gives the receiver the secret, so that it can
// verify the test event's signature); then the result {step: "done", …}, or {error, body} on
// any failure (exit 1).
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const stdin = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync'],
});
const shot = async (page, name) => {
  if (process.env.SCREENSHOTS) await page.screenshot({ path: `${process.env.SCREENSHOTS}/${name}.png`, fullPage: true });
};
const text = async (loc) => ((await loc.count()) ? (await loc.first().textContent()).trim() : '');
let code = 0;
try {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(process.env.PAGE_URL).origin });
  const page = await context.newPage();
  await page.goto(process.env.PAGE_URL);
  await page.fill('#login', process.env.LOGIN);
  await page.fill('#password', process.env.PASSWORD);
  await page.click('#signin');
  await page.locator('#create, #error').first().waitFor({ timeout: 10000 });
  if (await page.locator('#error').count()) {
    throw new Error('refused: ' + (await text(page.locator('#error'))));
  }

  // An http URL without an allowlist naming its address is refused, in the page.
  await page.fill('#url', process.env.RECEIVER_URL);
  await page.check('input[name=events][value="order.paid"]');
  let resp;
  [resp] = await Promise.all([page.waitForNavigation(), page.click('#create-endpoint')]);
  const badURL = { status: resp.status(), error: await text(page.locator('#error')), kept: await page.inputValue('#url'),
    keptKind: await page.isChecked('input[name=events][value="order.paid"]') };
  await shot(page, 'webhooks-error');

  // The endpoint, as it should be: its secret is shown once.
  await page.check('input[name=events][value="customer.created"]');
  await page.fill('#allowlist', '127.0.0.1/32');
  await page.fill('#description', 'Receiver <loopback>');
  await page.click('#create-endpoint');
  await page.locator('#new-secret').waitFor({ timeout: 10000 });
  const created = await text(page.locator('#new-secret'));
  await page.click('#copy');
  await page.locator('#copied').filter({ hasText: /Copied|Select/ }).waitFor({ timeout: 5000 });
  const copied = await text(page.locator('#copied'));
  const row = page.locator('#endpoints tbody tr').filter({ hasText: 'Receiver <loopback>' });
  const id = await row.getAttribute('data-id');
  const listed = { events: await text(row.locator('td.events')), allowlist: await text(row.locator('td.allowlist')),
    status: await text(row.locator('.status')) };
  await shot(page, 'webhooks');
  console.log(JSON.stringify({ step: 'secret', secret: created }));
  await stdin.next();

  // A reload shows the secret no more.
  await page.goto(process.env.PAGE_URL);
  const afterReload = await page.locator('#new-secret').count();
  const secretAgain = (await page.content()).includes(created);

  // A test event; its delivery log, reloaded until the attempt is in.
  await page.locator(`#endpoints tr[data-id="${id}"] button.test`).click();
  await page.locator('#log').waitFor({ timeout: 10000 });
  const queued = await text(page.locator('#message'));
  const logURL = page.url();
  let state = '';
  for (let i = 0; i < 100 && state !== 'delivered' && state !== 'failed'; i++) {
    if (i) {
      await new Promise((r) => setTimeout(r, 200));
      await page.goto(logURL);
    }
    state = await text(page.locator('.delivery .state'));
  }
  const delivery = page.locator('.delivery').first();
  const attempt = delivery.locator('details.attempt').first();
  await attempt.locator('summary').click();
  await delivery.locator('details.payload summary').click();
  const log = {
    state, kind: await text(delivery.locator('.kind')), eventID: await text(delivery.locator('.event-id')),
    attempts: await text(delivery.locator('.attempts')), summary: await text(attempt.locator('summary')),
    requestHeaders: await attempt.locator('table.request-headers th').allTextContents(),
    signature: await text(attempt.locator('table.request-headers tr').filter({ hasText: 'X-Webhook-Signature' }).locator('td')),
    responseStatus: await text(attempt.locator('h4 .response-status')), responseBody: await text(attempt.locator('.response-body')),
    payload: await text(delivery.locator('details.payload pre')),
  };
  await shot(page, 'webhooks-log');

  // Disable (a notice at the top), then enable.
  await page.locator(`#endpoints tr[data-id="${id}"] button.disable`).click();
  await page.locator(`#endpoints tr[data-id="${id}"] button.enable`).waitFor({ timeout: 10000 });
  const disabled = { status: await text(page.locator(`#endpoints tr[data-id="${id}"] .status`)),
    reason: await text(page.locator(`#endpoints tr[data-id="${id}"] .reason`)),
    notice: await text(page.locator(`.notice-disabled[data-id="${id}"]`)),
    canTest: await page.locator(`#endpoints tr[data-id="${id}"] button.test`).count() };
  await shot(page, 'webhooks-disabled');
  await page.locator(`#endpoints tr[data-id="${id}"] button.enable`).click();
  await page.locator(`#endpoints tr[data-id="${id}"] button.disable`).waitFor({ timeout: 10000 });
  const enabled = { status: await text(page.locator(`#endpoints tr[data-id="${id}"] .status`)),
    notices: await page.locator('.notice-disabled').count() };

  // Rotate: a new secret, shown once.
  await page.locator(`#endpoints tr[data-id="${id}"] button.rotate`).click();
  await page.locator('#new-secret').waitFor({ timeout: 10000 });
  const rotated = await text(page.locator('#new-secret'));
  const rotateNote = await text(page.locator('#new-secret-notice'));

  // A form of this very page without its CSRF token is refused.
  [resp] = await Promise.all([page.waitForNavigation(), page.evaluate((id) => {
    const f = document.createElement('form');
    f.method = 'post';
    f.action = location.pathname;
    for (const [k, v] of [['action', 'delete'], ['id', id]]) {
      const i = document.createElement('input');
      i.type = 'hidden';
      i.name = k;
      i.value = v;
      f.appendChild(i);
    }
    document.body.appendChild(f);
    f.submit();
  }, id)]);
  const csrf = { status: resp.status(), error: await text(page.locator('#error')),
    still: await page.locator(`#endpoints tr[data-id="${id}"]`).count() };

  // Delete.
  await page.locator(`#endpoints tr[data-id="${id}"] button.delete`).click();
  await page.locator('#no-endpoints').waitFor({ timeout: 10000 });
  const deleted = await text(page.locator('#message'));

  console.log(JSON.stringify({ step: 'done', id, badURL, created, copied, listed, afterReload, secretAgain, queued, log,
    disabled, enabled, rotated, rotateNote, csrf, deleted }));
} catch (e) {
  const body = await Promise.all(browser.contexts().flatMap((c) => c.pages()).map((p) => p.content().catch(() => '?')));
  console.log(JSON.stringify({ error: String(e), body: body.join('\n') }));
  code = 1;
} finally {
  await browser.close();
}
process.exit(code);
