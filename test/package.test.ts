/**
 * The packed package: what `npm pack` puts in the tarball holds every file the README links to
 * (the docs pages, the license) besides the build, and the tarball itself is ignored by git.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { ROOT } from './cli/runCli.js';

/** The files `npm pack` would put in the tarball, without building or writing it. */
const packedFiles = (): ReadonlySet<string> => {
  const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [pack] = JSON.parse(output) as Array<{ files: Array<{ path: string }> }>;
  return new Set(pack!.files.map((file) => file.path));
};

describe('the packed package', () => {
  it('holds every file the README links to, the license and the entry points', () => {
    const packed = packedFiles();
    const links = new MarkdownIt('commonmark')
      .parse(readFileSync(join(ROOT, 'README.md'), 'utf8'), {})
      .flatMap((token) => token.children ?? [])
      .filter((token) => token.type === 'link_open')
      .map((token) => String(token.attrGet('href') ?? '').split('#')[0]!)
      .filter((href) => href !== '' && !/^[a-z][a-z+.-]*:/iu.test(href));
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((href) => !packed.has(href))).toEqual([]);
    expect(packed.has('LICENSE')).toBe(true);
    expect(packed.has('package.json')).toBe(true);
  });

  it('keeps packed tarballs out of git', () => {
    const ignored = execFileSync('git', ['check-ignore', 'session-fact-tracker-0.1.0.tgz'], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(ignored.trim()).toBe('session-fact-tracker-0.1.0.tgz');
  });
});
