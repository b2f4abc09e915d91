// States, tokens and the bounded history against a reference model: random sequences of
// inserts, updates, deletes, renames, restores and multi-row commits, read by a tracker whose
// changes feed a log; clients that kept a copy at any earlier token ask what changed since.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { composeChanges, parseChange, type Change } from '../../src/sync/change.js'
import { createChangeLog, type ChangeLog, type ChangeLogLimits } from '../../src/sync/change-log.js'
import { createStateTracker, diffStates, type Observation } from '../../src/sync/state-tracker.js'
import { isStateToken, stateToken, type RowVersions } from '../../src/sync/state-token.js'

type Versions = Map<string, string>

type Edit =
  | { kind: 'insert', slug: string }
  | { kind: 'update', pick: number }
  | { kind: 'delete', pick: number }
  | { kind: 'rename', pick: number, slug: string }
  | { kind: 'restore', pick: number, back: number }

// Few slugs, so that edits collide: the same slug inserted, deleted and inserted again.
const slugArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'hello-world', 'z-9')
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), slug: slugArb }),
  fc.record({ kind: fc.constant('update' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('rename' as const), pick: fc.nat(), slug: slugArb }),
  fc.record({ kind: fc.constant('restore' as const), pick: fc.nat(), back: fc.nat() })
)
// One commit: one or several edits, read as one state (or none: a read that sees no change).
const commitArb = fc.array(editArb, { minLength: 0, maxLength: 4 })

/** The model's store: versions as a writer leaves them, plus every version a slug ever had. */
function applyEdit (state: Versions, history: Map<string, string[]>, edit: Edit, next: () => string): void {
  const slugs = [...state.keys()]
  const picked = slugs.length === 0 ? undefined : slugs[('pick' in edit ? edit.pick : 0) % slugs.length]
  const write = (slug: string, version: string): void => {
    state.set(slug, version)
    history.set(slug, [...history.get(slug) ?? [], version])
  }
  switch (edit.kind) {
    case 'insert': if (!state.has(edit.slug)) write(edit.slug, next()); break
    case 'update': if (picked !== undefined) write(picked, next()); break
    case 'delete': if (picked !== undefined) state.delete(picked); break
    case 'rename':
      if (picked !== undefined && !state.has(edit.slug)) {
        state.delete(picked)
        write(edit.slug, next())
      }
      break
    case 'restore': {
      // A row put back to an earlier content: a row hash comes back to an earlier version.
      const earlier = picked === undefined ? undefined : history.get(picked)
      if (picked !== undefined && earlier !== undefined) state.set(picked, earlier[edit.back % earlier.length] as string)
    }
  }
}

/** A client's copy after applying `change`: upserted slugs take the head's version. */
function applyChange (copy: Versions, change: Change, head: RowVersions): Versions {
  const result = new Map(copy)
  for (const slug of change.deleted) result.delete(slug)
  for (const slug of change.upserted) {
    assert.ok(head.has(slug), `upserted ${slug} is in the current state`)
    result.set(slug, head.get(slug) as string)
  }
  return result
}

const sorted = (versions: RowVersions): Array<[string, string]> => [...versions].sort(([a], [b]) => a < b ? -1 : 1)

/** The same pairs inserted in another order: a process that read the rows in another order. */
const shuffled = (versions: RowVersions, seed: number): Versions => {
  const pairs = [...versions]
  for (let i = pairs.length - 1; i > 0; i--) {
    const j = (seed + i * 7919) % (i + 1)
    ;[pairs[i], pairs[j]] = [pairs[j] as [string, string], pairs[i] as [string, string]]
  }
  return new Map(pairs)
}

interface Run {
  /** Every state observed, in order, with its token. */
  seen: Array<{ token: string, versions: Versions }>
  log: ChangeLog
  changes: Change[]
}

/** What a post API does with each state it reads: a change extends the log; a first state starts it. */
function record (log: ChangeLog, { token, change }: Observation): void {
  if (change !== undefined) log.append(change)
  else if (log.head !== token) log.reset(token)
}

