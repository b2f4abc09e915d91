// Store faults under a bounded load through both tiers, on a real
// PostgreSQL: the service's connections are terminated (pg_terminate_backend) again and again,
// then the `posts` table is renamed away and back. Pass: no 500; every non-200 is the 503 problem
// with a Retry-After of 1 to 5 s; back to 200 after each recovery, in the same process (nothing
// is restarted: the pools reconnect by themselves).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { postgresServer } from '../helpers/databases.js'
import { get } from '../helpers/http.js'
import { startLoad, tally, type Answer } from '../helpers/load.js'
import { pollUntil } from '../helpers/poll.js'
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

// Each phase lasts until what it waits for has happened, counted in answers, not in time: on a
// loaded machine the load is slower, and a window of fixed length held fewer answers or none.
// The limits below only end a test whose awaited answers never come.
const PHASE = { withinMs: 15_000 }

describeOrSkip('PostgreSQL faults under load', { skip: postgresServer.skip }, () => {
  test('terminated connections, then a renamed-away table: 503 + Retry-After meanwhile, never 500, then 200', { timeout: 90_000 }, async (t) => {
    const db = await postgresServer.create()
    const tiers = await startOverOneFreshPost(db)
    const connections = `SELECT pid FROM pg_stat_activity WHERE datname = '${db.name}' AND application_name = 'blog-read-api'`
    const terminate = `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${db.name}' AND application_name = 'blog-read-api'`
    const load = startLoad(tiers.front.url, ['/api/blog/first-post', '/api/blog'])
    const all = load.answers
    /** Waits until `count` more answers than `from` have come (the load went on through the phase). */
    const answered = async (what: string, from: number, count: number): Promise<void> => {
      await pollUntil(what, () => all.length >= from + count, PHASE)
    }
    try {
      await answered('answers before the faults', 0, 50)
      const terminateAt = all.length
      let terminated = 0
      for (let i = 0; i < 6; i++) {
        // Each round ends connections the pool opened again since the last, while it serves.
        await pollUntil('the service connected again', async () => (await db.admin(connections)).length > 0, PHASE)
        terminated += (await db.admin(terminate)).length
        await answered('answers after a termination', all.length, 20)
      }
      const terminateEndAt = all.length
      await pollUntil('recovered from terminations: ten 200s in a row', () => endsServed(all.slice(terminateEndAt)), PHASE)
      const renameAt = all.length
      await db.exec('ALTER TABLE posts RENAME TO posts_away')
      await pollUntil('the missing table showed: a 503', () => all.slice(renameAt).some((a) => a.status === 503), PHASE)
      await db.exec('ALTER TABLE posts_away RENAME TO posts')
      const backAt = all.length
      await pollUntil('only 200 at the end, after the table came back', () => endsServed(all.slice(backAt)), PHASE)
      await load.stop()

      const summary = JSON.stringify({
        before: tally(all.slice(0, terminateAt)),
        terminating: tally(all.slice(terminateAt, terminateEndAt)),
        between: tally(all.slice(terminateEndAt, renameAt)),
        renamed: tally(all.slice(renameAt, backAt)),
        after: tally(all.slice(backAt))
      })
      t.diagnostic(`${terminated} backends terminated; ${summary}`)
      assert.deepEqual(load.errors, [], `no connection error or time-out: ${summary}`)
      assert.ok(terminated > 0, 'the service had connections to terminate')
      assertMapped(all, summary)
      assert.ok(all.slice(0, terminateAt).every((a) => a.status === 200), `200 before the faults: ${summary}`)
      // Terminated connections are replaced by the pool, and the table's return is noticed: each
      // phase ended on 200s (awaited above; where in the phase recovery happens depends on the
      // machine's speed).
      assert.ok(endsServed(all), `only 200 at the end: ${summary}`)
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
