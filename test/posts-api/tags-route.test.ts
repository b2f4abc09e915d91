// GET /api/posts/tags and the front's GET /api/tags: every tag with its number of posts, each
// post counted once per tag, only strings of JSON arrays, exactly fresh, with ETags and 304s.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { countTags } from '../../src/contract/tag-counts.js'
import { sqliteServer, type TestDatabase } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { startTiersOn, type Tiers } from '../helpers/tiers.js'

test('counted once per post, strings of arrays only, most used first then bytewise', () => {
  assert.deepEqual(countTags([['b', 'a', 'a'], '["a","B",1,null]', 'not json', null, { a: 1 }, ['b'], ['é']]), [
    { tag: 'a', count: 2 }, { tag: 'b', count: 2 }, { tag: 'B', count: 1 }, { tag: 'é', count: 1 }
  ].sort((x, y) => y.count - x.count || Buffer.compare(Buffer.from(x.tag), Buffer.from(y.tag))))
})

let db: TestDatabase
let tiers: Tiers | undefined

before(async () => { db = await sqliteServer.create() })
after(async () => {
  await tiers?.close()
  await db?.drop()
})

test('both tiers: the counts, fresh after a change, 304 while unchanged; a table without tags has none', async () => {
  await db.exec("CREATE TABLE posts (slug TEXT PRIMARY KEY, tags JSON); INSERT INTO posts VALUES ('a', '[\"C++\",\"sql\",\"sql\"]'), ('b', '[\"sql\"]'), ('c', 'null'), ('d', '[1, \"Node.js\"]')")
  tiers = await startTiersOn(db)
  const expected = [{ tag: 'sql', count: 2 }, { tag: 'C++', count: 1 }, { tag: 'Node.js', count: 1 }]
  for (const [base, path] of [[tiers.posts.url, '/api/posts/tags'], [tiers.front.url, '/api/tags']] as const) {
    const answer = await get(base, path)
    assert.equal(answer.status, 200, answer.text)
    assert.deepEqual(answer.json(), expected, path)
    assert.equal((await get(base, path, { 'if-none-match': String(answer.headers.etag) })).status, 304, path)
  }
  await db.exec("INSERT INTO posts VALUES ('e', '[\"rust\",\"C++\"]')")
  for (const [base, path] of [[tiers.posts.url, '/api/posts/tags'], [tiers.front.url, '/api/tags']] as const) {
    assert.deepEqual((await get(base, path)).json(), [{ tag: 'C++', count: 2 }, { tag: 'sql', count: 2 }, { tag: 'Node.js', count: 1 }, { tag: 'rust', count: 1 }], path)
  }
  await tiers.close()
  await db.exec('DROP TABLE posts; CREATE TABLE posts (slug TEXT PRIMARY KEY)')
  tiers = await startTiersOn(db)
  assert.equal((await get(tiers.front.url, '/api/tags')).text, '[]')
})
