// MARKDOWN_COLUMNS naming columns other than `content`, through both tiers over real HTTP and a
// real SQLite file: each named column gets its `_html` and `_text`, the computed fields are read
// from the first one named (not the first in the table), and the feeds show that column.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { computeFields } from '../../src/render/computed-fields.js'
import { createMarkdownRenderer } from '../../src/render/markdown-renderer.js'
import { child, childrenNamed, childText, NS, parseXml } from '../feeds/xml-tree.js'
import { openTestStore, sqliteServer, type TestDatabase } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { startTiers, type Tiers } from '../helpers/tiers.js'

const SITE = 'https://blog.example/'
const render = createMarkdownRenderer()

// `notes` comes first in the table, `body` first in MARKDOWN_COLUMNS.
const POSTS = [
  { slug: 'first', title: 'First', notes: 'A *note* with [a link](/notes/1).', body: '# Body one\n\nThe **body** of the first post, see [two](/blog/second).', at: '2024-05-02T00:00:00Z' },
  { slug: 'second', title: 'Second', notes: 'Only notes, no body.', body: null, at: '2024-05-01T00:00:00Z' }
]

let database: TestDatabase
let tiers: Tiers

before(async () => {
  database = await sqliteServer.create()
  await database.exec('CREATE TABLE posts (slug TEXT PRIMARY KEY, title TEXT, notes TEXT, body TEXT, published_at TEXT)')
  const quoted = (value: string | null): string => value === null ? 'NULL' : `'${value.replaceAll("'", "''")}'`
  await database.exec(`INSERT INTO posts VALUES ${POSTS.map((p) => `(${[p.slug, p.title, p.notes, p.body, p.at].map(quoted).join(', ')})`).join(', ')}`)
  const store = await openTestStore(database.location)
  await store.checkSchema()
  tiers = await startTiers(store, { settings: { MARKDOWN_COLUMNS: 'body,notes', SITE_URL: SITE } })
})
after(async () => {
  await tiers?.close()
  await database?.drop()
})

const routes = (): Array<[tier: string, base: string, list: string, detail: string]> =>
  [['front', tiers.front.url, '/api/blog', '/api/blog/'], ['post API', tiers.posts.url, '/api/posts', '/api/post/']]

test('formats=html,text adds body_html, body_text, notes_html and notes_text, each the renderer\'s; a NULL column renders as null', async () => {
  for (const [tier, base, list, detail] of routes()) {
    const rows = (await get(base, `${list}?formats=html,text`)).json() as Array<Record<string, unknown>>
    assert.deepEqual(rows.map((row) => row.slug), ['first', 'second'], tier)
    for (const [index, row] of rows.entries()) {
      const { notes, body } = POSTS[index]!
      assert.equal(row.notes_html, render(notes).html, tier)
      assert.equal(row.notes_text, render(notes).text, tier)
      assert.equal(row.body_html, body === null ? null : render(body).html, tier)
      assert.equal(row.body_text, body === null ? null : render(body).text, tier)
      assert.ok(!('content_html' in row), tier)
    }
    const one = (await get(base, `${detail}first?formats=html&fields=title,body`)).json() as Record<string, unknown>
    assert.deepEqual(Object.keys(one).sort(), ['body', 'body_html', 'slug', 'title'], `${tier}: a column left out by fields is not rendered`)
    assert.match(String(one.body_html), /^<h1 id="body-one">Body one<\/h1>/, tier)
  }
})

test('reading_time, word_count and excerpt are computed from the first column MARKDOWN_COLUMNS names, not the table\'s first', async () => {
  for (const [tier, base, list] of routes()) {
    const rows = (await get(base, `${list}?fields=reading_time,word_count,excerpt`)).json() as Array<Record<string, unknown>>
    assert.deepEqual(rows, POSTS.map(({ slug, body }) => ({ slug, ...computeFields(render(body ?? '').text, undefined) })), tier)
    assert.match(String(rows[0]!.excerpt), /^Body one The body of the first post/, tier)
    assert.equal(rows[1]!.word_count, 0, `${tier}: no body, no words (its notes are not read)`)
  }
})

test('the feeds show the first Markdown column, its links resolved against SITE_URL', async () => {
  const rss = parseXml((await get(tiers.front.url, '/feed.xml')).text)
  const items = childrenNamed(child(rss, NS.none, 'channel'), NS.none, 'item')
  assert.deepEqual(items.map((item) => childText(item, NS.none, 'link')), ['https://blog.example/blog/first', 'https://blog.example/blog/second'])
  const encoded = childText(items[0]!, NS.content, 'encoded')
  assert.match(encoded, /<h1 id="body-one">Body one<\/h1>/)
  assert.match(encoded, /href="https:\/\/blog\.example\/blog\/second"/)
  assert.doesNotMatch(encoded, /note/)
  assert.equal(childText(items[0]!, NS.none, 'description'), computeFields(render(POSTS[0]!.body!).text, undefined).excerpt)
  const json = (await get(tiers.front.url, '/feed.json')).json() as { items: Array<{ id: string, content_html?: string, content_text?: string }> }
  assert.match(String(json.items[0]!.content_html), /<strong>body<\/strong>/)
  const atom = parseXml((await get(tiers.front.url, '/feed.atom')).text)
  assert.match(childText(childrenNamed(atom, NS.atom, 'entry')[0]!, NS.atom, 'content'), /Body one/)
})
