import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSession, startInspector, type RunningInspector } from './inspect-support.js';
import { assertBuilt, REPO } from './support.js';

const EXECUTABLE = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const IMAGES = join(REPO, 'docs/images');

/**
 * The inspector's page in a real browser (playwright-core driving the system's Chromium, headless). In CI a
 * browser that cannot launch fails these tests; elsewhere they are skipped with the reason.
 */
async function launch(): Promise<Browser | string> {
  try {
    return await chromium.launch({ executablePath: EXECUTABLE, headless: true, args: ['--no-sandbox'] });
  } catch (error) {
    const reason = `no browser could launch from ${EXECUTABLE} (apt-get install -y chromium): ${(error as Error).message.split('\n')[0]}`;
    if (process.env.CI !== undefined) throw new Error(reason);
    return reason;
  }
}

const launched = await launch();
const browser = typeof launched === 'string' ? undefined : launched;
if (typeof launched === 'string') console.warn(`skipping the inspector's browser tests: ${launched}`);

describe.skipIf(browser === undefined)('the inspector page in Chromium', () => {
  let base: string;
  let inspector: RunningInspector;
  let page: Page;

  beforeAll(async () => {
    assertBuilt();
    base = mkdtempSync(join(tmpdir(), 'sessionfs-inspect-browser-'));
    await makeSession(join(base, 'store'), 'demo');
    inspector = await startInspector(['--store-dir', join(base, 'store'), '--session', 'demo']);
    const context = await browser!.newContext({ viewport: { width: 1400, height: 820 }, acceptDownloads: true });
    page = await context.newPage();
    mkdirSync(IMAGES, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await inspector?.stop();
    rmSync(base, { recursive: true, force: true });
  });

  const shot = (name: string) => page.screenshot({ path: join(IMAGES, name) });

  it('shows the turns of the session, and a call’s diff side by side', async () => {
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(inspector.url);
    await page.locator('.turn[data-turn="turn-3"]').waitFor();
    expect(await page.locator('.turn > h3').allTextContents()).toEqual(['turn-3 · tidy ', 'turn-2 · edit ', 'turn-1 · scaffold ']);
    expect(await page.locator('#status').textContent()).toContain('3 turns · 4 operations');
    await page.locator('.op[data-op="op-3"]').click();
    const row = page.locator('.file[data-path="src/a.ts"] tr.mod');
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual(['2', 'export const b = 2;', '2', 'export const b = 20;']);
    await page.locator('#blame-path').fill('src/a.ts');
    await page.locator('#blame-form button').click();
    await page.locator('#blame-result table').waitFor();
    expect(await page.locator('#blame-result td.who').allTextContents()).toEqual(['op-1', 'op-3', 'op-1']);
    await shot('inspector-diff.png');
    expect(errors).toEqual([]);
  });

  it('exports a call’s patch, previews a restore (dry run), restores, and forks', async () => {
    await page.locator('.op[data-op="op-3"]').click();
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator('[data-action="patch"]').click()]);
    expect(download.suggestedFilename()).toBe('demo-op-3.patch');
    expect(readFileSync((await download.path())!, 'utf8')).toContain('+export const b = 20;');

    // Restore to the state before the edit: first the dry run, which changes nothing.
    const version = async () => Number(/version (\d+)/.exec((await page.locator('#status').textContent()) ?? '')?.[1]);
    const before = await version();
    await page.locator('[data-action="preview-before"]').click();
    await page.locator('#restore-preview').waitFor();
    expect(await page.locator('#restore-preview h3').textContent()).toBe('Dry run: restoring to before op-3 would change 2 paths');
    expect(await page.locator('#restore-preview li').allTextContents()).toEqual(['README.md', 'src/a.ts']);
    await shot('inspector-restore-preview.png');
    await page.reload();
    await page.locator('.turn[data-turn="turn-3"]').waitFor();
    expect(await version()).toBe(before);

    await page.locator('.op[data-op="op-3"]').click();
    await page.locator('[data-action="preview-before"]').click();
    await page.locator('[data-action="restore"]').click();
    await page.locator('#outcome .message').waitFor();
    expect(await page.locator('#outcome .message').textContent()).toMatch(
      /^Restored: version \d+; tree [0-9a-f]{40} matches the snapshot$/,
    );
    await page.locator('.turn[data-turn="turn-4"]').waitFor();
    expect(await page.locator('.turn[data-turn="turn-4"] h3').textContent()).toBe('turn-4 · inspector: restore ');
    expect(await version()).toBeGreaterThan(before);

    await page.locator('.op[data-op="op-1"]').click();
    await page.locator('#fork-name').fill('demo-alt');
    await page.locator('[data-action="fork"]').click();
    await page.locator('#outcome .message').waitFor();
    expect(await page.locator('#outcome .message').textContent()).toMatch(/^Forked into session demo-alt/);
    expect(await page.locator('#sessions option').allTextContents()).toEqual(['demo', 'demo-alt']);
    await shot('inspector-fork.png');
    await page.locator('#sessions').selectOption('demo-alt');
    await page.locator('.turn h3', { hasText: 'inspector: fork of demo' }).waitFor();
    expect(existsSync(join(IMAGES, 'inspector-fork.png'))).toBe(true);
  });
});
