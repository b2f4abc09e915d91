// The benchmark's scenarios, one entry each in SCENARIOS: what it sends, what it expects, its
// targets and the dataset it runs on. Which processes run which scenarios (the plan) is derived
// from the table, so adding a scenario is adding its entry.
import type { RequestSequence, RequestSpec } from './load.js'
import { createRandom, pick, randomInt, type Random } from './random.js'

export type Store = 'sqlite' | 'postgres'

/** What a scenario's requests are made from. */
export interface RequestContext {
  /** The dataset's slugs, in list order. */
  readonly slugs: readonly string[]
  /** Each post's ETag as the target serves it (read first, for scenarios with `etags`). */
  readonly etags: ReadonlyMap<string, string>
  /** One cursor after each post in list order, the store's own (for scenarios with `pages`). */
  readonly cursors: readonly string[]
  /** Seeded the same for every target, so that the baseline and the service get the same sequence. */
  readonly random: Random
}

export interface Scenario<Name extends string = string> {
  /** The full run's dataset, in posts (`--smoke` runs every `smoke` scenario on SMOKE_POSTS). */
  readonly posts: number
  readonly smoke?: boolean
  /** Processes of its own rather than those its dataset's other scenarios share. */
  readonly ownProcesses?: boolean
  readonly expectedStatus: number
  /** The requests, sent in order and cycled through. */
  readonly requests: (context: RequestContext) => RequestSequence
  /** The targets for requests/s as a ratio to the baseline, per store. */
  readonly minRatio?: Readonly<Record<Store, number>>
  /** The p99 bound, in ms. */
  readonly maxP99Ms?: number
  /** Its bodies are megabytes: statuses are not counted one by one (see LoadOptions). */
  readonly largeBodies?: boolean
  /** Its requests carry the target's ETags (read from it before the scenario). */
  readonly etags?: boolean
  /** Its requests carry page cursors; the front's page index is primed before the warm-up. */
  readonly pages?: boolean
  /** A few timed requests and each process's peak memory (MEMORY_RUN), instead of a load. */
  readonly memory?: boolean
  /**
   * A route the baseline does not have: the service alone is loaded, and its figures are ratios
   * to this scenario's, measured on the same processes (the plan runs it too).
   */
  readonly versus?: Name
  /** The target: CPU per request at most this multiple of the `versus` scenario's. */
  readonly maxCostRatio?: number
}

const P99_MS = 25
const both = (ratio: number): Record<Store, number> => ({ sqlite: ratio, postgres: ratio })
/** Rendered content and feeds cost at most this multiple of the plain reads they extend. */
const RENDERED_COST = 1.5

/** Requests in a random scenario's sequence (cycled through): far more than distinct choices. */
const SEQUENCE_LENGTH = 100_000
/** detail-20: the slugs it picks from, so that concurrent requests often ask for the same post. */
const FEW_SLUGS = 20

const repeat = (next: () => RequestSpec): RequestSpec[] => Array.from({ length: SEQUENCE_LENGTH }, next)
/** The same request every time. */
const always = (path: string) => (): RequestSequence => [{ path }]
/** A random post's detail (among the first `few` when given), with `search` after it. */
const randomPost = (search = '', few?: number) => ({ slugs, random }: RequestContext): RequestSequence => {
  const choices = few === undefined ? slugs : slugs.slice(0, few)
  return repeat(() => ({ path: `/api/blog/${pick(random, choices)}${search}` }))
}

/** What `page` asks for, as the issue words it (the tiers put the fields in canonical order). */
export const PAGE_SIZE = 20
export const PAGE_FIELDS = ['slug', 'title', 'published_at'] as const
export const PAGE_PATH = `/api/blog?limit=${PAGE_SIZE}&fields=${PAGE_FIELDS.join(',')}`

/** The table, checked so that `versus` names a scenario of it. */
function scenarioTable<const T extends { [Name in keyof T]: Scenario<Extract<keyof T, string>> }> (table: T): T {
  return table
}

