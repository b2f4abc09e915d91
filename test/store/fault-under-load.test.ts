// Store faults under a bounded load through both tiers, on a real
// PostgreSQL: the service's connections are terminated (pg_terminate_backend) again and again,
// then the `posts` table is renamed away and back. Pass: no 500; every non-200 is the 503 problem
// with a Retry-After of 1 to 5 s; back to 200 after each recovery, in the same process (nothing
// is restarted: the pools reconnect by themselves).
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { test } from 'node:test'
import { postgresServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { between, startLoad, tally, type Answer } from '../helpers/load.js'
import { startOverOneFreshPost } from './store-loss.js'
import { describeOrSkip } from '../helpers/describe-or-skip.js'

/** Every non-200 is the front's 503 problem relaying the post API's Retry-After (1 s, doubling, at most 5 s). */
function assertMapped (answers: Answer[], summary: string): void {
  for (const answer of answers) {
    if (answer.status === 200) continue
    assert.equal(answer.kind, 'upstream-unavailable', `only 200 or the 503 problem: ${summary}`)
    assert.match(answer.retryAfter ?? '', /^[1-5]$/, `Retry-After on every 503: ${summary}`)
  }
}

/** The phase's last answers (its last ten, from 10 concurrent clients) are all 200. */
function endsServed (answers: Answer[]): boolean {
  const last = answers.slice(-10)
  return last.length === 10 && last.every((a) => a.status === 200)
}

describeOrSkip('PostgreSQL faults under load', { skip: postgresServer.skip }, () => {
  test('terminated connections, then a renamed-away table: 503 + Retry-After meanwhile, never 500, then 200', { timeout: 30_000 }, async (t) => {
    const db = await postgresServer.create()
    const tiers = await startOverOneFreshPost(db)
    const terminate = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}' AND application_name = 'blog-read-api'`
    const load = startLoad(tiers.front.url, ['/api/blog/first-post', '/api/blog'])
    try {
      await sleep(700)
      const terminateAt = load.elapsed()
      let terminated = 0
      for (let i = 0; i < 6; i++) {
        terminated += (await db.admin(terminate)).length
        await sleep(150)
      }
      const terminateEndAt = load.elapsed()
      await sleep(1000)
      const renameAt = load.elapsed()
      await db.exec('ALTER TABLE posts RENAME TO posts_away')
      await sleep(1000)
      await db.exec('ALTER TABLE posts_away RENAME TO posts')
      const backAt = load.elapsed()
      await sleep(1500)
      await load.stop()

      const all = load.answers
      const summary = JSON.stringify({
        before: tally(between(all, 0, terminateAt)),
        terminating: tally(between(all, terminateAt, terminateEndAt)),
        between: tally(between(all, terminateEndAt, renameAt)),
        renamed: tally(between(all, renameAt, backAt)),
        after: tally(between(all, backAt))
      })
      t.diagnostic(`${terminated} backends terminated; ${summary}`)
      assert.deepEqual(load.errors, [], `no connection error or time-out: ${summary}`)
      assert.ok(terminated > 0, 'the service had connections to terminate')
      assertMapped(all, summary)
      assert.ok(between(all, 0, terminateAt).every((a) => a.status === 200), `200 before the faults: ${summary}`)
      // Terminated connections are replaced by the pool, and the table's return is noticed: each
      // phase ends on 200s. (Where in the phase recovery happens depends on the machine's speed.)
      assert.ok(endsServed(between(all, terminateEndAt, renameAt)), `recovered from terminations: ${summary}`)
      assert.ok(between(all, renameAt, backAt).some((a) => a.status === 503), `the missing table showed: ${summary}`)
      assert.ok(endsServed(between(all, backAt)), `only 200 at the end, after the table came back: ${summary}`)
      // The post API itself, asked directly, is healthy too.
      assert.equal((await get(tiers.posts.url, '/api/post/first-post')).status, 200)
    } finally {
      await load.stop()
      await db.exec('ALTER TABLE IF EXISTS posts_away RENAME TO posts').catch(() => {})
      await tiers.close()
      await db.drop()
    }
  })
})
