import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StagingArea } from '../../src/programs/staging.js';

describe('StagingArea', () => {
  it('gives each run fresh directories in one owned directory, and removes a finished run off the caller’s path', async () => {
    const area = new StagingArea();
    const first = area.create();
    const second = area.create();
    expect(first.dir).not.toBe(second.dir);
    for (const staging of [first, second]) {
      expect(join(staging.dir, '..')).toBe(area.dir);
      for (const dir of [staging.upper, staging.work, staging.merged]) expect(fs.readdirSync(dir)).toEqual([]);
    }
    // What an overlay leaves: content in upper, and an unreadable directory in work.
    fs.mkdirSync(join(first.upper, 'made'));
    fs.writeFileSync(join(first.upper, 'made/file.txt'), 'x');
    fs.mkdirSync(join(first.work, 'work'), { mode: 0o000 });
    area.discard(first);
    expect(fs.existsSync(second.upper)).toBe(true);
    await area.settled();
    expect(fs.existsSync(first.dir)).toBe(false);
    expect(fs.readdirSync(area.dir)).toEqual([join(second.dir).slice(area.dir.length + 1)]);
    fs.mkdirSync(join(second.work, 'work'), { mode: 0o000 });
    const dir = area.dir;
    area.dispose();
    expect(fs.existsSync(dir)).toBe(false);
  });
});