function runCommits (commits: Edit[][], limits: ChangeLogLimits): Run {
  const tracker = createStateTracker()
  const log = createChangeLog(limits)
  const state: Versions = new Map()
  const history = new Map<string, string[]>()
  let counter = 0
  const seen: Run['seen'] = []
  const changes: Change[] = []
  for (const commit of commits) {
    for (const edit of commit) applyEdit(state, history, edit, () => `v${++counter}`)
    const versions = new Map(state)
    const observation = tracker.observe(versions)
    record(log, observation)
    if (observation.change !== undefined) changes.push(observation.change)
    seen.push({ token: observation.token, versions })
  }
  return { seen, log, changes }
}

const roomy: ChangeLogLimits = { maxStates: 10_000, maxBytes: 1 << 30 }

test('a client at any state it was given reaches exactly the current state by applying the answer', () => {
  fc.assert(fc.property(fc.array(commitArb, { minLength: 1, maxLength: 40 }), (commits) => {
    const { seen, log, changes } = runCommits(commits, roomy)
    const head = (seen.at(-1) as Run['seen'][number]).versions
    for (const { token, versions } of seen) {
      const change = log.since(token)
      assert.ok(change !== undefined, 'a state within the bounds is never expired')
      assert.equal(change.since, token)
      assert.equal(change.until, log.head)
      assert.deepEqual(sorted(applyChange(versions, change, head)), sorted(head))
      // The tracker knows which posts are new: nothing the client never had is listed as deleted.
      for (const slug of change.deleted) assert.ok(versions.has(slug), `deleted ${slug} was in the client's copy`)
      for (const slug of change.added ?? []) assert.ok(!versions.has(slug) && change.upserted.includes(slug), `added ${slug} is new to the client`)
    }
    // A subscriber applying every change as it comes ends where the store is.
    let copy: Versions = new Map((seen[0] as Run['seen'][number]).versions)
    let at = (seen[0] as Run['seen'][number]).token
    for (const change of changes) {
      assert.equal(change.since, at, 'each change starts where the previous one ended')
      assert.ok(change.upserted.length + change.deleted.length > 0, 'a change changes something')
      copy = applyChange(copy, change, seen.find((s) => s.token === change.until)?.versions as Versions)
      at = change.until
    }
    assert.deepEqual(sorted(copy), sorted(head))
  }), { numRuns: 1000 })
})

test('a token the log does not hold is expired, never a wrong delta, whatever the bounds', () => {
  const limitsArb = fc.record({ maxStates: fc.integer({ min: 2, max: 6 }), maxBytes: fc.integer({ min: 0, max: 3000 }) })
  fc.assert(fc.property(fc.array(commitArb, { minLength: 1, maxLength: 40 }), limitsArb, fc.string(), (commits, limits, guess) => {
    const { seen, log } = runCommits(commits, limits)
    const head = (seen.at(-1) as Run['seen'][number]).versions
    let answered = 0
    for (const { token, versions } of seen) {
      const change = log.since(token)
      if (change === undefined) continue
      answered++
      assert.deepEqual(sorted(applyChange(versions, change, head)), sorted(head))
    }
    assert.ok(answered >= 1, 'the head is always answered')
    const { states, bytes } = log.stats()
    assert.ok(states <= limits.maxStates, `${states} states held, at most ${limits.maxStates}`)
    assert.ok(states <= 2 || bytes <= limits.maxBytes, `${bytes} bytes held beyond the newest change, at most ${limits.maxBytes}`)
    const unknown = seen.some((s) => s.token === guess) ? stateToken(new Map([['never', 'seen']])) : guess
    assert.equal(log.since(unknown), undefined)
  }), { numRuns: 1000 })
})

test('independent processes fed the same states name them alike; a fresh one answers only what it saw', () => {
  fc.assert(fc.property(fc.array(commitArb, { minLength: 2, maxLength: 30 }), fc.nat(), (commits, seed) => {
    const { seen } = runCommits(commits, roomy)
    const other = createStateTracker()
    const late = createStateTracker()
    const lateLog = createChangeLog(roomy)
    const start = seed % seen.length
    seen.forEach(({ token, versions }, i) => {
      assert.equal(other.observe(shuffled(versions, seed + i)).token, token)
      if (i < start) return
      const observation = late.observe(shuffled(versions, seed * 3 + i))
      assert.equal(observation.token, token)
      record(lateLog, observation)
    })
    const lateTokens = new Set(seen.slice(start).map((s) => s.token))
    for (const { token } of seen) assert.equal(lateLog.since(token) !== undefined, lateTokens.has(token))
    // Distinct states, distinct tokens.
    const byToken = new Map<string, string>()
    for (const { token, versions } of seen) {
      const content = JSON.stringify(sorted(versions))
      assert.equal(byToken.get(token) ?? content, content)
      byToken.set(token, content)
    }
  }), { numRuns: 300 })
})

