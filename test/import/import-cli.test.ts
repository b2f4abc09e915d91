// The import command as users mistype it: usage errors, stores it cannot use, overlapping inputs.
// The command line runs in this process (runCliHere); the built executable once, for what only a
// process shows: one line on stderr, nothing on stdout, exit 2, no stack trace.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { runCli, runCliHere } from '../helpers/cli.js'
import { freePort } from '../helpers/fake-upstream.js'
import { FIXTURES } from './import-harness.js'

const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-import-cli-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const oneLine = (stderr: string, pattern: RegExp): void => {
  assert.match(stderr, /^blog-read-api: [^\n]+\n$/, `one line: ${stderr}`)
  assert.match(stderr, pattern)
}

test('usage mistakes are one line and exit code 2', async () => {
  const cases: Array<[string[], RegExp]> = [
    [['import'], /import needs at least one file or folder/],
    [['serve', '--dry-run'], /--dry-run applies to import only/],
    [['import', 'posts/', '--body-column'], /--body-column needs a value \(--body-column NAME: the column the Markdown body fills\)/],
    [['serve', '--body-column', 'body_html'], /--body-column applies to import only/],
    [['migrate', 'posts/'], /unexpected argument "posts\/"/]
  ]
  for (const [args, pattern] of cases) {
    const { code, stdout, stderr } = await runCliHere(args)
    assert.equal(code, 2, args.join(' '))
    assert.equal(stdout, '')
    oneLine(stderr, pattern)
  }
})

test('the executable itself: import without files is one line on stderr, nothing on stdout, exit 2, no stack trace', async () => {
  const { code, stdout, stderr } = await runCli(['import'])
  assert.equal(code, 2)
  assert.equal(stdout, '')
  oneLine(stderr, /^blog-read-api: import needs at least one file or folder/)
  assert.doesNotMatch(stderr, /\n\s+at |Error:/)
})

test('import --help shows the import command\'s usage and arguments', async () => {
  const { code, stdout } = await runCliHere(['import', '--help'])
  assert.equal(code, 0)
  assert.match(stdout, /^Usage: blog-read-api import <file or folder>\.\.\. \[--dry-run\]/)
  assert.match(stdout, /^ {2}--dry-run {2,}\S/m)
  assert.match(stdout, /^ {2}--body-column NAME {2,}the column the Markdown body fills \(default: content\)$/m)
})

test('a SQLite file that does not exist is one line, and is not created', async () => {
  const filename = join(dir, 'absent.db')
  const { code, stdout, stderr } = await runCliHere(['import', join(FIXTURES, 'blog')], { DATABASE_URL: filename })
  assert.equal(code, 1)
  assert.equal(stdout, '')
  oneLine(stderr, /cannot import into sqlite:.*absent\.db: the file does not exist \(create it with `blog-read-api migrate`\)/)
  assert.equal(existsSync(filename), false)
})

test('an unreachable server is one line, without the password', async () => {
  const { code, stderr } = await runCliHere(['import', join(FIXTURES, 'blog')], { DATABASE_URL: `postgres://nobody:secret@127.0.0.1:${await freePort()}/blog` })
  assert.equal(code, 1)
  oneLine(stderr, /cannot import into postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:\d+\/blog: .*ECONNREFUSED/)
  assert.doesNotMatch(stderr, /secret/)
})

test('a file named twice (a folder and a file in it) is one file; missing inputs are reported', async () => {
  const filename = join(dir, 'blog.db')
  assert.equal((await runCliHere(['migrate'], { DATABASE_URL: filename })).code, 0)
  // Named as given, not normalised (FIXTURES ends with a slash): `blog/./2024` is in `blog/`.
  const nowhere = join(dir, 'nowhere')
  const { code, stdout, stderr } = await runCliHere(['import', `${FIXTURES}blog`, `${FIXTURES}blog/hello-import.md`, `${FIXTURES}./blog/2024`, nowhere], { DATABASE_URL: filename })
  assert.equal(code, 1)
  assert.equal(stdout, 'imported 5, updated 0, unchanged 0, drafts 1, failed 1\n')
  assert.ok(stderr.split('\n').includes(`${nowhere}: cannot read: ENOENT (no such file or directory)`), stderr)
  assert.doesNotMatch(stderr, /is also the slug of/)
})
