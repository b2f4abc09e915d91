// One suite, run against every store: `blog-read-api import` through its command line (in this
// process), on the fixtures (good, broken, draft, duplicate, odd names, nested folders), into a real database.
import assert from 'node:assert/strict'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, beforeEach, describe, test } from 'node:test'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { StoreLocation } from '../../src/config.js'
import type { Post, PostStore } from '../../src/store/store.js'
import { runCliHere, type CliResult } from '../helpers/cli.js'
import { openTestStore, type TestDatabase, type TestServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { startTiers } from '../helpers/tiers.js'

export const FIXTURES = fileURLToPath(new URL('../fixtures/import/', import.meta.url))

export interface ImportFixture {
  /**
   * An operator's table without `tags` or `updated_at`, with a text, a boolean and a JSON column
   * for other front-matter keys, and a CHECK refusing titles over 20 characters.
   */
  operatorTable: string
  /**
   * A team's own table, as a user had it: the body in `body_html` (NOT NULL), a NOT NULL
   * `summary` with a default, tags in the store's own shape, a `status` column, a NOT NULL `lang` without a default, `minutes`, and on
   * servers that type columns, a `title` of at most 20 characters and an integer `minutes`.
   */
  teamTable: string
  /** Files of the `team` fixture this store refuses, beyond `team/no-lang.md` (which all do), with the reason. */
  teamRefusals: RegExp[]
}

const databaseUrl = (location: StoreLocation): string => location.dialect === 'sqlite' ? location.filename : location.url

/** The summary line: the last line of stdout. */
const summary = (result: CliResult): string => result.stdout.trimEnd().split('\n').at(-1) ?? ''

/** Report lines on stderr, without the progress lines. */
const reportLines = (result: CliResult): string[] =>
  result.stderr.split('\n').filter((line) => line !== '' && !/^(writing|comparing): \d+\/\d+ files done$/.test(line))

/** Each line matches exactly one pattern, and each pattern one line. */
function assertLines (lines: string[], patterns: RegExp[]): void {
  assert.equal(lines.length, patterns.length, `expected ${patterns.length} lines, got:\n${lines.join('\n')}`)
  for (const pattern of patterns) {
    assert.equal(lines.filter((line) => pattern.test(line)).length, 1, `one line matching ${pattern} in:\n${lines.join('\n')}`)
  }
}

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

export function describeImport (name: string, server: TestServer, fixture: ImportFixture): void {
  describe(`${name}: blog-read-api import`, { skip: server.skip }, () => {
    let db: TestDatabase
    let work: string

    before(async () => { db = await server.create() })
    after(async () => { await db?.drop() })
    beforeEach(async () => {
      await db.exec('DROP TABLE IF EXISTS posts')
      work = mkdtempSync(join(tmpdir(), 'blog-read-api-import-'))
    })

    // In this process (a spawn per case would cost a second each; import-cli.test.ts runs the
    // built executable end to end), from `cwd` as a user's shell would be: the command reads
    // and reports paths relative to it.
    const cli = async (args: string[], cwd = FIXTURES): Promise<CliResult> => {
      const from = process.cwd()
      process.chdir(cwd)
      try {
        return await runCliHere(args, { DATABASE_URL: databaseUrl(db.location) })
      } finally {
        process.chdir(from)
      }
    }
    const importCli = async (args: string[], cwd = FIXTURES): Promise<CliResult> => await cli(['import', ...args], cwd)

    async function migrate (): Promise<void> {
      const result = await cli(['migrate'])
      assert.equal(result.code, 0, result.stderr)
    }

    async function withStore<T> (use: (store: PostStore) => Promise<T>): Promise<T> {
      const store = await openTestStore(db.location)
      try {
        await store.checkSchema()
        return await use(store)
      } finally {
        await store.close()
      }
    }

    const posts = async (): Promise<Post[]> => await withStore(async (store) => {
      const list: Post[] = []
      for await (const batch of store.streamPosts()) list.push(...batch)
      return list
    })

    /**
     * What tells whether the import wrote: the change token as the post API reads it, from one
     * connection kept open; undefined on MySQL. PostgreSQL's token moves with any transaction on
     * the server (other tests' too), so there it is each row's xmin, the transaction that wrote it.
     */
    async function watchChanges (): Promise<{ token: () => Promise<string | undefined>, close: () => Promise<void> }> {
      const store = await openTestStore(db.location)
      await store.checkSchema()
      const token = async (): Promise<string | undefined> => {
        if (db.location.dialect !== 'postgres') return await store.readChangeToken()
        const client = new pg.Client({ connectionString: db.location.url })
        await client.connect()
        try {
          return JSON.stringify((await client.query('SELECT slug, xmin::text FROM posts ORDER BY slug')).rows)
        } finally {
          await client.end()
        }
      }
      return { token, close: async () => await store.close() }
    }
    const bySlug = (list: Post[]): Map<string, Post> => new Map(list.map((p) => [p.slug, p]))

    /** A copy of the fixtures' good posts, to edit. */
    function copyBlog (): string {
      cpSync(join(FIXTURES, 'blog'), join(work, 'blog'), { recursive: true, verbatimSymlinks: true })
      return join(work, 'blog')
    }

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
      const store = await openTestStore(db.location)
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

    test("an operator's table: other keys in their columns, what has no column reported once, a post the database refuses fails alone", async () => {
      await db.exec(fixture.operatorTable)
      const folder = join(work, 'posts')
      cpSync(join(FIXTURES, 'operator'), folder, { recursive: true })
      const result = await importCli([folder])
      assert.equal(result.code, 1)
      assert.equal(summary(result), 'imported 2, updated 0, unchanged 0, drafts 0, failed 1')
      assertLines(reportLines(result), [
        new RegExp(`^${join(folder, 'far-too-long.md').replaceAll('.', '\\.')}: the database refused it: .+`),
        /^ignored front-matter key "tags" \(the posts table has no `tags` column\), first in /,
        /^ignored front-matter key "updated" \(the posts table has no `updated_at` column\), first in /,
        /^ignored front-matter key "layout" \(the posts table has no `layout` column\), first in /
      ])
      const stored = (await posts()).map(({ id, ...post }) => post)
      assert.deepEqual(stored, [
        { slug: 'featured', title: 'Featured', content: 'Body.\n', category: 'news', featured: true, extra: { a: [1, 2], b: 'c' }, published_at: '2024-01-01T00:00:00.000Z' },
        { slug: 'plain', title: 'Plain', content: '', category: null, featured: false, extra: null, published_at: null }
      ])
      const again = await importCli([folder])
      assert.equal(summary(again), 'imported 0, updated 0, unchanged 2, drafts 0, failed 1', 'booleans and JSON compare equal as stored')

      const long = join(folder, 'far-too-long.md')
      writeFileSync(long, readFileSync(long, 'utf8').replace(/^title: .*$/m, 'title: Short now'))
      const fixed = await importCli([folder])
      assert.equal(fixed.code, 0, fixed.stderr)
      assert.equal(summary(fixed), 'imported 1, updated 0, unchanged 2, drafts 0, failed 0')
    })

    test('a file without `title:` takes its first `# heading`, else its file name', async () => {
      await migrate()
      const result = await importCli(['untitled'])
      assert.equal(result.code, 0, result.stderr)
      assert.deepEqual((await posts()).map((p) => [p.slug, p.title]), [['from-heading', 'Heading as title'], ['no-title', 'no title']])
    })

    test("a team's table: the body in --body-column, tags as the column needs them, drafts marked by status; the dry run refuses what the real run refuses", async () => {
      await db.exec(fixture.teamTable)
      cpSync(join(FIXTURES, 'team'), join(work, 'team'), { recursive: true })
      const run = async (...args: string[]): Promise<CliResult> => await importCli([...args, 'team'], work)

      const noBody = await run('--dry-run')
      assert.match(noBody.stderr, /^ignored the Markdown body \(the posts table has no `content` column; name the body's column with --body-column\), first in team\//m)
      const wrongColumn = await run('--body-column', 'body')
      assert.equal(wrongColumn.code, 1)
      assert.match(wrongColumn.stderr, /^blog-read-api: cannot import into \S+: the `posts` table has no `body` column \(--body-column names the column the Markdown body fills; the table has `id`, `slug`, .*`body_html`/)

      const slugColumn = await run('--body-column', 'slug')
      assert.equal(slugColumn.code, 1)
      assert.match(slugColumn.stderr, /^blog-read-api: cannot import into \S+: --body-column cannot be `slug`: the import fills it otherwise/)

      const refusals = [/^team\/no-lang\.md: column `lang` \(.+\) is NOT NULL without a default, and the file gives it no value$/, ...fixture.teamRefusals]
      const dry = await run('--dry-run', '--body-column', 'body_html')
      assert.equal(dry.code, 1)
      assertLines(reportLines(dry), [...refusals, /^team\/draft\.md: a draft, would be imported, marked by `status` "draft"$/])
      assert.deepEqual(await posts(), [], 'the dry run wrote nothing')
      const real = await run('--body-column=body_html')
      assert.equal(real.code, 1)
      assertLines(reportLines(real), [...refusals, /^team\/draft\.md: a draft, imported, marked by `status` "draft"$/])
      // What the dry run said it would insert is what the real run inserted, and its failures are the same lines.
      const wouldInsert = dry.stdout.split('\n').flatMap((line) => /^would insert (\S+) /.exec(line)?.[1] ?? [])
      const stored = await posts()
      assert.deepEqual(stored.map((p) => p.slug).sort(), wouldInsert.sort())
      assert.deepEqual(reportLines(real).filter((line) => !line.includes('a draft')), reportLines(dry).filter((line) => !line.includes('a draft')))
      const counts = (result: CliResult): string => summary(result).match(/\d+/g)?.join() ?? ''
      assert.equal(counts(real), counts(dry))
      assert.equal(summary(real), `imported ${stored.length}, updated 0, unchanged 0, drafts 1, failed ${refusals.length}`)

      const tagged = bySlug(stored).get('tagged')
      const tags = typeof tagged?.tags === 'string' ? JSON.parse(tagged.tags) as unknown : tagged?.tags
      assert.deepEqual(tags, ['intro', 'with, comma', 'quote "x"', '{braces}'])
      assert.equal(tagged?.body_html, 'Body of tagged.\n')
      assert.equal(tagged?.summary, '', 'no `summary:` for a NOT NULL column with a default: the default')
      assert.equal(tagged?.status, 'published')
      assert.equal(tagged?.lang, 'en')
      assert.equal(Number(tagged?.minutes), 3)
      assert.equal(tagged?.published_at, '2024-05-01T00:00:00.000Z')
      const draft = bySlug(stored).get('draft')
      assert.equal(draft?.status, 'draft')
      assert.equal(draft?.body_html, 'A draft the table marks.\n')

      const again = await run('--body-column', 'body_html')
      assert.equal(summary(again), `imported 0, updated 0, unchanged ${stored.length}, drafts 1, failed ${refusals.length}`, 'tags compare equal as stored')
      assert.match(again.stderr, /^team\/draft\.md: a draft, unchanged, marked by `status` "draft"$/m)
    })
  })
}
