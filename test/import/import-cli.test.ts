// The import command as users mistype it: usage errors, stores it cannot use, overlapping inputs.
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { runCli } from '../helpers/cli.js'
import { freePort } from '../helpers/fake-upstream.js'
import { FIXTURES } from './import-harness.js'

const dir = mkdtempSync(join(tmpdir(), 'blog-read-api-import-cli-'))
after(() => rmSync(dir, { recursive: true, force: true }))

const oneLine = (stderr: string, pattern: RegExp): void => {
  assert.match(stderr, /^blog-read-api: [^\n]+\n$/, `one line: ${stderr}`)
  assert.match(stderr, pattern)
}

test('usage mistakes are one line and exit code 2', async () => {
  const none = await runCli(['import'])
  assert.equal(none.code, 2)
  oneLine(none.stderr, /import needs at least one file or folder/)
  const dryServe = await runCli(['serve', '--dry-run'])
  assert.equal(dryServe.code, 2)
  oneLine(dryServe.stderr, /--dry-run applies to import only/)
  const noColumn = await runCli(['import', 'posts/', '--body-column'])
  assert.equal(noColumn.code, 2)
  oneLine(noColumn.stderr, /--body-column needs a value \(--body-column NAME: the column the Markdown body fills\)/)
  const bodyElsewhere = await runCli(['serve', '--body-column', 'body_html'])
  assert.equal(bodyElsewhere.code, 2)
  oneLine(bodyElsewhere.stderr, /--body-column applies to import only/)
  const extra = await runCli(['migrate', 'posts/'])
  assert.equal(extra.code, 2)
  oneLine(extra.stderr, /unexpected argument "posts\/"/)
})

test('import --help shows the import command\'s usage and arguments', async () => {
  const { code, stdout } = await runCli(['import', '--help'])
  assert.equal(code, 0)
  assert.match(stdout, /^Usage: blog-read-api import <file or folder>\.\.\. \[--dry-run\]/)
  assert.match(stdout, /^ {2}--dry-run {2,}\S/m)
  assert.match(stdout, /^ {2}--body-column NAME {2,}the column the Markdown body fills \(default: content\)$/m)
})

test('a SQLite file that does not exist is one line, and is not created', async () => {
  const filename = join(dir, 'absent.db')
  const { code, stdout, stderr } = await runCli(['import', join(FIXTURES, 'blog')], { DATABASE_URL: filename })
  assert.equal(code, 1)
  assert.equal(stdout, '')
  oneLine(stderr, /cannot import into sqlite:.*absent\.db: the file does not exist \(create it with `blog-read-api migrate`\)/)
  assert.equal(existsSync(filename), false)
})

test('an unreachable server is one line, without the password', async () => {
  const { code, stderr } = await runCli(['import', join(FIXTURES, 'blog')], { DATABASE_URL: `postgres://nobody:secret@127.0.0.1:${await freePort()}/blog` })
  assert.equal(code, 1)
  oneLine(stderr, /cannot import into postgres:\/\/nobody:\*\*\*@127\.0\.0\.1:\d+\/blog: .*ECONNREFUSED/)
  assert.doesNotMatch(stderr, /secret/)
})

test('a file named twice (a folder and a file in it) is one file; missing inputs are reported', async () => {
  const filename = join(dir, 'blog.db')
  assert.equal((await runCli(['migrate'], { DATABASE_URL: filename })).code, 0)
  const { code, stdout, stderr } = await runCli(['import', 'blog', 'blog/hello-import.md', './blog/2024', 'nowhere'], { DATABASE_URL: filename }, FIXTURES)
  assert.equal(code, 1)
  assert.equal(stdout, 'imported 5, updated 0, unchanged 0, drafts 1, failed 1\n')
  assert.match(stderr, /^nowhere: cannot read: ENOENT \(no such file or directory\)$/m)
  assert.doesNotMatch(stderr, /is also the slug of/)
})
