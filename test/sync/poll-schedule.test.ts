// The sync polls on injected timers: reads start a fixed period apart, measured start to start,
// with the slowest recent read's time inside the period, so a commit just after a read started
// is seen by a read that ends within the period; and on a store without a change token, every
// request reads the rows (concurrent requests and polls share one read started after they arrived).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createPollSchedule } from '../../src/sync/poll-schedule.js'
import { createPostsSync } from '../../src/sync/posts-sync.js'
import { createManualTimers, type ManualTimers } from '../helpers/manual-timers.js'

/** Lets the promise callbacks queued so far run (a read's end, the schedule after it). */
const settle = async (): Promise<void> => await new Promise((resolve) => setImmediate(resolve))

/** Reads that each end when the test says, recording the (manual) time each started at. */
function controlledReads (timers: ManualTimers): { starts: number[], read: () => Promise<void>, end: () => Promise<void> } {
  const starts: number[] = []
  const pending: Array<() => void> = []
  return {
    starts,
    read: async () => {
      starts.push(timers.now())
      await new Promise<void>((resolve) => pending.push(resolve))
    },
    end: async () => {
      pending.shift()?.()
      await settle()
    }
  }
}

test('reads start a period apart, start to start, less the slowest of the last four reads', async () => {
  const timers = createManualTimers(0)
  const reads = controlledReads(timers)
  const schedule = createPollSchedule({ periodMs: 1000, timers, poll: reads.read })
  schedule.setWanted(true)
  timers.advance(1000)
  assert.deepEqual(reads.starts, [1000])
  // Each read takes as long as the test lets it (in manual time); the next one starts so that it
  // ends within the period of the last one's start when it takes no longer than the slowest.
  for (const took of [70, 30, 150, 40, 40, 40, 40, 40]) {
    timers.advance(took)
    await reads.end()
    const last = reads.starts.at(-1) as number
    while (reads.starts.at(-1) === last) assert.ok(timers.next(), 'a next read is scheduled')
  }
  const gaps = reads.starts.slice(1).map((start, i) => start - (reads.starts[i] as number))
  // The slowest of the last four: 70, 70, 150, 150, 150, 150, 40, 40.
  assert.deepEqual(gaps, [930, 930, 850, 850, 850, 850, 960, 960])
  schedule.close()
  assert.equal(timers.pending(), 0)
})

test('reads taking half the period or more run back to back; unwanted, polling stops after the read in flight', async () => {
  const timers = createManualTimers(0)
  const reads = controlledReads(timers)
  const schedule = createPollSchedule({ periodMs: 200, timers, poll: reads.read })
  schedule.setWanted(true)
  timers.advance(200)
  timers.advance(150)
  await reads.end()
  timers.advance(0)
  assert.deepEqual(reads.starts, [200, 350], 'the next read started as this one ended')
  schedule.setWanted(false)
  timers.advance(150)
  await reads.end()
  timers.advance(10_000)
  assert.equal(reads.starts.length, 2)
  schedule.setWanted(true)
  timers.advance(50)
  assert.equal(reads.starts.length, 3, 'wanted again: a period less the slowest read from now')
  schedule.close()
})

test('without a change token, every request reads the rows, polling or not: no answer is older than its request', async () => {
  const timers = createManualTimers(0)
  let reads = 0
  let versions = new Map([['a', '1']])
  const sync = createPostsSync({
    version: async () => undefined,
    readRowVersions: async () => { reads++; return versions },
    tracksChanges: false,
    pollMs: 1000,
    alwaysPoll: true,
    timers
  })
  const first = await sync.current()
  assert.equal(reads, 1)
  // A commit between two polls shows in the next request, not in the next poll only.
  versions = new Map([['a', '2']])
  timers.advance(999)
  await settle()
  const second = await sync.current()
  assert.notEqual(second, first, 'the request saw the commit made after the last read')
  assert.equal(reads, 2)
  timers.advance(1)
  await settle()
  assert.equal(reads, 3, 'the poll read the rows')
  assert.equal(await sync.current(), second)
  assert.equal(reads, 4)
  sync.close()

  // Not polling (no subscriber, no webhook): every request reads too.
  const idle = createPostsSync({ version: async () => undefined, readRowVersions: async () => { reads++; return versions }, tracksChanges: false, pollMs: 1000, timers })
  await idle.current()
  await idle.current()
  assert.equal(reads, 6)
  idle.close()
})
