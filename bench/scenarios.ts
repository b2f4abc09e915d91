// The benchmark's scenarios, their targets, and which dataset each runs on.
import type { RequestSequence, RequestSpec } from './load.js'
import { createRandom, pick, randomInt } from './random.js'

export const SCENARIO_NAMES = ['list-20', 'detail', 'detail-20', 'detail-304', 'list-1000', 'invalid', 'missing', 'page', 'sorted-page', 'list-100000'] as const
export type ScenarioName = typeof SCENARIO_NAMES[number]

export type Store = 'sqlite' | 'postgres'

export interface Scenario {
  readonly name: ScenarioName
  readonly expectedStatus: number
  /** The issues' targets for requests/s as a ratio to the baseline, per store. */
  readonly minRatio?: Readonly<Record<Store, number>>
  /** The p99 bound, for the 50-connection scenarios but the large lists. */
  readonly maxP99Ms?: number
  /** Its bodies are megabytes: statuses are not counted one by one (see LoadOptions). */
  readonly largeBodies?: boolean
}

const P99_MS = 25
const both = (ratio: number): Record<Store, number> => ({ sqlite: ratio, postgres: ratio })

// The targets: a ratio to the limit per store, and a p99 bound where the scenario has one.
export const SCENARIOS: Record<ScenarioName, Scenario> = {
  'list-20': { name: 'list-20', expectedStatus: 200, minRatio: { sqlite: 0.75, postgres: 0.50 }, maxP99Ms: P99_MS },
  detail: { name: 'detail', expectedStatus: 200, minRatio: { sqlite: 0.25, postgres: 0.18 }, maxP99Ms: P99_MS },
  'detail-20': { name: 'detail-20', expectedStatus: 200, minRatio: { sqlite: 0.30, postgres: 0.22 }, maxP99Ms: P99_MS },
  'detail-304': { name: 'detail-304', expectedStatus: 304, minRatio: both(0.35), maxP99Ms: P99_MS },
  'list-1000': { name: 'list-1000', expectedStatus: 200, minRatio: { sqlite: 0.85, postgres: 0.65 }, largeBodies: true },
  invalid: { name: 'invalid', expectedStatus: 400, minRatio: both(0.80), maxP99Ms: P99_MS },
  missing: { name: 'missing', expectedStatus: 404, minRatio: { sqlite: 0.50, postgres: 0.45 }, maxP99Ms: P99_MS },
  // A page of 20 trimmed posts should come as close to the limit as the 20-post list.
  page: { name: 'page', expectedStatus: 200, minRatio: { sqlite: 0.75, postgres: 0.50 }, maxP99Ms: P99_MS },
  // Figures only: no target was set for it.
  'sorted-page': { name: 'sorted-page', expectedStatus: 200, maxP99Ms: P99_MS },
  'list-100000': { name: 'list-100000', expectedStatus: 200, minRatio: both(0.15), largeBodies: true }
}

/** list-100000's targets: every process stays under this peak RSS, and the first byte comes within a second. */
export const MEMORY_RUN = { maxRssMb: 200, maxFirstByteMs: 1000, sequential: 3, concurrent: 5 } as const

/** The datasets, each served by its own processes, and the scenarios run on each. */
export interface Phase {
  readonly posts: number
  readonly scenarios: readonly ScenarioName[]
}

export const FULL_PLAN: readonly Phase[] = [
  { posts: 20, scenarios: ['list-20'] },
  { posts: 1000, scenarios: ['detail', 'detail-20', 'detail-304', 'missing', 'invalid', 'list-1000', 'sorted-page'] },
  // Processes of their own, so that the memory run's peaks are its own.
  { posts: 100_000, scenarios: ['page'] },
  { posts: 100_000, scenarios: ['list-100000'] }
]

/** --smoke: everything that works on 20 posts. */
export const SMOKE_PLAN: readonly Phase[] = [
  { posts: 20, scenarios: ['list-20', 'detail', 'detail-20', 'detail-304', 'invalid', 'missing', 'page', 'sorted-page'] }
]

/** What `page` asks for, as the issue words it (the tiers put the fields in canonical order). */
export const PAGE_SIZE = 20
export const PAGE_FIELDS = ['slug', 'title', 'published_at'] as const
export const PAGE_PATH = `/api/blog?limit=${PAGE_SIZE}&fields=${PAGE_FIELDS.join(',')}`
/** What `sorted-page` asks for: the first page of every column in title order (code points). */
export const SORTED_PAGE_PATH = `/api/blog?limit=${PAGE_SIZE}&sort=title`

const SEED = 20240501
/** Requests in a random scenario's sequence (cycled through): far more than distinct choices. */
const SEQUENCE_LENGTH = 100_000
/** detail-20: the slugs it picks from, so that concurrent requests often ask for the same post. */
const FEW_SLUGS = 20

/**
 * What one scenario sends. Random picks come from a seeded PRNG, so the baseline and the service
 * get the same sequence; `etags` are the target's own (the 304 scenario needs them); `cursors`,
 * one after each post in list order, the store's own (the page scenario needs them).
 */
export function requestSequence (name: ScenarioName, slugs: readonly string[], etags: ReadonlyMap<string, string>, cursors: readonly string[]): RequestSequence {
  const random = createRandom(SEED)
  const sequence = (next: () => RequestSpec): RequestSpec[] => Array.from({ length: SEQUENCE_LENGTH }, next)
  switch (name) {
    case 'detail':
      return sequence(() => ({ path: `/api/blog/${pick(random, slugs)}` }))
    case 'detail-20': {
      const few = slugs.slice(0, FEW_SLUGS)
      return sequence(() => ({ path: `/api/blog/${pick(random, few)}` }))
    }
    case 'detail-304': {
      const tagged = [...etags]
      return sequence(() => {
        const [slug, etag] = pick(random, tagged)
        return { path: `/api/blog/${slug}`, ifNoneMatch: etag }
      })
    }
    case 'invalid':
      return [{ path: '/api/blog/Not_A_Slug' }]
    case 'missing': {
      // Valid slugs that no post has (dataset slugs all start with `post-`).
      const absent = Array.from({ length: 1000 }, () => `missing-${randomInt(random, 0, 2 ** 31).toString(36)}`)
      return sequence(() => ({ path: `/api/blog/${pick(random, absent)}` }))
    }
    case 'page': {
      // A random depth: the page after a random post but the last (near the end, a short last page).
      const starts = cursors.slice(0, -1)
      return sequence(() => ({ path: `${PAGE_PATH}&after=${pick(random, starts)}` }))
    }
    case 'sorted-page':
      return [{ path: SORTED_PAGE_PATH }]
    case 'list-20':
    case 'list-1000':
    case 'list-100000':
      return [{ path: '/api/blog' }]
  }
}
