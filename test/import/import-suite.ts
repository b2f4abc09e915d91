// One suite, run against every store: `blog-read-api import` through its command line (in this
// process), on the fixtures (good, broken, draft, duplicate, odd names, nested folders), into a real database.
import assert from 'node:assert/strict'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { Post } from '../../src/store/store.js'
import { openTestStore, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { startTiers } from '../helpers/tiers.js'
import { assertLines, createImportHarness, reportLines, summary } from './import-harness.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

const GOOD_SLUGS_NEWEST_FIRST = ['a-nested-post', 'third-post', 'cafe-creme', 'hello-import', 'numbers']

const FIXTURE_REPORT = [
  /^broken\/bad-yaml\.md: the front matter is not valid YAML: Flow sequence .* \(line 4\)$/,
  /^broken\/bad-date\.md: "date" is not a date: "2024-13-45" \(expected YYYY-MM-DD/,
  /^broken\/bad-slug\.md: invalid slug "Not A Slug" \(a slug is lower-case letters and digits joined by single hyphens, at most 200 characters\)$/,
  /^broken\/!!!\.md: the file name gives no valid slug \(""; .*\): add `slug:` to the front matter$/,
  /^broken\/unclosed\.md: the front matter has no closing "---" line$/,
  /^broken\/blank-title\.md: an empty title \(give `title:` a value, or remove it to take the first `# heading` or the file name\)$/,
  /^blog\/drafts\/unfinished\.md: a draft, kept out \(the posts table has no `draft` or `status` column\)$/,
  /^broken\/dangling\.md: cannot read: ENOENT \(no such file or directory\)$/,
  /^broken\/latin1\.md: not UTF-8 text$/,
  /^duplicates\/first\.md: slug "same-slug" is also the slug of duplicates\/same-slug\.md$/,
  /^duplicates\/same-slug\.md: slug "same-slug" is also the slug of duplicates\/first\.md$/,
  /^ignored front-matter key "layout" \(the posts table has no `layout` column\), first in blog\/2024\/nested\/deep\.md$/,
  /^ignored front-matter key "permalink" \(the posts table has no `permalink` column\), first in blog\/2024\/nested\/deep\.md$/
]

export function describeImport (name: string, server: TestServer): void {
  describeOrSkip(`${name}: blog-read-api import`, { skip: server.skip }, () => {
    const h = createImportHarness(server)
    const { importCli, migrate, posts, watchChanges, bySlug, copyBlog } = h

    test('a missing posts table is one line saying to run migrate, and nothing is read', async () => {
      const result = await importCli(['blog'])
      assert.equal(result.code, 1)
      assert.equal(result.stdout, '')
      assert.match(result.stderr, /^blog-read-api: cannot import into \S+: the database has no `posts` table \(run `blog-read-api migrate` to create the default one\)\n$/)
    })

    test('the fixtures: good posts imported, drafts counted, each bad file one line with its reason, exit 1', async () => {
      await migrate()
      const started = Date.now()
      const result = await importCli(['blog', 'broken', 'duplicates'])
      const finished = Date.now()
      assert.equal(result.code, 1, result.stderr)
      assert.equal(summary(result), 'imported 5, updated 0, unchanged 0, drafts 1, failed 10')
      assertLines(reportLines(result), FIXTURE_REPORT)

      const imported = await posts()
      assert.deepEqual(imported.map((p) => p.slug), GOOD_SLUGS_NEWEST_FIRST)
      const { id, updated_at: updatedAt, ...hello } = bySlug(imported).get('hello-import') as Post
      assert.equal(typeof id, 'number')
      assert.deepEqual(hello, {
        slug: 'hello-import',
        title: 'Hello, import',
        summary: 'The first imported post.',
        content: '# Hello, import\n\nThis post came from a Markdown file.\n',
        author: 'Ada',
        tags: ['intro', 'markdown'],
        published_at: '2024-01-02T00:00:00.000Z'
      })
      // No `updated` in the file: the time of the import that wrote it.
      const stamped = Date.parse(String(updatedAt))
      assert.ok(stamped >= started - 1000 && stamped <= finished + 1000, `updated_at ${String(updatedAt)} is the import's time`)
      const cafe = bySlug(imported).get('cafe-creme')
      assert.equal(cafe?.title, 'Café crème')
      assert.equal(cafe?.published_at, '2024-02-01T08:00:00.000Z')
      assert.equal(cafe?.updated_at, '2024-02-03T09:15:00.000Z')
      assert.equal(cafe?.author, 'Grace')
      assert.deepEqual(cafe?.tags, [])
      assert.equal(bySlug(imported).get('third-post')?.published_at, '2024-03-04T08:30:00.000Z')
      const numbers = bySlug(imported).get('numbers')
      assert.equal(numbers?.title, '1984')
      assert.deepEqual(numbers?.tags, ['2024', 'true'])
      assert.equal(numbers?.published_at, null)
    })

    test('a second run over unchanged files changes nothing: all unchanged, updated_at untouched, the change token still', async () => {
      await migrate()
      const first = await importCli(['blog', 'broken', 'duplicates'])
      assert.equal(first.code, 1)
      const before = await posts()
      const changes = await watchChanges()
      try {
        const token = await changes.token()
        const second = await importCli(['blog', 'broken', 'duplicates'])
        assert.equal(second.code, 1)
        assert.equal(summary(second), 'imported 0, updated 0, unchanged 5, drafts 1, failed 10')
        assert.deepEqual(await posts(), before)
        assert.equal(await changes.token(), token)
      } finally {
        await changes.close()
      }
    })

    test('an edited file updates its row, a new one is inserted, a removed one stays; the change token moves', async () => {
      await migrate()
      const blog = copyBlog()
      const first = await importCli([blog])
      assert.equal(first.code, 0, first.stderr)
      assert.equal(summary(first), 'imported 5, updated 0, unchanged 0, drafts 1, failed 0')
      const before = bySlug(await posts())
      const changes = await watchChanges()
      const token = await changes.token()

      const hello = join(blog, 'hello-import.md')
      writeFileSync(hello, readFileSync(hello, 'utf8').replace('title: Hello, import', 'title: Hello again'))
      const cafe = join(blog, 'Café Crème.md')
      writeFileSync(cafe, readFileSync(cafe, 'utf8') + '\nA new paragraph.\n')
      writeFileSync(join(blog, 'new-post.md'), '---\ntitle: New\ndate: 2025-01-01\n---\nnew\n')
      rmSync(join(blog, '2024', 'numbers.md'))
      const second = await importCli([blog])
      assert.equal(second.code, 0, second.stderr)
      assert.equal(summary(second), 'imported 1, updated 2, unchanged 2, drafts 1, failed 0')

      const after = bySlug(await posts())
      assert.equal(after.get('hello-import')?.title, 'Hello again')
      assert.ok(Date.parse(String(after.get('hello-import')?.updated_at)) > Date.parse(String(before.get('hello-import')?.updated_at)),
        'updated_at moves when the file names none')
      assert.match(String(after.get('cafe-creme')?.content), /A new paragraph/)
      assert.equal(after.get('cafe-creme')?.updated_at, '2024-02-03T09:15:00.000Z', 'the file names its updated_at')
      assert.deepEqual(after.get('third-post'), before.get('third-post'))
      assert.deepEqual(after.get('numbers'), before.get('numbers'), 'the import never deletes')
      assert.equal(after.get('new-post')?.published_at, '2025-01-01T00:00:00.000Z')
      const moved = await changes.token()
      await changes.close()
      if (token !== undefined) assert.notEqual(moved, token)
    })

    test('--dry-run says what it would do and writes nothing', async (t) => {
      await migrate()
      const blog = copyBlog()
      const changes = await watchChanges()
      t.after(async () => await changes.close())
      const token = await changes.token()
      const dry = await importCli(['--dry-run', blog])
      assert.equal(dry.code, 0, dry.stderr)
      const lines = dry.stdout.trimEnd().split('\n')
      assert.deepEqual(lines.slice(0, -1).sort(), GOOD_SLUGS_NEWEST_FIRST.map((slug) => `would insert ${slug} (${join(blog, {
        'a-nested-post': '2024/nested/deep.md',
        'third-post': 'Third Post!.md',
        'cafe-creme': 'Café Crème.md',
        'hello-import': 'hello-import.md',
        numbers: '2024/numbers.md'
      }[slug] ?? '')})`).sort())
      assert.equal(summary(dry), 'would import 5, would update 0, unchanged 0, drafts 1, failed 0 (dry run: nothing written)')
      assert.deepEqual(await posts(), [])
      assert.equal(await changes.token(), token)

      assert.equal((await importCli([blog])).code, 0)
      const hello = join(blog, 'hello-import.md')
      writeFileSync(hello, readFileSync(hello, 'utf8').replace('author: Ada', 'author: Ada Lovelace'))
      const before = await posts()
      const imported = await changes.token()
      const dryAgain = await importCli([blog, '--dry-run'])
      assert.equal(dryAgain.code, 0)
      assert.equal(dryAgain.stdout, `would update hello-import (${hello})\nwould import 0, would update 1, unchanged 4, drafts 1, failed 0 (dry run: nothing written)\n`)
      assert.deepEqual(await posts(), before)
      assert.equal(await changes.token(), imported)

      const failing = await importCli(['--dry-run', 'broken'])
      assert.equal(failing.code, 1, 'a dry run fails as the import would')
      assert.equal(summary(failing), 'would import 0, would update 0, unchanged 0, drafts 0, failed 8 (dry run: nothing written)')
    })

    test('the running service shows the import in its very next answer', async () => {
      await migrate()
      const blog = copyBlog()
      const store = await openTestStore(h.db.location)
      await store.checkSchema()
      const tiers = await startTiers(store)
      try {
        assertProblem(await get(tiers.front.url, '/api/blog'), 'no-posts')
        assert.equal((await importCli([blog])).code, 0)
        const list = await get(tiers.front.url, '/api/blog')
        assert.equal(list.status, 200)
        assert.deepEqual((list.json() as Post[]).map((p) => p.slug), GOOD_SLUGS_NEWEST_FIRST)
        const third = await get(tiers.front.url, '/api/blog/third-post')
        assert.equal((third.json() as Post).title, 'Third post: a name with punctuation')

        const path = join(blog, 'Third Post!.md')
        writeFileSync(path, readFileSync(path, 'utf8').replace('title: "Third post: a name with punctuation"', 'title: Third, renamed'))
        assert.equal((await importCli([blog])).code, 0)
        assert.equal(((await get(tiers.front.url, '/api/blog/third-post')).json() as Post).title, 'Third, renamed')
      } finally {
        await tiers.close()
      }
    })

    test('a file without `title:` takes its first `# heading`, else its file name', async () => {
      await migrate()
      const result = await importCli(['untitled'])
      assert.equal(result.code, 0, result.stderr)
      assert.deepEqual((await posts()).map((p) => [p.slug, p.title]), [['from-heading', 'Heading as title'], ['no-title', 'no title']])
    })
  })
}