test('tokens are short, URL-safe, and tell slugs and versions apart', () => {
  const token = stateToken(new Map([['a', '1']]))
  assert.ok(isStateToken(token), token)
  assert.equal(encodeURIComponent(token), token)
  assert.notEqual(stateToken(new Map([['a', '1b']])), stateToken(new Map([['a1', 'b']])))
  assert.notEqual(stateToken(new Map([['a', '"b']])), stateToken(new Map([['a"', 'b']])))
  assert.notEqual(stateToken(new Map()), stateToken(new Map([['', '']])))
  assert.equal(isStateToken('short'), false)
  assert.equal(isStateToken(`${token.slice(1)}.`), false)
})

test('reading the same state again is no change; the first state read is a baseline, not a change', () => {
  const tracker = createStateTracker()
  const first = tracker.observe(new Map([['a', '1']]))
  assert.equal(first.change, undefined)
  assert.equal(tracker.observe(new Map([['a', '1']])).change, undefined)
  const { change } = tracker.observe(new Map([['b', '1']]))
  assert.deepEqual(change, { since: first.token, until: tracker.token, upserted: ['b'], deleted: ['a'], added: ['b'] })
})

test('the log ignores a change that changes nothing, and restarts on a change that does not start at its head', () => {
  const log = createChangeLog()
  const [t1, t2, t3, t4] = ['1', '2', '3', '4'].map((v) => stateToken(new Map([['a', v]]))) as [string, string, string, string]
  log.reset(t1)
  log.append({ since: t1, until: t2, upserted: [], deleted: [] })
  assert.equal(log.head, t1)
  log.append({ since: t1, until: t2, upserted: ['a'], deleted: [] })
  log.append({ since: t3, until: t4, upserted: ['a'], deleted: [] })
  assert.equal(log.head, t4)
  assert.equal(log.since(t2), undefined, 'the gap between t2 and t3 is unknown')
  assert.deepEqual(log.since(t3), { since: t3, until: t4, upserted: ['a'], deleted: [], added: [] })
  assert.deepEqual(log.since(t4), { since: t4, until: t4, upserted: [], deleted: [], added: [] })
  assert.throws(() => createChangeLog({ maxStates: 1, maxBytes: 1 }), RangeError)
})

test('composed and parsed changes', () => {
  const [t1, t2, t3] = ['1', '2', '3'].map((v) => stateToken(new Map([['a', v]]))) as [string, string, string]
  assert.deepEqual(
    composeChanges({ since: t1, until: t2, upserted: ['a', 'b'], deleted: ['c'] }, { since: t2, until: t3, upserted: ['c'], deleted: ['a'] }),
    { since: t1, until: t3, upserted: ['b', 'c'], deleted: ['a'], added: [] }, 'without knowing what was added, a slug that went is listed')
  assert.deepEqual(
    composeChanges({ since: t1, until: t2, upserted: ['a', 'b'], deleted: [], added: ['a'] }, { since: t2, until: t3, upserted: [], deleted: ['a'] }),
    { since: t1, until: t3, upserted: ['b'], deleted: [], added: [] }, 'a post added and removed within the span is left out')
  assert.deepEqual(diffStates(new Map([['a', '1']]), new Map([['a', '2'], ['b', '1']]), t1, t2), { since: t1, until: t2, upserted: ['a', 'b'], deleted: [], added: ['b'] })
  const good = { since: t1, until: t2, upserted: ['b', 'a'], deleted: [] }
  assert.deepEqual(parseChange(good), { since: t1, until: t2, upserted: ['a', 'b'], deleted: [] })
  for (const bad of [null, 'x', { ...good, since: 'x' }, { ...good, until: 1 }, { ...good, upserted: [1] }, { ...good, deleted: 'a' }, { ...good, deleted: ['a'] }]) {
    assert.equal(parseChange(bad), undefined, JSON.stringify(bad))
  }
})
