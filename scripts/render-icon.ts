// Renders scripts/assets/marketplace-icon.svg to media/icon.png (the Marketplace wants a PNG of at least
// 128x128) with the headless Chromium the tests already use. Run it after editing the SVG:
//   node --import tsx scripts/render-icon.ts
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM_PATH, REPO_ROOT } from './vscode/tools';

const SIZE = 256;
const svg = readFileSync(path.join(REPO_ROOT, 'scripts', 'assets', 'marketplace-icon.svg'), 'utf8');

async function main(): Promise<void> {
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage({ viewport: { width: SIZE, height: SIZE } });
    await page.setContent(`<html><body style="margin:0;background:transparent">${svg}</body></html>`);
    const out = path.join(REPO_ROOT, 'media', 'icon.png');
    await page.locator('svg').screenshot({ path: out, omitBackground: true });
    console.log(`wrote ${path.relative(REPO_ROOT, out)} (${SIZE}x${SIZE})`);
  } finally {
    await browser.close();
  }
}

void main();
