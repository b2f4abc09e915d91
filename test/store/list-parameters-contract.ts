// The list parameters on every store, through both tiers: none is the whole list; an unknown or
// repeated one is a 400 naming it; `fields` on lists and posts; every malformed value a 400
// naming its parameter, the same at both tiers; a forged cursor never a 5xx. Part of the list
// queries of the store contract suite (list-query-contract.ts).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { encodeCursor } from '../../src/contract/cursor.js'
import { get } from '../helpers/http.js'
import { assertProblem } from '../helpers/problem.js'
import { DATED, ROUTES, slugsOf, type ListQuerySuite } from './list-query-suite.js'

/** Declares the tests of the list parameters in the describe of `suite`. */
export function declareListParameterTests ({ withDefaultTable }: ListQuerySuite): void {
  test('no parameter: the whole list; an unknown or repeated parameter is a 400 naming it, at both tiers, with no upstream call', async () => {
    await withDefaultTable(DATED, async (tiers) => {
      for (const tier of ['posts', 'front'] as const) {
        const plain = await get(tiers[tier].url, ROUTES[tier])
        assert.equal((await get(tiers[tier].url, `${ROUTES[tier]}?`)).text, plain.text)
        assert.equal(plain.headers.link, undefined)
        for (const [search, named] of [
          ['sort_by=title', /Unknown parameter "sort_by"\./], ['Q=hello', /"Q"/], ['offset=2', /"offset"/], ['tags=sql', /"tags"/],
          ['foo=bar&limits=2&page=3&', /Unknown parameters "foo", "limits", "page"\./], ['limit=2&limit=2', /Repeated parameter "limit"\./],
          ['tag=a&tag=b&Tag=c', /Unknown parameter "Tag"\. Repeated parameter "tag"\./]
        ] as const) {
          const problem = assertProblem(await get(tiers[tier].url, `${ROUTES[tier]}?${search}`), 'invalid-query')
          assert.match(String(problem.detail), named, search)
          assert.match(String(problem.detail), /The accepted parameters are limit, after, sort, fields, tag\b/, search)
        }
      }
    })
  })

  test('fields: only those columns, in table order, slug always, on lists and posts, on both tiers', async () => {
    await withDefaultTable(DATED, async (tiers) => {
      for (const tier of ['posts', 'front'] as const) {
        const route = ROUTES[tier]
        const list = await get(tiers[tier].url, `${route}?fields=published_at,title`)
        const posts = list.json() as Array<Record<string, unknown>>
        assert.equal(posts.length, DATED.length)
        for (const post of posts) assert.deepEqual(Object.keys(post), ['slug', 'title', 'published_at'])
        // The same columns in another order, or named twice, are the same query and the same bytes.
        assert.equal((await get(tiers[tier].url, `${route}?fields=title,published_at,slug,title`)).text, list.text)
        assert.deepEqual(slugsOf(await get(tiers[tier].url, `${route}?fields=slug`)), slugsOf(list))
        const detail = tier === 'posts' ? '/api/post/newest' : '/api/blog/newest'
        assert.equal((await get(tiers[tier].url, `${detail}?fields=title`)).text, '{"slug":"newest","title":"Title of newest"}')
        assertProblem(await get(tiers[tier].url, `${detail.replace('newest', 'absent')}?fields=title`), 'post-not-found')
      }
    })
  })

  test('every malformed value is a 400 invalid-query naming its parameter, the same at both tiers', async () => {
    await withDefaultTable(DATED, async (tiers) => {
      const cursor = /after=([^&>]+)/.exec(String((await get(tiers.posts.url, '/api/posts?limit=2')).headers.link))?.[1] ?? assert.fail('a cursor')
      const bad: Array<[string, string]> = [
        ['limit=0', 'limit'], ['limit=1001', 'limit'], ['limit=-1', 'limit'], ['limit=1.5', 'limit'], ['limit=abc', 'limit'],
        ['limit=', 'limit'], ['limit=01', 'limit'], ['limit=%201', 'limit'], ['limit=1&limit=2', 'limit'],
        ['after=', 'after'], ['limit=2&after=not-a-cursor!', 'after'], [`after=${cursor.slice(0, -1)}`, 'after'], [`after=${cursor}A`, 'after'],
        [`after=${cursor}%3D`, 'after'], [`after=x${cursor.slice(1)}`, 'after'], [`after=${encodeCursor({ slug: 'newest' })}`, 'after'],
        [`after=${Buffer.from('{"slug":"a"}').toString('base64url')}`, 'after'], [`after=${'A'.repeat(3000)}`, 'after'],
        ['fields=', 'fields'], ['fields=title,', 'fields'], ['fields=1st', 'fields'], ['fields=ti%20tle', 'fields'],
        ['fields=title;drop', 'fields'], ['fields=nope', 'fields'], ['fields=title,Title', 'fields'], [`fields=${Array.from({ length: 101 }, (_, i) => `c${i}`).join(',')}`, 'fields'],
        ['tag=', 'tag'], ['tag=a,,b', 'tag'], ['tag=a%0Ab', 'tag'], [`tag=${'a'.repeat(101)}`, 'tag'], ['tag_all=', 'tag_all'], ['tag_not=%7F', 'tag_not'],
        ['published_after=yesterday', 'published_after'], ['published_before=2024-02-30', 'published_before'], ['updated_after=2024-01-01T00:00:00', 'updated_after'],
        ['count=yes', 'count']
      ]
      for (const [search, parameter] of bad) {
        const direct = assertProblem(await get(tiers.posts.url, `/api/posts?${search}`), 'invalid-query')
        assert.match(String(direct.detail), new RegExp(`\\b${parameter}\\b`), search)
        const relayed = assertProblem(await get(tiers.front.url, `/api/blog?${search}`), 'invalid-query')
        assert.equal(relayed.detail, direct.detail, search)
      }
      for (const search of ['fields=', 'fields=nope', 'fields=a-b']) {
        const direct = assertProblem(await get(tiers.posts.url, `/api/post/newest?${search}`), 'invalid-query')
        assert.equal(assertProblem(await get(tiers.front.url, `/api/blog/newest?${search}`), 'invalid-query').detail, direct.detail)
      }
    })
  })

  test('a forged cursor that decodes but holds no date is never a 5xx: a page, or a 400', async () => {
    await withDefaultTable(DATED, async (tiers) => {
      for (const publishedAt of ['not a date', 12345, '2024-13-45', '9'.repeat(200)]) {
        const search = `limit=2&after=${encodeCursor({ slug: 'alpha', publishedAt })}`
        for (const [base, route] of [[tiers.posts.url, '/api/posts'], [tiers.front.url, '/api/blog']] as const) {
          const response = await get(base, `${route}?${search}`)
          if (response.status === 400) assertProblem(response, 'invalid-query')
          else assert.ok([200, 404].includes(response.status), `${JSON.stringify(publishedAt)}: ${response.status} ${response.text}`)
        }
      }
    })
  })
}
