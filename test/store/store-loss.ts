// Losing the store's connections under a running service: answers are 503 with Retry-After
// (never 500, never a hang), and the service recovers by itself once the store is back.
import assert from 'node:assert/strict'
import type { SettingName } from '../../src/config.js'
import { testConfig } from '../helpers/config.js'
import { openTestStore, type TestDatabase } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { pollUntil } from '../helpers/poll.js'
import { assertProblem } from '../helpers/problem.js'
import { startTiers, type Tiers } from '../helpers/tiers.js'

/** The tiers over `db`, holding one post; the serving store opened with `settings`. */
export async function startOverOneFreshPost (db: TestDatabase, settings: Partial<Record<SettingName, string>> = {}): Promise<Tiers> {
  const writer = await openTestStore(db.location, { writable: true })
  await writer.migrate()
  await writer.close()
  await db.exec("INSERT INTO posts (slug, title, content) VALUES ('first-post', 'First', '')")
  const store = await openTestStore(db.location, { config: testConfig(settings) })
  await store.checkSchema()
  return await startTiers(store)
}

/** Every answer is 200 or the mapped 503 problem with Retry-After; returns the statuses. */
export async function answersDuringLoss (tiers: Tiers, requests: number): Promise<number[]> {
  const statuses: number[] = []
  for (let i = 0; i < requests; i++) {
    const direct = await get(tiers.posts.url, '/api/post/first-post')
    const relayed = await get(tiers.front.url, '/api/blog/first-post')
    for (const [response, kind] of [[direct, 'store-unavailable'], [relayed, 'upstream-unavailable']] as const) {
      statuses.push(response.status)
      if (response.status !== 200) {
        assertProblem(response, kind)
        assert.match(String(response.headers['retry-after']), /^[1-5]$/)
      }
    }
  }
  return statuses
}

/** Resolves with the milliseconds it took the front to answer 200 again. */
export async function recovers (tiers: Tiers, withinMs = 5000): Promise<number> {
  const start = Date.now()
  await pollUntil('200 again after the store came back', async () => (await get(tiers.front.url, '/api/blog/first-post')).status === 200, { withinMs, everyMs: 100 })
  return Date.now() - start
}