// In the order they run (a dataset's processes start where its first scenario stands).
export const SCENARIOS = scenarioTable({
  'list-20': { posts: 20, smoke: true, expectedStatus: 200, requests: always('/api/blog'), minRatio: { sqlite: 0.75, postgres: 0.50 }, maxP99Ms: P99_MS },
  detail: { posts: 1000, smoke: true, expectedStatus: 200, requests: randomPost(), minRatio: { sqlite: 0.25, postgres: 0.18 }, maxP99Ms: P99_MS },
  'detail-20': { posts: 1000, smoke: true, expectedStatus: 200, requests: randomPost('', FEW_SLUGS), minRatio: { sqlite: 0.30, postgres: 0.22 }, maxP99Ms: P99_MS },
  'detail-304': {
    posts: 1000,
    smoke: true,
    expectedStatus: 304,
    etags: true,
    requests: ({ etags, random }) => {
      const tagged = [...etags]
      return repeat(() => {
        const [slug, etag] = pick(random, tagged)
        return { path: `/api/blog/${slug}`, ifNoneMatch: etag }
      })
    },
    minRatio: both(0.35),
    maxP99Ms: P99_MS
  },
  missing: {
    posts: 1000,
    smoke: true,
    expectedStatus: 404,
    // Valid slugs that no post has (dataset slugs all start with `post-`).
    requests: ({ random }) => {
      const absent = Array.from({ length: 1000 }, () => `missing-${randomInt(random, 0, 2 ** 31).toString(36)}`)
      return repeat(() => ({ path: `/api/blog/${pick(random, absent)}` }))
    },
    minRatio: { sqlite: 0.50, postgres: 0.45 },
    maxP99Ms: P99_MS
  },
  invalid: { posts: 1000, smoke: true, expectedStatus: 400, requests: always('/api/blog/Not_A_Slug'), minRatio: both(0.80), maxP99Ms: P99_MS },
  'list-1000': { posts: 1000, expectedStatus: 200, requests: always('/api/blog'), minRatio: { sqlite: 0.85, postgres: 0.65 }, largeBodies: true },
  // A page of 20 trimmed posts should come as close to the limit as the 20-post list. At a random
  // depth: the page after a random post but the last (near the end, a short last page).
  page: {
    posts: 100_000,
    ownProcesses: true,
    smoke: true,
    expectedStatus: 200,
    pages: true,
    requests: ({ cursors, random }) => {
      const starts = cursors.slice(0, -1)
      return repeat(() => ({ path: `${PAGE_PATH}&after=${pick(random, starts)}` }))
    },
    minRatio: { sqlite: 0.75, postgres: 0.50 },
    maxP99Ms: P99_MS
  },
  // Processes of its own, so that the memory run's peaks are its own.
  'list-100000': { posts: 100_000, ownProcesses: true, expectedStatus: 200, memory: true, requests: always('/api/blog'), minRatio: both(0.15), largeBodies: true },
  // Rendered content and feeds, which the baseline does not serve: each against the plain read it
  // extends, on the same dataset (renderings are made once per content, during the warm-up).
  'detail?formats=html': { posts: 1000, smoke: true, expectedStatus: 200, requests: randomPost('?formats=html'), versus: 'detail', maxCostRatio: RENDERED_COST },
  'list?limit=20&fields=slug,title,excerpt,reading_time': {
    posts: 20, smoke: true, expectedStatus: 200, requests: always('/api/blog?limit=20&fields=slug,title,excerpt,reading_time'), versus: 'list-20', maxCostRatio: RENDERED_COST
  },
  'feed.xml': { posts: 20, smoke: true, expectedStatus: 200, requests: always('/feed.xml'), versus: 'list-20', maxCostRatio: RENDERED_COST }
})

export type ScenarioName = keyof typeof SCENARIOS
export const SCENARIO_NAMES = Object.keys(SCENARIOS) as ScenarioName[]
/** A scenario's entry, with every property of the type (absent or not). */
export const scenarioOf = (name: ScenarioName): Scenario<ScenarioName> => SCENARIOS[name]

/** list-100000's targets: every process stays under this peak RSS, and the first byte comes within a second. */
export const MEMORY_RUN = { maxRssMb: 200, maxFirstByteMs: 1000, sequential: 3, concurrent: 5 } as const

/** `--smoke`: every `smoke` scenario, on this dataset, in one set of processes. */
export const SMOKE_POSTS = 20

/** A dataset, served by its own processes, and the scenarios run on them. */
export interface Phase {
  readonly posts: number
  readonly scenarios: readonly ScenarioName[]
}

/** The phases that run `selected` (and the scenarios they are measured against), in table order. */
export function planOf (selected: ReadonlySet<ScenarioName>, smoke: boolean): Phase[] {
  const wanted = new Set<ScenarioName>()
  for (const name of selected) {
    const { versus } = scenarioOf(name)
    wanted.add(name)
    if (versus !== undefined) wanted.add(versus)
  }
  const phases: Array<{ posts: number, scenarios: ScenarioName[] }> = []
  const shared = new Map<number, { posts: number, scenarios: ScenarioName[] }>()
  for (const name of SCENARIO_NAMES) {
    const scenario = scenarioOf(name)
    if (!wanted.has(name) || (smoke && scenario.smoke !== true)) continue
    const posts = smoke ? SMOKE_POSTS : scenario.posts
    if (scenario.ownProcesses === true && !smoke) {
      phases.push({ posts, scenarios: [name] })
      continue
    }
    let phase = shared.get(posts)
    if (phase === undefined) {
      phase = { posts, scenarios: [] }
      shared.set(posts, phase)
      phases.push(phase)
    }
    phase.scenarios.push(name)
  }
  return phases
}

// A scenario measured against another runs after it (earlier in the table), on the same processes,
// in the full run and the smoke.
for (const [index, name] of SCENARIO_NAMES.entries()) {
  const { versus, posts, smoke = false, ownProcesses = false } = scenarioOf(name)
  if (versus === undefined) continue
  const plain = scenarioOf(versus)
  if (SCENARIO_NAMES.indexOf(versus) > index || plain.posts !== posts || (plain.smoke ?? false) !== smoke || ownProcesses || (plain.ownProcesses ?? false)) {
    throw new Error(`scenario ${name}: it is measured against ${versus}, so it needs its dataset and processes, and a place after it`)
  }
}

const SEED = 20240501

/** What scenario `name` sends, from a PRNG seeded alike for every target. */
export function requestSequence (name: ScenarioName, context: Omit<RequestContext, 'random'>): RequestSequence {
  return scenarioOf(name).requests({ ...context, random: createRandom(SEED) })
}
