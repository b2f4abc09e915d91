// The scenarios of issue 3, their targets, and which dataset each runs on.
import type { RequestSource } from './load.js'
import { createRandom, pick, randomInt } from './random.js'

export const SCENARIO_NAMES = ['list-20', 'detail', 'detail-304', 'list-1000', 'invalid', 'missing', 'page', 'list-100000'] as const
export type ScenarioName = typeof SCENARIO_NAMES[number]

export interface Scenario {
  readonly name: ScenarioName
  readonly expectedStatus: number
  /** The target for requests/s as a ratio to the baseline. */
  readonly minRatio?: number
  /** The p99 bound, for the 50-connection scenarios but the large lists. */
  readonly maxP99Ms?: number
}

const P99_MS = 25

export const SCENARIOS: Record<ScenarioName, Scenario> = {
  'list-20': { name: 'list-20', expectedStatus: 200, minRatio: 0.40, maxP99Ms: P99_MS },
  detail: { name: 'detail', expectedStatus: 200, minRatio: 0.30, maxP99Ms: P99_MS },
  'detail-304': { name: 'detail-304', expectedStatus: 304, minRatio: 0.35, maxP99Ms: P99_MS },
  'list-1000': { name: 'list-1000', expectedStatus: 200, minRatio: 0.80 },
  invalid: { name: 'invalid', expectedStatus: 400, minRatio: 0.80, maxP99Ms: P99_MS },
  missing: { name: 'missing', expectedStatus: 404, minRatio: 0.30, maxP99Ms: P99_MS },
  // Issue 10: a page of 20 trimmed posts should come as close to the limit as the 20-post list.
  page: { name: 'page', expectedStatus: 200, minRatio: 0.40, maxP99Ms: P99_MS },
  'list-100000': { name: 'list-100000', expectedStatus: 200 }
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
  { posts: 1000, scenarios: ['detail', 'detail-304', 'list-1000', 'invalid', 'missing'] },
  // Processes of their own, so that the memory run's peaks are its own.
  { posts: 100_000, scenarios: ['page'] },
  { posts: 100_000, scenarios: ['list-100000'] }
]

/** --smoke: everything that works on 20 posts. */
export const SMOKE_PLAN: readonly Phase[] = [
  { posts: 20, scenarios: ['list-20', 'detail', 'detail-304', 'invalid', 'missing', 'page'] }
]

/** What `page` asks for, as the issue words it (the tiers put the fields in canonical order). */
export const PAGE_SIZE = 20
export const PAGE_FIELDS = ['slug', 'title', 'published_at'] as const
export const PAGE_PATH = `/api/blog?limit=${PAGE_SIZE}&fields=${PAGE_FIELDS.join(',')}`

const SEED = 20240501

/**
 * What one scenario sends. Random picks come from a seeded PRNG, so the baseline and the service
 * get the same sequence; `etags` are the target's own (the 304 scenario needs them); `cursors`,
 * one after each post in list order, the store's own (the page scenario needs them).
 */
export function requestSource (name: ScenarioName, slugs: readonly string[], etags: ReadonlyMap<string, string>, cursors: readonly string[]): RequestSource {
  const random = createRandom(SEED)
  switch (name) {
    case 'detail':
      return () => ({ path: `/api/blog/${pick(random, slugs)}` })
    case 'detail-304': {
      const tagged = [...etags]
      return () => {
        const [slug, etag] = pick(random, tagged)
        return { path: `/api/blog/${slug}`, headers: { 'if-none-match': etag } }
      }
    }
    case 'invalid':
      return { path: '/api/blog/Not_A_Slug' }
    case 'missing': {
      // Valid slugs that no post has (dataset slugs all start with `post-`).
      const absent = Array.from({ length: 1000 }, () => `missing-${randomInt(random, 0, 2 ** 31).toString(36)}`)
      return () => ({ path: `/api/blog/${pick(random, absent)}` })
    }
    case 'page': {
      // A random depth: the page after a random post but the last (near the end, a short last page).
      const starts = cursors.slice(0, -1)
      return () => ({ path: `${PAGE_PATH}&after=${pick(random, starts)}` })
    }
    case 'list-20':
    case 'list-1000':
    case 'list-100000':
      return { path: '/api/blog' }
  }
}
