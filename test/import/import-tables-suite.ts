// One suite, run against every store: `blog-read-api import` into the tables teams already have
// (other columns for other front-matter keys, the body in a column of its own, tags as the column
// needs them, drafts marked by `status` or a boolean `draft`), and what each store refuses, said
// by the dry run too.
import assert from 'node:assert/strict'
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import type { CliResult } from '../helpers/cli.js'
import { openTestStore, type TestServer } from '../helpers/databases.js'
import { assertLines, createImportHarness, FIXTURES, reportLines, summary, type ImportFixture } from './import-harness.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

export function describeImportTables (name: string, server: TestServer, fixture: ImportFixture): void {
  describeOrSkip(`${name}: blog-read-api import into the tables teams have`, { skip: server.skip }, () => {
    const h = createImportHarness(server)
    const { importCli, posts, bySlug } = h

    test("an operator's table: other keys in their columns, what has no column reported once, a post the database refuses fails alone", async () => {
      await h.db.exec(fixture.operatorTable)
      const folder = join(h.work, 'posts')
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

    test("a team's table: the body in --body-column, tags as the column needs them, drafts marked by status; the dry run refuses what the real run refuses", async () => {
      await h.db.exec(fixture.teamTable)
      cpSync(join(FIXTURES, 'team'), join(h.work, 'team'), { recursive: true })
      const run = async (...args: string[]): Promise<CliResult> => await importCli([...args, 'team'], h.work)

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

    test('a table with a boolean `draft` column stores `draft: true` as true and every other post as false; the rule then hides the draft', async () => {
      await h.db.exec('CREATE TABLE posts (slug VARCHAR(200) NOT NULL PRIMARY KEY, title VARCHAR(200) NOT NULL, content TEXT, draft BOOLEAN)')
      const folder = join(h.work, 'drafts')
      mkdirSync(folder)
      writeFileSync(join(folder, 'pending.md'), '---\ntitle: Pending\ndraft: true\n---\nNot yet.\n')
      writeFileSync(join(folder, 'ready.md'), '---\ntitle: Ready\n---\nOut now.\n')
      const dry = await importCli(['--dry-run', folder])
      assert.equal(dry.code, 0, dry.stderr)
      assertLines(reportLines(dry), [/^\S+pending\.md: a draft, would be imported, marked by `draft` true$/])
      const result = await importCli([folder])
      assert.equal(result.code, 0, result.stderr)
      assert.equal(summary(result), 'imported 2, updated 0, unchanged 0, drafts 1, failed 0')
      assertLines(reportLines(result), [/^\S+pending\.md: a draft, imported, marked by `draft` true$/])
      // A boolean on every store: PostgreSQL's boolean, MySQL's TINYINT(1), SQLite's declared BOOLEAN.
      assert.deepEqual((await posts()).map(({ slug, draft }) => [slug, draft]).sort(), [['pending', true], ['ready', false]])
      assert.equal(summary(await importCli([folder])), 'imported 0, updated 0, unchanged 2, drafts 1, failed 0', 'the booleans compare equal as stored')
      const store = await openTestStore(h.db.location, { publishing: { publishedOnly: true, now: Date.now } })
      try {
        await store.checkSchema()
        assert.equal(await store.findPostBySlug('pending'), undefined)
        assert.equal((await store.findPostBySlug('ready'))?.draft, false)
      } finally {
        await store.close()
      }
    })
  })
}
